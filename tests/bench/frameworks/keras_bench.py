#!/usr/bin/env python3
"""Per-step cost of smd's KerasHook on a small Keras model, next to no hook and to smdebug's
KerasHook (when it runs with this TensorFlow).

    .venv-tf/bin/python tests/bench/frameworks/keras_bench.py [--steps N] [--repeats R] [--tiny]

Prints one JSON object per line: {"framework", "model", "config", "ms_per_step", "note"} with
config one of "no hook", "smd every step", "smd every 100", "smd grad reductions" (every
step), "smdebug every step", "smdebug every 100". Hooks save weights, biases and gradients (plus
the always-saved losses and metrics); the reductions row saves the gradients as max, mean and l2
only (computed inside the compiled train step). The same model compiled by XLA
(jit_compile=True, Keras 3's default on a GPU: model "... XLA") has the rows of smd and no hook.
A model whose first layer is a large Embedding (its gradient an IndexedSlices: what a step that
saves nothing pays for a sparse gradient) has the rows no hook and smd every 100, with and
without XLA.
Each configuration trains a fresh model of the same seed: a warm-up fit (tracing) and then a
timed fit of N steps (batch 64, data in memory); configurations alternate over R rounds
and the median is printed. smdebug runs in a child interpreter (it needs protobuf's pure-Python
parser with today's protobuf); when it fails, its row has ms_per_step null and the error.
"""
import argparse
import json
import os
import shutil
import statistics
import tempfile
import time

from smdebug_child import run_smdebug_child

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

MODEL = "MLP 784-256-128-10, batch 64"
MODEL_XLA = MODEL + ", XLA"
MODEL_EMB = "Embedding 200000x64 (8 ids) + Dense 1, batch 64"
COLLECTIONS = ["weights", "biases", "gradients"]
WARMUP = 20


def build(keras, embedding=False):
    keras.utils.set_random_seed(0)
    if embedding:
        return keras.Sequential([keras.Input((8,), dtype="int32"), keras.layers.Embedding(200000, 64),
                                 keras.layers.Flatten(), keras.layers.Dense(1)])
    model = keras.Sequential([keras.Input((784,)), keras.layers.Dense(256, activation="relu"),
                              keras.layers.Dense(128, activation="relu"), keras.layers.Dense(10)])
    return model


def data(steps, embedding=False):
    import numpy as np
    rng = np.random.default_rng(0)
    n = 64 * steps
    if embedding:
        return (rng.integers(0, 200000, size=(n, 8)).astype("int32"),
                rng.normal(size=(n, 1)).astype("float32"))
    return rng.normal(size=(n, 784)).astype("float32"), rng.integers(0, 10, size=(n,))


def timed_fit(keras, hook_factory, steps, wrap, jit=False, embedding=False):
    """ms per step of a fit of `steps` steps after a warm-up fit, with the hook (or None)."""
    model = build(keras, embedding)
    opt = keras.optimizers.SGD(0.01)
    hook = hook_factory() if hook_factory else None
    if hook is not None and wrap:
        opt = hook.wrap_optimizer(opt)
    loss = "mse" if embedding else keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    model.compile(optimizer=opt, loss=loss, jit_compile=jit)
    x, y = data(steps, embedding)
    cbs = [hook] if hook is not None else []
    model.fit(x[:64 * WARMUP], y[:64 * WARMUP], batch_size=64, epochs=1, verbose=0, shuffle=False,
              callbacks=cbs)
    t0 = time.perf_counter()
    model.fit(x, y, batch_size=64, epochs=1, verbose=0, shuffle=False, callbacks=cbs)
    elapsed = time.perf_counter() - t0
    if hook is not None:
        hook.close()
    return 1000.0 * elapsed / steps


def smd_factory(interval, root, reductions=False):
    import smd.tensorflow as st

    def make():
        out = tempfile.mkdtemp(dir=root)
        shutil.rmtree(out)
        if reductions:
            return st.KerasHook(out, save_config=st.SaveConfig(save_interval=interval),
                                include_collections=["gradients"],
                                reduction_config=st.ReductionConfig(reductions=["max", "mean"],
                                                                    norms=["l2"]))
        return st.KerasHook(out, save_config=st.SaveConfig(save_interval=interval),
                            include_collections=COLLECTIONS)
    return make


def smdebug_child(interval, steps, repeats, root):
    import tensorflow as tf
    import smdebug.tensorflow as sd

    def make():
        out = tempfile.mkdtemp(dir=root)
        shutil.rmtree(out)
        return sd.KerasHook(out, save_config=sd.SaveConfig(save_interval=interval),
                            include_collections=COLLECTIONS)
    times = [timed_fit(tf.keras, make, steps, wrap=True) for _ in range(repeats)]
    print(json.dumps({"ms_per_step": statistics.median(times)}))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--smdebug-child", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--root", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--tiny", action="store_true", help="3 steps, 1 repeat (the test command's run)")
    args = ap.parse_args()
    if args.tiny:
        args.steps, args.repeats = 3, 1
    if args.steps < 1 or args.repeats < 1:
        ap.error("--steps and --repeats must be >= 1")
    root = args.root or tempfile.mkdtemp(prefix="keras_bench_")
    try:
        if args.smdebug_child is not None:
            smdebug_child(args.smdebug_child, args.steps, args.repeats, root)
            return
        import tensorflow as tf
        keras = tf.keras
        version = f"TensorFlow {tf.__version__}, Keras {getattr(keras, '__version__', '') or keras.__name__}"
        configs = [("no hook", None), ("smd every step", smd_factory(1, root)),
                   ("smd every 100", smd_factory(100, root)),
                   ("smd grad reductions", smd_factory(1, root, reductions=True))]
        runs = [(model, jit, name, factory) for model, jit in ((MODEL, False), (MODEL_XLA, True))
                for name, factory in configs]
        runs += [(MODEL_EMB + xla, jit, name, factory) for xla, jit in (("", False), (", XLA", True))
                 for name, factory in configs[:1] + configs[2:3]]
        times = {(model, name): [] for model, _, name, _ in runs}
        for _ in range(args.repeats):
            for model, jit, name, factory in runs:
                times[(model, name)].append(timed_fit(keras, factory, args.steps, wrap=False, jit=jit,
                                                      embedding=model.startswith(MODEL_EMB)))
        for model, _, name, _ in runs:
            print(json.dumps({"framework": "keras", "model": model, "config": name,
                              "ms_per_step": round(statistics.median(times[(model, name)]), 4),
                              "note": f"{version}; median of {args.repeats} x {args.steps} steps"}),
                  flush=True)
        for interval, name in ((1, "smdebug every step"), (100, "smdebug every 100")):
            ms, note = run_smdebug_child(__file__, [str(interval), "--steps", str(args.steps),
                                                    "--repeats", str(args.repeats), "--root", root],
                                         "TensorFlow/Keras")
            print(json.dumps({"framework": "keras", "model": MODEL, "config": name,
                              "ms_per_step": None if ms is None else round(ms, 4), "note": note}),
                  flush=True)
    finally:
        if args.root is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
