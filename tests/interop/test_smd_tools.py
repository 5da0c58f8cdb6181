"""smd ls and smd cat on trials the real smdebug wrote: the summary's exact text, values printed
exactly as numpy prints them, .npy files equal to what the real smdebug reads, exit codes."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import cases
from conftest import REPO, run_smd, run_smd_scenario


@pytest.fixture(autouse=True)
def _numpy_1_printing():
    """`smd cat` prints as numpy 1.x prints; numpy 2 writes some float16 values (8320) in
    scientific notation where 1.x does not, and its legacy="1.25" option restores 1.x's form."""
    if int(np.__version__.split(".")[0]) >= 2:
        with np.printoptions(legacy="1.25"):
            yield
    else:
        yield

FIXTURES = REPO / "tests" / "data" / "trials"

# ------------------------------------------------------------------------------------ smd ls

LS_MODES_REENTRY = """\
trial:    PATH
status:   ended (training_job_end.ts is there)
workers:  1 (worker_0)
steps:    10 global steps, 0-9
modes:
  TRAIN    5 steps  0-4  at global 0-2, 5-6
  EVAL     2 steps  0-1  at global 3-4
  PREDICT  2 steps  0-1  at global 7-8
  GLOBAL   1 step   9

tensors (2):
  NAME       DTYPE    SHAPE   STEPS                                            REDUCTIONS
  fc.weight  float32  [2, 3]  TRAIN 0-4, EVAL 0-1, PREDICT 0-1, GLOBAL 9 (10)  -
  loss       float32  [1]     TRAIN 0-4, EVAL 0-1, PREDICT 0-1, GLOBAL 9 (10)  -

collections (6):
  NAME       TENSORS  REDUCTIONS  INCLUDE_REGEX
  all        0        -           -
  biases     0        -           ^(?!gradient).*bias
  default    0        -           -
  gradients  0        -           ^gradient
  losses     1        -           [Ll]oss
  weights    1        -           ^(?!gradient).*weight
"""

LS_WORKERS3_RUNNING = """\
trial:    PATH
status:   running (no training_job_end.ts yet)
workers:  3 (worker_0, worker_1, worker_2)
steps:    6 global steps, 0-5; incomplete (not written by all 3 workers yet): 4-5
modes:
  TRAIN  3 steps  0-2  at global 0-2
  EVAL   3 steps  0-2  at global 3-5

tensors (2):
  NAME       DTYPE    SHAPE   STEPS                    REDUCTIONS
  fc.weight  float32  [2, 3]  TRAIN 0-2, EVAL 0-2 (6)  -
  loss       float32  [1]     TRAIN 0-2, EVAL 0-2 (6)  -
"""

LS_SHAPES_TENSORS = """\
tensors (5):
  NAME      DTYPE    SHAPE         STEPS    REDUCTIONS
  b_0d      int64    []            0-1 (2)  -
  b_mat     float32  [3, 2]        0-1 (2)  -
  sh_0d     -        []            0-1 (2)  -
  sh_4d     -        [2, 1, 3, 2]  0-1 (2)  -
  sh_empty  -        [3, 0]        0-1 (2)  -
"""

LS_REDUCTIONS_TENSORS = """\
  r_3d      -        -      0-2 (3)  min,max,mean,std,variance,sum,prod +abs
  r_empty   -        -      0-2 (3)  mean,std,variance,sum,prod,l1,l2 +abs
  r_mat32   -        -      0-2 (3)  min,max,mean,std,variance,sum,prod,l1,l2 +abs
"""


def ls(smd_bin, path):
    rc, out, err = run_smd(smd_bin, "ls", path)
    return rc, out.replace(str(path), "PATH"), err


def test_ls_summary_is_stable(smd_bin):
    rc, out, err = ls(smd_bin, FIXTURES / "modes_reentry")
    assert (rc, err) == (0, "")
    assert out == LS_MODES_REENTRY
    rc, out, err = ls(smd_bin, FIXTURES / "workers3_running")
    assert (rc, err) == (0, "")
    assert out.startswith(LS_WORKERS3_RUNNING)
    rc, out, err = ls(smd_bin, FIXTURES / "shapes")
    assert rc == 0 and LS_SHAPES_TENSORS in out
    rc, out, err = ls(smd_bin, FIXTURES / "reductions_float")
    assert rc == 0 and LS_REDUCTIONS_TENSORS in out
    assert "  red        6        min,max,mean,std,variance,sum,prod,l1,l2 +abs  ^r_\n" in out
    assert max(len(line) for line in out.splitlines()) <= 100


def test_ls_every_dtype_and_strided_steps(smd_bin, trial_of):
    rc, out, err = run_smd(smd_bin, "ls", FIXTURES / "dtypes")
    assert rc == 0, err
    for d in cases.ALL_DTYPES:
        assert f"  t_{d} " in out and f" {d} " in out.split(f"  t_{d} ")[1].splitlines()[0]
    assert "  t_str         str         [3]     0-1 (2)  -\n" in out
    rc, out, err = run_smd(smd_bin, "ls", trial_of("save_gaps"))
    assert rc == 0, err
    # TRAIN saves every 3rd mode step (its count goes on after EVAL), EVAL its save_steps.
    assert "steps:    8 global steps, 0-9/3, 10-11, 14, 18\n" in out
    assert "  TRAIN  5 steps  0-12/3  at global 0-9/3, 18\n" in out
    assert "  EVAL   3 steps  0-1, 4  at global 10-11, 14\n" in out
    assert "  fc.weight  float32  [2, 3]  TRAIN 0-12/3, EVAL 0-1, 4 (8)  -\n" in out


def test_ls_errors_and_exit_codes(smd_bin, tmp_path):
    rc, out, err = run_smd(smd_bin, "ls", tmp_path / "missing")
    assert rc == 1 and out == "" and "does not exist" in err and "missing" in err
    shutil.copytree(FIXTURES / "modes_reentry", tmp_path / "t")
    shutil.rmtree(tmp_path / "t" / "collections")
    rc, out, err = run_smd(smd_bin, "ls", tmp_path / "t")
    assert rc == 3 and "SMD_E_MISSING_COLLECTION_FILES" in err
    # A malformed index file: the summary of everything else, a warning naming it, exit 5.
    shutil.copytree(FIXTURES / "modes_reentry", tmp_path / "c")
    bad = tmp_path / "c" / "index" / "000000000" / "000000000004_worker_0.json"
    bad.write_text('{"meta": {"mode": "EVAL"')
    rc, out, err = run_smd(smd_bin, "ls", tmp_path / "c")
    assert rc == 5
    assert "steps:    9 global steps, 0-3, 5-9" in out
    assert "000000000004_worker_0.json" in err and "warning" in err
    assert run_smd(smd_bin, "ls")[0] == 2
    assert run_smd(smd_bin, "ls", "a", "b")[0] == 2
    assert run_smd(smd_bin, "ls", "--bogus", FIXTURES / "shapes")[0] == 2
    rc, out, _ = run_smd(smd_bin, "ls", "--help")
    assert rc == 0 and out.startswith("usage: smd ls PATH")
    rc, out, _ = run_smd(smd_bin, "--help")
    assert rc == 0 and "  ls " in out and "  cat " in out


# ------------------------------------------------------------------------------------ smd cat

PRINTED = cases.print_arrays()


@pytest.fixture(scope="session")
def printing_trial(trial_of):
    return trial_of("printing")


@pytest.mark.parametrize("name", sorted(PRINTED))
def test_cat_prints_like_numpy(name, printing_trial, smd_bin):
    rc, out, err = run_smd(smd_bin, "cat", "--no-header", printing_trial, name)
    assert rc == 0, err
    assert out == np.array2string(PRINTED[name], separator=", ") + "\n"


def test_cat_full_and_header(printing_trial, smd_bin):
    a = PRINTED["p_f64_2d_summary"]
    rc, out, err = run_smd(smd_bin, "cat", "--full", "--no-header", printing_trial, "p_f64_2d_summary")
    assert rc == 0, err
    assert "..." not in out
    assert out == np.array2string(a, separator=", ", threshold=sys.maxsize) + "\n"
    rc, out, err = run_smd(smd_bin, "cat", printing_trial, "p_f32_3d_summary")
    head, body = out.split("\n", 1)
    assert head == "p_f32_3d_summary  step 0 (TRAIN step 0)  worker_0  float32 [8, 9, 20]"
    assert "..." in body


def test_cat_steps_modes_workers(smd_bin):
    t = FIXTURES / "modes_reentry"
    rc, out, err = run_smd(smd_bin, "cat", t, "fc.weight", "--step", "1", "--mode", "eval")
    assert rc == 0, err
    head, body = out.split("\n", 1)
    assert head == "fc.weight  EVAL step 1 (global step 4)  worker_0  float32 [2, 3]"
    assert body == np.array2string(cases.weight(4), separator=", ") + "\n"
    rc, out, err = run_smd(smd_bin, "cat", t, "fc.weight")  # the last step, saved in GLOBAL mode
    assert out.split("\n", 1)[0] == "fc.weight  step 9 (GLOBAL)  worker_0  float32 [2, 3]"
    rc, out, err = run_smd(smd_bin, "cat", t, "loss", "--mode", "PREDICT", "--no-header")
    assert out == np.array2string(np.array([1.0 / 9], np.float32), separator=", ") + "\n"
    w = FIXTURES / "workers3_running"
    rc, out, err = run_smd(smd_bin, "cat", w, "fc.weight", "--step", "2", "--worker", "worker_2")
    head, body = out.split("\n", 1)
    assert head == "fc.weight  step 2 (TRAIN step 2)  worker_2  float32 [2, 3]"
    assert body == np.array2string(cases.weight(22), separator=", ") + "\n"


def test_cat_reductions(smd_bin):
    t = FIXTURES / "reductions_float"
    rc, out, err = run_smd(smd_bin, "cat", t, "r_mat32", "--step", "1")
    assert rc == 7
    assert "SMD_E_TENSOR_UNAVAILABLE_FOR_STEP" in err
    assert "saved reductions there: abs_l1, abs_l2," in err and "--reduction NAME" in err
    rc, out, err = run_smd(smd_bin, "cat", t, "r_mat32", "--step", "1", "--reduction", "max")
    assert rc == 0, err
    head, body = out.split("\n", 1)
    assert head == "r_mat32 max  step 1 (TRAIN step 1)  worker_0  float32 [1]"
    assert body == np.array2string(np.array([cases.weight(1).max()]), separator=", ") + "\n"
    rc, out, err = run_smd(smd_bin, "cat", t, "r_mat32", "--reduction", "median")
    assert rc == 7, err  # not saved, and no raw value to compute it from
    rc, out, err = run_smd(smd_bin, "cat", t, "rr_vec32", "--reduction", "bogus")
    assert rc == 2 and "bogus" in err


def test_cat_npy_equals_smdebug(smd_bin, tmp_path):
    from smdebug.trials import create_trial

    path = FIXTURES / "dtypes"
    trial = create_trial(str(path))
    for name in trial.tensor_names():
        out = tmp_path / f"{name}.npy"
        rc, text, err = run_smd(smd_bin, "cat", path, name, "--step", "1", "--npy", out)
        assert (rc, text, err) == (0, "", ""), name
        got = np.load(out)
        d = name[2:]
        if d in cases.UNREADABLE_BY_SMDEBUG or d == "int8":  # smdebug: KeyError / read as uint8
            want = cases.dtype_array(d, 1)
        else:
            want = trial.tensor(name).value(1)
        if name == "t_str":
            assert got.dtype.kind == "U" and list(got) == [str(x) for x in want]
        else:
            assert got.dtype == want.dtype and got.shape == want.shape, name
            np.testing.assert_array_equal(got, want)


def test_cat_bfloat16(smd_bin, smd_scenario_bin, tmp_path):
    bf16 = np.array([1.0, -2.5, 3.140625, 1e-3, 65280.0, float("inf")], np.float32)
    bits = (bf16.view(np.uint32) >> 16).astype("<u2")
    script = tmp_path / "bf16.txt"
    script.write_text("option\tinclude_regex\t.\ncreate\t{}\nstep\ntensor\tb\tbfloat16\t2x3\t{}\nclose\n"
                      .format(tmp_path / "t", bits.tobytes().hex()))
    run_smd_scenario(smd_scenario_bin, script)
    rc, out, err = run_smd(smd_bin, "cat", tmp_path / "t", "b")
    assert rc == 0, err
    head, body = out.split("\n", 1)
    assert head.endswith("bfloat16 [2, 3]")
    # Shortest digits that identify each bfloat16 (3.140625 is "3.14", 65280 "6.53e+04"), then
    # numpy's rules: scientific (max/min > 1000), 2 fraction digits for all, the further digits
    # those of the exact value (the bfloat16 nearest below 1e-3 is 0.00099945068359375).
    assert body == "[[ 1.00e+00, -2.50e+00,  3.14e+00],\n [ 9.99e-04,  6.53e+04,       inf]]\n"
    rc, out, err = run_smd(smd_bin, "cat", tmp_path / "t", "b", "--npy", tmp_path / "b.npy")
    assert rc == 0 and "written as float32" in err
    got = np.load(tmp_path / "b.npy")
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, (bits.astype(np.uint32) << 16).view(np.float32).reshape(2, 3))


def test_cat_errors_and_exit_codes(smd_bin, tmp_path):
    t = FIXTURES / "modes_reentry"
    rc, out, err = run_smd(smd_bin, "cat", t, "nope")
    assert rc == 7 and "no tensor 'nope'" in err and "smd ls" in err
    rc, out, err = run_smd(smd_bin, "cat", t, "loss", "--step", "99")
    assert rc == 7 and "SMD_E_STEP_UNAVAILABLE" in err
    rc, out, err = run_smd(smd_bin, "cat", t, "loss", "--worker", "worker_9")
    assert rc == 7 and "Invalid Worker: worker_9" in err
    assert run_smd(smd_bin, "cat", t, "loss", "--mode", "TEST")[0] == 2
    assert run_smd(smd_bin, "cat", t, "loss", "--step", "x")[0] == 2
    assert run_smd(smd_bin, "cat", t)[0] == 2
    assert run_smd(smd_bin, "cat", t, "loss", "extra")[0] == 2
    assert run_smd(smd_bin, "cat", t, "loss", "--npy")[0] == 2
    rc, out, err = run_smd(smd_bin, "cat", t, "loss", "--npy", tmp_path / "no" / "dir" / "x.npy")
    assert rc == 4 and "x.npy" in err
    rc, out, err = run_smd(smd_bin, "cat", tmp_path / "missing", "loss")
    assert rc == 1 and "does not exist" in err
    shutil.copytree(t, tmp_path / "t")
    shutil.rmtree(tmp_path / "t" / "collections")
    assert run_smd(smd_bin, "cat", tmp_path / "t", "loss")[0] == 3
    # A damaged record: the trial is fine, the value is not.
    ev = tmp_path / "t2" / "events" / "000000000009" / "000000000009_worker_0.tfevents"
    shutil.copytree(t, tmp_path / "t2")
    data = bytearray(ev.read_bytes())
    data[3] ^= 0x10  # the first record's length field
    ev.write_bytes(bytes(data))
    rc, out, err = run_smd(smd_bin, "cat", tmp_path / "t2", "fc.weight", "--step", "9")
    assert rc == 1 and "SMD_E_CORRUPT" in err and "000000000009_worker_0.tfevents" in err
    # "--": what follows is PATH and TENSOR, even a name starting with '-'.
    rc, out, err = run_smd(smd_bin, "cat", "--no-header", "--", t, "-x")
    assert rc == 7 and "no tensor '-x'" in err, err
    rc, out, err = run_smd(smd_bin, "cat", "--no-header", "--", t, "loss")
    assert rc == 0, err
    # An empty PATH is bad usage, as in smd ls.
    assert run_smd(smd_bin, "cat", "", "loss")[0] == 2
    assert run_smd(smd_bin, "ls", "")[0] == 2
    rc, out, _ = run_smd(smd_bin, "cat", "--help")
    assert rc == 0 and out.startswith("usage: smd cat PATH TENSOR")
    assert "bfloat16" in out


def test_double_dash_ends_the_options_of_every_command(smd_bin, tmp_path):
    """After "--" every argument is a path, even one starting with '-' (a trial folder named
    "-t" in the working folder); before it such a name is an unknown option (exit 2). Only
    smd cat took "--"; ls, dump, rules and export-tensorboard refused the folder."""
    shutil.copytree(FIXTURES / "modes_reentry", tmp_path / "-t")

    def smd(*args):
        r = subprocess.run([str(smd_bin), *args], capture_output=True, cwd=tmp_path, timeout=600)
        return r.returncode, r.stdout.decode(), r.stderr.decode("utf-8", "replace")

    rc, out, err = smd("ls", "--", "-t")
    assert rc == 0 and "fc.weight" in out, err
    assert smd("ls", "-t")[0] == 2
    rc, out, err = smd("dump", "--", "-t")
    assert rc == 0 and '"fc.weight"' in out, err
    assert smd("dump", "-t")[0] == 2
    rc, out, err = smd("rules", "--rule", "AllZero:tensor_regex=fc.*", "--no-progress", "--", "-t")
    assert rc in (0, 6) and "AllZero" in out, (rc, out, err)
    assert smd("rules", "--rule", "AllZero:tensor_regex=fc.*", "-t")[0] == 2
    rc, out, err = smd("export-tensorboard", "--quiet", "--", "-t", "-tb")
    assert rc == 0 and list((tmp_path / "-tb").rglob("*.tfevents")), err
    assert smd("export-tensorboard", "-t", "tb")[0] == 2
    # "--" ends the options only once: a second one is a path.
    assert "more than one PATH" in smd("ls", "--", "-t", "--")[2]


def test_cat_says_the_files_the_trial_skipped(smd_bin, tmp_path):
    """An index file the trial skipped (malformed) is a warning, as smd ls and smd dump say it,
    and exit status 5: the last step, or the step asked for, may be in it (smd cat showed an older
    step as the last one, exit 0, and said a step it skipped was not saved)."""
    shutil.copytree(FIXTURES / "modes_reentry", tmp_path / "t")
    (tmp_path / "t" / "index" / "000000000" / "000000000009_worker_0.json").write_text("{not json")
    rc, out, err = run_smd(smd_bin, "cat", tmp_path / "t", "fc.weight")
    assert rc == 5, err
    assert "smd cat: warning: skipped index file" in err and "000000000009_worker_0.json" in err
    # the last step it could read: 8 (step 9's index file is the one skipped)
    assert out.split("\n", 1)[0] == "fc.weight  step 8 (PREDICT step 1)  worker_0  float32 [2, 3]"
    rc, out, err = run_smd(smd_bin, "cat", tmp_path / "t", "fc.weight", "--step", "9")
    assert rc == 7 and "skipped files" in err, err
