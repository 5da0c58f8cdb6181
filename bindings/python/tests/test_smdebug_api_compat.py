"""What scripts written for smdebug rely on, checked by running the same code on smd and on the
real smdebug (same process) and comparing: return types (scalar or array, list or view, dtype),
module paths, the trial's collections made by a script, rules invoked one step at a time,
refresh blocks that hand the trials back, index entries without an event file, and the hook's
pre-step saves and scalar timestamps (against smdebug's hook fed with numpy arrays,
tests/interop/smdebug_hook.py).
"""
import importlib
import json
import os
import shutil
import sys

import numpy as np
import pytest

import smd
import smd.trials
import smdebug.trials
from conftest import FIXTURES, REPO

sys.path.insert(0, str(REPO / "tests" / "interop"))


def _lib(name):
    """The two libraries' modules under one set of names."""
    root = "smd" if name == "smd" else "smdebug"
    return {
        "trials": importlib.import_module(f"{root}.trials"),
        "modes": importlib.import_module(f"{root}.core.modes").ModeKeys,
        "rules": importlib.import_module(f"{root}.rules"),
        "exceptions": importlib.import_module(f"{root}.exceptions"),
        "utils": importlib.import_module(f"{root}.analysis.utils"),
    }


LIBS = ["smdebug", "smd"]


def _kind(x):
    """A value's type as a script sees it: the container and the element types, the dtype."""
    if isinstance(x, np.ndarray):
        return ("ndarray", str(x.dtype), x.shape)
    if isinstance(x, np.generic):
        return (type(x).__name__, str(x.dtype))
    if isinstance(x, dict):
        return ("dict", sorted({repr(_kind(k)) for k in x}), sorted({repr(_kind(v)) for v in x.values()}))
    if type(x).__name__ in ("dict_keys", "dict_values"):
        return (type(x).__name__, sorted({repr(_kind(v)) for v in x}))
    if isinstance(x, (list, tuple, set)):
        return (type(x).__name__, sorted({repr(_kind(v)) for v in x}))
    if type(x).__name__ in ("ModeKeys", "StepState"):
        return (type(x).__name__,)
    return (type(x).__name__,)


def _walk_types(lib, path):
    L = _lib(lib)
    t = L["trials"].create_trial(str(path))
    tn = t.tensor("rr_vec32")
    out = {
        "steps": t.steps(), "modes": t.modes(), "mode": t.mode(0), "mode_step": t.mode_step(0),
        "mode_modestep": t.mode_modestep(0), "global_step": t.global_step(L["modes"].TRAIN, 0),
        "workers": t.workers(), "tensor_names": t.tensor_names(), "has_tensor": t.has_tensor("r_vec32"),
        "has_passed_step": t.has_passed_step(0), "num_workers": t.num_workers,
        "t.steps": tn.steps(), "t.value": tn.value(0), "t.values": tn.values(), "t.shape": tn.shape(0),
        "t.workers": tn.workers(0), "t.prev_steps": tn.prev_steps(2, 2),
        "t.reduction_value saved": tn.reduction_value(0, "min"),
        "t.reduction_value saved abs": tn.reduction_value(0, "mean", abs=True),
        "t.reduction_values": tn.reduction_values(0),
        "coll.tensor_names": t.collection("red").tensor_names,
        "coll.include_regex": t.collection("red").include_regex,
    }
    return {k: _kind(v) for k, v in out.items()}


def test_return_types_match_smdebug():
    path = FIXTURES / "reductions_float"
    ref, mine = _walk_types("smdebug", path), _walk_types("smd", path)
    assert mine == ref


def test_computed_reduction_is_a_numpy_scalar_as_in_smdebug():
    """A reduction computed from the raw value is a numpy scalar (float() works under numpy 2);
    a saved one is the saved (1,) array, in both libraries."""
    path = FIXTURES / "modes_reentry"
    got = {}
    for lib in LIBS:
        tensor = _lib(lib)["trials"].create_trial(str(path)).tensor("fc.weight")
        s = tensor.steps()[0]
        assert not tensor.reduction_values(s)  # nothing saved: computed from the value
        v = tensor.reduction_value(s, "max")
        assert float(v) == float(np.max(tensor.value(s)))
        got[lib] = _kind(v)
    assert got["smd"] == got["smdebug"]
    assert got["smd"] == ("float32", "float32")


def test_unknown_collection_is_made_by_the_script(tmp_path):
    """trial.collection(name) of a name the trial lacks: a new empty collection the script fills
    and queries with tensor_names(collection=...), kept by the trial."""
    path = FIXTURES / "reductions_float"
    answers = {}
    for lib in LIBS:
        t = _lib(lib)["trials"].create_trial(str(path))
        c = t.collection("mine")
        before = (sorted(c.tensor_names), list(c.include_regex))
        c.include("vec32$")
        c.add_tensor_name("r_mat32")
        c.add_tensor_name("not/saved")
        answers[lib] = (before, t.tensor_names(collection="mine"), t.tensor_names(collection=c),
                        t.tensor_names(collection="mine", step=1), t.collection("mine") is c,
                        "mine" in t.collections())
    assert answers["smd"] == answers["smdebug"]
    assert answers["smd"][0] == ([], [])


def test_no_refresh_and_refresh_give_the_trials_back():
    path = FIXTURES / "reductions_float"
    for lib in LIBS:
        L = _lib(lib)
        tr = L["trials"].create_trial(str(path))
        with L["utils"].no_refresh([tr]) as [inner]:
            assert inner is tr
            assert inner.steps() == tr.steps()
        with L["utils"].refresh(tr) as same:
            assert same is tr


def _write_steps(path, steps, names):
    """A trial written by smd's hook: float32 tensors `names`, value = step, every step."""
    with smd.Hook(str(path), save_config=smd.SaveConfig(save_interval=1), include_regex=".*") as h:
        for s in range(steps):
            h.begin_step()
            for n in names:
                h.save_tensor(n, np.full(3, s, np.float32))


def test_rule_invoke_and_required_tensors(tmp_path):
    """Rule.invoke(step) and self.req_tensors.get() as smdebug's tests use them."""
    path = tmp_path / "run"
    _write_steps(path, 3, ["foo_0", "foo_1"])
    answers = {}
    for lib in LIBS:
        L = _lib(lib)
        seen = []

        class TestRule(L["rules"].Rule):
            def __init__(self, base_trial):
                super().__init__(base_trial=base_trial, action_str="")

            def set_required_tensors(self, step):
                for n in self.base_trial.tensor_names():
                    self.req_tensors.add(n, steps=[step])

            def invoke_at_step(self, step):
                got = self.req_tensors.get()
                seen.append((step, type(got).__name__, sorted(t.name for t in got),
                             sorted(self.req_tensors.get_names()), self.req_tensors.get_tensor_steps("foo_0")))
                return step == 2

        r = TestRule(L["trials"].create_trial(str(path)))
        r.invoke(0)
        r.invoke(1)
        with pytest.raises(L["exceptions"].RuleEvaluationConditionMet):
            r.invoke(2)
        try:
            r.invoke(7)  # the job ended at step 2
            after_end = "returned"
        except Exception as e:  # the class name is compared
            after_end = type(e).__name__
        answers[lib] = (seen, after_end)
    assert answers["smd"] == answers["smdebug"]
    assert answers["smd"][1] == "NoMoreData"


def _dummy_trial(path, entries):
    """A trial as smdebug's analysis tests make it: collections files and index files whose
    event_file_name is empty."""
    (path / "collections" / "000000000").mkdir(parents=True)
    with open(path / "collections" / "000000000" / "worker_0_collections.json", "w") as f:
        json.dump({"collections": {}, "_meta": {"num_workers": 1}}, f)
    _dummy_trial_add(path, entries)


def _dummy_trial_add(path, entries):
    for step, mode, mode_step in entries:
        d = path / "index" / "000000000"
        d.mkdir(parents=True, exist_ok=True)
        doc = {"meta": {"mode": mode, "mode_step": mode_step, "event_file_name": ""},
               "tensor_payload": [{"tensorname": "gradients/dummy:0", "start_idx": 0, "length": 1}]}
        with open(d / f"{step:012d}_worker_0.json", "w") as f:
            json.dump(doc, f)


def test_index_entries_without_an_event_file_list_their_steps(tmp_path):
    _dummy_trial(tmp_path / "t", [(0, "TRAIN", 0), (1, "TRAIN", 1), (2, "EVAL", 0)])
    answers = {}
    for lib in LIBS:
        L = _lib(lib)
        t = L["trials"].create_trial(str(tmp_path / "t"))
        answers[lib] = (t.steps(show_incomplete_steps=True), t.steps(mode=L["modes"].TRAIN, show_incomplete_steps=True),
                        t.tensor_names(), t.tensor("gradients/dummy:0").steps(show_incomplete_steps=True))
    assert answers["smd"] == answers["smdebug"]
    assert answers["smd"][0] == [0, 1, 2]
    t = smd.trials.create_trial(str(tmp_path / "t"))
    with pytest.raises(smd.exceptions.TensorUnavailableForStep, match="names no event file"):
        t.tensor("gradients/dummy:0").value(0)


def test_loaded_all_steps_follows_the_end_of_the_job(tmp_path):
    _dummy_trial(tmp_path / "t", [(0, "TRAIN", 0), (1, "TRAIN", 1)])
    answers = {}
    for lib in LIBS:
        t = _lib(lib)["trials"].create_trial(str(tmp_path / "t"))
        before = t.loaded_all_steps
        (tmp_path / "t" / "training_job_end.ts").touch()
        with open(tmp_path / "t" / "index" / "000000000" / "000000000002_worker_0.json", "w") as f:
            json.dump({"meta": {"mode": "EVAL", "mode_step": 0, "event_file_name": ""},
                       "tensor_payload": [{"tensorname": "gradients/dummy:0", "start_idx": 0, "length": 1}]}, f)
        t.refresh_data() if lib == "smd" else t.maybe_refresh()
        answers[lib] = (before, t.loaded_all_steps, t.steps(show_incomplete_steps=True))
        (tmp_path / "t" / "training_job_end.ts").unlink()
        (tmp_path / "t" / "index" / "000000000" / "000000000002_worker_0.json").unlink()
    assert answers["smd"] == answers["smdebug"] == (False, True, [0, 1, 2])
    # Ended before the trial was opened: True at once.
    (tmp_path / "t" / "training_job_end.ts").touch()
    assert smd.trials.create_trial(str(tmp_path / "t")).loaded_all_steps is True


def test_loaded_all_steps_never_raises_and_follows_the_open(tmp_path):
    """The attribute reads the C trial's own state: an ended trial opened without automatic
    refresh has loaded every step (the refresh at open saw the end), and a malformed index file
    met by the refresh the attribute makes is not raised from it (smdebug's attribute never
    raises); the next query reports it."""
    _dummy_trial(tmp_path / "t", [(0, "TRAIN", 0), (1, "TRAIN", 1)])
    (tmp_path / "t" / "training_job_end.ts").touch()
    assert smd.trials.create_trial(str(tmp_path / "t"), auto_refresh=False).loaded_all_steps is True
    (tmp_path / "t" / "training_job_end.ts").unlink()
    t = smd.trials.create_trial(str(tmp_path / "t"))
    assert t.loaded_all_steps is False
    (tmp_path / "t" / "index" / "000000000" / "000000000002_worker_0.json").write_text("{not json")
    (tmp_path / "t" / "training_job_end.ts").touch()
    assert t.loaded_all_steps is True
    assert t.steps() == [0, 1] and any("000000000002_worker_0.json" in w for w in t.warnings())


def test_tensor_original_name_as_smdebug(tmp_path):
    """Tensor.original_name: the shape entries' "originalname" (smdebug's TensorFlow hooks write
    the variable's own name there), None for a tensor saved without its shape."""
    shutil.copytree(FIXTURES / "shapes", tmp_path / "shapes")
    index = tmp_path / "shapes" / "index" / "000000000" / "000000000001_worker_0.json"
    entries = json.loads(index.read_text())
    for e in entries["shape_payload"]:
        if e["tensorname"] == "sh_4d":
            e["originalname"] = "model/sh_4d:0"
    index.write_text(json.dumps(entries))
    answers = {}
    for lib in LIBS:
        trials = _lib(lib)["trials"]
        t = trials.create_trial(str(tmp_path / "shapes"))
        m = trials.create_trial(str(FIXTURES / "modes_reentry"))
        answers[lib] = (t.tensor("sh_4d").original_name, t.tensor("b_mat").original_name,
                        m.tensor("loss").original_name)
    assert answers["smd"] == answers["smdebug"] == ("model/sh_4d:0", "b_mat", None)


def test_reader_position_last_complete_step_and_last_index_token(tmp_path):
    """smdebug's trial.last_complete_step and trial.last_index_token (its analysis tests assert
    them) after each refresh of a growing trial, opened by a path with a trailing slash."""
    answers = {}
    for lib in LIBS:
        root = tmp_path / lib
        _dummy_trial(root, [])
        t = _lib(lib)["trials"].create_trial(str(root) + "/")
        seen = [(t.steps(), t.last_complete_step, t.last_index_token)]
        _dummy_trial_add(root, [(0, "TRAIN", 0), (1, "TRAIN", 1)])
        t.refresh_data() if lib == "smd" else t.maybe_refresh()
        seen.append((t.steps(), t.last_complete_step, t.last_index_token))
        _dummy_trial_add(root, [(2, "EVAL", 0), (3, "TRAIN", 2)])
        (root / "training_job_end.ts").touch()
        t.refresh_data() if lib == "smd" else t.maybe_refresh()
        seen.append((t.steps(), t.last_complete_step, t.last_index_token))
        answers[lib] = [(s, c, tok and os.path.relpath(tok, root)) for s, c, tok in seen]
    assert answers["smd"] == answers["smdebug"]
    assert answers["smd"][0] == ([], -1, None)
    assert answers["smd"][1][1:] == (1, "index/000000000/000000000001_worker_0.json")
    assert answers["smd"][2][1:] == (3, "index/000000000/000000000003_worker_0.json")


def test_smdebug_modekeys_are_accepted_and_compare_equal(tmp_path):
    from smdebug.core.modes import ModeKeys as SmdebugModes
    from smd.modes import ModeKeys
    for m in ModeKeys:
        assert m == SmdebugModes[m.name] and SmdebugModes[m.name] == m and hash(m) == hash(SmdebugModes[m.name])
        assert m != SmdebugModes[[n for n in ModeKeys.__members__ if n != m.name][0]]
    assert {SmdebugModes.TRAIN: 1}[ModeKeys.TRAIN] == 1
    _dummy_trial(tmp_path / "t", [(0, "TRAIN", 0), (1, "EVAL", 0)])
    t = smd.trials.create_trial(str(tmp_path / "t"))
    assert t.steps(mode=SmdebugModes.EVAL, show_incomplete_steps=True) == [0]  # mode steps
    assert t.mode(1) == SmdebugModes.EVAL and t.mode(0) != SmdebugModes.EVAL
    assert SmdebugModes.TRAIN in t.modes()


def test_smdebug_module_paths():
    """Every public module path and name smdebug's own tests import (outside the frameworks and
    smdebug's internals) exists in smd."""
    names = {
        "trials": ["create_trial", "LocalTrial", "S3Trial", "Trial"],
        "core.modes": ["ModeKeys"],
        "core.collection": ["Collection", "CollectionKeys"],
        "core.save_config": ["SaveConfig", "SaveConfigMode"],
        "core.reduction_config": ["ReductionConfig", "ALLOWED_REDUCTIONS", "ALLOWED_NORMS"],
        "core.tensor": ["StepState"],
        "analysis.utils": ["no_refresh", "refresh"],
        "rules": ["Rule", "invoke_rule", "RequiredTensors"],
        "exceptions": ["StepNotYetAvailable", "StepUnavailable", "TensorUnavailable", "NoMoreData",
                       "TensorUnavailableForStep", "MissingCollectionFiles", "IndexReaderException",
                       "SMDebugRuntimeError", "RuleEvaluationConditionMet"],
        "": ["modes", "SaveConfig", "SaveConfigMode", "ReductionConfig", "CollectionKeys"],
    }
    for mod, attrs in names.items():
        ref = importlib.import_module("smdebug" + ("." + mod if mod else ""))
        mine = importlib.import_module("smd" + ("." + mod if mod else ""))
        for a in attrs:
            assert hasattr(ref, a), f"smdebug.{mod}.{a}"
            assert hasattr(mine, a), f"smd.{mod} has no {a}"
    ref_keys = {k: v for k, v in vars(importlib.import_module("smdebug.core.collection").CollectionKeys).items()
                if k.isupper()}
    mine_keys = {k: v for k, v in vars(smd.CollectionKeys).items() if k.isupper()}
    assert ref_keys.items() <= mine_keys.items()
    for name in ("ALLOWED_REDUCTIONS", "ALLOWED_NORMS"):
        assert getattr(importlib.import_module("smd.core.reduction_config"), name) == \
            getattr(importlib.import_module("smdebug.core.reduction_config"), name)


def test_local_trial(tmp_path):
    t = smd.trials.LocalTrial(name="x", dirname=str(FIXTURES / "reductions_float"))
    ref = smdebug.trials.LocalTrial(name="x", dirname=str(FIXTURES / "reductions_float"))
    assert (t.name, t.steps(), t.tensor_names()) == (ref.name, ref.steps(), ref.tensor_names())
    padded = smd.trials.create_trial("  " + str(FIXTURES / "reductions_float") + " ")  # as smdebug
    assert padded.steps() == ref.steps()


# ---- the hook -------------------------------------------------------------------------------

def _events(path):
    """{tensor name: (global step, wall_time, value)} of every event file of a trial."""
    from smdebug.core.reader import FileReader  # what smdebug's own save_scalar tests read with
    out = {}
    for root, _, files in os.walk(path / "events"):
        for f in files:
            for ev in FileReader(os.path.join(root, f)).read_events():
                out[ev["name"]] = (ev["step"], ev["timestamp"], ev["value"].tolist())
    return out


def test_saves_before_the_first_step_and_scalar_timestamps(tmp_path):
    """A save_scalar (with or without timestamp) and a save_tensor before the first step land in
    step 0 with its mode, as with smdebug's hook; the timestamp is the event's wall time."""
    import smdebug_hook
    from smdebug import SaveConfig as SDSaveConfig, modes as sdmodes
    ref = smdebug_hook.NumpyHook(str(tmp_path / "ref"), save_config=SDSaveConfig(save_interval=2),
                                 include_collections=["weights", "losses"])
    mine = smd.Hook(str(tmp_path / "mine"), save_config=smd.SaveConfig(save_interval=2),
                    include_collections=["weights", "losses"])
    for h in (ref, mine):
        h.save_scalar("early", 1.5, timestamp=1234.5)
        h.save_tensor("pre.weight", np.ones(3, np.float32), "weights")
    ref.set_mode(sdmodes.TRAIN)
    mine.set_mode(smd.modes.TRAIN)
    for step in range(3):
        ref.begin_step()
        mine.begin_step()
        ref.record("fc.weight", np.ones(2, np.float32) * step)
        mine.save_tensor("fc.weight", np.ones(2, np.float32) * step)
    ref.close()
    mine.close()
    got = {}
    for name in ("ref", "mine"):
        t = smdebug.trials.create_trial(str(tmp_path / name))
        got[name] = {n: (t.tensor(n).steps(), t.tensor(n).steps(mode=sdmodes.TRAIN)) for n in t.tensor_names()}
        ev = _events(tmp_path / name)
        assert ev["scalar/early"][:2] == (0, 1234.5)
    assert got["mine"] == got["ref"]
    assert got["mine"]["scalar/early"] == ([0], [0])
    assert got["mine"]["pre.weight"] == ([0], [0])


def test_hook_attributes(tmp_path):
    """out_dir, tensorboard_dir and include_collections as smdebug's hook sets them."""
    import smdebug_hook
    cases = [dict(), dict(export_tensorboard=True), dict(tensorboard_dir=str(tmp_path / "tb")),
             dict(include_collections=["weights"]), dict(include_collections=["weights"], include_regex="fc")]
    for i, kw in enumerate(cases):
        ref = smdebug_hook.NumpyHook(str(tmp_path / f"ref{i}"), **kw)
        mine = smd.Hook(str(tmp_path / f"mine{i}"), **kw)
        assert mine.out_dir == str(tmp_path / f"mine{i}")
        rtb, mtb = ref.tensorboard_dir, mine.tensorboard_dir
        assert (rtb is None) == (mtb is None), kw
        if rtb is not None:
            assert mtb == rtb.replace(f"ref{i}", f"mine{i}")
        assert sorted(mine.include_collections) == sorted(ref.include_collections), kw
        ref.close()
        mine.close()
        shutil.rmtree(tmp_path / f"ref{i}", ignore_errors=True)


def test_save_and_reduction_config_json_round_trips():
    """to_json / from_json / == of SaveConfig and ReductionConfig, as smdebug's tests use them;
    the JSON text is smdebug's."""
    from smdebug.core.reduction_config import ReductionConfig as SDReduction
    from smdebug.core.save_config import SaveConfig as SDSave
    from smd.core.reduction_config import ReductionConfig
    from smd.core.save_config import SaveConfig
    for kw in (dict(save_interval=11, start_step=10, save_steps=[50]), dict(), dict(start_step=100),
               dict(end_step=7)):
        mine, ref = SaveConfig(**kw), SDSave(**kw)
        assert mine.to_json() == ref.to_json()
        assert SaveConfig.from_json(mine.to_json()) == mine
        assert SaveConfig.from_json(mine.to_json()).to_json() == mine.to_json()
    assert SaveConfig(save_interval=2) != SaveConfig(save_interval=3)
    for kw in (dict(reductions=["min"], norms=["l2"]), dict(), dict(save_raw_tensor=True),
               dict(abs_reductions=["mean"], abs_norms=["l1"], save_shape=True),
               dict(reductions=["min"], abs_reductions=["mean"], norms=["l2"], abs_norms=["l1"])):
        mine, ref = ReductionConfig(**kw), SDReduction(**kw)
        assert mine.to_json() == ref.to_json()
        assert ReductionConfig.from_json(mine.to_json()) == mine
    assert ReductionConfig(reductions=["min"]) != ReductionConfig(reductions=["max"])


def test_numpy_integer_steps_and_unknown_steps_as_smdebug():
    """Steps given as numpy integers (a script's np.array of steps) are taken; a global step or
    mode step the trial does not know gives None, as smdebug answers."""
    path = FIXTURES / "modes_reentry"
    got = {}
    for lib in LIBS:
        L = _lib(lib)
        t = L["trials"].create_trial(str(path))
        steps = np.array(t.steps())
        name = "fc.weight"
        tensor = t.tensor(name)
        tsteps = np.array(tensor.steps())
        got[lib] = {
            "value": tensor.value(tsteps[0]).tolist(),
            "shape": tensor.shape(tsteps[0]),
            "workers": tensor.workers(tsteps[0]),
            "prev_steps": tensor.prev_steps(tsteps[-1], np.int64(2)),
            "mode": repr(t.mode(steps[0])).split(".")[-1],
            "mode_step": t.mode_step(steps[-1]),
            "has_passed_step": t.has_passed_step(steps[0]).name,
            "global_step": t.global_step(L["modes"].TRAIN, np.int32(0)),
            "unknown": (t.mode(10**6), t.mode_step(10**6), t.mode_modestep(10**6),
                        t.global_step(L["modes"].EVAL, 10**6)),
        }
    assert got["smd"] == got["smdebug"]
    assert got["smd"]["unknown"] == (None, None, (None, None), None)


def test_hook_mode_steps_and_pickling_as_smdebug(tmp_path):
    """hook.mode_steps holds GLOBAL and every mode set so far; a hook and its collections can be
    pickled and deep-copied (objects holding them travel), and the hook goes on writing."""
    import copy
    import pickle

    import smdebug_hook
    from smdebug import modes as sd_modes
    got = {}
    for lib, make, M in (("smdebug", smdebug_hook.NumpyHook, sd_modes), ("smd", smd.Hook, smd.modes)):
        h = make(str(tmp_path / lib), save_config=(smd if lib == "smd" else __import__("smdebug")).SaveConfig(save_interval=1))
        log = [dict(h.mode_steps)]
        h.set_mode(M.TRAIN)
        log.append(dict(h.mode_steps))
        h.begin_step()
        h.begin_step()
        h.set_mode(M.EVAL)
        log.append(dict(h.mode_steps))
        h.begin_step()
        h.set_mode(M.TRAIN)
        h.begin_step()
        log.append(dict(h.mode_steps))
        got[lib] = [{k.name: v for k, v in d.items()} for d in log]
        pickle.loads(pickle.dumps(h))
        copy.deepcopy(h)
        coll = pickle.loads(pickle.dumps(h.get_collection("default")))
        assert coll.name == "default"
        h.save_tensor("after_pickling", np.ones(3, np.float32), ["default"])
        h.close()
    assert got["smd"] == got["smdebug"]
    assert "after_pickling" in smd.trials.create_trial(str(tmp_path / "smd")).tensor_names()


def test_reduction_of_a_string_tensor_raises_in_both(tmp_path):
    """A reduction of a text tensor cannot be computed: smdebug raises numpy's error (a TypeError
    or ValueError from the ufunc), smd SMDebugNotImplementedError naming the reduction and the
    tensor (docs/compatibility.md R15). Neither answers a number."""
    hook = smd.Hook(str(tmp_path / "t"), save_all=True)
    hook.save_tensor("words", np.array(["a", "bc"]))
    hook.close()
    for reduction in ("min", "max", "mean", "l2"):
        with pytest.raises((TypeError, ValueError)):
            smdebug.trials.create_trial(str(tmp_path / "t")).tensor("words").reduction_value(0, reduction)
        with pytest.raises(smd.exceptions.SMDebugNotImplementedError, match=f"{reduction} of string tensor words"):
            smd.trials.create_trial(str(tmp_path / "t")).tensor("words").reduction_value(0, reduction)


def test_has_passed_step_of_a_mode_step_not_all_workers_wrote(tmp_path):
    """An ended two-worker job whose EVAL mode step 5 (global step 15) only worker_0 wrote:
    smdebug's has_passed_step raises KeyError (its log line looks the *mode* step up among the
    global steps, and no global step 5 was saved); smd answers AVAILABLE, as smdebug's own rule
    says: the job is complete (docs/compatibility.md S9)."""
    from smd.modes import ModeKeys as M
    import smdebug.core.modes as smdebug_modes
    out = str(tmp_path / "t")
    config = smd.SaveConfig(mode_save_configs={M.TRAIN: smd.SaveConfigMode(save_interval=10),
                                               M.EVAL: smd.SaveConfigMode(save_steps=[5])})
    hooks = [smd.Hook(out, save_all=True, worker=w, num_workers=2, include_workers="all",
                      save_config=config) for w in ("worker_0", "worker_1")]
    for i, h in enumerate(hooks):
        h.set_mode(M.TRAIN)
        for _ in range(10):
            h.begin_step()
            h.save_tensor("x", np.ones(2, np.float32))
        h.set_mode(M.EVAL)
        for _ in range(6 if i == 0 else 0):
            h.begin_step()
            h.save_tensor("x", np.ones(2, np.float32))
    for h in hooks:
        h.close()
    ref = smdebug.trials.create_trial(out)
    assert ref.steps(mode=smdebug_modes.ModeKeys.EVAL) == [0, 5] and ref.loaded_all_steps
    with pytest.raises(KeyError):
        ref.has_passed_step(5, mode=smdebug_modes.ModeKeys.EVAL)
    trial = smd.trials.create_trial(out)
    assert trial.steps(mode=M.EVAL) == [0, 5]
    assert trial.has_passed_step(5, mode=M.EVAL) == smd.trials.StepState.AVAILABLE
    assert trial.tensor("x").workers(15) == ["worker_0"]


def _collection_configs(lib, path):
    """{collection: (reduction_config, save_config)} of one library's trial, each as its
    to_json_dict() (None for none)."""
    t = _lib(lib)["trials"].create_trial(str(path))
    out = {}
    for name in t.collections():
        c = t.collection(name)
        rc, sc = c.reduction_config, c.save_config
        out[name] = (None if rc is None else rc.to_json_dict(), None if sc is None else sc.to_json_dict())
    return out


def _configure_hook(m, hook):
    """The same per-collection configurations on a hook of either library (module m)."""
    modes = m.modes
    acts = hook.get_collection("acts")
    acts.include("^act")
    acts.save_config = m.SaveConfig(mode_save_configs={
        modes.TRAIN: m.SaveConfigMode(save_interval=2, start_step=1, end_step=9, save_steps=[4, 11]),
        modes.EVAL: m.SaveConfigMode(save_interval=5),
        modes.PREDICT: m.SaveConfigMode(save_interval=1, end_step=3),
        modes.GLOBAL: m.SaveConfigMode(save_interval=7, start_step=2)})
    acts.reduction_config = m.ReductionConfig(reductions=["max"], abs_reductions=["mean"], norms=["l2"],
                                              abs_norms=["l1"], save_raw_tensor=True)
    shapes = hook.get_collection("shapes")
    shapes.include("^shp")
    shapes.reduction_config = m.ReductionConfig(save_shape=True)
    return ["weights", "losses", "acts", "shapes"]


def test_collection_reduction_and_save_configs_as_smdebug(tmp_path):
    """trial.collection(name).reduction_config and .save_config equal smdebug's, on trials written
    by smdebug's hook and by smd's, with per-collection configurations."""
    import smdebug
    import smdebug_hook
    for writer in ("smdebug", "smd"):
        m = smdebug if writer == "smdebug" else smd
        make = smdebug_hook.NumpyHook if writer == "smdebug" else smd.Hook
        hook = make(str(tmp_path / writer), save_config=m.SaveConfig(save_interval=3),
                    reduction_config=m.ReductionConfig(norms=["l1"], save_raw_tensor=True),
                    include_collections=["weights", "losses", "acts", "shapes"])
        _configure_hook(m, hook)
        hook.set_mode(m.modes.TRAIN)
        for step in range(4):
            hook.begin_step()
            if writer == "smdebug":
                hook.record("act/relu", np.ones(3, np.float32) * step)
                hook.record("shp/x", np.ones(2, np.float32))
            else:
                hook.save_tensor("act/relu", np.ones(3, np.float32) * step)
                hook.save_tensor("shp/x", np.ones(2, np.float32))
        hook.close()
        ref = _collection_configs("smdebug", tmp_path / writer)
        got = _collection_configs("smd", tmp_path / writer)
        assert got == ref, writer
        acts_rc, acts_sc = got["acts"]
        assert acts_rc == {"save_raw_tensor": True, "reductions": "max,l2_norm,abs_mean,abs_l1_norm",
                           "save_shape": False}
        assert acts_sc["TRAIN"] == {"save_interval": 2, "save_steps": [4, 11], "start_step": 1, "end_step": 9}
        assert acts_sc["GLOBAL"] == {"save_interval": 7, "save_steps": [], "start_step": 2, "end_step": None}
        assert got["shapes"][0]["save_shape"] is True
    # the smd objects compare equal to ones made by hand, and their types are smd's
    c = smd.trials.create_trial(str(tmp_path / "smd")).collection("acts")
    assert isinstance(c.reduction_config, smd.ReductionConfig)
    assert c.reduction_config == smd.ReductionConfig(reductions=["max"], abs_reductions=["mean"], norms=["l2"],
                                                     abs_norms=["l1"], save_raw_tensor=True)
    assert isinstance(c.save_config, smd.SaveConfig)
    assert c.save_config.get_save_config(smd.modes.EVAL) == smd.SaveConfigMode(save_interval=5)
    assert c.save_config.should_save_step(smd.modes.TRAIN, 4)
    assert not c.save_config.should_save_step(smd.modes.TRAIN, 10)


COLLECTIONS_BY_HAND = {
    "none": {"name": "none", "include_regex": [], "reduction_config": None, "save_config": None},
    "missing": {"name": "missing"},
    "empty": {"name": "empty", "reduction_config": {}, "save_config": {}},
    "partial": {"name": "partial",
                "reduction_config": {"reductions": "min,abs_l2_norm"},
                "save_config": {"TRAIN": {"save_interval": 4}, "EVAL": None,
                                "PREDICT": {"save_interval": None, "start_step": "3", "end_step": 8,
                                            "save_steps": [5, 1], "other": "ignored"},
                                "GLOBAL": {"save_steps": None}}},
}


def test_collection_configs_with_nulls_and_missing_keys_as_smdebug(tmp_path):
    """A collections file written by hand: null and missing values read as smdebug reads them
    (no configuration, an unset mode, SaveConfigMode's defaults)."""
    (tmp_path / "collections" / "000000000").mkdir(parents=True)
    (tmp_path / "collections" / "000000000" / "worker_0_collections.json").write_text(
        json.dumps({"collections": COLLECTIONS_BY_HAND, "_meta": {"num_workers": 1}}))
    (tmp_path / "training_job_end.ts").write_text("")
    ref = _collection_configs("smdebug", tmp_path)
    got = _collection_configs("smd", tmp_path)
    assert got == ref
    assert got["none"] == got["missing"] == (None, None)
    assert got["empty"] == ({"save_raw_tensor": False, "reductions": "", "save_shape": False},
                            {"TRAIN": None, "EVAL": None, "PREDICT": None, "GLOBAL": None})
    assert got["partial"][1]["PREDICT"] == {"save_interval": 500, "save_steps": [5, 1], "start_step": 3,
                                            "end_step": 8}


def test_collection_save_config_malformed(tmp_path):
    """A save_config smdebug's loader refuses makes smdebug's trial fail to open; smd's opens
    (its reader does not need the save_config): the collection has none, and a warning names
    the file, the collection and what is wrong."""
    (tmp_path / "collections" / "000000000").mkdir(parents=True)
    (tmp_path / "collections" / "000000000" / "worker_0_collections.json").write_text(json.dumps(
        {"collections": {"c": {"name": "c", "save_config": {"TRAIN": {"save_interval": "often"}}}},
         "_meta": {"num_workers": 1}}))
    (tmp_path / "training_job_end.ts").write_text("")
    with pytest.raises(ValueError):  # smdebug: int("often")
        smdebug.trials.create_trial(str(tmp_path))
    trial = smd.trials.create_trial(str(tmp_path))
    assert trial.collection("c").save_config is None
    (warning,) = trial.warnings()
    assert "worker_0_collections.json" in warning and "save_interval" in warning and "'c'" in warning


def test_tensor_unavailable_for_step_with_reductions_differs_only_by_a_space():
    """A tensor saved as reductions only: value() raises TensorUnavailableForStep in both
    libraries with the same text, except that smd separates the two sentences
    (docs/compatibility.md P7: smdebug glues "saved.This")."""
    said = {}
    for lib in LIBS:
        L = _lib(lib)
        with pytest.raises(L["exceptions"].TensorUnavailableForStep) as e:
            L["trials"].create_trial(str(FIXTURES / "reductions_float")).tensor("r_vec32").value(0)
        said[lib] = str(e.value)
    assert "as it was not saved.This tensor has reductions" in said["smdebug"]
    assert said["smd"] == said["smdebug"].replace("saved.This", "saved. This")


def test_collection_save_config_for_some_modes_takes_the_hooks_for_the_others(tmp_path):
    """A collection's SaveConfig that names only TRAIN leaves EVAL to the hook's own save
    configuration, as in smdebug (SaveConfig keeps the modes it was not given as None, and the
    hook fills them from its own); smd filled them with the default (every 500 steps), so the
    collection's EVAL steps were not saved."""
    import smdebug_hook
    from smdebug import SaveConfig as SDSaveConfig, SaveConfigMode as SDMode, modes as sdmodes
    ref = smdebug_hook.NumpyHook(str(tmp_path / "ref"), save_config=SDSaveConfig(save_interval=2),
                                 include_collections=["c"])
    mine = smd.Hook(str(tmp_path / "mine"), save_config=smd.SaveConfig(save_interval=2),
                    include_collections=["c"])
    rc = ref.get_collection("c")
    rc.include("x")
    rc.save_config = SDSaveConfig(mode_save_configs={sdmodes.TRAIN: SDMode(save_interval=1)})
    mc = mine.get_collection("c")
    mc.include("x")
    mc.save_config = smd.SaveConfig(mode_save_configs={smd.modes.TRAIN: smd.SaveConfigMode(save_interval=1)})
    assert mc.save_config.mode_save_configs[smd.modes.EVAL] is None
    for mode, n in ((sdmodes.TRAIN, 4), (sdmodes.EVAL, 4)):
        ref.set_mode(mode)
        mine.set_mode(smd.modes.ModeKeys(mode.value))
        for _ in range(n):
            ref.begin_step()
            mine.begin_step()
            ref.record("x", np.ones(2, np.float32))
            mine.save_tensor("x", np.ones(2, np.float32))
    ref.close()
    mine.close()
    got = {}
    for name in ("ref", "mine"):
        t = smdebug.trials.create_trial(str(tmp_path / name))
        got[name] = (t.tensor("x").steps(mode=sdmodes.TRAIN), t.tensor("x").steps(mode=sdmodes.EVAL))
    assert got["ref"] == ([0, 1, 2, 3], [0, 2])
    assert got["mine"] == got["ref"]


def _saved_names(path):
    t = smdebug.trials.create_trial(str(path))
    return {n: t.tensor(n).steps() for n in sorted(t.tensor_names())}


def test_include_collections_all_saves_every_collection(tmp_path):
    """include_collections=["all"] without save_all saves every collection, as smdebug's hook
    does (its _prepare_collections adds them all when "all" is included); smd saved nothing. The
    "all" collection itself still matches no tensor (a name no collection takes stays unsaved)."""
    import smdebug_hook
    from smdebug import SaveConfig as SDSaveConfig
    ref = smdebug_hook.NumpyHook(str(tmp_path / "ref"), save_config=SDSaveConfig(save_interval=1),
                                 include_collections=["all"])
    mine = smd.Hook(str(tmp_path / "mine"), save_config=smd.SaveConfig(save_interval=1),
                    include_collections=["all"])
    ref.begin_step()
    mine.begin_step()
    for n in ("fc.weight", "fc.bias", "gradient/fc.weight", "other"):
        ref.record(n, np.ones(2, np.float32))
        mine.save_tensor(n, np.ones(2, np.float32), [])
    ref.close()
    mine.close()
    assert _saved_names(tmp_path / "ref") == {"fc.bias": [0], "fc.weight": [0], "gradient/fc.weight": [0]}
    assert _saved_names(tmp_path / "mine") == _saved_names(tmp_path / "ref")


def test_add_collection_replaces_the_hooks_collection_of_that_name(tmp_path):
    """hook.add_collection(Collection("weights", include_regex=[...])) replaces the hook's
    "weights" as smdebug's CollectionManager.add does: its built-in pattern is gone, so only the
    new regex's tensors are saved into it (smd merged the two), and the collections file says so."""
    import smdebug_hook
    from smdebug import SaveConfig as SDSaveConfig
    from smdebug.core.collection import Collection as SDCollection
    ref = smdebug_hook.NumpyHook(str(tmp_path / "ref"), save_config=SDSaveConfig(save_interval=1),
                                 include_collections=["weights"])
    mine = smd.Hook(str(tmp_path / "mine"), save_config=smd.SaveConfig(save_interval=1),
                    include_collections=["weights"])
    ref.add_collection(SDCollection("weights", include_regex=["^x/"]))
    mine.add_collection(smd.hook.Collection("weights", include_regex=["^x/"]))
    assert mine.get_collection("weights").include_regex == ["^x/"]
    ref.begin_step()
    mine.begin_step()
    for n in ("fc.weight", "x/a"):
        ref.record(n, np.ones(2, np.float32))
        mine.save_tensor(n, np.ones(2, np.float32), [])
    ref.close()
    mine.close()
    assert _saved_names(tmp_path / "ref") == {"x/a": [0]}
    assert _saved_names(tmp_path / "mine") == _saved_names(tmp_path / "ref")
    for name in ("ref", "mine"):
        assert smd.trials.create_trial(str(tmp_path / name)).collection("weights").include_regex == ["^x/"]


def test_adding_a_collection_the_hook_holds_changes_nothing(tmp_path):
    """hook.add_collection of the hook's own collection (added before, or from get_collection)
    keeps it as it is, as smdebug's CollectionManager.add of the same object does (smd's replace
    emptied it: its regexes and configurations were gone)."""
    hook = smd.Hook(str(tmp_path / "t"), save_config=smd.SaveConfig(save_interval=1), include_collections=["d", "c"])
    d = smd.hook.Collection("d", include_regex=["y"])
    hook.add_collection(d)
    hook.add_collection(d)
    assert d.include_regex == ["y"]
    c = hook.get_collection("c")
    c.include("x")
    c.save_config = smd.SaveConfig(save_interval=2)
    hook.add_collection(c)
    assert c.include_regex == ["x"] and c.save_config.save_interval == 2
    for _ in range(3):
        hook.begin_step()
        hook.save_tensor("y", np.ones(2, np.float32), [])
        hook.save_tensor("x", np.ones(2, np.float32), [])
    hook.close()
    trial = smd.trials.create_trial(str(tmp_path / "t"))
    assert trial.collection("d").include_regex == ["y"] and trial.collection("c").include_regex == ["x"]
    assert trial.tensor("y").steps() == [0, 1, 2] and trial.tensor("x").steps() == [0, 2]


@pytest.mark.parametrize("case", ["sagemaker", "sagemaker_no_tb_file", "script"])
def test_hook_attributes_from_the_json_configuration(tmp_path, monkeypatch, case):
    """A hook made from the JSON configuration has smdebug's out_dir and tensorboard_dir: under
    SageMaker the TensorBoard configuration file's LocalPath (no export without that file), else
    the hook parameters' tensorboard_dir."""
    import smdebug_hook
    from smdebug.core.json_config import create_hook_from_json_config

    def numpy_hook(dry_run=False, **kw):
        return smdebug_hook.NumpyHook(**kw)

    for var in ("TRAINING_JOB_NAME", "TENSORBOARD_CONFIG_FILE_PATH", "SMDEBUG_CONFIG_FILE_PATH"):
        monkeypatch.delenv(var, raising=False)
    if case != "script":
        monkeypatch.setenv("TRAINING_JOB_NAME", "job")
    tb_config = tmp_path / "tensorboardoutputconfig.json"
    if case == "sagemaker":
        tb_config.write_text(json.dumps({"LocalPath": str(tmp_path / "{lib}_sm_tb")}))
    monkeypatch.setenv("TENSORBOARD_CONFIG_FILE_PATH", str(tb_config))
    got = {}
    for lib in LIBS:
        if case == "sagemaker":  # each library its own TensorBoard folder
            tb_config.write_text(json.dumps({"LocalPath": str(tmp_path / f"{lib}_sm_tb")}))
        config = tmp_path / f"{lib}.json"
        config.write_text(json.dumps({
            "LocalPath": str(tmp_path / f"{lib}_out"),
            "HookParameters": {"save_interval": "1", "export_tensorboard": "true",
                               "tensorboard_dir": str(tmp_path / f"{lib}_tb")}}))
        if lib == "smd":
            hook = smd.Hook.create_from_json_file(str(config))
        else:
            hook = create_hook_from_json_config(numpy_hook, str(config))
        got[lib] = (hook.out_dir, hook.tensorboard_dir)
        if lib == "smd":
            hook.save_scalar("loss", 1.0)
        hook.close()
    expected = {"sagemaker": str(tmp_path / "{}_sm_tb"), "sagemaker_no_tb_file": None,
                "script": str(tmp_path / "{}_tb")}[case]
    for lib in LIBS:
        assert got[lib] == (str(tmp_path / f"{lib}_out"),
                            expected.format(lib) if expected else None), (lib, got)
    if case == "sagemaker":  # and the export went there
        assert list((tmp_path / "smd_sm_tb").iterdir())


def test_save_config_forms_smdebugs_hooks_take(tmp_path):
    """save_config as smdebug's hooks take it (SaveConfig.parse): a SaveConfigMode for every mode,
    or a dict {mode: SaveConfigMode}; a collection's save_config a dict or None. The same steps
    are saved as smdebug's hook saves."""
    import smdebug_hook
    from smdebug.core.save_config import SaveConfig as SDSave, SaveConfigMode as SDMode
    from smdebug.core.modes import ModeKeys as SDModes
    from smd.core.save_config import SaveConfig, SaveConfigMode
    forms = [lambda S, M, K: M(save_interval=3),
             lambda S, M, K: {K.TRAIN: M(save_interval=2), K.EVAL: M(save_steps=[1])},
             lambda S, M, K: {"TRAIN": {"save_interval": 4}, "GLOBAL": None}]
    for form in forms:
        ref = SDSave.parse(form(SDSave, SDMode, SDModes))
        mine = SaveConfig.parse(form(SaveConfig, SaveConfigMode, smd.modes))
        assert mine.to_json_dict() == ref.to_json_dict()
    assert SaveConfig.parse(None) == SaveConfig()
    with pytest.raises(TypeError, match="save_config must be"):
        SaveConfig.parse(5)

    steps = {}
    for lib in LIBS:
        out = str(tmp_path / lib)
        if lib == "smd":
            hook = smd.Hook(out, save_config=SaveConfigMode(save_interval=3),
                            include_collections=["weights", "custom"])
            hook.get_collection("custom").include("^c$")
            hook.get_collection("custom").save_config = {smd.modes.GLOBAL: SaveConfigMode(save_interval=2)}
            hook.get_collection("weights").save_config = None  # the hook's: every 3
        else:
            hook = smdebug_hook.NumpyHook(out, save_config=SDMode(save_interval=3),
                                          include_collections=["weights", "custom"])
            hook.get_collection("custom").include("^c$")
            hook.get_collection("custom").save_config = {SDModes.GLOBAL: SDMode(save_interval=2)}
            hook.get_collection("weights").save_config = None
        for step in range(7):
            hook.begin_step()
            value = np.full(2, step, dtype=np.float32)
            if lib == "smd":
                hook.save_tensor("w.weight", value, "weights")
                hook.save_tensor("c", value, "custom")
            else:
                hook.record("w.weight", value)
                hook.record("c", value)
        hook.close()
        t = smdebug.trials.create_trial(out)
        steps[lib] = {n: t.tensor(n).steps() for n in t.tensor_names()}
    assert steps["smd"] == steps["smdebug"], steps
    assert steps["smd"]["c"] == [0, 2, 4, 6] and steps["smd"]["w.weight"] == [0, 3, 6]
