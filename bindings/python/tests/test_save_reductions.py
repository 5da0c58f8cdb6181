"""smd_hook_save_reductions through the Python binding: reductions computed elsewhere are written
byte for byte as the hook writes its own, the real smdebug reads them; a DLPack capsule goes to
smd's DLPack path."""
import filecmp
import os

import numpy as np
import pytest

import smd
import smd.exceptions as E
import smdebug.trials
from smd import smdc


def _hook(out):
    return smd.Hook(str(out), save_config=smd.SaveConfig(save_interval=1), include_collections=["gradients"],
                    reduction_config=smd.ReductionConfig(reductions=["min", "max", "mean", "std"],
                                                         abs_reductions=["max"], norms=["l2"]))


def _same_tree(a, b):
    cmp = filecmp.dircmp(a, b)
    assert not cmp.left_only and not cmp.right_only and not cmp.funny_files, (cmp.left_only, cmp.right_only)
    _, mismatch, errors = filecmp.cmpfiles(a, b, cmp.common_files, shallow=False)
    assert not mismatch and not errors, mismatch
    for d in cmp.common_dirs:
        _same_tree(os.path.join(a, d), os.path.join(b, d))


def test_given_reductions_are_written_as_the_hooks_own(tmp_path):
    g = np.random.default_rng(0).standard_normal((16, 8)).astype(np.float32)

    def run(mode):  # the C options through the binding: a wall time base makes files comparable
        o = smdc.smd_hook_options_create()
        smdc.smd_hook_options_set_save_config(o, smd.SaveConfig(save_interval=1)._to_c())
        smdc.smd_hook_options_add_include_collection(o, "gradients")
        smdc.smd_hook_options_set_reduction_config(
            o, smd.ReductionConfig(reductions=["min", "max", "mean", "std"], abs_reductions=["max"], norms=["l2"])._to_c())
        smdc.smd_hook_options_set_wall_time_base(o, 50.0)
        h = smd.Hook(None, _handle=smdc.smd_hook_create(str(tmp_path / ("r_" + mode)), o))
        for step in range(3):
            h.begin_step()
            x = g + step
            if mode == "host":
                h.save_tensor("gradient/w", x)
            else:
                *names, value, histogram = smdc.smd_hook_due_reductions(h._hook, "gradient/w")
                assert names == ["min", "max", "mean", "std", "l2", "abs_max"]
                assert value is False and histogram is False
                x64 = x.astype(np.float64)
                vals = {"min": x64.min(), "max": x64.max(), "mean": x64.mean(), "std": x64.std(),
                        "l2": np.sqrt((x64 * x64).sum()), "abs_max": np.abs(x64).max()}
                given = [(n[4:] if n.startswith("abs_") else n, n.startswith("abs_"), float(vals[n])) for n in names]
                # the collections smd.Hook.save_tensor names by default: "default"
                smdc.smd_hook_save_reductions(h._hook, "gradient/w", smdc.SMD_DTYPE_FLOAT32, list(x.shape), given,
                                              None, ["default"])
        h.close()
    run("host")
    run("given")
    _same_tree(str(tmp_path / "r_host"), str(tmp_path / "r_given"))
    t = smdebug.trials.create_trial(str(tmp_path / "r_given"))
    assert t.tensor("gradient/w").reduction_value(2, "max") == pytest.approx(float((g + 2).max()))


def test_missing_and_malformed_values_are_refused(tmp_path):
    h = _hook(tmp_path / "run")
    h.begin_step()
    with pytest.raises(E.SMDebugError, match="reduction min is due"):
        smdc.smd_hook_save_reductions(h._hook, "gradient/w", smdc.SMD_DTYPE_FLOAT32, [2], [("max", False, 1.0)], None, [])
    with pytest.raises(TypeError, match="tuples"):
        smdc.smd_hook_save_reductions(h._hook, "gradient/w", smdc.SMD_DTYPE_FLOAT32, [2], [("max", 1.0)], None, [])
    h.close()


def test_a_dlpack_capsule_is_saved_through_smds_dlpack_path(tmp_path):
    h = smd.Hook(str(tmp_path / "run"), save_config=smd.SaveConfig(save_interval=1), include_collections=["custom"])
    h.begin_step()
    a = np.arange(6, dtype=np.int16).reshape(2, 3)
    cap = a.__dlpack__()
    smdc.smd_py_hook_save_dlpack_capsule(h._hook, "cap", cap, ["custom"])
    with pytest.raises(TypeError, match="DLPack capsule"):
        smdc.smd_py_hook_save_dlpack_capsule(h._hook, "again", cap, ["custom"])  # consumed
    h.close()
    np.testing.assert_array_equal(smd.trials.create_trial(str(tmp_path / "run")).tensor("cap").value(0), a)


def test_finish_rows_equals_finish_bit_for_bit():
    # The PyTorch device path finishes a whole batch of tensors with finish_rows; every value
    # must be the one finish() gives for that tensor alone (NaN counts, empty tensors, signed
    # zeros, infinities and huge counts included).
    from smd._reductions import STATS, finish, finish_rows
    rng = np.random.default_rng(7)
    rows = 200
    table = rng.standard_normal((rows, len(STATS))) * 10.0 ** rng.integers(-30, 30, (rows, len(STATS)))
    for c in ("sumsq", "abssum", "absmin", "absmax", "absprod", "var", "absvar"):
        table[:, STATS.index(c)] = np.abs(table[:, STATS.index(c)])
    nan = STATS.index("nan")
    table[:, nan] = rng.integers(0, 2, rows) * rng.integers(1, 5, rows)
    table[::17, STATS.index("sum")] = -0.0
    table[::19, STATS.index("max")] = np.inf
    table[::23, STATS.index("var")] = np.nan
    counts = rng.integers(0, 1 << 20, rows)
    counts[::11] = 0
    counts[::13] = (1 << 53) + 1
    counts = counts.tolist()
    reductions = ["min", "max", "mean", "std", "variance", "sum", "prod", "l1", "l2", "median"]
    reductions += ["abs_" + r for r in reductions]
    medians = {"median": rng.standard_normal(rows), "abs_median": np.abs(rng.standard_normal(rows))}
    got = finish_rows(reductions, list(STATS), table, counts, medians)
    for i in range(rows):
        stats = dict(zip(STATS, table[i].tolist()))
        for j, r in enumerate(reductions):
            med = medians[r][i] if r in medians else None
            want = finish(r, stats, counts[i], float("nan") if stats["nan"] and med is not None else med)
            assert np.array_equal(np.float64(want), got[i, j], equal_nan=True) and \
                np.signbit(want) == np.signbit(got[i, j]), (i, r, want, got[i, j])
    with pytest.raises(ValueError, match="'median3'"):
        finish_rows(["median3"], list(STATS), table, counts)
