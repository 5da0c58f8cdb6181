"""smd values as numpy arrays, without copies.

An array returned by smd views the elements of smd's immutable value: it is read-only, and its
``base`` is a small holder that keeps smd's value alive, so the array stays valid after its
tensor and trial are gone. String values become a 1-D numpy array of ``str`` (a copy: numpy has
no view for variable-length strings).
"""
import numpy as np

from smd import smdc as _smd

# smd_dtype (TensorFlow DataType numbers) -> numpy dtype.
_NUMPY_DTYPES = {
    1: np.dtype("<f4"), 2: np.dtype("<f8"), 3: np.dtype("<i4"), 4: np.dtype("u1"),
    5: np.dtype("<i2"), 6: np.dtype("i1"), 8: np.dtype("<c8"), 9: np.dtype("<i8"),
    10: np.dtype("?"), 17: np.dtype("<u2"), 18: np.dtype("<c16"), 19: np.dtype("<f2"),
    22: np.dtype("<u4"), 23: np.dtype("<u8"),
}
_STRING = 7
_BFLOAT16 = 14


def _bfloat16_dtype():
    try:
        import ml_dtypes  # optional: numpy has no bfloat16 of its own
    except ImportError:
        return None
    return np.dtype(ml_dtypes.bfloat16)


class _ValueView:
    """Exports one smd value through numpy's array interface and keeps it alive."""

    __slots__ = ("_value", "__array_interface__")

    def __init__(self, value, typestr, descr=None):
        self._value = value  # the owning SWIG proxy: freed when the last array is gone
        shape = _smd.smd_py_value_shape(value)
        address = _smd.smd_py_value_data_address(value)
        iface = {"version": 3, "shape": shape, "typestr": typestr, "data": (address, True)}
        if descr is not None:
            iface["descr"] = descr
        self.__array_interface__ = iface


class DLPackValue:
    """An smd value exported through DLPack without a copy (``np.from_dlpack(x)``,
    ``torch.from_dlpack(x)``, or any consumer of the DLPack protocol). Made by
    :func:`smd.to_dlpack`. Each ``__dlpack__`` call hands out a new capsule that keeps smd's
    buffer alive until the consumer is done with it, even after the trial is gone.

    DLPack >= 1.0 consumers (``max_version >= (1, 0)``, e.g. numpy >= 2.1, recent torch) get a
    versioned tensor flagged read-only. Older consumers get an unversioned tensor, which cannot
    say read-only: numpy 1.x makes every DLPack import read-only anyway, but other consumers
    (torch before DLPack 1.0) make a writable tensor, and writing into it would change smd's
    cached value, which other reads share. Do not write into it (copy it first if you must).
    bfloat16 values are exported as DLPack bfloat16 (numpy itself cannot import those; torch
    can)."""

    __slots__ = ("_value",)

    def __init__(self, value):
        self._value = value

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU, device 0

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if dl_device is not None and tuple(dl_device) != (1, 0):
            raise BufferError(f"smd values live on the CPU (device (1, 0)), not {dl_device}")
        if copy:
            return np.array(to_numpy(self._value)).__dlpack__()
        versioned = max_version is not None and tuple(max_version)[0] >= 1
        return _smd.smd_py_value_dlpack(self._value, 1 if versioned else 0)


def to_dlpack(array):
    """The DLPack exporter (:class:`DLPackValue`) of an array that smd returned (``value()``,
    ``values()``, ``reduction_value()``), viewing the same buffer without a copy. numpy cannot
    export its read-only arrays through DLPack before numpy 2.1, so ``np.from_dlpack(value)``
    raises BufferError there; ``np.from_dlpack(smd.to_dlpack(value))`` works. Arrays that are
    not smd's whole value (slices, copies, string or empty values) raise TypeError."""
    base = getattr(array, "base", None)
    while isinstance(base, np.ndarray):  # bfloat16 values are a dtype view of the uint16 view
        base = base.base
    if not isinstance(base, _ValueView):
        raise TypeError("smd.to_dlpack takes an array returned by smd (value(), values(), reduction_value()), "
                        "not a copy or another array")
    iface = base.__array_interface__
    if array.__array_interface__["data"][0] != iface["data"][0] or array.size != int(np.prod(iface["shape"])):
        raise TypeError("smd.to_dlpack takes the whole array smd returned, not a slice or view of it")
    return DLPackValue(base._value)


def to_numpy(value):
    """The numpy array of an smd value proxy (read-only view; strings are copied)."""
    dtype = _smd.smd_value_dtype(value)
    if dtype == _STRING:
        n = _smd.smd_value_count(value)
        items = [_smd.smd_value_string(value, i).decode("utf-8", "surrogateescape") for i in range(n)]
        arr = np.array(items, dtype=str).reshape(_smd.smd_py_value_shape(value))
        arr.flags.writeable = False
        return arr
    if dtype == _BFLOAT16:
        bf16 = _bfloat16_dtype()
        arr = np.asarray(_ValueView(value, "<u2"))
        # Without ml_dtypes, bfloat16 comes back as its raw uint16 bits.
        return arr.view(bf16) if bf16 is not None else arr
    np_dtype = _NUMPY_DTYPES.get(dtype)
    if np_dtype is None:
        raise TypeError(f"smd value of unknown dtype {dtype}")
    if _smd.smd_value_count(value) == 0:
        empty = np.empty(_smd.smd_py_value_shape(value), dtype=np_dtype)
        empty.flags.writeable = False
        return empty
    return np.asarray(_ValueView(value, np_dtype.str))
