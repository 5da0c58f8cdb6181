"""Hook scenarios for the interop tests, as smd_scenario scripts (see smd_scenario.c).

Each scenario returns a list of scripts, one per worker process. "{OUT}" in a script stands for the
trial folder. Values are small integers so that every reduction is exact whatever the order of
summation: smd and numpy then agree to the last bit.
"""
import numpy as np

WALL_TIME_BASE = "1700000000"

ALL_DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
              "uint16", "uint32", "uint64", "bool", "complex64", "complex128"]
# smdebug's reader decodes these correctly (BEHAVIOR/FORMAT: int8 comes back as uint8; int16,
# uint16/32/64 and complex64 are unreadable).
SMDEBUG_READABLE = {"float16", "float32", "float64", "int32", "int64", "uint8", "bool", "complex128"}


def values(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.integers(0, 2, size=shape).astype(bool)
    if dt.kind == "u":
        return rng.integers(0, 10, size=shape).astype(dt)
    if dt.kind == "c":
        return (rng.integers(-5, 6, size=shape) + 1j * rng.integers(-5, 6, size=shape)).astype(dt)
    return rng.integers(-6, 7, size=shape).astype(dt)


class Script:
    def __init__(self):
        self.lines = []

    def add(self, *fields):
        self.lines.append("\t".join(str(f) for f in fields))
        return self

    def option(self, *f):
        return self.add("option", *f)

    def every_step(self, mode="all"):
        return self.option("save_config", mode, 1, 0, "-", "-")

    def create(self):
        return self.add("create", "{OUT}")

    def tensor(self, name, arr, collections=None):
        shape = "-" if arr.ndim == 0 else "x".join(str(d) for d in arr.shape)
        fields = ["tensor", name, arr.dtype.name, shape, arr.tobytes().hex()]
        if collections:
            fields.append(",".join(collections))
        return self.add(*fields)

    def text(self, out_dir):
        return "\n".join(line.replace("{OUT}", str(out_dir)) for line in self.lines) + "\n"


def base(workers=None):
    s = Script().option("wall_time_base", WALL_TIME_BASE)
    if workers:
        s.option("worker", workers[0]).option("num_workers", workers[1]).option("include_workers", "all")
    return s


# ------------------------------------------------------------------------------------------------
# Scenarios where smd must write exactly what smdebug writes.

def scenario_dtypes():
    s = base().every_step().option("save_all", 1).create().add("mode", "TRAIN")
    for step in range(2):
        s.add("step")
        for i, dt in enumerate(ALL_DTYPES):
            s.tensor(f"t_{dt}", values(dt, (2, 3), seed=100 * step + i))
    return [s.add("close")]


def scenario_shapes():
    s = base().every_step().option("save_all", 1).create()
    s.add("step")
    s.tensor("zero_d", np.array(3.5, dtype=np.float32))
    s.tensor("zero_d_int", np.array(-4, dtype=np.int64))
    s.tensor("one", np.array([7], dtype=np.float64))
    s.tensor("empty", np.zeros((0,), dtype=np.float32))
    s.tensor("empty_2d", np.zeros((2, 0), dtype=np.int32))
    s.tensor("five_d", values("float32", (2, 1, 3, 1, 2), 5))
    s.tensor("large", values("float32", (1000, 1000), 6))
    return [s.add("close")]


def scenario_modes():
    """Four modes, re-entered, each with its own SaveConfig feature."""
    s = base()
    s.option("save_config", "TRAIN", 2, 0, "-", "-")      # every 2nd
    s.option("save_config", "EVAL", 500, 0, "-", "1")     # listed steps (and 0)
    s.option("save_config", "PREDICT", 1, 1, "3", "-")    # start and (exclusive) end
    s.option("save_config", "GLOBAL", 3, 0, "0", "4")     # end 0: only the listed step
    s.option("include_collection", "weights").option("include_collection", "gradients")
    s.create()
    w = values("float32", (3,), 1)
    plan = [("TRAIN", 3), ("EVAL", 3), ("TRAIN", 4), ("PREDICT", 4), ("GLOBAL", 5), ("EVAL", 2)]
    k = 0
    for mode, n in plan:
        s.add("mode", mode)
        for _ in range(n):
            s.add("step")
            k += 1
            s.tensor("fc.weight", w * k)
            s.tensor("gradient/fc.weight", w - k)   # never saved in EVAL/PREDICT
            s.tensor("loss", np.array([k], dtype=np.float32))
    return [s.add("close")]


def scenario_collection_configs():
    """Per-collection SaveConfig (per mode, merged with the hook's), ReductionConfig, save_shape."""
    s = base().option("save_config", "all", 2, 0, "-", "-").option("include_collection", "weights")
    s.option("include_collection", "acts").option("include_collection", "biases")
    s.create()
    s.add("collection", "acts", "regex", "^act/")
    s.add("collection", "acts", "save_config", "TRAIN", 1, 1, "5", "-")
    s.add("collection", "acts", "reduction_config", "max,mean,abs_sum", 0, 1)
    s.add("collection", "biases", "save_config", "EVAL", 3, 0, "-", "1")
    s.add("collection", "biases", "reduction_config", "min", 1, 1)
    s.add("mode", "TRAIN")
    for step in range(6):
        s.add("step")
        s.tensor("fc.weight", values("float64", (2, 2), step))
        s.tensor("fc.bias", values("float32", (2,), step))
        s.tensor("act/relu", values("float32", (4,), 10 + step))
    s.add("mode", "EVAL")
    for step in range(4):
        s.add("step")
        s.tensor("fc.weight", values("float64", (2, 2), 20 + step))
        s.tensor("fc.bias", values("float32", (2,), 20 + step))
        s.tensor("act/relu", values("float32", (4,), 30 + step))
    return [s.add("close")]


def scenario_reductions():
    """Every reduction and norm, plain and abs, on 1-D tensors of several dtypes.

    Eight small integers: every mean and variance is exact, so numpy's float32 arithmetic and
    smd's (accumulated in double) give the same bits. (0-d tensors are left out here: smd writes
    their l1/l2, smdebug cannot; see test_writer_extensions.py.)"""
    spec = ("min,max,mean,std,variance,sum,prod,l1_norm,l2_norm,abs_min,abs_max,abs_mean,abs_std,"
            "abs_variance,abs_sum,abs_prod,abs_l1_norm,abs_l2_norm")
    s = base().every_step().option("include_collection", "stats").create()
    s.add("collection", "stats", "regex", "^r/")
    s.add("collection", "stats", "reduction_config", spec, 1, 0)
    s.add("mode", "TRAIN")
    for step in range(2):
        s.add("step")
        for i, dt in enumerate(["float32", "float64", "float16", "int32", "int64", "uint8", "int16"]):
            s.tensor(f"r/{dt}", values(dt, (8,), 50 * step + i))
    return [s.add("close")]


def scenario_empty_reductions():
    """Reductions of empty tensors: numpy's mean/std/variance of nothing is NaN with the sign bit
    set (0/0 on the FPU); smd writes the same bytes."""
    spec = "mean,std,variance,sum,abs_mean,abs_variance,l2_norm"
    s = base().every_step().option("include_collection", "stats").create()
    s.add("collection", "stats", "regex", "^e/")
    s.add("collection", "stats", "reduction_config", spec, 1, 0)
    s.add("mode", "TRAIN")
    s.add("step")
    for dt in ["float32", "float64", "float16", "int32", "uint8"]:
        s.tensor(f"e/{dt}", np.zeros((0,), dtype=dt))
    s.tensor("e/one", np.array([2.0], dtype=np.float32))  # beside them, a tensor with a value
    return [s.add("close")]


def scenario_scalars():
    s = base().every_step().create().add("mode", "TRAIN")
    for step in range(3):
        s.add("step")
        s.tensor("loss", np.array([1.0 / (step + 1)], dtype=np.float64))
        s.add("scalar", "acc", repr(0.25 * step))
        s.add("scalar", "lr", repr(0.1))
    return [s.add("close")]


def scenario_strings():
    """numpy string arrays: DT_STRING records with one string_val entry per element."""
    s = base().every_step().option("save_all", 1).create().add("mode", "TRAIN")
    for step in range(2):
        s.add("step")
        words = ["cat", "", "βeta", "emoji😀", f"step {step}"]
        s.add("strings", "labels", ",".join(w.encode("utf-8").hex() for w in words))
        s.add("strings", "one", "x".encode("utf-8").hex())
    return [s.add("close")]


def scenario_typed_scalars():
    """save_scalar keeps the scalar's type: numpy scalars of each dtype, Python ints and bools."""
    s = base().every_step().create().add("mode", "TRAIN")
    for step in range(2):
        s.add("step")
        for dt in ["float16", "float32", "float64", "int32", "int64", "uint8", "bool"]:
            v = np.array([step % 2 == 0 if dt == "bool" else step + 3], dtype=dt)
            s.add("scalar_typed", f"s_{dt}", dt, v.tobytes().hex())
    return [s.add("close")]


def scenario_names():
    s = base().every_step().option("save_all", 1).create()
    s.add("step")
    for name in ["résumé/αβγ", "a/b/c", "v.1.weight", "dense/kernel:0", "emoji😀", "tab-less name"]:
        s.tensor(name, values("float32", (2,), len(name)))
    return [s.add("close")]


def scenario_names_reduced():
    """Reduction tags drop ':<digits>' (dense/kernel:0 -> smdebug/reductions/max/dense/kernel)."""
    s = base().every_step().option("include_collection", "k").create()
    s.add("collection", "k", "regex", "kernel")
    s.add("collection", "k", "reduction_config", "max,abs_l1_norm", 1, 0)
    s.add("step")
    s.tensor("dense/kernel:0", values("float32", (3,), 1))
    s.tensor("conv:12/kernel:3", values("float32", (3,), 2))
    return [s.add("close")]


def scenario_workers():
    scripts = []
    for w in range(3):
        s = base(workers=(f"worker_{w}", 3)).every_step().option("include_collection", "weights")
        if w > 0:
            s.option("end_marker", 0)
        s.create().add("mode", "TRAIN")
        for step in range(3):
            s.add("step")
            s.tensor("fc.weight", values("float32", (4,), 10 * w + step))
            s.tensor("loss", np.array([w + step], dtype=np.float32))
        scripts.append(s.add("close"))
    # Workers run one after the other here; the one that writes training_job_end.ts goes last
    # (a hook refuses a folder that already holds a finished run).
    return scripts[1:] + scripts[:1]


def scenario_running_job():
    """A job that has not ended: no training_job_end.ts."""
    s = base().every_step().option("end_marker", 0).option("include_collection", "weights").create()
    for step in range(3):
        s.add("step")
        s.tensor("fc.weight", values("float32", (2,), step))
    return [s.add("close")]


BYTE_IDENTICAL = {
    "dtypes": scenario_dtypes,
    "shapes": scenario_shapes,
    "modes": scenario_modes,
    "collection_configs": scenario_collection_configs,
    "reductions": scenario_reductions,
    "scalars": scenario_scalars,
    "empty_reductions": scenario_empty_reductions,
    "strings": scenario_strings,
    "typed_scalars": scenario_typed_scalars,
    "names": scenario_names,
    "names_reduced": scenario_names_reduced,
    "workers": scenario_workers,
    "running_job": scenario_running_job,
}
