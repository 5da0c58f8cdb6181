"""Reductions of TensorFlow tensors computed where they live (smd.tensorflow.KerasHook).

A tensor whose collections want only reductions at a step (no raw value, no TensorBoard summary,
no median) is reduced by TensorFlow on its device, in float64, and only the statistics come back
to the host; smd_hook_save_reductions then writes exactly what the hook writes for reductions it
computes itself (smd/_reductions.py). Two places:

* eagerly, one tensor at a time: weights and biases at the end of a batch, optimizer variables,
  the gradients of a wrapped GradientTape;
* inside the compiled train step, for the gradients: on a step where some gradient is due for
  reductions only (a flag the hook sets when the batch begins), the statistics those reductions
  need (those due when the step was traced) of every gradient are computed and assigned to a
  float64 variable; the hook reads that small matrix when the batch ends. No Python runs inside
  the step for them (it may be compiled by XLA), and the gradients themselves stay on the device.

SMD_TF_DEVICE_REDUCTIONS=off sends every tensor through the host path (its value copied to the
host, reduced on smd's writer thread): the tests compare the two.
"""
import math
import os

import tensorflow as tf

from smd import smdc as _smd
from smd._reductions import STATS, given, needs

# Floating dtypes reduced on the device (their float64 conversion is exact); the others take the
# value path.
REDUCIBLE = (tf.float16, tf.bfloat16, tf.float32, tf.float64)


def enabled():
    mode = os.environ.get("SMD_TF_DEVICE_REDUCTIONS", "auto")
    if mode not in ("auto", "off"):
        raise ValueError(f"SMD_TF_DEVICE_REDUCTIONS must be auto or off, not {mode!r}")
    return mode == "auto"


def reductions_only(hook_handle, name):
    """The reductions due for `name` at this step when they are all it needs and they can be
    computed from STATS (no median, no raw value, no TensorBoard histogram: the TensorFlow hooks
    leave histograms to the host path), else None."""
    *reductions, value, histogram = _smd.smd_hook_due_reductions(hook_handle, name)
    if value or histogram or not reductions or any(r in ("median", "abs_median") for r in reductions):
        return None
    return reductions


def statistics(tensors, wanted=STATS):
    """A (len(tensors), len(wanted)) float64 tensor: per tensor, the statistics `wanted` (names
    from STATS, in that order), each tensor reduced on its own. Eager, inside a function, or in a
    step compiled by XLA (which fuses the reductions of a step itself). Not segment reductions
    over the concatenated tensors: on the CPU TensorFlow's segment reductions took 55 ms for 159
    tensors of 1.8 M elements (max and the NaN count) where these take 5.4 ms, and XLA has none."""
    wanted = [s for s in STATS if s in set(wanted)]
    return _statistics(tensors, wanted), wanted


def _statistics(tensors, wanted):
    rows = []
    for t in tensors:
        raw = tf.reshape(t, [-1])
        cache = {}

        def get(key):
            # minima, maxima and the NaN count on the tensor's own dtype (exact; converted at the
            # end), sums and products of its float64 conversion (XLA fuses the conversion into
            # the reduction)
            if key not in cache:
                if key == "x":
                    v = tf.cast(raw, tf.float64)
                elif key == "absx":
                    v = tf.abs(get("x"))
                elif key == "absraw":
                    v = tf.abs(raw)
                elif key in ("sum", "abssum"):
                    v = tf.reduce_sum(get("absx" if key == "abssum" else "x"))
                else:  # "n"
                    v = tf.cast(tf.size(raw), tf.float64)
                cache[key] = v
            return cache[key]

        row = []
        for s in wanted:
            if s == "nan":
                col = tf.reduce_sum(tf.cast(tf.math.is_nan(raw), tf.float64))
            elif s in ("min", "absmin"):  # +inf for an empty tensor (-inf for max)
                col = tf.cast(tf.reduce_min(get("absraw") if s == "absmin" else raw), tf.float64)
            elif s in ("max", "absmax"):
                col = tf.cast(tf.reduce_max(get("absraw") if s == "absmax" else raw), tf.float64)
            elif s in ("sum", "abssum"):
                col = get(s)
            elif s == "sumsq":
                col = tf.reduce_sum(tf.square(get("x")))
            elif s in ("prod", "absprod"):
                col = tf.reduce_prod(get("absx" if s == "absprod" else "x"))
            else:  # var, absvar: the sum of squared deviations from the tensor's mean
                v = get("absx" if s == "absvar" else "x")
                d = v - get("abssum" if s == "absvar" else "sum") / tf.maximum(get("n"), 1.0)
                col = tf.reduce_sum(tf.square(d))
            row.append(col)
        rows.append(tf.stack(row))
    return tf.stack(rows)


def save_shaped(hook_handle, name, dtype, shape, reductions, row, columns):
    """Saves `name`'s reductions from its row of statistics (numbers in `columns` order)."""
    stats = dict(zip(columns, (float(v) for v in row)))
    _smd.smd_hook_save_reductions(hook_handle, name, dtype.as_datatype_enum, shape,
                                  given(reductions, stats, math.prod(shape)), None, [])


def save_eagerly(hook_handle, name, value):
    """Reduces an eager tensor or variable on its device and saves its reductions, when they are
    all `name` needs at this step: True; False when the caller must save its value."""
    if not enabled() or not hasattr(value, "numpy"):
        return False
    reductions = reductions_only(hook_handle, name)  # first: a value to save is not converted here
    if reductions is None:
        return False
    try:
        t = tf.convert_to_tensor(value)  # a Keras 3 variable's dtype is a string; the tensor's is not
    except (TypeError, ValueError):
        return False
    if t.dtype not in REDUCIBLE:
        return False
    matrix, columns = statistics([t], needs(reductions))
    save_shaped(hook_handle, name, t.dtype, [int(d) for d in t.shape], reductions, matrix.numpy()[0],
                columns)
    return True
