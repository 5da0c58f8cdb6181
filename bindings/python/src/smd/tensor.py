"""smdebug's Tensor API over smd's C library; values are read-only numpy views (no copy)."""
import operator

import numpy as np

from smd import smdc as _smd
from smd._values import from_buffer, to_numpy
from smd.modes import GLOBAL, ModeKeys, _mode_value

_value_fast = _smd._smdc.smd_py_tensor_value_fast  # the C function itself, without the shadow wrapper
_MODE_VALUES = {m: m.value for m in ModeKeys}


def _worker(worker):
    if worker is not None and not isinstance(worker, str):
        raise TypeError(f"worker must be a str or None, not {type(worker).__name__}")
    return worker


def _int(name, value):
    """An int from anything integral but a bool (numpy integers too, as smdebug takes them)."""
    if not isinstance(value, (bool, np.bool_)):
        try:
            return operator.index(value)
        except TypeError:
            pass
    raise TypeError(f"{name} must be an int, not {type(value).__name__}")


def _step(step):
    return step if type(step) is int else _int("step", step)


def _split_reduction(name):
    """smd's reduction name ("abs_mean") -> smdebug's key ("mean", True)."""
    return (name[4:], True) if name.startswith("abs_") else (name, False)


class Tensor:
    """One named tensor of a trial (``trial.tensor(name)``). It stays usable after its trial is
    dropped, and so do the arrays it returns."""

    def __init__(self, handle, trial=None):
        self._tensor = handle
        self.name = _smd.smd_tensor_name(handle)
        self.trial = trial

    def __repr__(self):
        return f"<smd.Tensor: name={self.name}>"

    @property
    def original_name(self):
        """smdebug's attribute: the "originalname" of the last shape entry loaded for the tensor
        (smdebug's TensorFlow hooks write the variable's own name there, such as
        "dense/kernel:0"; the name itself when the entry has none), or None when its shape was
        not saved (``save_shape``)."""
        return _smd.smd_tensor_original_name(self._tensor)

    def steps(self, mode=GLOBAL, show_incomplete_steps=False):
        """Steps of ``mode`` at which anything of this tensor was saved, ascending."""
        return _smd.smd_tensor_steps(self._tensor, _mode_value(mode), bool(show_incomplete_steps))

    def value(self, step_num, mode=GLOBAL, worker=None):
        """The value at a step as a read-only numpy array viewing smd's buffer (no copy)."""
        if type(step_num) is not int:
            step_num = _int("step", step_num)
        m = _MODE_VALUES.get(mode) if type(mode) is ModeKeys else None
        if m is None:
            m = _mode_value(mode)
        if worker is not None:
            _worker(worker)
        return from_buffer(_value_fast(self._tensor, step_num, m, worker))

    def values(self, mode=GLOBAL, worker=None):
        """Every value of the complete steps of ``mode``: a dict step -> array."""
        steps, values = _smd.smd_tensor_values(self._tensor, _mode_value(mode), _worker(worker))
        return {s: to_numpy(v) for s, v in zip(steps, values)}

    def shape(self, step_num, mode=GLOBAL, worker=None):
        """The shape at a step, a tuple (ShapeUnavailableForStep when neither shape nor value was
        saved)."""
        return _smd.smd_tensor_shape(self._tensor, _step(step_num), _mode_value(mode), _worker(worker))

    def shapes(self, mode=GLOBAL, worker=None):
        """The shapes of every complete step of ``mode``: a dict step -> tuple."""
        steps, shapes = _smd.smd_tensor_shapes(self._tensor, _mode_value(mode), _worker(worker))
        return dict(zip(steps, shapes))

    def reduction_value(self, step_num, reduction_name, mode=GLOBAL, worker=None, abs=False):
        """A reduction at a step, as smdebug returns it: a saved reduction is the array of shape
        (1,) that was saved; one computed from the saved raw value is a numpy scalar
        (``np.float32`` for a float32 tensor), so that ``float(x)`` works under numpy 2."""
        if not isinstance(reduction_name, str):
            raise TypeError(f"reduction_name must be a str, not {type(reduction_name).__name__}")
        name = ("abs_" + reduction_name) if abs else reduction_name
        step, m, w = _step(step_num), _mode_value(mode), _worker(worker)
        v = to_numpy(_smd.smd_tensor_reduction_value(self._tensor, step, m, w, name))
        saved = _smd.smd_tensor_reduction_names(self._tensor, step, m, w)
        if name in saved:  # looked up exactly as stored, as smdebug does
            return v
        return v.reshape(-1)[0]

    def reduction_values(self, step_num, mode=GLOBAL, worker=None):
        """The reductions saved at a step: a dict (name, abs) -> array."""
        names, values = _smd.smd_tensor_reduction_values(self._tensor, _step(step_num), _mode_value(mode), _worker(worker))
        return {_split_reduction(n): to_numpy(v) for n, v in zip(names, values)}

    def workers(self, step_num, mode=GLOBAL):
        """The workers that saved anything of this tensor at a step, sorted."""
        return _smd.smd_tensor_workers(self._tensor, _step(step_num), _mode_value(mode))

    def prev_steps(self, step, n=None, mode=GLOBAL):
        """The complete steps of ``mode`` up to and including ``step``, the last ``n`` (None: all)."""
        if n is not None:
            try:
                count = _int("n", n)
            except TypeError:
                count = -1
            if count < 0:
                raise TypeError(f"n must be a non-negative int or None, not {n!r}")
            n = count
        return _smd.smd_tensor_prev_steps(self._tensor, _step(step), _mode_value(mode), n or 0)

__all__ = ["Tensor"]
