"""Trials written with the REAL smdebug writer (smdebug_hook.py) for the interop tests.

Each case is a function `write(out_dir)` that runs in a subprocess where smdebug is importable
(see writer.py), plus the data it records, so that the test can compute what a correct reader
must print where smdebug's own reader is wrong. Data is a pure function of (tensor, step): the
writer and the test compute the same arrays.
"""
import numpy as np

CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


ALL_DTYPES = ["float16", "float32", "float64", "int8", "uint8", "int16", "uint16", "int32",
              "uint32", "int64", "uint64", "bool", "complex64", "complex128"]
# smdebug's reader cannot decode these (KeyError), though its writer writes them.
UNREADABLE_BY_SMDEBUG = {"int16", "uint16", "uint32", "uint64", "complex64"}


def dtype_array(dtype, step):
    return (np.arange(6).reshape(2, 3) - 2 + step).astype(dtype)


def weight(step, shape=(2, 3)):
    n = int(np.prod(shape))
    return (np.arange(n, dtype=np.float32).reshape(shape) * 0.25 - 1.0 + step).astype(np.float32)


def smallint_array(dtype, step):
    return (np.array([-100, -3, 0, 7, 20, 100]) + step).astype(dtype)


def _hook(out, **kw):
    from smdebug_hook import NumpyHook, fixed_wall_time

    fixed_wall_time()
    return NumpyHook(out, **kw)


def _sc(**kw):
    from smdebug import SaveConfig

    return SaveConfig(**kw)


def _rc(**kw):
    from smdebug import ReductionConfig

    return ReductionConfig(**kw)


def _modes():
    from smdebug import modes

    return modes


# ------------------------------------------------------------------------------------------ cases

@case
def modes_reentry(out):
    """TRAIN, EVAL, back to TRAIN (re-entry continues its count), PREDICT, then GLOBAL."""
    modes = _modes()
    hook = _hook(out, save_config=_sc(save_interval=1), include_collections=["weights", "losses"])
    step = 0
    for mode, n in [(modes.TRAIN, 3), (modes.EVAL, 2), (modes.TRAIN, 2), (modes.PREDICT, 2),
                    (modes.GLOBAL, 1)]:
        hook.set_mode(mode)
        for _ in range(n):
            hook.begin_step()
            hook.record("fc.weight", weight(step))
            hook.record("loss", np.float32(1.0 / (step + 1)))
            step += 1
    hook.close()


@case
def save_gaps(out):
    """save_interval per mode and save_steps: many steps are not saved."""
    modes = _modes()
    from smdebug import SaveConfigMode

    sc = _sc(mode_save_configs={
        modes.TRAIN: SaveConfigMode(save_interval=3),
        modes.EVAL: SaveConfigMode(save_steps=[1, 4]),
    })
    hook = _hook(out, save_config=sc, include_collections=["weights", "losses"])
    step = 0
    for mode, n in [(modes.TRAIN, 10), (modes.EVAL, 6), (modes.TRAIN, 5)]:
        hook.set_mode(mode)
        for _ in range(n):
            hook.begin_step()
            hook.record("fc.weight", weight(step))
            hook.record("loss", np.float64(step))
            step += 1
    hook.close()


@case
def dtypes(out):
    """Every dtype smdebug writes, raw, plus strings, a 0-d tensor and an empty one."""
    hook = _hook(out, save_config=_sc(save_interval=1), include_regex=["^t_"])
    hook.set_mode(_modes().TRAIN)
    for step in range(2):
        hook.begin_step()
        for d in ALL_DTYPES:
            hook.record("t_" + d, dtype_array(d, step))
        hook.record("t_str", np.array(["a", "b\u00e9", str(step)]))
        hook.record("t_0d", np.array(3.5 + step))
        hook.record("t_empty", np.zeros((0, 3), np.float32))  # the hook writes nothing for it
    hook.close()


@case
def reductions_float(out):
    """All reductions and norms, plain and abs, of float tensors; with and without raw values."""
    hook = _hook(out, save_config=_sc(save_interval=1), include_collections=["red", "redraw"])
    every = dict(reductions=["min", "max", "mean", "std", "variance", "sum", "prod"],
                 norms=["l1", "l2"], abs_reductions=["min", "max", "mean", "std", "variance",
                                                      "sum", "prod"], abs_norms=["l1", "l2"])
    hook.get_collection("red").include("^r_")
    hook.get_collection("red").reduction_config = _rc(**every)
    hook.get_collection("redraw").include("^rr_")
    hook.get_collection("redraw").reduction_config = _rc(save_raw_tensor=True, **every)
    hook.set_mode(_modes().TRAIN)
    for step in range(3):
        hook.begin_step()
        hook.record("r_vec32", weight(step, (6,)))
        hook.record("r_mat32", weight(step, (2, 3)))
        hook.record("r_vec64", weight(step, (5,)).astype(np.float64))
        hook.record("r_vec16", weight(step, (4,)).astype(np.float16))
        hook.record("r_3d", weight(step, (2, 2, 2)))  # norms of 3-D: smdebug skips them
        hook.record("rr_vec32", weight(step, (3,)))
        hook.record("rr_0d", np.array(-2.5 + step, np.float32))
        hook.record("r_empty", np.zeros((0,), np.float32))  # reductions of an empty tensor
    hook.close()


@case
def reductions_int(out):
    """Reductions of integer and bool tensors (numpy result dtypes)."""
    hook = _hook(out, save_config=_sc(save_interval=1), include_collections=["red"])
    hook.get_collection("red").include("^i_")
    hook.get_collection("red").reduction_config = _rc(
        reductions=["min", "max", "mean", "sum"], abs_reductions=["max"], save_raw_tensor=True)
    hook.set_mode(_modes().TRAIN)
    for step in range(2):
        hook.begin_step()
        hook.record("i_int32", smallint_array("int32", step))
        hook.record("i_int64", smallint_array("int64", step))
        hook.record("i_bool", np.array([True, False, step == 1]))
    hook.close()


@case
def reductions_smallint(out):
    """Reductions smdebug reads back wrongly (int8 as uint8) or not at all (int16, uint8 sums)."""
    hook = _hook(out, save_config=_sc(save_interval=1), include_collections=["red"])
    hook.get_collection("red").include("^s_")
    hook.get_collection("red").reduction_config = _rc(reductions=["min", "max", "sum"])
    hook.set_mode(_modes().TRAIN)
    for step in range(2):
        hook.begin_step()
        hook.record("s_int8", smallint_array("int8", step))
        hook.record("s_uint8", smallint_array("uint8", step))
        hook.record("s_int16", smallint_array("int16", step))
    hook.close()


@case
def shapes(out):
    """save_shape alone, and together with the raw value (smdebug then loses the value)."""
    hook = _hook(out, save_config=_sc(save_interval=1), include_collections=["shp", "both"])
    hook.get_collection("shp").include("^sh_")
    hook.get_collection("shp").reduction_config = _rc(save_shape=True)
    hook.get_collection("both").include("^b_")
    hook.get_collection("both").reduction_config = _rc(save_shape=True, save_raw_tensor=True)
    hook.set_mode(_modes().EVAL)
    for step in range(2):
        hook.begin_step()
        hook.record("sh_0d", np.array(1.0, np.float32))
        hook.record("sh_4d", np.ones((2, 1, 3, 2), np.float32))
        hook.record("sh_empty", np.zeros((3, 0), np.float32))
        hook.record("b_mat", weight(step, (3, 2)))
        hook.record("b_0d", np.array(7, np.int64))
    hook.close()


@case
def scalars(out):
    """save_scalar in several modes (cached, written when the step's writer closes)."""
    modes = _modes()
    hook = _hook(out, save_config=_sc(save_interval=1), include_collections=["losses"])
    step = 0
    for mode, n in [(modes.TRAIN, 3), (modes.EVAL, 2)]:
        hook.set_mode(mode)
        for _ in range(n):
            hook.begin_step()
            hook.record("loss", np.float32(step))
            hook.save_scalar("acc", 0.5 * step, timestamp=1.0e9 + step)
            hook.save_scalar("lr", 0.1, timestamp=1.0e9 + step)
            step += 1
    hook.close()


# Names smdebug reads in its own way: reductions drop ":<digits>", and a name that merely
# contains "smdebug/reductions/" is taken for a reduction.
PREFIX_NAME = "a/smdebug/reductions/min/y"


@case
def names(out):
    hook = _hook(out, save_config=_sc(save_interval=1), include_collections=["custom"])
    hook.get_collection("custom").include(".")
    hook.get_collection("custom").reduction_config = _rc(reductions=["max"], save_raw_tensor=True)
    hook.set_mode(_modes().TRAIN)
    for step in range(2):
        hook.begin_step()
        hook.record("dense/kernel:0", weight(step, (3,)))
        hook.record(PREFIX_NAME, np.ones(2, np.float32))
        hook.record("caf\u00e9 \u00df/\u4e2d", weight(step, (2,)))
        hook.record("with space", weight(step, (1,)))
    hook.close()


def _workers(out, steps_per_worker, end_of_job):
    from smdebug_hook import NumpyHook, fixed_wall_time

    fixed_wall_time()
    modes = _modes()
    hooks = []
    for w in range(len(steps_per_worker)):
        h = NumpyHook(out, worker=f"worker_{w}", num_workers=len(steps_per_worker),
                      include_workers="all", save_config=_sc(save_interval=1),
                      include_collections=["weights", "losses"])
        h.set_mode(modes.TRAIN)
        hooks.append(h)
    for step in range(max(steps_per_worker)):
        if step == 3:
            for h in hooks:
                h.set_mode(modes.EVAL)
        for w, h in enumerate(hooks):
            if step < steps_per_worker[w]:
                h.begin_step()
                h.record("fc.weight", weight(step + 10 * w))
                h.record("loss", np.float32(step + w))
    for h in hooks:
        h.close(end_of_job=end_of_job)


@case
def workers3_ended(out):
    _workers(out, [5, 5, 5], True)


@case
def workers3_running(out):
    """worker_2 lags two steps behind: the last steps are incomplete; the job has not ended."""
    _workers(out, [6, 6, 4], False)


@case
def running_single(out):
    hook = _hook(out, save_config=_sc(save_interval=2), include_collections=["weights", "losses"])
    hook.set_mode(_modes().TRAIN)
    for step in range(7):
        hook.begin_step()
        hook.record("fc.weight", weight(step))
        hook.record("loss", np.float32(step))
    hook.close(end_of_job=False)


@case
def index_folders(out):
    """Steps on both sides of 1000 and 2000: index files in index/000000000/, 000000001/, 000000002/."""
    modes = _modes()
    hook = _hook(out, save_config=_sc(save_steps=[0, 1, 998, 999, 1000, 1001, 2000, 2047]),
                 include_collections=["weights", "losses"])
    hook.set_mode(modes.TRAIN)
    for step in range(2048):
        hook.begin_step()
        if step in (0, 1, 998, 999, 1000, 1001, 2000, 2047):
            hook.record("fc.weight", weight(step))
            hook.record("loss", np.float32(step))
    hook.close()


def print_arrays():
    """name -> array for case `printing`: what numpy's printing rules distinguish (positional and
    scientific floats, padding, nan/inf, summarization, line wrapping, dtypes smdebug can read)."""
    rng = np.random.default_rng(7)
    mags = 10.0 ** rng.uniform(-12, 12, 40) * rng.choice([-1.0, 1.0], 40)
    return {
        "p_f32_mixed": np.array([0.3, 1 / 3, 100.5], np.float32),
        "p_f32_exp": np.array([1e-5, 1 / 3], np.float32),
        "p_f64_exp": np.array([1e-5, 1 / 3, 2.5e10, -7.0]),
        "p_f64_big_exp": np.array([1e-300, 1.0, -2e200]),
        "p_f64_ints": np.array([[1.0, 2.0], [-30.0, 4.0]]),
        "p_f64_tie": np.array([0.001953125, 1.0, 2.0 / 3.0]),
        "p_f64_negzero": np.array([-0.0, 1.5, 0.0]),
        "p_f64_mags": mags,
        "p_f32_normal": rng.standard_normal((4, 5, 6)).astype(np.float32),
        "p_f32_nonfinite": np.array([[1.5, np.nan], [-np.inf, 2.0]], np.float32),
        "p_f64_allnan": np.array([np.nan, np.inf]),
        "p_f16": np.array([0.1, 0.2, 1e-3, 65504.0, -3.0], np.float16),
        "p_f16_rand": rng.standard_normal(30).astype(np.float16),
        "p_f16_exp": np.array([1e-5, 0.333, 6e4], np.float16),
        "p_c128": np.array([1 + 2j, 3.5 - 4j, -1e-7 + 1e7j]),
        "p_c128_rand": (rng.standard_normal(7) + 1j * rng.standard_normal(7)),
        "p_i64": np.array([-5, 12345678901, 7], np.int64),
        "p_u8_big": (np.arange(3000) % 251).astype(np.uint8),
        "p_bool_true": np.array([True, True]),
        "p_f64_wrap": np.linspace(-1.0, 1.0, 60),
        "p_f64_summary": np.arange(2000, dtype=np.float64) * 0.5,
        "p_f64_2d_summary": rng.standard_normal((50, 50)),
        "p_f32_3d_summary": np.arange(8 * 9 * 20, dtype=np.float32).reshape(8, 9, 20),
        "p_f64_0d": np.array(-2.25),
        "p_str": np.array(["it's", 'say "hi"', "tab\there", "caf\u00e9"]),
        **random_print_arrays(rng, 120),
    }


def random_print_arrays(rng, n):
    """Float arrays of random magnitudes, signs, zeros, roundings and nan/inf."""
    out = {}
    for i in range(n):
        dtype = ["float16", "float32", "float64", "complex128"][i % 4]
        size = int(rng.integers(1, 12))
        lo, hi = sorted(rng.uniform(-20, 20, 2))
        a = 10.0 ** rng.uniform(lo, hi, size) * rng.choice([-1, 1, 0], size, p=[.45, .45, .1])
        if rng.random() < 0.3:
            a = np.round(a, int(rng.integers(0, 5)))
        if dtype == "complex128":
            a = a + 1j * a[::-1] * rng.uniform(0, 3)
        with np.errstate(over="ignore"):
            a = a.astype(dtype)
        if rng.random() < 0.1:
            a[0] = np.nan
        out[f"p_rand_{i:03d}"] = a
    return out


@case
def printing(out):
    """Arrays for checking `smd cat` against numpy's printing (see print_arrays)."""
    hook = _hook(out, save_config=_sc(save_interval=1), include_regex=["^p_"])
    hook.set_mode(_modes().TRAIN)
    hook.begin_step()
    for name, a in print_arrays().items():
        hook.record(name, a)
    hook.close()
