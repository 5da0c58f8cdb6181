"""Reductions computed by a framework where its tensors live, finished and saved as smd's host
path would save them (smd_hook_save_reductions writes the same records, tags, dtypes and index
entries as the reductions the hook computes itself).

A framework computes, per tensor and in float64, the statistics ``needs`` lists (STATS: min, max,
sum, sum of squares, the same of absolute values, products, sums of squared deviations from the
mean, the NaN count); ``finish`` turns them into each reduction's value with the definitions of
docs/compatibility.md W1-W4 (vector norms over all elements, population variance); ``given``
makes the list smd_hook_save_reductions takes. Median needs the elements: a framework computes it
itself or saves the value instead.
"""
import functools
import math

import numpy as np

STATS = ("min", "max", "sum", "sumsq", "absmin", "absmax", "abssum", "prod", "absprod",
         "var", "absvar", "nan")


# What a TensorBoard histogram needs besides its bucket counts.
HISTOGRAM_STATS = frozenset({"min", "max", "sum", "sumsq", "nan"})


def histogram_of(stats, counts):
    """The histogram smd_hook_save_reductions takes, (min, max, sum, sum of squares, counts as
    uint64), from a tensor's statistics (a dict) and its bucket counts (float64, exact)."""
    nan = float("nan")
    mn, mx = (nan, nan) if stats["nan"] else (stats["min"], stats["max"])
    return (mn, mx, stats["sum"], stats["sumsq"], np.ascontiguousarray(counts, dtype=np.uint64))


def needs(reductions):
    """The statistics the reductions need (median is computed per tensor), a frozenset: asked
    for every tensor of a batch, with a few distinct lists of reductions, so answers are kept."""
    return _needs(tuple(reductions))


@functools.lru_cache(maxsize=256)
def _needs(reductions):
    need = {"nan"}
    for r in reductions:
        absr = r.startswith("abs_")
        op = r[4:] if absr else r
        p = "abs" if absr else ""
        if op in ("min", "max"):
            need.add(p + op)
        elif op in ("sum", "mean", "l1"):
            need.add("abssum" if op == "l1" or absr else "sum")
        elif op == "l2":
            need.add("sumsq")
        elif op in ("std", "variance"):
            need.add(p + "var")
            need.add(p + "sum")
        elif op == "prod":
            need.add(p + "prod")
    return frozenset(need)


def finish(reduction, stats, count, median):
    """A reduction's value (a Python float) from a tensor's statistics (a dict), as smd's host
    path defines it (docs/compatibility.md W1-W4)."""
    absr = reduction.startswith("abs_")
    op = reduction[4:] if absr else reduction
    p = "abs" if absr else ""
    nan = float("nan")
    if op in ("min", "max"):
        return nan if stats["nan"] else stats[p + op]
    if op == "sum":
        return stats[p + "sum"]
    if op == "mean":
        return nan if count == 0 else stats[p + "sum"] / count
    if op == "l1":
        return stats["abssum"]
    if op == "l2":
        return math.sqrt(stats["sumsq"])
    if op == "prod":
        return stats[p + "prod"]
    if op in ("variance", "std"):
        if count == 0:
            return nan
        v = stats[p + "var"] / count
        return v if op == "variance" else math.sqrt(v)
    if op == "median":
        return median
    raise ValueError(f"unknown reduction {reduction!r}")



def finish_rows(reductions, columns, table, counts, medians=None):
    """finish() for many tensors at once: the values of ``reductions`` for every row of
    ``table`` (rows x statistics, float64; ``columns`` names its columns), a (rows,
    len(reductions)) float64 array equal element for element to what finish() returns (the same
    float64 operations, in numpy). counts: each row's element count; medians: reduction ->
    a float64 array, one median a row, where median or abs_median is asked."""
    col = {n: table[:, i] for i, n in enumerate(columns)}
    has_nan = col["nan"] != 0
    n = np.asarray(counts, dtype=np.float64)
    empty = n == 0
    out = np.empty((table.shape[0], len(reductions)), dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        for j, r in enumerate(reductions):
            absr = r.startswith("abs_")
            op = r[4:] if absr else r
            p = "abs" if absr else ""
            if op in ("min", "max"):
                v = np.where(has_nan, np.nan, col[p + op])
            elif op == "sum":
                v = col[p + "sum"]
            elif op == "mean":
                v = np.where(empty, np.nan, col[p + "sum"] / n)
            elif op == "l1":
                v = col["abssum"]
            elif op == "l2":
                v = np.sqrt(col["sumsq"])
            elif op == "prod":
                v = col[p + "prod"]
            elif op in ("variance", "std"):
                v = col[p + "var"] / n
                if op == "std":
                    v = np.sqrt(v)
                v = np.where(empty, np.nan, v)
            elif op == "median":
                v = np.where(has_nan, np.nan, medians[r])
            else:
                raise ValueError(f"unknown reduction {r!r}")
            out[:, j] = v
    return out


def given(reductions, stats, count, medians=None):
    """[(reduction without abs_, abs flag, value)] for smd_hook_save_reductions, from a tensor's
    statistics (a dict of STATS), its element count and, where median is asked, medians[name]."""
    out = []
    for r in reductions:
        absr = r.startswith("abs_")
        med = None
        if r in ("median", "abs_median"):
            med = float("nan") if stats["nan"] else medians[r]
        out.append((r[4:] if absr else r, absr, finish(r, stats, count, med)))
    return out
