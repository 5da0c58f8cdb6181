#!/usr/bin/env python3
"""Per-step cost of smd's SessionHook (TensorFlow graph mode, tf.compat.v1) on a deep graph, next
to no hook and to smdebug's SessionHook (when it runs with this TensorFlow).

    .venv-tf/bin/python tests/bench/frameworks/session_bench.py [--steps N] [--repeats R] [--tiny]

The graph: an MLP of 200 dense layers of width 16 (about 9,000 operations, each with outputs a
collection's pattern could name), batch 4, plain gradient descent, trained in a
MonitoredTrainingSession. The hooks keep their default collections (the loss is saved; smdebug's
and smd's graph hooks fetch any other graph tensor a saved collection names), at save interval 1
("every step") and 100. What a hook costs here is the work of a due step besides the fetches:
deciding which of the graph's tensors are due. Prints one JSON object per line: {"framework",
"model", "config", "ms_per_step", "note"} with config one of "no hook", "smd every step", "smd
every 100", "smdebug every step", "smdebug every 100"; ms_per_step is the median over R rounds of
the time of N runs (after 10 untimed ones) divided by N. smdebug runs in a child interpreter (with
protobuf's pure-Python parser); when it fails, its row has ms_per_step null and the error.
"""
import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

from smdebug_child import run_smdebug_child

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

LAYERS, WIDTH, BATCH, WARMUP = 200, 16, 4, 10


def timed_runs(tf, make_hook, steps, layers=LAYERS):
    """ms per session.run of `steps` runs after WARMUP untimed ones, with the hook (or none), and
    the number of operations in the graph."""
    import numpy as np
    v1 = tf.compat.v1
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(tf.float32, [None, WIDTH], name="x")
        h = x
        for i in range(layers):
            w = v1.get_variable(f"layer{i}/kernel", [WIDTH, WIDTH],
                                initializer=v1.glorot_uniform_initializer(seed=i))
            b = v1.get_variable(f"layer{i}/b", [WIDTH], initializer=v1.zeros_initializer())
            h = tf.nn.relu(tf.matmul(h, w) + b)
        loss = tf.reduce_mean(tf.square(h), name="objective")
        v1.losses.add_loss(loss)
        hook = make_hook() if make_hook else None
        train = v1.train.GradientDescentOptimizer(0.01).minimize(loss)
        xs = np.ones((BATCH, WIDTH), "float32")
        with v1.train.MonitoredTrainingSession(hooks=[hook] if hook else []) as sess:
            for _ in range(WARMUP):
                sess.run(train, feed_dict={x: xs})
            t0 = time.perf_counter()
            for _ in range(steps):
                sess.run(train, feed_dict={x: xs})
            elapsed = time.perf_counter() - t0
        ops = len(g.get_operations())
    if hook is not None:
        hook.close()
    return 1000.0 * elapsed / steps, ops


def hook_factory(lib, interval, root, outs=None):
    def make():
        out = tempfile.mkdtemp(dir=root)
        shutil.rmtree(out)
        if outs is not None:
            outs.append(out)
        return lib.SessionHook(out, save_config=lib.SaveConfig(save_interval=interval))
    return make


def smdebug_child(interval, steps, repeats, layers, root):
    import tensorflow as tf
    import smdebug.tensorflow as sd
    times = []
    for _ in range(repeats):
        outs, failure = [], None
        try:
            times.append(timed_runs(tf, hook_factory(sd, interval, root, outs), steps, layers)[0])
        except Exception as e:  # noqa: BLE001 - reported below
            failure = e
        # smdebug's hooks log an error and disable themselves for the rest of the job: a run that
        # saved nothing measured no hook
        if failure is not None or not all(os.path.isdir(os.path.join(o, "index")) for o in outs):
            sys.exit(f"smdebug's SessionHook saved nothing (it disables itself on its first "
                     f"error and logs it){f': {failure!r}' if failure else ''}")
    print(json.dumps({"ms_per_step": statistics.median(times)}))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--smdebug-child", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--root", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--layers", type=int, default=LAYERS, help=argparse.SUPPRESS)
    ap.add_argument("--tiny", action="store_true",
                    help="20 layers, 3 steps, 1 repeat (the test command's run)")
    args = ap.parse_args()
    if args.tiny:
        args.layers, args.steps, args.repeats = 20, 3, 1
    if args.steps < 1 or args.repeats < 1 or args.layers < 1:
        ap.error("--steps and --repeats must be >= 1")
    root = args.root or tempfile.mkdtemp(prefix="session_bench_")
    try:
        if args.smdebug_child is not None:
            smdebug_child(args.smdebug_child, args.steps, args.repeats, args.layers, root)
            return
        import tensorflow as tf
        import smd.tensorflow as st
        configs = [("no hook", None), ("smd every step", hook_factory(st, 1, root)),
                   ("smd every 100", hook_factory(st, 100, root))]
        times = {name: [] for name, _ in configs}
        ops = 0
        for _ in range(args.repeats):  # interleaved
            for name, factory in configs:
                ms, ops = timed_runs(tf, factory, args.steps, args.layers)
                times[name].append(ms)
        model = f"MLP {args.layers} x {WIDTH} ({ops} graph operations), batch {BATCH}, SessionHook"
        note = f"TensorFlow {tf.__version__}; median of {args.repeats} x {args.steps} runs"
        for name, _ in configs:
            print(json.dumps({"framework": "tf-graph", "model": model, "config": name,
                              "ms_per_step": round(statistics.median(times[name]), 4), "note": note}),
                  flush=True)
        for interval, name in ((1, "smdebug every step"), (100, "smdebug every 100")):
            ms, why = run_smdebug_child(__file__, [str(interval), "--steps", str(args.steps),
                                                   "--repeats", str(args.repeats), "--layers",
                                                   str(args.layers), "--root", root], "TensorFlow")
            print(json.dumps({"framework": "tf-graph", "model": model, "config": name,
                              "ms_per_step": None if ms is None else round(ms, 4), "note": why}),
                  flush=True)
    finally:
        if args.root is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
