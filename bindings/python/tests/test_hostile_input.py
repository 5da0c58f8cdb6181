"""Hostile input through the Python binding: names that would be cut at a NUL, errors that must
keep their class and message, values numpy cannot hold, 0-d tensors. Runs under numpy 1.x (.venv)
and numpy 2.x (scripts/test.sh runs this file in .venv-xgboost too); it needs no smdebug."""
import os

import numpy as np
import pytest

import smd
import smd.exceptions as E
from smd import smdc as _smd
from smd.trials import create_trial

NUMPY_MAX_NDIM = 64 if int(np.__version__.split(".")[0]) >= 2 else 32


_CODES = sorted((getattr(_smd, n), n) for n in dir(_smd) if n.startswith("SMD_E_"))


@pytest.mark.parametrize("code,name", _CODES)
def test_every_error_code_raises_its_class_with_smds_message(code, name):
    with pytest.raises(E.SMDebugError) as info:
        E._raise_from_code(code, f"message of code {code}")
    exc = info.value
    assert type(exc) is E._CODE_CLASSES.get(code, E.SMDebugRuntimeError)
    assert str(exc) == f"message of code {code}"
    assert exc.code == name  # the C library's name, the constant's own


def test_every_code_is_known_and_an_unknown_one_says_its_number():
    assert [c for c, _ in _CODES] == list(range(1, len(_CODES) + 1))
    assert len(_CODES) >= 21 and set(E._CODE_CLASSES) <= {c for c, _ in _CODES}
    with pytest.raises(E.SMDebugRuntimeError) as info:
        E._raise_from_code(999, "from a newer library")
    assert info.value.code == "SMD_E_UNKNOWN(999)"


def test_out_of_memory_is_a_memory_error():
    with pytest.raises(MemoryError) as info:  # was TypeError "MemoryError.__new__(...) is not safe"
        E._raise_from_code(6, "cannot allocate 1 TB")
    assert isinstance(info.value, E.OutOfMemorySMDebugError)
    assert str(info.value) == "cannot allocate 1 TB"
    assert info.value.code == "SMD_E_OUT_OF_MEMORY"
    assert str(E.OutOfMemorySMDebugError("direct")) == "direct"


def test_zero_d_array_keeps_its_shape(tmp_path):
    h = smd.Hook(str(tmp_path / "run"), save_all=True)
    h.begin_step()
    h.save_tensor("t", np.array(3.5))
    h.save_tensor("u", np.array([[1, 2], [3, 4]], dtype=np.int32).T)  # not contiguous: copied
    h.close()
    t = create_trial(str(tmp_path / "run"))
    v = t.tensor("t").value(0)
    assert v.shape == () and v.dtype == np.float64 and float(v) == 3.5
    assert t.tensor("t").shape(0) == ()
    np.testing.assert_array_equal(t.tensor("u").value(0), [[1, 3], [2, 4]])


NUL_NAMES = ["a\0b", "\0", "a\0"]


@pytest.mark.parametrize("name", NUL_NAMES)
def test_nul_in_a_tensor_name_is_refused(tmp_path, name):
    h = smd.Hook(str(tmp_path / "run"), save_all=True)
    h.begin_step()
    with pytest.raises(E.SMDebugValueError, match="NUL"):
        h.save_tensor(name, np.ones(2))
    with pytest.raises(E.SMDebugValueError, match="NUL"):
        h.save_tensor("ok", np.ones(2), ["coll\0x"])
    with pytest.raises(ValueError, match="NUL"):
        h.save_scalar(name, 1.0)
    h.save_tensor("a", np.ones(2))
    h.close()
    t = create_trial(str(tmp_path / "run"))
    assert "a" in t.tensor_names() and not any("\0" in n for n in t.tensor_names())
    with pytest.raises(ValueError, match="NUL"):
        t.tensor(name)


def test_two_names_differing_after_a_nul_do_not_overwrite_each_other(tmp_path):
    h = smd.Hook(str(tmp_path / "run"), save_all=True)
    h.begin_step()
    h.save_tensor("a", np.full(2, 7.0))
    for name in ("a\0b", "a\0c"):
        with pytest.raises(ValueError):
            h.save_tensor(name, np.zeros(2))
    h.close()
    np.testing.assert_array_equal(create_trial(str(tmp_path / "run")).tensor("a").value(0), [7.0, 7.0])


def test_nul_in_out_dir_worker_or_collection_is_refused(tmp_path):
    target = tmp_path / "x"
    with pytest.raises(ValueError, match="NUL"):
        smd.Hook(str(target) + "\0y")
    assert not target.exists()  # used to write into <tmp>/x
    with pytest.raises(ValueError, match="NUL"):
        smd.Hook(str(tmp_path / "w"), worker="worker_0\0evil")
    assert not (tmp_path / "w").exists()
    with pytest.raises(ValueError, match="NUL"):
        smd.Hook(str(tmp_path / "c"), include_collections=["weights\0x"])
    with pytest.raises(ValueError, match="NUL"):
        create_trial(str(target) + "\0y")


def test_nul_in_json_local_path_is_refused(tmp_path, monkeypatch):
    target = tmp_path / "x"
    cfg = tmp_path / "hook.json"
    cfg.write_text('{"LocalPath": "%s\\u0000y"}' % target)
    monkeypatch.setenv("SMDEBUG_CONFIG_FILE_PATH", str(cfg))
    with pytest.raises(E.SMDebugValueError, match="NUL"):
        smd.Hook.create_from_json_file()
    assert not target.exists()


@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_config_file_that_is_not_a_regular_file_is_refused(tmp_path, monkeypatch, kind):
    path = tmp_path / "cfg"
    if kind == "folder":
        path.mkdir()
    else:
        os.mkfifo(path)  # used to block forever
    monkeypatch.setenv("SMDEBUG_CONFIG_FILE_PATH", str(path))
    with pytest.raises(E.SMDebugValueError, match="is a (folder|FIFO)") as info:
        smd.Hook.create_from_json_file()
    assert str(path) in str(info.value)


def test_long_worker_name_is_refused_at_creation(tmp_path):
    with pytest.raises(E.SMDebugValueError, match="at most 221"):
        smd.Hook(str(tmp_path / "run"), worker="w" * 10_000)
    assert not (tmp_path / "run").exists()


def test_out_dir_with_surrounding_spaces_is_refused(tmp_path):
    with pytest.raises(E.SMDebugValueError, match="whitespace"):
        smd.Hook(" " + str(tmp_path / "run"))
    with pytest.raises(E.SMDebugValueError, match="whitespace"):
        smd.Hook(str(tmp_path / "run") + " ")


def _save_raw(out, name, shape):
    """Saves a one-element float32 tensor of `shape` through the C ABI (numpy cannot make an
    array of more than NUMPY_MAX_NDIM dimensions to pass to save_tensor)."""
    h = smd.Hook(str(out), save_all=True)
    h.begin_step()
    _smd.smd_hook_save_tensor(h._hook, name, _smd.smd_dtype_from_name("float32"), list(shape),
                              np.ones(1, np.float32).view(np.uint8), [])
    h.close()


@pytest.mark.parametrize("ndim", [NUMPY_MAX_NDIM, NUMPY_MAX_NDIM + 1, 40, 70])
def test_values_with_more_dimensions_than_numpy_holds(tmp_path, ndim):
    _save_raw(tmp_path / "run", "t", [1] * ndim)
    tensor = create_trial(str(tmp_path / "run")).tensor("t")
    assert tensor.shape(0) == (1,) * ndim  # the shape is always available
    if ndim <= NUMPY_MAX_NDIM:
        assert tensor.value(0).shape == (1,) * ndim
        return
    msg = f"{ndim} dimensions.*at most {NUMPY_MAX_NDIM}"
    with pytest.raises(E.SMDebugValueError, match=msg):
        tensor.value(0)
    with pytest.raises(E.SMDebugValueError, match=msg):
        tensor.values()



def test_a_worker_name_that_is_not_utf8_can_be_handed_back(tmp_path):
    """Names read from file names that are not UTF-8 come out with surrogates standing for the
    bytes (surrogateescape); handed back (worker=...), they name the same worker (they were refused
    with UnicodeEncodeError)."""
    import shutil
    from conftest import FIXTURES
    root = tmp_path / "t"
    shutil.copytree(FIXTURES / "modes_reentry", root)
    for folder in (root / "index" / "000000000", root / "collections" / "000000000"):
        for name in os.listdir(folder):
            new = os.fsencode(name).replace(b"worker_0", b"w\xff")
            os.rename(os.path.join(os.fsencode(folder), os.fsencode(name)), os.path.join(os.fsencode(folder), new))
    t = create_trial(str(root))
    assert t.workers() == ["w\udcff"]
    loss = t.tensor("loss")
    assert loss.workers(0) == ["w\udcff"]
    np.testing.assert_array_equal(loss.value(0, worker="w\udcff"), loss.value(0))
    with pytest.raises(E.SMDebugError):
        loss.value(0, worker="w\udcfe")  # another worker's name: not one of this step's
    with pytest.raises(UnicodeEncodeError):
        loss.value(0, worker="\ud800")  # a lone surrogate stands for no byte
