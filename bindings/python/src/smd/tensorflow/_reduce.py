"""Reductions of TensorFlow tensors computed where they live (smd.tensorflow.KerasHook).

A tensor whose collections want only reductions and/or a TensorBoard histogram at a step (no raw
value, no TensorBoard scalar, no median) is reduced by TensorFlow on its device, in float64, and
only the statistics (and the histogram's bucket counts) come back to the host;
smd_hook_save_reductions then writes exactly what the hook writes for reductions and histograms
it computes itself (smd/_reductions.py). Two places:

* at the end of a batch, outside the step: weights, biases and optimizer variables, the
  gradients of a wrapped GradientTape, the values a step compiled by XLA left in the hook's
  variables; all of a batch's together, by one call of a compiled function (save_on_device);
* inside the compiled train step, for the gradients: on a step where some gradient is due for
  reductions or a histogram only (a flag the hook sets when the batch begins), the statistics
  (and bucket counts) those need, as due when the step was traced, of every gradient are
  computed and assigned to float64 variables; the hook reads those small matrices when the batch
  ends. No Python runs inside the step for them (it may be compiled by XLA), and the gradients
  themselves stay on the device.

SMD_TF_DEVICE_REDUCTIONS=off sends every tensor through the host path (its value copied to the
host, reduced on smd's writer thread): the tests compare the two.
"""
import math
import os

import tensorflow as tf

from smd import smdc as _smd
from smd._reductions import HISTOGRAM_STATS, STATS, given, histogram_of, needs

# Floating dtypes reduced on the device (their float64 conversion is exact); the others take the
# value path.
REDUCIBLE = (tf.float16, tf.bfloat16, tf.float32, tf.float64)


def enabled():
    mode = os.environ.get("SMD_TF_DEVICE_REDUCTIONS", "auto")
    if mode not in ("auto", "off"):
        raise ValueError(f"SMD_TF_DEVICE_REDUCTIONS must be auto or off, not {mode!r}")
    return mode == "auto"


class Due:
    """What `name` needs at this step when it can all be computed where the tensor lives: its
    reductions (names) and whether its TensorBoard histogram is due."""
    __slots__ = ("reductions", "histogram")

    def __init__(self, reductions, histogram):
        self.reductions, self.histogram = reductions, histogram

    def stats(self):
        """The statistics (names from STATS) it needs."""
        return needs(self.reductions) | (HISTOGRAM_STATS if self.histogram else set())


def due_on_device(hook_handle, name):
    """A Due when what `name` needs at this step is reductions computable from STATS and/or its
    TensorBoard histogram (no raw value, no TensorBoard scalar, no median), else None."""
    *reductions, value, histogram = _smd.smd_hook_due_reductions(hook_handle, name)
    if value or not (reductions or histogram) or any(r in ("median", "abs_median") for r in reductions):
        return None
    return Due(reductions, bool(histogram))


_edges = None


def bucket_edges():
    """smd's histogram bucket edges (smd_histogram_bucket_edges), an eager float64 constant."""
    global _edges
    if _edges is None:
        with tf.init_scope():
            _edges = tf.constant(_smd.smd_histogram_bucket_edges(), tf.float64)
    return _edges


def bucket_counts(tensors):
    """A (len(tensors), buckets) float64 tensor: each tensor's counts in smd's histogram buckets,
    by the rules of smd's host path (numpy.histogram's): element x is in bucket i when
    edges[i] <= x < edges[i + 1], the last bucket also holds its right edge, and NaN, infinities
    and values outside the edges are in none. Exact (counts below 2**53)."""
    edges = bucket_edges()
    nb = int(edges.shape[0]) - 1
    rows = []
    for t in tensors:
        x = tf.reshape(tf.cast(t, tf.float64), [-1])
        idx = tf.searchsorted(edges, x, side="right") - 1
        idx = tf.where(tf.equal(x, edges[-1]), nb - 1, idx)
        idx = tf.where((idx >= 0) & (idx < nb) & tf.math.is_finite(x), idx, nb)  # nb: counted nowhere
        rows.append(tf.math.unsorted_segment_sum(tf.ones_like(x), idx, nb + 1)[:nb])
    return tf.stack(rows)


def statistics(tensors, wanted=STATS):
    """A (len(tensors), len(wanted)) float64 tensor: per tensor, the statistics `wanted` (names
    from STATS, in that order), each tensor reduced on its own. Eager, inside a function, or in a
    step compiled by XLA (which fuses the reductions of a step itself). Not segment reductions
    over the concatenated tensors: on the CPU TensorFlow's segment reductions took 55 ms for 159
    tensors of 1.8 M elements (max and the NaN count) where these take 5.4 ms, and XLA has none."""
    wanted = set(wanted)
    wanted = [s for s in STATS if s in wanted]
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


def save_shaped(hook_handle, name, dtype, shape, due, row, columns, counts=None):
    """Saves what `due` (a Due) asks of `name` from its row of statistics (numbers in `columns`
    order) and, for its histogram, its bucket counts."""
    stats = dict(zip(columns, (float(v) for v in row)))
    histogram = histogram_of(stats, counts) if due.histogram else None
    _smd.smd_hook_save_reductions(hook_handle, name, dtype.as_datatype_enum, shape,
                                  given(due.reductions, stats, math.prod(shape)), histogram, [])


def on_device(hook_handle, name, value):
    """(name, tensor, Due) when what `name` needs at this step can be computed where the eager
    tensor or variable `value` lives (floating, reductions and/or a histogram only), else None:
    the caller saves its value."""
    if not enabled() or not hasattr(value, "numpy"):
        return None
    due = due_on_device(hook_handle, name)  # first: a value to save is not converted here
    if due is None:
        return None
    try:
        t = tf.convert_to_tensor(value)  # a Keras 3 variable's dtype is a string; the tensor's is not
    except (TypeError, ValueError):
        return None
    if t.dtype not in REDUCIBLE:
        return None
    return name, t, due


_compiled = {}  # (statistics, with bucket counts, tensors) -> tf.function computing them


def save_on_device(hook_handle, items):
    """Saves the reductions and histograms of on_device's (name, tensor, Due) items, computed for
    all of them by one call of a compiled function (eager operations, one tensor at a time, cost
    tens of microseconds each: 0.4 ms a tensor)."""
    want, histograms = set(), False
    for _, _, due in items:
        want |= due.stats()
        histograms |= due.histogram
    columns = [c for c in STATS if c in want]
    # by the number of tensors too: TensorFlow 2.21 fails to relax the type of a function called
    # with another number of arguments (IndexError in most_specific_common_subtype)
    key = (tuple(columns), histograms, len(items))
    fn = _compiled.get(key)
    if fn is None:
        def compute(*tensors):
            matrix, _ = statistics(tensors, columns)
            return (matrix, bucket_counts(tensors)) if histograms else (matrix,)
        # the same tensors every step as a rule; reduce_retracing: one function for other shapes
        fn = _compiled[key] = tf.function(compute, reduce_retracing=True)
    out = fn(*[t for _, t, _ in items])
    matrix = out[0].numpy()
    counts = out[1].numpy() if histograms else None
    for i, (name, t, due) in enumerate(items):
        save_shaped(hook_handle, name, t.dtype, [int(d) for d in t.shape], due, matrix[i], columns,
                    counts[i] if due.histogram else None)
