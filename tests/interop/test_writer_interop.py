"""smd's hook against the real smdebug (PyPI 1.0.34).

For every scenario the same script is run by smd (tests/interop/smd_scenario.c, public C API only)
and by smdebug's own hook (smdebug_scenario.py). Then:
  * the event and index files are byte-identical and the collections files are equal JSON;
  * the real smdebug opens smd's trial and answers exactly as for its own (smdebug_dump.py);
  * every value smdebug reads back from smd's trial is the one the script saved, at the same
    global step, mode and mode step.
"""
import json
import os
import re
from pathlib import Path

import numpy as np
import pytest

from conftest import load_json, reference_dump, run_oracle, run_smd_scenario
from scenarios import BYTE_IDENTICAL, SMDEBUG_READABLE


def write_both(name, tmp_path, smd_bin):
    scripts = BYTE_IDENTICAL[name]()
    ours, theirs = tmp_path / "smd", tmp_path / "smdebug"
    for i, script in enumerate(scripts):
        for out, runner in ((ours, lambda p: run_smd_scenario(smd_bin, p)), (theirs, run_oracle)):
            path = tmp_path / f"{out.name}_{i}.script"
            path.write_text(script.text(out), encoding="utf-8")
            runner(path)
    return scripts, ours, theirs


def files_under(root):
    return sorted(str(p.relative_to(root)) for p in Path(root).rglob("*") if p.is_file())


@pytest.fixture(scope="module")
def written(tmp_path_factory, smd_scenario_bin):
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = write_both(name, tmp_path_factory.mktemp(name), smd_scenario_bin)
        return cache[name]

    return get


@pytest.mark.parametrize("name", sorted(BYTE_IDENTICAL))
def test_files_identical_to_smdebug(name, written):
    _, ours, theirs = written(name)
    assert files_under(ours) == files_under(theirs)
    compared = 0
    for rel in files_under(theirs):
        a, b = (Path(ours) / rel).read_bytes(), (Path(theirs) / rel).read_bytes()
        if rel.startswith("collections/"):
            assert json.loads(a) == json.loads(b), rel
        else:
            assert a == b, f"{rel} differs"
        compared += 1
    assert compared > 0


@pytest.mark.parametrize("name", sorted(BYTE_IDENTICAL))
def test_smdebug_reads_smd_trial_as_its_own(name, written):
    _, ours, theirs = written(name)
    assert reference_dump(ours) == reference_dump(theirs)


def simulate(script_text):
    """What the script offered: (name, global step) -> (mode, mode step, array)."""
    step, mode = -1, "GLOBAL"
    mode_steps = {"GLOBAL": -1}
    offered = {}
    for line in script_text.splitlines():
        f = line.split("\t")
        if f[0] == "mode":
            mode = f[1]
            mode_steps.setdefault(mode, -1)
        elif f[0] == "step":
            step += 1
            mode_steps[mode] += 1
            if mode != "GLOBAL":
                mode_steps["GLOBAL"] = step
        elif f[0] == "tensor":
            shape = () if f[3] == "-" else tuple(int(d) for d in f[3].split("x"))
            arr = np.frombuffer(bytes.fromhex(f[4]), dtype=np.dtype(f[2])).reshape(shape)
            offered[(f[1], step)] = (mode, mode_steps[mode], arr)
        elif f[0] == "scalar_typed":
            arr = np.frombuffer(bytes.fromhex(f[3]), dtype=np.dtype(f[2])).reshape((1,))
            offered[("scalar/" + f[1], step)] = (mode, mode_steps[mode], arr)
        elif f[0] == "strings":
            items = [] if f[2] == "-" else [bytes.fromhex(h).decode("utf-8") for h in f[2].split(",")]
            offered[(f[1], step)] = (mode, mode_steps[mode], np.array(items, dtype=str))
    return offered


@pytest.mark.parametrize("name", sorted(BYTE_IDENTICAL))
def test_values_smdebug_reads_are_what_was_saved(name, written):
    from smdebug.trials import create_trial

    scripts, ours, _ = written(name)
    by_worker = {}
    for s in scripts:
        text = s.text(ours)
        worker = "worker_0"
        for line in text.splitlines():
            if line.startswith("option\tworker\t"):
                worker = line.split("\t")[2]
        by_worker[worker] = simulate(text)
    trial = create_trial(str(ours))
    assert trial.workers() == sorted(by_worker)
    checked = 0
    for tname in trial.tensor_names():
        t = trial.tensor(tname)
        for step in t.steps():
            for worker in t.workers(step):
                offered = by_worker[worker].get((tname, step))
                if offered is None:
                    # scalars, or a name smdebug derived from reduction tags, which drop ":<digits>"
                    stripped = {re.sub(r":\d+", "", n) for (n, _) in by_worker[worker]}
                    assert tname.startswith("scalar/") or tname in stripped, (tname, step)
                    continue
                mode, mode_step, want = offered
                assert trial.mode(step).name == mode
                assert trial.mode_step(step) == mode_step
                readable = want.dtype.name in SMDEBUG_READABLE or want.dtype.kind == "U"
                if not readable and want.dtype != np.int8:
                    continue  # smdebug cannot decode it; the byte comparison covers these
                try:
                    got = t.value(step, worker=worker)
                except Exception as e:  # only reductions/shapes saved at this step
                    assert type(e).__name__ == "TensorUnavailableForStep", e
                    continue
                if want.dtype.kind == "U":  # strings: compare the elements, not numpy's padding
                    assert got.dtype.kind == "U" and got.tolist() == want.tolist(), (tname, step)
                elif readable:  # its type too (scalars keep theirs)
                    assert got.dtype == want.dtype, (tname, step, got.dtype, want.dtype)
                if want.dtype.kind != "U":
                    assert got.tobytes() == want.tobytes(), (tname, step, worker)
                assert got.shape == want.shape, (tname, step, got.shape, want.shape)
                checked += 1
    assert checked > 0


def test_reductions_equal_numpy(written):
    """The saved reductions of 1-D tensors are numpy's values, in numpy's dtypes."""
    from smdebug.trials import create_trial

    scripts, ours, _ = written("reductions")
    offered = simulate(scripts[0].text(ours))
    trial = create_trial(str(ours))
    ops = {"min": np.min, "max": np.max, "mean": np.mean, "std": np.std, "variance": np.var,
           "sum": np.sum, "prod": np.prod, "l1": lambda x: np.linalg.norm(x, 1),
           "l2": lambda x: np.linalg.norm(x, 2)}
    checked = 0
    for (tname, step), (_, _, arr) in offered.items():
        t = trial.tensor(tname)
        for op, fn in ops.items():
            for absolute in (False, True):
                want = np.asarray(fn(np.absolute(arr) if absolute else arr))
                if want.dtype.name not in SMDEBUG_READABLE:
                    continue  # e.g. a uint64 sum: smdebug cannot decode it (bytes compared above)
                got = np.asarray(t.reduction_value(step, op, abs=absolute))
                assert got.dtype == want.dtype, (tname, op, absolute, got.dtype, want.dtype)
                assert got.reshape(()).tobytes() == want.tobytes(), (tname, op, absolute, got, want)
                checked += 1
    assert checked > 150
