#!/usr/bin/env python3
"""Per-step cost of the PyTorch hooks on two MLPs: no hook, smd.pytorch.Hook and smdebug
1.0.34's smdebug.pytorch.Hook, each saving weights, biases, gradients and losses every step and
every 100 steps. The small MLP (7 k parameters) shows the per-tensor cost of the hooks; the
larger one (270 k parameters, 2.2 MB of weights and gradients a step) adds the cost of writing
the bytes.

    .venv-torch/bin/python tests/bench/frameworks/torch_bench.py [--steps N] [--rounds R] [--tiny]

Prints one JSON object per configuration: {"framework", "model", "config", "ms_per_step",
"cpu_ms_per_step", "note"}. Each configuration trains a new, identically seeded model for N steps
(after 10 warm-up steps without timing) and is timed from its first timed step to the end of
hook.close() (what the writer still had queued is part of the cost). The configurations run
interleaved R times; ms_per_step is the best (smallest) of the R runs, as other processes only
ever add time. cpu_ms_per_step is the CPU time of the whole process (every thread: torch's, the
hook's writer threads) per step, the best of the R runs: on a loaded machine it says what a
configuration costs better than the wall time. torch uses one thread (the machine's other core is
left to the writers).
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
import time

os.environ.setdefault("SMDEBUG_LOG_LEVEL", "error")
os.environ.pop("TRAINING_JOB_NAME", None)

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

MODELS = {  # name -> (layer widths, batch)
    "small MLP 32-64-64-10, batch 32, SGD": ([32, 64, 64, 10], 32),
    "MLP 784-256-256-10, batch 64, SGD": ([784, 256, 256, 10], 64),
}
COLLECTIONS = ["weights", "biases", "gradients", "losses"]
WARMUP = 10


def make_model(widths):
    torch.manual_seed(0)
    layers = []
    for a, b in zip(widths, widths[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers[:-1])


def run(model, config, steps, out_dir):
    """(wall seconds, CPU seconds of the whole process) per step of one configuration."""
    widths, batch = MODELS[model]
    net = make_model(widths)
    crit = nn.CrossEntropyLoss()
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(batch, widths[0], generator=g), torch.randint(0, widths[-1], (batch,), generator=g)
    hook = None
    if config != "no hook":
        interval = 1 if config.endswith("every step") else 100
        if config.startswith("smd "):
            import smd.pytorch as lib
        else:
            import smdebug.pytorch as lib
        hook = lib.Hook(out_dir, save_config=lib.SaveConfig(save_interval=interval),
                        include_collections=COLLECTIONS)
        hook.register_module(net)
        hook.register_loss(crit)

    def step():
        opt.zero_grad()
        loss = crit(net(x), y)
        loss.backward()
        opt.step()

    for _ in range(WARMUP):
        step()
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(steps):
        step()
    if hook is not None:
        hook.close()
    return (time.perf_counter() - t0) / steps, (time.process_time() - c0) / steps


def smdebug_runs():
    try:
        import smdebug.pytorch  # noqa: F401
        return None
    except Exception as e:  # noqa: BLE001 - any failure to import is reported in the row
        return f"smdebug's PyTorch hook does not import: {e!r}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--tiny", action="store_true", help="3 steps, 1 round (the test command's run)")
    args = ap.parse_args()
    if args.tiny:
        args.steps, args.rounds = 3, 1
    torch.set_num_threads(1)
    configs = ["no hook", "smd every step", "smd every 100", "smdebug every step", "smdebug every 100"]
    why_not = smdebug_runs()
    import smd
    versions = f"torch {torch.__version__}, smd {smd.__version__}"
    base = tempfile.mkdtemp(prefix="smd-torch-bench-")
    try:
        for model in MODELS:
            times = {c: [] for c in configs}
            cpu = {c: [] for c in configs}
            for r in range(args.rounds):
                for i, c in enumerate(configs):
                    if c.startswith("smdebug") and why_not:
                        continue
                    out = os.path.join(base, f"{i}_{r}")
                    wall, cpu_s = run(model, c, args.steps, out)
                    times[c].append(wall)
                    cpu[c].append(cpu_s)
                    shutil.rmtree(out, ignore_errors=True)
            for c in configs:
                note = f"{args.steps} steps, best of {args.rounds} rounds; {versions}"
                if c.startswith("smdebug"):
                    note += "; smdebug 1.0.34"
                ms = round(min(times[c]) * 1e3, 4) if times[c] else None
                cpu_ms = round(min(cpu[c]) * 1e3, 4) if cpu[c] else None
                if ms is None:
                    note = why_not
                print(json.dumps({"framework": "pytorch", "model": model, "config": c,
                                  "ms_per_step": ms, "cpu_ms_per_step": cpu_ms, "note": note}),
                      flush=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
