"""smd values as numpy arrays, without copies.

An array returned by smd views the elements of smd's immutable value: it is read-only, and its
``base`` is a small holder (``smdc.ValueBuffer``, a buffer-protocol object made in C) that keeps
smd's value alive, so the array stays valid after its
tensor and trial are gone. String values become a 1-D numpy array of ``str`` (a copy: numpy has
no view for variable-length strings).
"""
import numpy as np

from smd import smdc as _smd
from smd.exceptions import SMDebugValueError

# The most dimensions a numpy array can have (NPY_MAXDIMS): 32 before numpy 2, 64 since.
_NUMPY_MAX_NDIM = 64 if int(np.__version__.split(".")[0]) >= 2 else 32

_STRING = _smd.SMD_DTYPE_STRING
_BFLOAT16 = _smd.SMD_DTYPE_BFLOAT16
# smd_dtype -> numpy dtype (little-endian, as the files store them), by the C library's names of
# its dtypes; strings and bfloat16 (which numpy lacks) are read their own way.
_NUMPY_DTYPES = {
    code: np.dtype(_smd.smd_dtype_name(code)).newbyteorder("<")
    for code in (getattr(_smd, n) for n in dir(_smd) if n.startswith("SMD_DTYPE_"))
    if _smd.smd_dtype_name(code) is not None and code not in (_STRING, _BFLOAT16)
}


def _bfloat16_dtype():
    try:
        import ml_dtypes  # optional: numpy has no bfloat16 of its own
    except ImportError:
        return None
    return np.dtype(ml_dtypes.bfloat16)


_ValueBuffer = _smd._smdc.ValueBuffer  # the C type: a read-only buffer-protocol view of one value
_buffer_of = _smd._smdc.smd_py_value_buffer_of
_BF16_VIEW = []  # [ml_dtypes.bfloat16 dtype or None], looked up once


def _bf16():
    if not _BF16_VIEW:
        _BF16_VIEW.append(_bfloat16_dtype())
    return _BF16_VIEW[0]


def _check_ndim(value):
    """Raises SMDebugValueError when numpy cannot hold an smd value's dimensions."""
    ndim = _smd.smd_value_ndim(value)
    if ndim > _NUMPY_MAX_NDIM:
        raise SMDebugValueError(f"the value has {ndim} dimensions but a numpy {np.__version__} array holds at "
                                f"most {_NUMPY_MAX_NDIM}: it cannot be returned as an array (its shape can)")


def from_buffer(buf):
    """The numpy array of a ValueBuffer (a read-only view, no copy), or of an smd_value proxy
    (strings, empty values: the slow way)."""
    if type(buf) is not _ValueBuffer:
        return to_numpy(buf)
    try:
        arr = np.asarray(buf)
    except (ValueError, RuntimeError):  # numpy 1.x, 33-64 dimensions: its own terse error
        _check_ndim(buf.value)
        raise
    if arr.dtype.kind == "O":  # over numpy's limit, np.asarray wraps the buffer as an object
        _check_ndim(buf.value)
        raise TypeError(f"numpy cannot view an smd value of shape {_smd.smd_py_value_shape(buf.value)}")
    if buf.bfloat16:
        bf16 = _bf16()
        # Without ml_dtypes, bfloat16 comes back as its raw uint16 bits.
        return arr.view(bf16) if bf16 is not None else arr
    return arr


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
    while isinstance(base, (np.ndarray, memoryview)):  # bfloat16: a dtype view of the uint16 view
        base = base.obj if isinstance(base, memoryview) else base.base
    if not isinstance(base, _ValueBuffer):
        raise TypeError("smd.to_dlpack takes an array returned by smd (value(), values(), reduction_value()), "
                        "not a copy or another array")
    whole = memoryview(base)
    if array.__array_interface__["data"][0] != np.asarray(whole).__array_interface__["data"][0] or \
            array.nbytes != whole.nbytes:
        raise TypeError("smd.to_dlpack takes the whole array smd returned, not a slice or view of it")
    return DLPackValue(base.value)


def to_numpy(value):
    """The numpy array of an smd value proxy (read-only view; strings are copied)."""
    _check_ndim(value)
    dtype = _smd.smd_value_dtype(value)
    if dtype == _STRING:
        n = _smd.smd_value_count(value)
        items = [_smd.smd_value_string(value, i).decode("utf-8", "surrogateescape") for i in range(n)]
        arr = np.array(items, dtype=str).reshape(_smd.smd_py_value_shape(value))
        arr.flags.writeable = False
        return arr
    np_dtype = _NUMPY_DTYPES.get(dtype)
    if dtype == _BFLOAT16:
        np_dtype = _bf16() or np.dtype("<u2")
    if np_dtype is None:
        raise TypeError(f"smd value of unknown dtype {dtype}")
    if _smd.smd_value_count(value) == 0:
        empty = np.empty(_smd.smd_py_value_shape(value), dtype=np_dtype)
        empty.flags.writeable = False
        return empty
    return from_buffer(_buffer_of(value))
