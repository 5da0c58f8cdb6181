"""Reductions of KerasHook computed by TensorFlow where the tensors live (smd/tensorflow/_reduce.py):
gradients inside the compiled train step, weights, biases and optimizer variables eagerly at the
batch's end, a GradientTape's gradients eagerly. Each is compared with smd's host path
(SMD_TF_DEVICE_REDUCTIONS=off: the value copied to the host and reduced by smd) within the
documented bound, and the statistics themselves with numpy's on empty, NaN, infinite, float16,
bfloat16 and float64 tensors."""
import json
import math

import numpy as np
import pytest
import tensorflow as tf

import smd.tensorflow as st
from smd import smdc
from smd.tensorflow import _reduce
from smd.trials import create_trial

from fwtest import assert_same_histograms, tensorboard_histograms

keras = tf.keras
REDUCTIONS = ["min", "max", "mean", "std", "variance", "sum", "prod", "l1", "l2"]
_MANTISSA = {"float16": (10, 2.0 ** -24), "bfloat16": (7, 2.0 ** -133), "float32": (23, 2.0 ** -149),
             "float64": (52, 2.0 ** -1074)}


@pytest.fixture(autouse=True)
def fresh_names():
    keras.backend.clear_session()


def _ulp(x, dtype):
    nmant, tiny = _MANTISSA[dtype]
    x = abs(float(x))
    if x == 0 or not math.isfinite(x):
        return tiny
    return max(2.0 ** (math.floor(math.log2(x)) - nmant), tiny)


def _data(n=64):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, 4)).astype("float32")
    return x, (x @ np.array([[1.0], [-2.0], [0.5], [0.0]], dtype="float32") + 0.3).astype("float32")


def _model(jit_compile=False):
    keras.backend.clear_session()  # the same layer names in every run
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="tanh"),
                              keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(0.05, momentum=0.9), loss="mse",
                  jit_compile=jit_compile)
    return model


def _compare(host, dev, min_checked):
    assert host.steps() == dev.steps()
    assert sorted(host.tensor_names()) == sorted(dev.tensor_names())
    checked = 0
    for name in host.tensor_names():
        for step in host.tensor(name).steps():
            hv = host.tensor(name).reduction_values(step)
            if not hv:
                continue
            dv = dev.tensor(name).reduction_values(step)
            assert set(hv) == set(dv), (name, step, sorted(hv), sorted(dv))
            for key, a in hv.items():
                b = dv[key]
                a, b = np.asarray(a), np.asarray(b)
                assert a.dtype == b.dtype and a.shape == b.shape, (name, key)
                fa, fb = float(a.reshape(-1)[0]), float(b.reshape(-1)[0])
                if not math.isfinite(fa):
                    assert fa == fb or (math.isnan(fa) and math.isnan(fb)), (name, key, fa, fb)
                else:
                    assert abs(fa - fb) <= _ulp(fa, a.dtype.name), (name, key, step, fa, fb)
                checked += 1
    assert checked >= min_checked, checked


def _count_saves(monkeypatch):
    calls = []
    real = _reduce.save_shaped

    def counting(hook, name, *args):
        calls.append(name)
        return real(hook, name, *args)
    monkeypatch.setattr(_reduce, "save_shaped", counting)
    return calls


def _off_then_auto(tmp_path, monkeypatch):
    """(mode, trial folder, save_shaped calls) of a run with the device reductions off, then of
    one with them on."""
    for mode in ("off", "auto"):
        monkeypatch.setenv("SMD_TF_DEVICE_REDUCTIONS", mode)
        yield mode, str(tmp_path / mode), _count_saves(monkeypatch)


def test_fit_reductions_in_the_step_and_eagerly_equal_the_host_paths(tmp_path, monkeypatch):
    x, y = _data()
    real = _reduce.save_on_device
    runs = {}
    for mode, out, calls in _off_then_auto(tmp_path, monkeypatch):
        rc = st.ReductionConfig(reductions=REDUCTIONS, abs_reductions=["min", "max", "sum", "variance"],
                                norms=["l1", "l2"])
        hook = st.KerasHook(out, save_config=st.SaveConfig(save_interval=1), reduction_config=rc,
                            include_collections=["weights", "biases", "gradients", "losses"])
        model = _model()
        batches = []  # the tensors reduced together at each batch end (one compiled call)
        monkeypatch.setattr(_reduce, "save_on_device",
                            lambda h, items, b=batches: (b.append(len(items)), real(h, items)))
        model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0, callbacks=[hook])
        in_step = hook._grad_stats
        hook.close()
        if mode == "off":
            assert calls == [] and batches == []
        else:
            # the 2 kernels and 2 biases of every batch end reduced by one call
            assert batches == [4] * 8, batches
            # the 4 gradients come from the step's statistics (step 0's too: the step traced in
            # that batch computes them), the 4 weights and biases are reduced at the batch's end,
            # every step
            assert in_step is not None and len(in_step.names) == 4
            grads = [c for c in calls if c.startswith("gradients/")]
            assert len(grads) == 8 * 4, calls
            assert len(calls) - len(grads) == 8 * 4, calls
        runs[mode] = create_trial(out)
    assert runs["off"].steps() == list(range(8))
    _compare(runs["off"], runs["auto"], min_checked=8 * 8 * 10)


@pytest.mark.parametrize("jit", [False, True])
def test_the_step_computes_the_statistics_due_reductions_need_and_others_take_the_value_path(
        tmp_path, monkeypatch, jit):
    # the train step is traced at step 0, where the gradients want max only: it computes the max
    # (and the NaN count) of each gradient, not the twelve statistics. At steps 3 and 5 the kernel
    # gradients also want prod (a collection of their own): their values leave the step and smd
    # reduces them on the host, equal to the host path's run (under XLA their values leave the
    # step through variables made by tracing it again, and are reduced at the batch's end); the
    # reductions the step computed are not saved again.
    x, y = _data()
    runs = {}
    for mode, out, calls in _off_then_auto(tmp_path, monkeypatch):
        hook = st.KerasHook(out, save_config=st.SaveConfig(save_interval=1),
                            reduction_config=st.ReductionConfig(reductions=["max"]),
                            include_collections=["gradients", "kernel_prod"])
        extra = hook.get_collection("kernel_prod")
        extra.include("^gradients/.*kernelGrad$")
        extra.save_config = st.SaveConfig(save_steps=[3, 5], start_step=100)  # only 3 and 5
        extra.reduction_config = st.ReductionConfig(reductions=["prod"])
        model = _model(jit_compile=jit)
        model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0, callbacks=[hook])
        stats = hook._grad_stats
        hook.close()
        if mode == "auto":
            assert stats.columns == ["max", "nan"]
            grads = sorted(c for c in calls if c.startswith("gradients/"))
            kernels = sorted({c for c in grads if c.endswith("kernelGrad")})
            biases = sorted({c for c in grads if c.endswith("biasGrad")})
            assert len(kernels) == 2 and len(biases) == 2
            # from the step's statistics, but the kernels' at steps 3 and 5 (XLA: from their
            # values, reduced where they live at the batch's end; otherwise on the host)
            assert grads == sorted(biases * 8 + kernels * (8 if jit else 6)), grads
        runs[mode] = create_trial(out)
    trial = runs["auto"]
    for step in range(8):  # each gradient record once (an epoch's last step has loss twice)
        index = tmp_path / "auto" / "index" / "000000000" / f"{step:012d}_worker_0.json"
        tags = [e["tensorname"] for e in json.loads(index.read_text())["tensor_payload"]
                if "gradients/" in e["tensorname"]]
        assert len(tags) == len(set(tags)) == 4 + 2 * (step in (3, 5)), (step, sorted(tags))
    for name in trial.tensor_names(collection="kernel_prod"):
        assert set(trial.tensor(name).reduction_values(3)) == {("max", False), ("prod", False)}
        assert set(trial.tensor(name).reduction_values(4)) == {("max", False)}
    _compare(runs["off"], runs["auto"], min_checked=8 * 4 + 2 * 2)


def test_xla_reductions_in_the_step_equal_the_host_paths(tmp_path, monkeypatch):
    # a train step compiled by XLA (Keras 3's default on a GPU) computes the gradients'
    # statistics itself; with the device reductions off the same step hands the gradients' values
    # out through the hook's variables and smd reduces them on the host
    x, y = _data()
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(16, drop_remainder=True)
    runs = {}
    for mode, out, calls in _off_then_auto(tmp_path, monkeypatch):
        hook = st.KerasHook(out, save_config=st.SaveConfig(save_interval=1),
                            reduction_config=st.ReductionConfig(reductions=REDUCTIONS, norms=["l2"]),
                            include_collections=["weights", "biases", "gradients"])
        model = _model(jit_compile=True)
        model.fit(ds, epochs=2, verbose=0, callbacks=[hook])
        assert (hook._grad_stats is not None) == (mode == "auto")
        slots = list(hook._xla_groups.values())
        hook.close()
        grads = [c for c in calls if c.startswith("gradients/")]
        # the step's own statistics at every step, and no variable holds a gradient (the values
        # never leave the step); with the device reductions off, the values leave it
        assert len(grads) == (0 if mode == "off" else 8 * 4), calls
        assert any(g.names[0].startswith("gradients/") for g in slots) == (mode == "off"), slots
        runs[mode] = create_trial(out)
    assert runs["off"].steps() == list(range(8))
    assert len(runs["off"].tensor_names(collection="gradients")) == 4
    _compare(runs["off"], runs["auto"], min_checked=8 * 8 * 9)


def test_values_and_median_keep_the_value_path(tmp_path, monkeypatch):
    # the gradients' raw values every 2 steps (a collection of their own) beside reductions every
    # step; median needs the elements: those tensors' values go to the host and smd reduces them
    monkeypatch.setenv("SMD_TF_DEVICE_REDUCTIONS", "auto")
    calls = _count_saves(monkeypatch)
    x, y = _data()
    out = str(tmp_path / "run")
    hook = st.KerasHook(out, save_config=st.SaveConfig(save_interval=1),
                        include_collections=["gradients", "weights", "raw_grads"])
    hook.get_collection("gradients").reduction_config = st.ReductionConfig(reductions=["max", "mean"],
                                                                           norms=["l2"])
    hook.get_collection("raw_grads").include("^gradients/.*kernelGrad$")
    hook.get_collection("raw_grads").save_config = st.SaveConfig(save_interval=2)
    hook.get_collection("weights").reduction_config = st.ReductionConfig(reductions=["median", "max"])
    model = _model()
    model.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0, callbacks=[hook])
    hook.close()
    trial = create_trial(out)
    kernels = [n for n in trial.tensor_names(collection="gradients") if n.endswith("kernelGrad")]
    biases = [n for n in trial.tensor_names(collection="gradients") if n.endswith("biasGrad")]
    assert len(kernels) == 2 and len(biases) == 2
    for step in range(4):
        for n in biases:  # reductions only: computed in the step from step 1 on
            assert set(trial.tensor(n).reduction_values(step)) == {("max", False), ("mean", False), ("l2", False)}
        for n in kernels:
            assert set(trial.tensor(n).reduction_values(step)) == {("max", False), ("mean", False), ("l2", False)}
            if step % 2 == 0:  # the value is due: saved whole, reductions by smd on the host
                assert trial.tensor(n).value(step).shape in ((4, 8), (8, 1)), (n, step)
        for n in trial.tensor_names(collection="weights"):
            rv = trial.tensor(n).reduction_values(step)
            assert ("median", False) in rv
            w = np.asarray(rv[("median", False)]).reshape(-1)[0]
            assert math.isfinite(float(w))
    # no weight went through the device path (median wanted); the bias gradients did at steps
    # 0-3, the kernel gradients at steps 1 and 3 (their values are due at 0 and 2)
    assert sorted(calls) == sorted(biases * 4 + kernels * 2), calls


@pytest.mark.parametrize("jit", [False, True])
def test_histograms_in_the_step_and_eagerly_equal_the_host_paths(tmp_path, monkeypatch, jit):
    # TensorBoard histograms of the gradients (in the compiled step, with XLA too) and of the
    # weights and biases (eagerly at the batch's end) come from bucket counts TensorFlow computes
    # where the tensors live: the same histograms as the host path's
    x, y = _data()
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(16, drop_remainder=True)
    hists = {}
    for mode, out, calls in _off_then_auto(tmp_path, monkeypatch):
        hook = st.KerasHook(out, save_config=st.SaveConfig(save_interval=1),
                            reduction_config=st.ReductionConfig(reductions=["max", "mean"], norms=["l2"]),
                            include_collections=["weights", "biases", "gradients"],
                            tensorboard_dir=out + "_tb")
        model = _model(jit_compile=jit)
        model.fit(ds, epochs=2, verbose=0, callbacks=[hook])
        stats = hook._grad_stats
        hook.close()
        if mode == "auto":
            assert stats.counts is not None
            grads = [c for c in calls if c.startswith("gradients/")]
            # the step's own counts, step 0's too (the step traced in that batch computes them)
            assert len(grads) == 8 * 4, calls
            assert len(calls) - len(grads) == 8 * 4, calls
        else:
            assert calls == []
        hists[mode] = tensorboard_histograms(out + "_tb")
    # 4 gradients, 2 kernels and 2 biases, 8 steps
    assert len({tag for _, tag in hists["off"]}) == 8
    assert_same_histograms(hists["off"], hists["auto"], 8 * 8)


@pytest.mark.parametrize("where", ["eager", "function", "xla"])
def test_bucket_counts_follow_the_host_paths_rules(where):
    # numpy.histogram's rules over smd's edges: edges[i] <= x < edges[i + 1], the last edge in the
    # last bucket; NaN, infinities and values outside the edges in none
    edges = np.array(smdc.smd_histogram_bucket_edges())
    rng = np.random.default_rng(5)
    arrays = [np.concatenate([edges[::50], [edges[-1], edges[0], np.nextafter(edges[0], -np.inf),
                                            np.nextafter(edges[-1], np.inf), np.nan, np.inf, -np.inf,
                                            0.0, -0.0]]),
              rng.normal(size=(30, 20)) * 10.0 ** rng.integers(-12, 12, size=(30, 20)),
              np.zeros(0)]
    tensors = [tf.constant(a) for a in arrays] + [tf.constant(arrays[1], tf.float32),
                                                   tf.constant(arrays[1], tf.bfloat16)]
    if where == "eager":
        got = _reduce.bucket_counts(tensors).numpy()
    else:
        got = tf.function(lambda *ts: _reduce.bucket_counts(ts), jit_compile=where == "xla")(*tensors).numpy()
    assert got.shape == (len(tensors), len(edges) - 1)
    for k, t in enumerate(tensors):
        v = tf.cast(t, tf.float64).numpy().reshape(-1)
        v = v[np.isfinite(v) & (v >= edges[0]) & (v <= edges[-1])]
        want, _ = np.histogram(v, bins=edges)
        np.testing.assert_array_equal(got[k], want, err_msg=str(k))
    assert got[0].sum() > 30 and got[2].sum() == 0


def test_gradient_tape_reductions_equal_the_host_paths(tmp_path, monkeypatch):
    x, y = _data(32)
    runs = {}
    for mode in ("off", "auto"):
        monkeypatch.setenv("SMD_TF_DEVICE_REDUCTIONS", mode)
        out = str(tmp_path / mode)
        hook = st.KerasHook(out, save_config=st.SaveConfig(save_interval=1),
                            reduction_config=st.ReductionConfig(reductions=REDUCTIONS, norms=["l2"]),
                            include_collections=["weights", "biases", "gradients"])
        model = _model()
        opt = keras.optimizers.SGD(0.05)
        for step in range(3):
            with hook.wrap_tape(tf.GradientTape()) as tape:
                loss = tf.reduce_mean((model(x[step * 8:(step + 1) * 8]) - y[step * 8:(step + 1) * 8]) ** 2)
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
        hook.close()
        runs[mode] = create_trial(out)
    _compare(runs["off"], runs["auto"], min_checked=3 * 8 * 9)


@pytest.mark.parametrize("where", ["eager", "function", "xla"])
@pytest.mark.parametrize("dtype", [tf.float32, tf.float16, tf.bfloat16, tf.float64])
def test_statistics_equal_numpys(dtype, where):
    rng = np.random.default_rng(3)
    arrays = [np.zeros((0, 3)), np.array([1.0, np.nan, -3.0]), np.array([np.inf, 2.0, -1.0]),
              rng.normal(size=(40, 7)) * 3, np.array([[-2.5]]), rng.normal(size=1000), np.zeros(0)]
    tensors = [tf.cast(tf.constant(a), dtype) for a in arrays]
    if where == "eager":
        matrix, columns = _reduce.statistics(tensors)
    else:  # as a train step computes them, compiled by XLA or not
        matrix, columns = tf.function(lambda *ts: _reduce.statistics(ts)[0],
                                      jit_compile=where == "xla")(*tensors), _reduce.STATS
    got = matrix.numpy()
    for k, t in enumerate(tensors):
        x = tf.cast(t, tf.float64).numpy().reshape(-1)  # the exact values TensorFlow holds
        a = np.abs(x)
        want = {"nan": float(np.isnan(x).sum()),
                "min": x.min() if x.size else math.inf, "max": x.max() if x.size else -math.inf,
                "absmin": a.min() if x.size else math.inf, "absmax": a.max() if x.size else -math.inf,
                "sum": x.sum(), "abssum": a.sum(), "sumsq": (x * x).sum(),
                "prod": x.prod(), "absprod": a.prod(),
                "var": ((x - x.mean()) ** 2).sum() if np.isfinite(x).all() and x.size else 0.0,
                "absvar": ((a - a.mean()) ** 2).sum() if np.isfinite(x).all() and x.size else 0.0}
        for i, name in enumerate(columns):
            v, w = got[k, i], want[name]
            if np.isnan(x).any() and name != "nan":
                continue  # with a NaN every reduction is NaN: finish() decides from the count
            if np.isinf(x).any() and name not in ("min", "max", "absmin", "absmax"):
                continue  # inf: the sums are inf or NaN whatever the order
            if np.isnan(w) or np.isinf(w):
                assert v == w or (np.isnan(v) and np.isnan(w)), (arrays[k], name, v, w)
            elif name in ("min", "max", "absmin", "absmax", "nan"):
                assert v == w, (arrays[k], name, v, w)
            else:
                assert v == pytest.approx(w, rel=1e-12, abs=1e-300), (arrays[k], name, v, w)


def test_unknown_mode_is_refused(monkeypatch):
    monkeypatch.setenv("SMD_TF_DEVICE_REDUCTIONS", "sometimes")
    with pytest.raises(ValueError, match="SMD_TF_DEVICE_REDUCTIONS must be auto or off"):
        _reduce.enabled()


@pytest.mark.parametrize("jit", [False, True], ids=["graph", "xla"])
def test_a_hook_reused_for_another_model_of_the_same_names_reduces_that_models_gradients(
        tmp_path, monkeypatch, jit):
    # two models in turn whose gradients have the same names but other shapes (a hyperparameter
    # loop, get_hook()): the second's means are its own, as on the host path
    x, y = _data()
    rc = st.ReductionConfig(reductions=["mean", "max"])
    runs = {}
    for mode, out, _ in _off_then_auto(tmp_path, monkeypatch):
        hook = st.KerasHook(out, save_config=st.SaveConfig(save_interval=1),
                            include_collections=["gradients"], reduction_config=rc)
        for width in (3, 7):
            keras.backend.clear_session()
            keras.utils.set_random_seed(0)
            model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(width), keras.layers.Dense(1)])
            model.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse", jit_compile=jit)
            model.fit(x, y, batch_size=16, epochs=1, verbose=0, shuffle=False, callbacks=[hook])
        hook.close()
        runs[mode] = create_trial(out)
    _compare(runs["off"], runs["auto"], min_checked=8 * 4 * 2)


def test_statistics_of_an_earlier_compiled_step_are_not_saved_for_an_eager_one(tmp_path, monkeypatch):
    # fit compiled, then compiled again with run_eagerly=True: the eager steps' reductions are
    # their own, written once, not the last compiled step's statistics again
    x, y = _data()
    rc = st.ReductionConfig(reductions=["max", "mean"], norms=["l2"])
    runs = {}
    for mode, out, calls in _off_then_auto(tmp_path, monkeypatch):
        model = _model()
        hook = st.KerasHook(out, save_config=st.SaveConfig(save_interval=1),
                            include_collections=["gradients"], reduction_config=rc)
        model.fit(x, y, batch_size=16, epochs=1, verbose=0, shuffle=False, callbacks=[hook])
        model.compile(optimizer=keras.optimizers.SGD(0.05, momentum=0.9), loss="mse", run_eagerly=True)
        model.fit(x, y, batch_size=16, epochs=1, verbose=0, shuffle=False, callbacks=[hook])
        hook.close()
        runs[mode] = create_trial(out)
        if mode == "auto":  # each gradient once a step: 4 compiled and 4 eager steps
            assert all(calls.count(n) == 8 for n in set(calls)) and len(set(calls)) == 4, calls
    _compare(runs["off"], runs["auto"], min_checked=8 * 4 * 3)
    t = runs["auto"].tensor("gradients/sequential/dense_1/biasGrad")
    assert len({float(np.asarray(t.reduction_value(s, "max")).reshape(-1)[0]) for s in range(4, 8)}) > 1
