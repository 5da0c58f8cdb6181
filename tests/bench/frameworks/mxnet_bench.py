#!/usr/bin/env python3
"""Per-step cost of the MXNet (Gluon) hooks on a small MLP: no hook, smd.mxnet.Hook and smdebug
1.0.34's smdebug.mxnet.Hook, each saving weights, biases, gradients and losses every step and
every 100 steps.

    .venv-mxnet/bin/python tests/bench/frameworks/mxnet_bench.py [--steps N] [--rounds R] [--tiny]

Prints one JSON object per configuration: {"framework", "model", "config", "ms_per_step",
"cpu_ms_per_step", "note"}, measured as in torch_bench.py: a new, identically seeded network per
run, 10 untimed warm-up steps, timing up to the end of hook.close(), configurations interleaved R
times, the best (smallest) of the R runs; cpu_ms_per_step is the whole process's CPU time. MXNet's
engine runs with one worker thread (MXNET_CPU_WORKER_NTHREADS=1, OMP_NUM_THREADS=1).
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
import time

os.environ.setdefault("SMDEBUG_LOG_LEVEL", "error")
os.environ.setdefault("MXNET_CPU_WORKER_NTHREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.pop("TRAINING_JOB_NAME", None)

import mxnet as mx  # noqa: E402
from mxnet import autograd, gluon, nd  # noqa: E402

MODELS = {"small MLP 32-64-64-10, batch 32, SGD": ([32, 64, 64, 10], 32)}
COLLECTIONS = ["weights", "biases", "gradients", "losses"]
WARMUP = 10


def run(model, config, steps, out_dir):
    widths, batch = MODELS[model]
    mx.random.seed(0)
    net = gluon.nn.Sequential()
    with net.name_scope():
        for i, w in enumerate(widths[1:]):
            last = i == len(widths) - 2
            net.add(gluon.nn.Dense(w, in_units=widths[i], activation=None if last else "relu"))
    net.initialize(mx.init.Xavier())
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})
    x = nd.random.normal(shape=(batch, widths[0]))
    y = nd.array([i % widths[-1] for i in range(batch)])
    hook = None
    if config != "no hook":
        interval = 1 if config.endswith("every step") else 100
        if config.startswith("smd "):
            import smd.mxnet as lib
        else:
            import smdebug.mxnet as lib
        hook = lib.Hook(out_dir, save_config=lib.SaveConfig(save_interval=interval),
                        include_collections=COLLECTIONS)
        hook.register_block(net)
        hook.register_block(loss_fn)

    def step():
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(batch)
        loss.wait_to_read()

    for _ in range(WARMUP):
        step()
    nd.waitall()
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(steps):
        step()
    nd.waitall()
    if hook is not None:
        hook.close()
    return (time.perf_counter() - t0) / steps, (time.process_time() - c0) / steps


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--tiny", action="store_true", help="3 steps, 1 round (the test command's run)")
    args = ap.parse_args()
    if args.tiny:
        args.steps, args.rounds = 3, 1
    configs = ["no hook", "smd every step", "smd every 100", "smdebug every step", "smdebug every 100"]
    why_not = None
    try:
        import smdebug.mxnet  # noqa: F401
    except Exception as e:  # noqa: BLE001 - reported in the rows
        why_not = f"smdebug's MXNet hook does not import: {e!r}"
    import smd
    versions = f"mxnet {mx.__version__}, smd {smd.__version__}"
    base = tempfile.mkdtemp(prefix="smd-mxnet-bench-")
    try:
        for model in MODELS:
            wall = {c: [] for c in configs}
            cpu = {c: [] for c in configs}
            for r in range(args.rounds):
                for i, c in enumerate(configs):
                    if c.startswith("smdebug") and why_not:
                        continue
                    out = os.path.join(base, f"{i}_{r}")
                    w, cp = run(model, c, args.steps, out)
                    wall[c].append(w)
                    cpu[c].append(cp)
                    shutil.rmtree(out, ignore_errors=True)
            for c in configs:
                note = f"{args.steps} steps, best of {args.rounds} rounds; {versions}"
                if c.startswith("smdebug"):
                    note += "; smdebug 1.0.34"
                ms = round(min(wall[c]) * 1e3, 4) if wall[c] else None
                cms = round(min(cpu[c]) * 1e3, 4) if cpu[c] else None
                print(json.dumps({"framework": "mxnet", "model": model, "config": c, "ms_per_step": ms,
                                  "cpu_ms_per_step": cms, "note": note if ms is not None else why_not}),
                      flush=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
