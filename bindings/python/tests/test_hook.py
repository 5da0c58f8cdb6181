"""smd.Hook (framework-free): what it writes, the real smdebug reads back with the same values;
bad input and a closed hook raise; a dropped hook closes its run."""
import gc
import logging
import os

import numpy as np
import pytest

import smd
import smd.exceptions as E
import smdebug.trials
from smd import modes
from smd.trials import create_trial

logging.getLogger("smdebug").setLevel(logging.ERROR)


def _write(out):
    h = smd.Hook(str(out), save_config=smd.SaveConfig(save_interval=2),
                 include_collections=["weights", "losses"],
                 reduction_config=smd.ReductionConfig(reductions=["max"], abs_reductions=["mean"],
                                                      norms=["l2"], save_raw_tensor=True))
    expected = {}
    for s in range(8):
        if s == 5:
            h.set_mode(modes.EVAL)  # before the step boundary: the EVAL step then starts at 0
        h.begin_step()
        w = np.arange(6, dtype=np.float32).reshape(2, 3) * 0.5 - s
        h.save_tensor("fc.weight", w, "weights")
        h.save_tensor("fc.weight_t", w.T, "weights")  # not contiguous: copied first
        h.save_tensor("loss", np.float32(1.0 / (s + 1)), "losses")
        h.save_scalar("acc", 0.5 + s)
        expected[s] = w
    h.close()
    return expected


def test_hook_round_trip_read_by_smdebug_and_smd(tmp_path):
    expected = _write(tmp_path / "run")
    ref = smdebug.trials.create_trial(str(tmp_path / "run"))
    mine = create_trial(str(tmp_path / "run"))
    assert mine.steps() == ref.steps() == list(range(8))  # scalars are saved at every step
    # save_interval 2 counts mode steps: TRAIN 0, 2, 4; EVAL 0, 2 (global 5, 7)
    assert mine.tensor("fc.weight").steps() == ref.tensor("fc.weight").steps() == [0, 2, 4, 5, 7]
    assert mine.steps(mode=modes.EVAL) == ref.steps(mode=smdebug.modes.EVAL)
    assert sorted(mine.tensor_names()) == sorted(ref.tensor_names())
    for name in ["fc.weight", "fc.weight_t", "loss", "scalar/acc"]:
        for g in mine.tensor(name).steps():
            a, b = mine.tensor(name).value(g), ref.tensor(name).value(g)
            np.testing.assert_array_equal(a, b)
            assert a.dtype == b.dtype
        assert mine.tensor(name).steps() == ref.tensor(name).steps()
    np.testing.assert_array_equal(mine.tensor("fc.weight").value(2), expected[2])
    np.testing.assert_array_equal(mine.tensor("fc.weight_t").value(2), expected[2].T)
    reds = mine.tensor("fc.weight").reduction_values(4)
    assert reds[("max", False)][0] == pytest.approx(expected[4].max())
    assert reds[("mean", True)][0] == pytest.approx(np.abs(expected[4]).mean())
    assert reds[("l2", False)][0] == pytest.approx(np.linalg.norm(expected[4].ravel()))
    ref_reds = ref.tensor("fc.weight").reduction_values(4)
    assert set(ref_reds) == set(reds)


def test_hook_collections_and_modes(tmp_path):
    h = smd.Hook(str(tmp_path / "run"), save_all=True)
    c = h.get_collection("custom")
    c.include("^dense")
    c.add_tensor_name("exact")
    h.begin_step()
    assert h.step == 0
    h.save_tensor("dense/kernel", np.ones((2, 2), dtype=np.float64))
    assert "dense/kernel" in h.get_collection("custom").tensor_names
    assert "custom" in h.get_collections()
    with pytest.raises(KeyError):
        h.get_collection("never-made", create=False)
    h.close()
    t = create_trial(str(tmp_path / "run"))
    assert "dense/kernel" in t.tensor_names(collection="custom")


def test_closed_hook_and_bad_input_raise(tmp_path):
    h = smd.Hook(str(tmp_path / "run"), save_all=True)
    h.begin_step()
    with pytest.raises(TypeError):
        h.save_tensor(3, np.zeros(2))
    with pytest.raises(TypeError):  # string arrays are saved now; mixed object arrays are refused
        h.save_tensor("s", np.array(["a", 1], dtype=object))
    with pytest.raises(E.SMDebugValueError, match="1-D"):
        h.save_tensor("s2", np.array([["a", "b"]]))
    with pytest.raises(TypeError):
        h.save_tensor("x", np.zeros(2), collections_to_write=[1])
    with pytest.raises(ValueError):
        h.set_mode("sideways")
    with pytest.raises(E.SMDebugValueError):
        smd.ReductionConfig(reductions=["no_such_reduction"])
    with pytest.raises(ValueError):
        smd.SaveConfig(save_interval=0)
    with pytest.raises(ValueError):
        smd.Hook(str(tmp_path / "other"), include_workers="some")
    h.close()
    h.close()  # a second close does nothing
    with pytest.raises(E.SMDebugRuntimeError, match="(?i)closed"):
        h.save_tensor("x", np.zeros(2))
    with pytest.raises(E.SMDebugRuntimeError):
        h.begin_step()
    # a finished run is not overwritten
    with pytest.raises(E.SMDebugRuntimeError):
        smd.Hook(str(tmp_path / "run"))


def test_dropped_hook_closes_its_run(tmp_path):
    h = smd.Hook(str(tmp_path / "run"), save_all=True)
    h.begin_step()
    h.save_tensor("x", np.arange(3, dtype=np.int32))
    del h
    gc.collect()
    assert os.path.exists(tmp_path / "run" / "training_job_end.ts")
    np.testing.assert_array_equal(create_trial(str(tmp_path / "run")).tensor("x").value(0), [0, 1, 2])


def test_save_tensor_takes_buffer_and_dlpack_objects(tmp_path):
    h = smd.Hook(str(tmp_path / "run"), save_all=True)
    h.begin_step()
    h.save_tensor("from_bytes", memoryview(np.arange(4, dtype=np.int64)))
    class Producer:  # any object with the DLPack protocol (not an ndarray)
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, stream=None):
            return self.a.__dlpack__()

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    h.save_tensor("from_dlpack", Producer(np.arange(5, dtype=np.float16)))
    h.save_tensor("from_list", [[1.0, 2.0], [3.0, 4.0]])
    h.close()
    t = create_trial(str(tmp_path / "run"))
    np.testing.assert_array_equal(t.tensor("from_bytes").value(0), np.arange(4))
    assert t.tensor("from_dlpack").value(0).dtype == np.float16
    assert t.tensor("from_list").value(0).shape == (2, 2)


def test_create_from_json_file(tmp_path):
    cfg = tmp_path / "debughookconfig.json"
    cfg.write_text('{"LocalPath": "%s", "HookParameters": {"save_interval": "1", "include_regex": "w.*"}}'
                   % (tmp_path / "json_run"))
    h = smd.Hook.create_from_json_file(str(cfg))
    h.begin_step()
    h.save_tensor("w1", np.ones(3, dtype=np.float32))
    h.close()
    assert create_trial(str(tmp_path / "json_run")).tensor_names() == ["w1"]
    with pytest.raises(FileNotFoundError):
        smd.Hook.create_from_json_file(str(tmp_path / "missing.json"))


def test_string_tensors_are_saved_as_smdebug_saves_them(tmp_path):
    """A 1-D str/bytes/object array becomes a DT_STRING tensor that smd and smdebug read back as
    the same numpy str array."""
    import smdebug.trials
    with smd.Hook(str(tmp_path / "run"), save_all=True, save_config=smd.SaveConfig(save_interval=1)) as h:
        h.begin_step()
        h.save_tensor("words", np.array(["alpha", "βeta", ""]))
        h.save_tensor("raw", np.array([b"x", b"yz"]))
        h.save_tensor("objs", np.array(["o", b"p"], dtype=object))
    expected = {"words": ["alpha", "βeta", ""], "raw": ["x", "yz"], "objs": ["o", "p"]}
    mine = create_trial(str(tmp_path / "run"))
    ref = smdebug.trials.create_trial(str(tmp_path / "run"))
    for name, want in expected.items():
        v = mine.tensor(name).value(0)
        assert v.dtype.kind == "U" and v.tolist() == want
        assert ref.tensor(name).value(0).tolist() == want


@pytest.mark.parametrize("value, dtype", [(1.5, "float64"), (3, "int64"), (True, "bool"),
                                          (np.float32(2.5), "float32"), (np.int32(-4), "int32"),
                                          (np.array([7], dtype=np.uint8), "uint8"),
                                          (np.float16(0.5), "float16")])
def test_save_scalar_keeps_the_type_as_smdebug_does(tmp_path, value, dtype):
    import smdebug.trials
    with smd.Hook(str(tmp_path / "run")) as h:
        h.begin_step()
        h.save_scalar("x", value)
    v = create_trial(str(tmp_path / "run")).tensor("scalar/x").value(0)
    assert v.dtype == np.dtype(dtype) and v.shape == (1,) and v[0] == np.asarray(value).reshape(1)[0]
    ref = smdebug.trials.create_trial(str(tmp_path / "run")).tensor("scalar/x").value(0)
    assert ref.dtype == np.dtype(dtype) and ref.tolist() == v.tolist()


def test_save_scalar_refuses_non_scalars(tmp_path):
    with smd.Hook(str(tmp_path / "run")) as h:
        h.begin_step()
        with pytest.raises(E.SMDebugTypeError, match="scalar/x has non scalar value"):
            h.save_scalar("x", [1.0, 2.0])
        with pytest.raises(E.SMDebugTypeError):
            h.save_scalar("x", "text")


def test_bfloat16_and_float16_round_trip(tmp_path):
    ml_dtypes = pytest.importorskip("ml_dtypes")  # in scripts/requirements.txt: the suite has it
    bf = (np.arange(6, dtype=np.float32) / 4).astype(ml_dtypes.bfloat16).reshape(2, 3)
    hf = (np.arange(6, dtype=np.float32) / 8).astype(np.float16)
    with smd.Hook(str(tmp_path / "run"), save_all=True, save_config=smd.SaveConfig(save_interval=1)) as h:
        h.begin_step()
        h.save_tensor("bf", bf)
        h.save_tensor("hf", hf)
    t = create_trial(str(tmp_path / "run"))
    got_bf, got_hf = t.tensor("bf").value(0), t.tensor("hf").value(0)
    assert got_bf.dtype == np.dtype(ml_dtypes.bfloat16) and got_bf.shape == (2, 3)
    assert np.array_equal(got_bf.astype(np.float32), bf.astype(np.float32))
    assert got_hf.dtype == np.float16 and np.array_equal(got_hf, hf)


def test_hook_takes_smd_options_keyword_only(tmp_path):
    with smd.Hook(str(tmp_path / "run"), save_all=True, save_config=smd.SaveConfig(save_interval=1), fsync=True, max_pending_steps=0,
                  memory_budget=1 << 20, worker="worker_0") as h:
        for _ in range(3):
            h.begin_step()
            h.save_tensor("w", np.ones(8, dtype=np.float32))
    t = create_trial(str(tmp_path / "run"))
    assert t.workers() == ["worker_0"] and t.tensor("w").steps() == [0, 1, 2]
    with pytest.raises(TypeError):
        smd.Hook(str(tmp_path / "x"), False, None, False, None, None, None, None, False, "one", True)
    with pytest.raises(E.SMDebugValueError):
        smd.Hook(str(tmp_path / "y"), max_pending_steps=-2)
    with pytest.raises(E.SMDebugValueError, match="(?i)endpoint"):
        smd.Hook(str(tmp_path / "z"), s3_endpoint="ftp://nowhere")
    with pytest.raises(E.SMDebugValueError, match="s3_credentials"):
        smd.Hook(str(tmp_path / "w"), s3_credentials=("only-one-key",))
    with pytest.raises(TypeError):
        smd.Hook(str(tmp_path / "w"), s3_credentials="AKIA-a-str-not-a-tuple")


def test_make_due_saves_a_collection_for_the_rest_of_the_step(tmp_path):
    out = str(tmp_path / "run")
    h = smd.Hook(out, save_config=smd.SaveConfig(save_interval=100), include_collections=["metrics"])
    h.get_collection("metrics").add_tensor_name("acc")
    with pytest.raises(E.SMDebugRuntimeError, match="no step has begun"):
        h.make_due("metrics")
    h.begin_step()
    h.begin_step()
    with pytest.raises(E.FileNotFoundSMDebugError, match="nope"):
        h.make_due("nope")
    h.make_due("metrics")
    h.save_tensor("acc", np.array([0.5]), "metrics")
    h.save_tensor("other", np.array([1.0]), "weights")  # another collection: not made due
    h.begin_step()
    h.save_tensor("acc", np.array([0.75]), "metrics")  # the next step follows the configuration
    h.close()
    t = create_trial(out)
    assert t.steps() == [1]
    assert t.tensor_names() == ["acc"]
    assert t.tensor("acc").value(1)[0] == 0.5


def test_assigning_include_regex_replaces_the_builtin_pattern(tmp_path):
    # smdebug's Collection.include_regex is a list the script assigns; the built-in pattern of a
    # built-in collection goes with it
    out = str(tmp_path / "run")
    h = smd.Hook(out, save_config=smd.SaveConfig(save_interval=1), include_collections=["weights"])
    w = h.get_collection("weights")
    w.add_tensor_name("kernel")
    w.include_regex = ["^mine"]
    assert w.include_regex == ["^mine"]
    h.begin_step()
    for name in ("fc.weight", "kernel", "mine.x"):
        h.save_tensor(name, np.array([1.0], dtype=np.float32))
    w.clear_include_regex()
    assert w.include_regex == []
    h.save_tensor("mine.y", np.array([1.0], dtype=np.float32))
    assert w.tensor_names == {"kernel", "mine.x"}
    h.close()
    assert create_trial(out).tensor_names(collection="weights") == ["kernel", "mine.x"]


def test_end_step_completes_the_step_and_keeps_the_hook_open(tmp_path):
    out = str(tmp_path / "run")
    h = smd.Hook(out, save_config=smd.SaveConfig(save_interval=1), include_collections=["weights"])
    h.begin_step()
    h.save_tensor("w", np.arange(3, dtype=np.float32), "weights")
    h.end_step()
    h.flush()
    assert h.step == 0
    t = create_trial(out)
    assert t.steps() == [0] and not t.has_ended()
    # The real smdebug sees the step as complete too.
    st = smdebug.trials.create_trial(out)
    assert st.has_passed_step(0) == smdebug.core.tensor.StepState.AVAILABLE
    h.save_scalar("after", 2.0)  # kept for the step close() begins
    h.close()
    t = create_trial(out)
    assert t.steps() == [0, 1]
    assert t.tensor("scalar/after").value(1)[0] == 2.0
    with pytest.raises(E.SMDebugRuntimeError, match="closed"):
        h.end_step()
