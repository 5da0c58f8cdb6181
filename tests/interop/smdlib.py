"""A minimal ctypes view of libsmd's trial/tensor C API, for the live-job tests."""
import contextlib
import ctypes as C

TRAIN, EVAL, PREDICT, GLOBAL = 1, 2, 3, 4
UNAVAILABLE, AVAILABLE, NOT_YET_AVAILABLE = 0, 1, 2
E_STEP_UNAVAILABLE, E_STEP_NOT_YET_AVAILABLE, E_NO_MORE_DATA = 13, 14, 15
E_TENSOR_UNAVAILABLE = 12


class SmdError(Exception):
    def __init__(self, code, message):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class StrArray(C.Structure):
    _fields_ = [("strings", C.POINTER(C.c_char_p)), ("count", C.c_size_t)]


class Lib:
    def __init__(self, path):
        L = self.L = C.CDLL(str(path))
        P = C.c_void_p
        sig = {
            "smd_error_code": (C.c_int, [P]),
            "smd_error_message": (C.c_char_p, [P]),
            "smd_error_free": (None, [P]),
            "smd_free": (None, [P]),
            "smd_strarray_free": (None, [C.POINTER(StrArray)]),
            "smd_trial_options_create": (P, [C.POINTER(P)]),
            "smd_trial_options_free": (None, [P]),
            "smd_trial_options_set_collection_wait_ms": (P, [P, C.c_int64]),
            "smd_trial_options_set_auto_refresh": (P, [P, C.c_bool]),
            "smd_trial_open": (P, [C.c_char_p, P, C.POINTER(P)]),
            "smd_trial_free": (None, [P]),
            "smd_trial_refresh": (P, [P]),
            "smd_trial_auto_refresh": (C.c_bool, [P]),
            "smd_trial_refresh_scope_create": (P, [P, C.c_bool, C.POINTER(P)]),
            "smd_trial_refresh_scope_free": (None, [P]),
            "smd_trial_steps": (P, [P, C.c_int, C.c_bool, C.POINTER(C.POINTER(C.c_int64)),
                                    C.POINTER(C.c_size_t)]),
            "smd_trial_has_passed_step": (P, [P, C.c_int64, C.c_int, C.POINTER(C.c_int)]),
            "smd_trial_wait_for_steps": (P, [P, C.POINTER(C.c_int64), C.c_size_t, C.c_int,
                                             C.c_int64]),
            "smd_trial_tensor_names": (P, [P, P, C.POINTER(StrArray)]),
            "smd_trial_workers": (P, [P, C.POINTER(StrArray)]),
            "smd_trial_tensor": (P, [P, C.c_char_p, C.POINTER(P)]),
            "smd_tensor_free": (None, [P]),
            "smd_tensor_value": (P, [P, C.c_int64, C.c_int, C.c_char_p, C.POINTER(P)]),
            "smd_value_free": (None, [P]),
            "smd_value_nbytes": (C.c_size_t, [P]),
            "smd_value_data": (P, [P]),
        }
        for name, (res, args) in sig.items():
            f = getattr(L, name)
            f.restype = res
            f.argtypes = args

    def check(self, err):
        if err:
            code = self.L.smd_error_code(err)
            msg = self.L.smd_error_message(err).decode("utf-8", "replace")
            self.L.smd_error_free(err)
            raise SmdError(code, msg)

    def open(self, path, collection_wait_ms=0, auto_refresh=True):
        opts = C.c_void_p()
        self.check(self.L.smd_trial_options_create(C.byref(opts)))
        try:
            self.check(self.L.smd_trial_options_set_collection_wait_ms(opts, collection_wait_ms))
            self.check(self.L.smd_trial_options_set_auto_refresh(opts, auto_refresh))
            t = C.c_void_p()
            self.check(self.L.smd_trial_open(str(path).encode(), opts, C.byref(t)))
        finally:
            self.L.smd_trial_options_free(opts)
        return Trial(self, t)


class Trial:
    def __init__(self, lib, handle):
        self.lib, self.h = lib, handle

    def close(self):
        if self.h:
            self.lib.L.smd_trial_free(self.h)
            self.h = None

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()

    def steps(self, mode=GLOBAL, incomplete=False):
        p = C.POINTER(C.c_int64)()
        n = C.c_size_t()
        self.lib.check(self.lib.L.smd_trial_steps(self.h, mode, incomplete, C.byref(p), C.byref(n)))
        out = [p[i] for i in range(n.value)]
        self.lib.L.smd_free(p)
        return out

    def has_passed_step(self, step, mode=GLOBAL):
        s = C.c_int()
        self.lib.check(self.lib.L.smd_trial_has_passed_step(self.h, step, mode, C.byref(s)))
        return s.value

    def wait_for_steps(self, steps, mode=GLOBAL, timeout_ms=-1):
        arr = (C.c_int64 * len(steps))(*steps)
        self.lib.check(self.lib.L.smd_trial_wait_for_steps(self.h, arr, len(steps), mode, timeout_ms))

    def refresh(self):
        self.lib.check(self.lib.L.smd_trial_refresh(self.h))

    def auto_refresh(self):
        return bool(self.lib.L.smd_trial_auto_refresh(self.h))

    @contextlib.contextmanager
    def refresh_scope(self, on):
        """smd_trial_refresh_scope_create/free around a block (this thread only)."""
        scope = C.c_void_p()
        self.lib.check(self.lib.L.smd_trial_refresh_scope_create(self.h, on, C.byref(scope)))
        try:
            yield
        finally:
            self.lib.L.smd_trial_refresh_scope_free(scope)

    def _strs(self, fn, *args):
        a = StrArray()
        self.lib.check(fn(*args, C.byref(a)))
        out = [a.strings[i].decode("utf-8") for i in range(a.count)]
        self.lib.L.smd_strarray_free(C.byref(a))
        return out

    def tensor_names(self):
        return self._strs(self.lib.L.smd_trial_tensor_names, self.h, None)

    def workers(self):
        return self._strs(self.lib.L.smd_trial_workers, self.h)

    def value_bytes(self, name, step, mode=GLOBAL, worker=None):
        t = C.c_void_p()
        self.lib.check(self.lib.L.smd_trial_tensor(self.h, name.encode(), C.byref(t)))
        try:
            v = C.c_void_p()
            self.lib.check(self.lib.L.smd_tensor_value(
                t, step, mode, worker.encode() if worker else None, C.byref(v)))
            try:
                return C.string_at(self.lib.L.smd_value_data(v), self.lib.L.smd_value_nbytes(v))
            finally:
                self.lib.L.smd_value_free(v)
        finally:
            self.lib.L.smd_tensor_free(t)
