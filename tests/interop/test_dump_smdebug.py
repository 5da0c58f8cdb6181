"""smd dump == smdebug_dump.py (the real smdebug), byte for byte, on trials the real smdebug wrote.

Where smdebug's reader is wrong (docs/compatibility.md) the reference document is corrected by a
named function below before the comparison. Each case lists the corrections it needs; each correction must change
something (so the list stays exact), and nothing else may differ.
"""
import hashlib
import math

import numpy as np
import pytest

import cases
from conftest import dumps, run_ref, run_smd

# ------------------------------------------------------------------------------ helpers


def fmt_float(x):
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return repr(x)


def describe(a):
    a = np.asarray(a)  # (np.ascontiguousarray would make a 0-d array 1-d)
    if a.dtype.kind in "USO":
        return {"dtype": "str", "shape": list(a.shape), "values": [str(x) for x in a.reshape(-1)]}
    return {"dtype": a.dtype.name, "shape": [int(d) for d in a.shape],
            "sha256": hashlib.sha256(a.astype(a.dtype.newbyteorder("<")).tobytes(order="C")).hexdigest()}


def numpy_reduction(name, a):
    """What smdebug's writer stores for a reduction (numpy semantics), as a float."""
    absolute = name.startswith("abs_")
    op = name[4:] if absolute else name
    x = np.absolute(a) if absolute else a
    f = {"min": np.amin, "max": np.amax, "mean": np.mean, "sum": np.sum, "prod": np.prod,
         "std": np.std, "variance": np.var,
         "l1": lambda v: np.linalg.norm(v, 1), "l2": lambda v: np.linalg.norm(v, 2)}[op]
    return fmt_float(f(x))


def cells(doc, tensor):
    """(global step, worker, cell) for every worker entry of a tensor."""
    for g, entry in doc["tensors"][tensor]["at"].items():
        for w, cell in (entry["workers"] or {}).items():
            yield int(g), w, cell


# ------------------------------------------------------------------------------ the corrections
# Each takes the reference document and returns how many places it changed.


def int8_read_as_uint8(doc, tensors):
    """smdebug decodes DT_INT8 as uint8 (same bytes, so the same sha256); smd keeps int8."""
    n = 0
    for t in tensors:
        for _, _, cell in cells(doc, t):
            if cell["value"] is not None and cell["value"]["dtype"] == "uint8":
                cell["value"]["dtype"] = "int8"
                n += 1
    return n


def dtypes_smdebug_cannot_read(doc, arrays):
    """int16, uint16, uint32, uint64 and complex64 values: smdebug raises KeyError (null value
    and shape); smd decodes them."""
    n = 0
    for t, array_at in arrays.items():
        for g, _, cell in cells(doc, t):
            a = array_at(g)
            if cell["value"] is None:
                cell["value"] = describe(a)
                n += 1
            if cell["shape"] is None:
                cell["shape"] = list(a.shape)
                n += 1
    return n


def reductions_smdebug_misreads(doc, arrays, keys):
    """Reductions stored as int8 come back as uint8 (-100 -> 156.0), and reductions stored in a
    dtype smdebug cannot decode (min of int16, sum of uint8 = uint64) null the whole dict; smd
    reads each with its own dtype."""
    n = 0
    for t, array_at in arrays.items():
        for g, _, cell in cells(doc, t):
            want = {k: numpy_reduction(k, array_at(g)) for k in keys}
            if cell["reductions"] != want:
                cell["reductions"] = want
                n += 1
    return n


def raw_and_shape_value_lost(doc, arrays):
    """A tensor saved raw and with save_shape: smdebug's shape index entry replaces the value
    location, so value() fails; smd keeps both."""
    n = 0
    for t, array_at in arrays.items():
        for g, _, cell in cells(doc, t):
            if cell["value"] is None:
                cell["value"] = describe(array_at(g))
                n += 1
    return n


def name_containing_reduction_prefix(doc):
    """A tensor whose name merely contains "smdebug/reductions/" is a plain tensor for smd; smdebug
    splits the name at that text and invents the tensors "y" (reduction "min") and "a/" (from
    the max reduction of the real tensor)."""
    n = 0
    for bogus in ("y", "a/"):
        if doc["tensors"].pop(bogus, None) is not None:
            n += 1
    name = cases.PREFIX_NAME
    assert name not in doc["tensors"]
    at = {}
    for g in (0, 1):
        a = np.ones(2, np.float32)
        at[str(g)] = {"mode": "TRAIN", "mode_step": g, "workers": {"worker_0": {
            "value": describe(a), "shape": [2], "reductions": {"max": numpy_reduction("max", a)}}}}
    doc["tensors"][name] = {"steps": {"GLOBAL": [0, 1], "TRAIN": [0, 1]}, "at": at}
    return n + 1


def tensor_steps_completeness(doc):
    """Tensor.steps(mode) keeps a step when the trial has it complete (all workers wrote its global
    step). smdebug compares the *mode* step with the *global* last complete step (and its
    worker-count test is always false), so it lists incomplete mode steps."""
    complete = set(doc["steps"]["GLOBAL"])
    n = 0
    for t in doc["tensors"].values():
        for m in list(t["steps"]):
            if m == "GLOBAL":
                want = sorted(int(g) for g in t["at"] if int(g) in complete)
            else:
                want = sorted(e["mode_step"] for g, e in t["at"].items()
                              if e["mode"] == m and int(g) in complete)
            if t["steps"][m] != want:
                t["steps"][m] = want
                n += 1
    return n


def dtype_arrays(names):
    return {"t_" + d: (lambda g, d=d: cases.dtype_array(d, g)) for d in names}


SMALLINT = {f"s_{d}": (lambda g, d=d: cases.smallint_array(d, g)) for d in ("int8", "uint8", "int16")}

# case -> list of (correction name, function, args)
CORRECTIONS = {
    "modes_reentry": [],
    "save_gaps": [],
    "dtypes": [
        ("int8_read_as_uint8", int8_read_as_uint8, (["t_int8"],)),
        ("dtypes_smdebug_cannot_read", dtypes_smdebug_cannot_read,
         (dtype_arrays(sorted(cases.UNREADABLE_BY_SMDEBUG)),)),
    ],
    "reductions_float": [],
    "reductions_int": [],
    "reductions_smallint": [
        ("dtypes_smdebug_cannot_read", dtypes_smdebug_cannot_read, ({},)),
        ("reductions_smdebug_misreads", reductions_smdebug_misreads, (SMALLINT, ["max", "min", "sum"])),
    ],
    "shapes": [
        ("raw_and_shape_value_lost", raw_and_shape_value_lost,
         ({"b_mat": lambda g: cases.weight(g, (3, 2)), "b_0d": lambda g: np.array(7, np.int64)},)),
    ],
    "scalars": [],
    "names": [("name_containing_reduction_prefix", name_containing_reduction_prefix, ())],
    "workers3_ended": [],
    "workers3_running": [("tensor_steps_completeness", tensor_steps_completeness, ())],
    "running_single": [],
    "index_folders": [],
    "printing": [],
}
# reductions_smallint saves reductions only, so there are no values to correct.
CORRECTIONS["reductions_smallint"] = CORRECTIONS["reductions_smallint"][1:]


@pytest.mark.parametrize("case", sorted(CORRECTIONS))
def test_dump_matches_smdebug(case, trial_of, smd_bin):
    import json

    path = trial_of(case)
    rc_ref, ref_text, ref_err = run_ref(path)
    assert rc_ref == 0, ref_err
    rc, text, err = run_smd(smd_bin, "dump", path)
    assert rc == 0, err
    if not CORRECTIONS[case]:
        assert text == ref_text
        return
    doc = json.loads(ref_text)
    for name, fn, args in CORRECTIONS[case]:
        assert fn(doc, *args) > 0, f"accepted difference {name} no longer applies to {case}"
    assert text == dumps(doc)


def test_every_case_is_checked():
    assert set(CORRECTIONS) == set(cases.CASES)


def test_dump_is_deterministic(trial_of, smd_bin):
    path = trial_of("workers3_ended")
    a = run_smd(smd_bin, "dump", path)
    b = run_smd(smd_bin, "dump", path)
    assert a == b and a[0] == 0


def test_dump_usage_errors(smd_bin, tmp_path):
    assert run_smd(smd_bin)[0] == 2
    assert run_smd(smd_bin, "frobnicate")[0] == 2
    assert run_smd(smd_bin, "dump")[0] == 2
    assert run_smd(smd_bin, "dump", "a", "b")[0] == 2
    assert run_smd(smd_bin, "dump", "--bogus", "a")[0] == 2
    assert run_smd(smd_bin, "dump", "--wait-collections", "x", "a")[0] == 2
    rc, out, _ = run_smd(smd_bin, "--help")
    assert rc == 0 and "dump" in out
    rc, out, _ = run_smd(smd_bin, "dump", "--help")
    assert rc == 0 and "smd-dump/1" in out


def test_dump_missing_trial_and_collections(smd_bin, tmp_path):
    rc, out, err = run_smd(smd_bin, "dump", tmp_path / "nope")
    assert rc == 1 and out == "" and "SMD_E_NOT_FOUND" in err
    (tmp_path / "empty").mkdir()
    rc, out, err = run_smd(smd_bin, "dump", tmp_path / "empty")
    assert rc == 3 and out == "" and "SMD_E_MISSING_COLLECTION_FILES" in err
    (tmp_path / "empty" / "training_job_end.ts").write_bytes(b"")
    rc, out, err = run_smd(smd_bin, "dump", tmp_path / "empty")
    assert rc == 3 and "Training job has ended" in err


def test_dump_output_file(smd_bin, trial_of, tmp_path):
    path = trial_of("scalars")
    rc, text, _ = run_smd(smd_bin, "dump", path)
    assert rc == 0
    out = tmp_path / "d.json"
    assert run_smd(smd_bin, "dump", path, "-o", out)[0] == 0
    assert out.read_text(encoding="utf-8") == text
    assert run_smd(smd_bin, "dump", path, "-o", tmp_path / "no" / "such" / "dir.json")[0] == 4


def test_dump_reports_corrupt_index_files(smd_bin, trial_of, tmp_path):
    import shutil

    src = trial_of("modes_reentry")
    dst = tmp_path / "t"
    shutil.copytree(src, dst)
    bad = dst / "index" / "000000000" / "000000000001_worker_0.json"
    bad.write_text('{"meta": {"mode": "TRAIN", "mode_step": 1}, "tensor_payload": [{"tensorname": ')
    rc, text, err = run_smd(smd_bin, "dump", dst)
    assert rc == 5, err
    assert "000000000001_worker_0.json" in err
    import json

    doc = json.loads(text)
    assert 1 not in doc["steps"]["GLOBAL"] and 2 in doc["steps"]["GLOBAL"]
