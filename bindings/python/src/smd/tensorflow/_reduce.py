"""Reductions of TensorFlow tensors computed where they live (smd.tensorflow.KerasHook).

A tensor whose collections want only reductions at a step (no raw value, no TensorBoard summary,
no median) is reduced by TensorFlow on its device, in float64, and only the statistics come back
to the host; smd_hook_save_reductions then writes exactly what the hook writes for reductions it
computes itself (smd/_reductions.py). Two places:

* eagerly, one tensor at a time: weights and biases at the end of a batch, optimizer variables,
  the gradients of a wrapped GradientTape;
* inside the compiled train step, for the gradients: on a step where some gradient is due for
  reductions only (a flag the hook sets when the batch begins), the statistics of every gradient
  are computed with a fixed number of operations (segment reductions over the concatenated
  gradients) and assigned to a float64 variable; the hook reads that small matrix when the batch
  ends. No Python runs inside the step for them, and the gradients themselves stay on the device.

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


def statistics(tensors, wanted=STATS, per_tensor=False):
    """A (len(tensors), len(wanted)) float64 tensor: per tensor, the statistics `wanted` (names
    from STATS, in that order), computed with segment reductions over the concatenated elements
    (a fixed number of operations whatever the number of tensors). Eager or inside a function.

    per_tensor: each tensor reduced on its own instead (XLA has no sorted segment reductions; it
    fuses the per-tensor reductions of a compiled step itself). The same values, up to the order
    of the float64 sums."""
    wanted = [s for s in STATS if s in set(wanted)]
    if per_tensor:
        return _statistics_per_tensor(tensors, wanted), wanted
    n = len(tensors)
    flats = [tf.reshape(tf.cast(t, tf.float64), [-1]) for t in tensors]
    counts = tf.stack([tf.size(f, out_type=tf.int64) for f in flats])
    # one more segment holding one element, so that the sorted segment reductions return n + 1
    # rows even when the last tensors are empty (their rows are otherwise left out)
    lengths = tf.concat([counts, [1]], 0)
    x = tf.concat(flats + [tf.zeros([1], tf.float64)], 0)
    seg = tf.repeat(tf.range(n + 1, dtype=tf.int64), lengths)
    empty = tf.equal(counts, 0)
    absx = tf.abs(x)
    sums = {}  # "sum"/"abssum" over n + 1 segments: a column and the variances' means

    def segment_sum(name):
        if name not in sums:
            sums[name] = tf.math.segment_sum(absx if name == "abssum" else x, seg)
        return sums[name]

    def reduce(how, v):
        return how(v, seg)[:n]

    inf = tf.constant(math.inf, tf.float64)
    cols = []
    for s in wanted:
        if s == "nan":
            col = reduce(tf.math.segment_sum, tf.cast(tf.math.is_nan(x), tf.float64))
        elif s in ("min", "absmin"):
            col = tf.where(empty, inf, reduce(tf.math.segment_min, absx if s == "absmin" else x))
        elif s in ("max", "absmax"):
            col = tf.where(empty, -inf, reduce(tf.math.segment_max, absx if s == "absmax" else x))
        elif s in ("sum", "abssum"):
            col = segment_sum(s)[:n]
        elif s == "sumsq":
            col = reduce(tf.math.segment_sum, x * x)
        elif s in ("prod", "absprod"):
            col = tf.where(empty, tf.constant(1.0, tf.float64),
                           reduce(tf.math.segment_prod, absx if s == "absprod" else x))
        else:  # var, absvar: the sum of squared deviations from the tensor's mean
            v = absx if s == "absvar" else x
            mean = segment_sum("abssum" if s == "absvar" else "sum") / tf.cast(lengths, tf.float64)
            d = v - tf.gather(mean, seg)
            col = reduce(tf.math.segment_sum, d * d)
        cols.append(col)
    return tf.stack(cols, axis=1), wanted


def _statistics_per_tensor(tensors, wanted):
    rows = []
    for t in tensors:
        x = tf.reshape(tf.cast(t, tf.float64), [-1])
        absx = tf.abs(x)
        n = tf.cast(tf.size(x), tf.float64)
        sums = {}

        def total(name):
            if name not in sums:
                sums[name] = tf.reduce_sum(absx if name == "abssum" else x)
            return sums[name]

        row = []
        for s in wanted:
            v = absx if s.startswith("abs") else x
            if s == "nan":
                col = tf.reduce_sum(tf.cast(tf.math.is_nan(x), tf.float64))
            elif s in ("min", "absmin"):
                col = tf.reduce_min(v)  # +inf for an empty tensor, as the segment form
            elif s in ("max", "absmax"):
                col = tf.reduce_max(v)
            elif s in ("sum", "abssum"):
                col = total(s)
            elif s == "sumsq":
                col = tf.reduce_sum(x * x)
            elif s in ("prod", "absprod"):
                col = tf.reduce_prod(v)
            else:  # var, absvar: the sum of squared deviations from the tensor's mean
                d = v - total("abssum" if s == "absvar" else "sum") / tf.maximum(n, 1.0)
                col = tf.reduce_sum(d * d)
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
