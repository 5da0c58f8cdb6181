"""Saving 1-D string arrays (DT_STRING, as smdebug saves numpy str arrays) through libsmd's
smd_hook_save_strings, which the Python extension does not bind yet: called with ctypes on the
libsmd that the extension itself loaded, with the extension's smd_hook pointer."""
import ctypes
import glob
import os

from smd import exceptions

_lib = None


def _libsmd():
    global _lib
    if _lib is None:
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        candidates = sorted(glob.glob(os.path.join(here, "libsmd.so*")), key=len)
        lib = ctypes.CDLL(candidates[0] if candidates else "libsmd.so")
        lib.smd_hook_save_strings.restype = ctypes.c_void_p
        lib.smd_hook_save_strings.argtypes = [
            ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p),
            ctypes.POINTER(ctypes.c_size_t), ctypes.c_size_t,
            ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t]
        lib.smd_error_code.restype = ctypes.c_int
        lib.smd_error_code.argtypes = [ctypes.c_void_p]
        lib.smd_error_message.restype = ctypes.c_char_p
        lib.smd_error_message.argtypes = [ctypes.c_void_p]
        lib.smd_error_free.restype = None
        lib.smd_error_free.argtypes = [ctypes.c_void_p]
        _lib = lib
    return _lib


def save_strings(hook, name, values, collections):
    """Offers the strings `values` as the 1-D string tensor `name` of smd.Hook `hook`."""
    lib = _libsmd()
    data = [str(v).encode("utf-8") for v in values]
    n = len(data)
    strs = (ctypes.c_char_p * max(n, 1))(*data)
    lens = (ctypes.c_size_t * max(n, 1))(*[len(d) for d in data])
    colls = [collections] if isinstance(collections, str) else list(collections)
    carr = (ctypes.c_char_p * max(len(colls), 1))(*[c.encode("utf-8") for c in colls])
    ptr = int(hook._hook.this)
    err = lib.smd_hook_save_strings(ptr, name.encode("utf-8"), strs, lens, n, carr, len(colls))
    if err:
        code, msg = lib.smd_error_code(err), lib.smd_error_message(err).decode("utf-8", "replace")
        lib.smd_error_free(err)
        exceptions._raise_from_code(code, msg)
