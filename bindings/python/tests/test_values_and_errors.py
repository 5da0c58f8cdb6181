"""Values as read-only numpy views that outlive their trial; exceptions where smdebug raises them;
bad input as Python exceptions, never a crash."""
import gc
import logging
import threading

import numpy as np
import pytest

import smd
import smd.exceptions as E
from smd import modes
from smd.trials import create_trial
from conftest import FIXTURES

logging.getLogger("smdebug").setLevel(logging.ERROR)


def test_value_is_a_read_only_view_that_outlives_its_trial():
    t = create_trial(str(FIXTURES / "shapes"))
    name = next(n for n in t.tensor_names() if t.tensor(n).value(t.tensor(n).steps()[0]).size > 1)
    tensor = t.tensor(name)
    a = tensor.value(tensor.steps()[0])
    expected = a.copy()
    assert not a.flags.writeable
    with pytest.raises(ValueError):
        a[...] = 0
    assert not a.flags.owndata  # a view of smd's buffer, not a copy
    del t, tensor
    gc.collect()
    np.testing.assert_array_equal(a, expected)  # the buffer is still alive


def test_values_views_share_the_cached_buffer():
    t = create_trial(str(FIXTURES / "modes_reentry"))
    tensor = t.tensor("fc.weight")
    s = tensor.steps()[0]
    a, b = tensor.value(s), tensor.value(s)
    assert np.shares_memory(a, b)  # smd's value cache hands out the same immutable buffer
    vals = tensor.values()
    assert sorted(vals) == tensor.steps()
    for step, v in vals.items():
        np.testing.assert_array_equal(v, tensor.value(step))
        assert not v.flags.writeable


def test_dtypes_map_to_numpy():
    t = create_trial(str(FIXTURES / "dtypes"))
    names = t.tensor_names()
    numeric = ["bool", "complex128", "complex64", "float16", "float32", "float64", "int16", "int32",
               "int64", "int8", "uint16", "uint32", "uint64", "uint8"]
    for dt in numeric:
        v = t.tensor("t_" + dt).value(0)
        assert v.dtype == np.dtype(dt) and v.shape == (2, 3), dt
        assert not v.flags.writeable
    assert "t_0d" in names and t.tensor("t_0d").value(0).shape == ()
    s = t.tensor("t_str").value(0)
    assert s.dtype.kind == "U" and s.shape == (3,) and not s.flags.writeable


def test_reduction_value_plain_abs_and_computed():
    t = create_trial(str(FIXTURES / "reductions_float"))
    tensor = t.tensor("rr_vec32")
    v = tensor.value(0)
    saved = tensor.reduction_values(0)
    for name, is_abs, want in (("max", False, v.max()), ("mean", True, np.abs(v).mean())):
        r = tensor.reduction_value(0, name, abs=is_abs)
        assert r.item() == pytest.approx(want)
        if (name, is_abs) in saved:  # saved: the stored (1,) array, as smdebug returns it
            assert isinstance(r, np.ndarray) and r.shape == (1,)
    med = tensor.reduction_value(0, "median")  # computed: a numpy scalar, as smdebug returns it
    assert isinstance(med, np.generic) and float(med) == pytest.approx(np.median(v))
    with pytest.raises(E.SMDebugValueError, match="no_such_reduction"):
        tensor.reduction_value(0, "no_such_reduction")
    with pytest.raises(ValueError):  # SMDebugValueError is a ValueError too
        tensor.reduction_value(0, "no_such_reduction")


def test_trial_exceptions_like_smdebug(tmp_path):
    ended = create_trial(str(FIXTURES / "modes_reentry"))
    with pytest.raises(E.TensorUnavailable):
        ended.tensor("no/such")
    with pytest.raises(E.StepUnavailable):  # smdebug 1.0.34 raises StepUnavailable here too
        ended.tensor("loss").value(10**6, mode=modes.TRAIN)
    with pytest.raises(E.NoMoreData):
        ended.wait_for_steps([10**6])
    running = create_trial(str(FIXTURES / "workers3_running"))
    name = running.tensor_names()[0]
    with pytest.raises(E.StepNotYetAvailable):
        running.tensor(name).value(10**6)
    with pytest.raises(E.StepNotYetAvailable):
        running.wait_for_steps([10**6], timeout_ms=0)
    with pytest.raises(E.InvalidWorker):
        running.tensor(name).value(running.tensor(name).steps()[0], worker="worker_99")
    empty = tmp_path / "no_collections"
    (empty / "index").mkdir(parents=True)
    (empty / "training_job_end.ts").write_text("")
    with pytest.raises(E.MissingCollectionFiles):
        create_trial(str(empty))
    with pytest.raises(FileNotFoundError):
        create_trial(str(tmp_path / "does-not-exist"))
    # every class is an SMDebugError, as in smdebug
    for cls in (E.TensorUnavailable, E.NoMoreData, E.StepNotYetAvailable, E.MissingCollectionFiles,
                E.StepUnavailable, E.TensorUnavailableForStep, E.IndexReaderException,
                E.RuleEvaluationConditionMet, E.ShapeUnavailableForStep, E.InvalidWorker):
        assert issubclass(cls, E.SMDebugError)


def test_exception_classes_match_smdebug_names_and_hierarchy():
    import smdebug.exceptions as ref
    for name in dir(ref):
        cls = getattr(ref, name)
        if isinstance(cls, type) and issubclass(cls, Exception) and cls.__module__ == ref.__name__:
            mine = getattr(E, name)
            assert [b.__name__ for b in mine.__mro__ if b.__module__ != E.__name__] == \
                   [b.__name__ for b in cls.__mro__ if b.__module__ != ref.__name__], name
            assert [b.__name__ for b in cls.__mro__] == [b.__name__ for b in mine.__mro__], name


@pytest.mark.parametrize("call, exc", [
    (lambda t: create_trial(42), TypeError),
    (lambda t: create_trial(""), E.SMDebugValueError),
    (lambda t: t.tensor(None), TypeError),
    (lambda t: t.tensor("loss").value("0"), TypeError),
    (lambda t: t.tensor("loss").value(0, mode="sideways"), ValueError),
    (lambda t: t.tensor("loss").value(0, mode=7), ValueError),
    (lambda t: t.tensor("loss").value(0, worker=3), TypeError),
    (lambda t: t.tensor("loss").reduction_value(0, None), TypeError),
    (lambda t: t.tensor("loss").prev_steps(0, -1), TypeError),
    (lambda t: t.tensor_names(regex="(unclosed"), E.SMDebugValueError),
    (lambda t: t.tensor_names(regex="a", collection="b"), E.SMDebugValueError),
    (lambda t: t.wait_for_steps(["x"]), TypeError),
    (lambda t: create_trial(str(FIXTURES / "shapes"), range_steps=(5, 2)), E.SMDebugValueError),
])
def test_bad_input_raises(call, exc):
    t = create_trial(str(FIXTURES / "modes_reentry"))
    with pytest.raises(exc):
        call(t)


_BAD_S3_SETTINGS = [
    (dict(s3_endpoint="ftp://x"), "s3_endpoint", "ftp://x"),
    (dict(s3_addressing_style="sideways"), "s3_addressing_style", "sideways"),
    (dict(s3_credentials=("AKIA-only-one-key",)), "s3_credentials", "both"),
    (dict(s3_credentials=("AKIA", None)), "s3_credentials", "both"),
    (dict(s3_credentials=("AKIA", "")), "s3_credentials", "both"),
    (dict(s3_credentials=(None, None, "a-token")), "s3_credentials", "token"),
    (dict(s3_credentials=("a", "b", "c", "d")), "s3_credentials", "4 items"),
    (dict(s3_max_attempts=-1), "s3_max_attempts", ">= 0"),
    (dict(s3_backoff_ms=-5), "s3_backoff_ms", ">= 0"),
    (dict(s3_stall_timeout_ms=-1, s3_max_attempts=3), "s3_stall_timeout_ms", ">= 0"),
    (dict(s3_max_attempts=1 << 31), "s3_max_attempts", "out of range"),
]


def _open_hook(path, **kw):
    return smd.Hook(path, **kw)


def _open_trial(path, **kw):
    return create_trial(path, **kw)


@pytest.mark.parametrize("opener", [_open_hook, _open_trial], ids=["Hook", "create_trial"])
@pytest.mark.parametrize("kwargs,name,detail", _BAD_S3_SETTINGS, ids=lambda x: repr(x)[:40])
def test_bad_s3_settings_raise_a_value_error_naming_the_setting(tmp_path, opener, kwargs, name, detail):
    path = f"s3://bucket/{tmp_path.name}" if opener is _open_hook else str(FIXTURES / "shapes")
    with pytest.raises(E.SMDebugValueError) as info:
        opener(path, **kwargs)
    msg = str(info.value)
    assert msg.startswith(name) and detail in msg, msg
    assert "AKIA-only-one-key" not in msg  # keys are never echoed


@pytest.mark.parametrize("opener", [_open_hook, _open_trial], ids=["Hook", "create_trial"])
def test_s3_settings_of_the_wrong_type_raise_type_errors(tmp_path, opener):
    path = str(tmp_path / "run") if opener is _open_hook else str(FIXTURES / "shapes")
    for kwargs in (dict(s3_endpoint=3), dict(s3_credentials="AKIA"), dict(s3_credentials=("a", 2)),
                   dict(s3_max_attempts=1.5), dict(s3_backoff_ms=True), dict(s3_stall_timeout_ms="5")):
        with pytest.raises(TypeError, match=next(iter(kwargs))):
            opener(path, **kwargs)


def test_good_s3_settings_are_accepted_and_local_paths_ignore_them(tmp_path):
    kw = dict(s3_endpoint="http://127.0.0.1:9", s3_region="us-east-1", s3_profile="nobody",
              s3_addressing_style="virtual", s3_ca_bundle=str(tmp_path / "none.pem"),
              s3_credentials=("AK", "SK", None), s3_max_attempts=np.int32(2), s3_backoff_ms=0,
              s3_stall_timeout_ms=10_000)
    with smd.Hook(str(tmp_path / "run"), save_all=True, save_config=smd.SaveConfig(save_interval=1), **kw) as h:
        h.begin_step()
        h.save_tensor("w", np.ones(3, dtype=np.float32))
    t = create_trial(str(tmp_path / "run"), **kw)
    assert t.tensor("w").steps() == [0]
    # "" and None unset a setting; (None, None) goes back to the configuration chain's credentials
    t = create_trial(str(tmp_path / "run"), s3_endpoint="", s3_credentials=(None, None), s3_max_attempts=None)
    assert t.steps() == [0]


def test_error_message_names_the_tensor():
    t = create_trial(str(FIXTURES / "modes_reentry"))
    with pytest.raises(E.TensorUnavailable) as info:
        t.tensor("no/such/tensor")
    assert "no/such/tensor" in str(info.value)
    assert info.value.code == "SMD_E_TENSOR_UNAVAILABLE"


def test_threads_read_one_trial_concurrently():
    t = create_trial(str(FIXTURES / "modes_reentry"))
    expected = {n: {s: t.tensor(n).value(s).copy() for s in t.tensor(n).steps()} for n in t.tensor_names()}
    errors = []

    def reader():
        try:
            for _ in range(50):
                for n, by_step in expected.items():
                    for s, v in by_step.items():
                        np.testing.assert_array_equal(t.tensor(n).value(s), v)
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=reader) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors


def _rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_no_leak_over_10000_opens():
    path = str(FIXTURES / "modes_reentry")

    def once():
        t = create_trial(path)
        v = t.tensor("loss").value(0)
        return float(v.ravel()[0])

    for _ in range(500):  # warm up caches and allocator pools
        once()
    gc.collect()
    before = _rss_kib()
    for _ in range(10000):
        once()
    gc.collect()
    grown = _rss_kib() - before
    assert grown < 8 * 1024, f"RSS grew by {grown} KiB over 10,000 opens"


def test_version():
    assert smd.__version__.count(".") == 2


# -- DLPack export ------------------------------------------------------------------------------
def _capsule_tensor(capsule, name):
    """(data address, flags) of a "dltensor_versioned" capsule, read with ctypes."""
    import ctypes
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    p = get(capsule, name)
    # DLManagedTensorVersioned: version (2 x u32), manager_ctx, deleter, flags (u64), DLTensor (data first)
    flags = ctypes.c_uint64.from_address(p + 8 + 2 * ctypes.sizeof(ctypes.c_void_p)).value
    data = ctypes.c_void_p.from_address(p + 16 + 2 * ctypes.sizeof(ctypes.c_void_p)).value
    return data, flags


def test_values_export_through_dlpack_without_a_copy(tmp_path):
    import gc
    import smd
    with smd.Hook(str(tmp_path / "run"), save_all=True, save_config=smd.SaveConfig(save_interval=1)) as h:
        h.begin_step()
        h.save_tensor("w", np.arange(12, dtype=np.float32).reshape(3, 4))
    trial = create_trial(str(tmp_path / "run"))
    v = trial.tensor("w").value(0)
    # numpy < 2.1 refuses to export a read-only array through DLPack (it cannot say read-only) ...
    if tuple(int(x) for x in np.__version__.split(".")[:2]) < (2, 1):
        with pytest.raises(BufferError):
            np.from_dlpack(v)
    # ... smd.to_dlpack exports smd's buffer itself
    exporter = smd.to_dlpack(v)
    assert exporter.__dlpack_device__() == (1, 0)
    a = np.from_dlpack(exporter)
    assert np.shares_memory(a, v) and a.shape == (3, 4) and a.dtype == np.float32
    assert not a.flags.writeable
    # DLPack >= 1.0 consumers get a versioned tensor flagged read-only, at the same address
    cap = exporter.__dlpack__(max_version=(1, 0))
    data, flags = _capsule_tensor(cap, b"dltensor_versioned")
    assert data == v.ctypes.data and flags & 1
    del cap  # an unconsumed capsule frees its export
    with pytest.raises(TypeError, match="slice"):
        smd.to_dlpack(v[1:])
    # the imported array outlives the value, tensor and trial
    del v, exporter, trial
    gc.collect()
    assert a.tolist() == np.arange(12, dtype=np.float32).reshape(3, 4).tolist()
    with pytest.raises(TypeError):
        smd.to_dlpack(np.zeros(3))
    with pytest.raises(TypeError):
        smd.to_dlpack(a[1:])
    with pytest.raises(BufferError):
        smd.to_dlpack(create_trial(str(tmp_path / "run")).tensor("w").value(0)).__dlpack__(dl_device=(2, 0))


def test_no_leak_over_many_values_and_dlpack_exports(tmp_path):
    """Every value read makes a buffer object and every export a capsule: 200,000 of each (with
    1 MiB values, so that a leaked value would show at once) free everything they hold."""
    with smd.Hook(str(tmp_path / "run"), save_all=True, save_config=smd.SaveConfig(save_interval=1)) as h:
        for _ in range(4):
            h.begin_step()
            h.save_tensor("w", np.ones(1 << 18, dtype=np.float32))
    tensor = create_trial(str(tmp_path / "run")).tensor("w")

    def once(i):
        v = tensor.value(i % 4)
        exporter = smd.to_dlpack(v)
        if i % 2:
            a = np.from_dlpack(exporter)  # consumed: numpy frees it with the array
            return float(a[0])
        exporter.__dlpack__(max_version=(1, 0))  # unconsumed: the capsule frees it
        return float(v[0])

    for i in range(2000):
        once(i)
    gc.collect()
    before = _rss_kib()
    for i in range(200000):
        once(i)
    gc.collect()
    grown = _rss_kib() - before
    assert grown < 8 * 1024, f"RSS grew by {grown} KiB over 200,000 reads and exports"
