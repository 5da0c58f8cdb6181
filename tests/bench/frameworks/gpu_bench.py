#!/usr/bin/env python3
"""What monitoring costs a GPU training loop: no hook, smd.pytorch.Hook and smdebug 1.0.34's
smdebug.pytorch.Hook, interleaved in one run, in float32 and with bfloat16 autocast.

    .venv-torch/bin/python tests/bench/frameworks/gpu_bench.py [--steps N] [--rounds R] [--tiny]
        [--precisions fp32,bf16] [--skip LIB:CONFIG ...] [--soak N]

On a machine with CUDA: torchvision's ResNet-18 (a ResNet-18 of this file's own when torchvision
is missing), batch 256, 3x112x112 random inputs, SGD with momentum, ``loss.item()`` every step
(a loop that logs). Without CUDA the same loop runs on the CPU with a small CNN (batch 8,
3x32x32), so that the benchmark cannot rot where there is no GPU (``--tiny``: a few steps, what
the test suite runs); its figures then say nothing about a GPU.

Configurations (the same arguments for both hooks): none; weights, biases, gradients and the loss
every 100 steps, every 10 steps, every step; gradients as max, mean and l2 plus the loss every
step; the loss alone every step (what both hooks save by default, at interval 1). Printed per
configuration and library: the median step time (ms; steps after the warm-up,
each ended by loss.item()), the wall time of the whole run including hook.close() (s), and the
ratio to no hook. Printed once: the bytes a step saves when everything is saved (weights and
gradients) and the machine's bound for them, measured in the same run: the device-to-host copy
of those bytes into pinned buffers allocated once (non_blocking, then synchronized; on the CPU a
copy into buffers allocated once) and a sequential write of the same bytes to the trial's file
system (one file, one write per tensor, no fsync: the page cache, as the hooks write). The bound
of a step is the larger of the two (they use different engines and can overlap).

``--skip smdebug:"everything every step"`` leaves out one library's run of one configuration (a
GPU lease is short; smdebug's run of it takes minutes). ``--soak N`` then trains the model for N
steps saving everything every step under a 16 MiB memory budget and prints the staging pool's
figures (buffers allocated, peak bytes held, waits): pinned memory stays within the budget however
long the run.

smdebug 1.0.34 calls ``ndarray.tostring()``, which numpy 2 removed: the benchmark patches its own
imported copy of smdebug's ``make_tensor_proto`` at run time to call ``tobytes()``.
"""
import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

os.environ.setdefault("SMDEBUG_LOG_LEVEL", "error")
os.environ.pop("TRAINING_JOB_NAME", None)

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

ALL4 = ["weights", "biases", "gradients", "losses"]
CONFIGS = {  # name -> (save interval, collections, gradient reductions only)
    "none": None,
    "everything every 100": (100, ALL4, False),
    "everything every 10": (10, ALL4, False),
    "everything every step": (1, ALL4, False),
    "gradients max/mean/l2 + loss every step": (1, ["gradients", "losses"], True),
    "loss every step (default collections)": (1, ["losses"], False),
}


def _patch_smdebug_for_numpy2():
    """smdebug's make_tensor_proto calls ndarray.tostring(), gone in numpy 2: give it arrays that
    have it. Only this process's imported smdebug changes."""
    if hasattr(np.ndarray, "tostring"):
        return
    import smdebug.core.tfevent.util as util
    import smdebug.core.writer as writer

    class _WithToString(np.ndarray):
        def tostring(self):
            return self.tobytes()

    original = util.make_tensor_proto

    def make_tensor_proto(nparray_data, tag):
        if isinstance(nparray_data, np.ndarray) and nparray_data.dtype.kind not in "USO":
            nparray_data = nparray_data.view(_WithToString)
        return original(nparray_data, tag)
    util.make_tensor_proto = make_tensor_proto
    writer.make_tensor_proto = make_tensor_proto


def _basic_block(cin, cout, stride):
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU(inplace=True)
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            y = self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x)))))
            return self.relu(y + (x if self.down is None else self.down(x)))
    return Block()


def resnet18_like(width=64, classes=1000):
    """ResNet-18's layout (used when torchvision is missing), or a narrow one for the CPU."""
    w = width
    layers = [nn.Conv2d(3, w, 7, 2, 3, bias=False), nn.BatchNorm2d(w), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1)]
    cin = w
    for i, cout in enumerate([w, 2 * w, 4 * w, 8 * w]):
        layers += [_basic_block(cin, cout, 1 if i == 0 else 2), _basic_block(cout, cout, 1)]
        cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, classes)]
    return nn.Sequential(*layers)


def make_model(device):
    torch.manual_seed(0)
    if device.type == "cuda":
        try:
            import torchvision
            return torchvision.models.resnet18(num_classes=1000), "torchvision ResNet-18"
        except ImportError:
            return resnet18_like(), "ResNet-18 (this file's, torchvision missing)"
    return resnet18_like(width=8, classes=10), "small CNN (ResNet-18 layout, width 8)"


def run(lib_name, config, precision, device, steps, warmup, out_dir, shape):
    """(median step seconds, wall seconds of the timed steps and close)."""
    net, _ = make_model(device)
    net = net.to(device)
    batch, size, classes = shape
    crit = nn.CrossEntropyLoss()
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    g = torch.Generator(device="cpu").manual_seed(1)
    x = torch.randn(batch, 3, size, size, generator=g).to(device)
    y = torch.randint(0, classes, (batch,), generator=g).to(device)
    hook = None
    cfg = CONFIGS[config]
    if cfg is not None:
        interval, colls, grads_reduced = cfg
        if lib_name == "smd":
            import smd.pytorch as lib
        else:
            import smdebug.pytorch as lib
        kw = dict(save_config=lib.SaveConfig(save_interval=interval), include_collections=colls)
        if grads_reduced:
            kw["reduction_config"] = lib.ReductionConfig(reductions=["max", "mean"], norms=["l2"])
        hook = lib.Hook(out_dir, **kw)
        hook.register_module(net)
        hook.register_loss(crit)
    autocast = torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=precision == "bf16")
    times = []

    def step():
        opt.zero_grad()
        with autocast:
            out = net(x)
        loss = crit(out.float(), y)
        loss.backward()
        opt.step()
        return loss.item()

    for _ in range(warmup):
        step()
    t0 = time.perf_counter()
    for _ in range(steps):
        s = time.perf_counter()
        step()
        times.append(time.perf_counter() - s)
    if hook is not None:
        hook.close()
    wall = time.perf_counter() - t0
    return statistics.median(times), wall


def soak(device, steps, out_dir, shape, budget=16 << 20):
    """Everything every step for `steps` steps under `budget`: the staging pool's figures."""
    import smd.pytorch as smdpt
    net, _ = make_model(device)
    net = net.to(device)
    batch, size, classes = shape
    crit = nn.CrossEntropyLoss()
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(batch, 3, size, size).to(device)
    y = torch.randint(0, classes, (batch,)).to(device)
    hook = smdpt.Hook(out_dir, save_config=smdpt.SaveConfig(save_interval=1), include_collections=ALL4,
                      memory_budget=budget)
    hook.register_module(net)
    hook.register_loss(crit)
    t0 = time.perf_counter()
    for _ in range(steps):
        opt.zero_grad()
        crit(net(x), y).backward()
        opt.step()
    pools = hook._device.pools()
    stats = dict(hook._device.stats)
    hook.close()
    wall = time.perf_counter() - t0
    return {"soak_steps": steps, "budget_bytes": budget, "wall_s": round(wall, 3),
            "staged_tensors": stats["staged_tensors"],
            "pools": {k: {"allocations": p.allocations, "allocated": p.allocated, "peak": p.peak,
                          "waits": p.waits} for k, p in pools.items()}}


def bound(device, out_dir, reps=5):
    """(bytes of weights + gradients a step, ms to copy them to pinned host buffers, ms to write
    them to out_dir's file system)."""
    net, _ = make_model(device)
    net = net.to(device)
    tensors = [p.detach() for p in net.parameters()] * 2  # weights and gradients: the same sizes
    nbytes = sum(t.numel() * t.element_size() for t in tensors)
    pin = device.type == "cuda"
    bufs = [torch.empty(t.shape, dtype=t.dtype, pin_memory=pin) for t in tensors]
    copies = []
    for _ in range(reps):
        if pin:
            torch.cuda.synchronize()
        s = time.perf_counter()
        for b, t in zip(bufs, tensors):
            b.copy_(t, non_blocking=pin)
        if pin:
            torch.cuda.synchronize()
        copies.append(time.perf_counter() - s)
    writes = []
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "bound.bin")
    for _ in range(reps):
        s = time.perf_counter()
        with open(path, "wb") as f:
            for b in bufs:
                f.write(memoryview(b.view(torch.uint8).numpy()))
        writes.append(time.perf_counter() - s)
        os.remove(path)
    return nbytes, statistics.median(copies) * 1e3, statistics.median(writes) * 1e3


def reductions_time(device, reps=20):
    """(ms of smd's device reductions of the model's gradients as max, mean and l2 with the NaN
    test: one batch_statistics call, as the hook makes at the end of a backward pass; ms of
    torch._foreach_norm of the same tensors, l2 only in their dtype, for reference)."""
    from smd.pytorch import _device
    net, _ = make_model(device)
    grads = [torch.randn_like(p) for p in net.to(device).parameters()]

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize()

    def timed(f):
        f()
        times = []
        for _ in range(reps):
            sync()
            s = time.perf_counter()
            f()
            sync()
            times.append(time.perf_counter() - s)
        return statistics.median(times) * 1e3

    return (timed(lambda: _device.batch_statistics(grads, {"nan", "max", "sum", "sumsq"})),
            timed(lambda: torch._foreach_norm(grads)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--tiny", action="store_true", help="a few steps (the test suite's run)")
    ap.add_argument("--out", default=None, help="folder for the trials (default: a temporary one)")
    ap.add_argument("--precisions", default="fp32,bf16", help="comma-separated: fp32, bf16")
    ap.add_argument("--skip", action="append", default=[], metavar="LIB:CONFIG",
                    help="leave out one library's run of one configuration (repeatable)")
    ap.add_argument("--soak", type=int, default=0, metavar="N",
                    help="then N steps saving everything under a 16 MiB budget: the pool's figures")
    args = ap.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.type == "cuda":
        shape, steps, warmup, rounds = (256, 112, 1000), 100, 30, 3
        torch.backends.cudnn.benchmark = True
    else:
        shape, steps, warmup, rounds = (8, 32, 10), 20, 3, 2
        torch.set_num_threads(1)
    if args.tiny:
        steps, warmup, rounds = 4, 1, 1
    steps = args.steps or steps
    rounds = args.rounds or rounds
    try:
        import smdebug.pytorch  # noqa: F401
        _patch_smdebug_for_numpy2()
        libs = ["smd", "smdebug"]
        why_not = None
    except Exception as e:  # noqa: BLE001 - reported in the output
        libs, why_not = ["smd"], f"smdebug's PyTorch hook does not import: {e!r}"
    import smd
    _, model_name = make_model(device)
    base = args.out or tempfile.mkdtemp(prefix="smd-gpu-bench-")
    machine = torch.cuda.get_device_name(0) if device.type == "cuda" else "CPU (no GPU: figures say nothing about a GPU)"
    print(json.dumps({"device": machine, "model": model_name, "batch": shape[0], "image": shape[1],
                      "steps": steps, "rounds": rounds, "torch": torch.__version__, "numpy": np.__version__,
                      "smd": smd.__version__, "smdebug": why_not or "1.0.34"}), flush=True)
    try:
        nbytes, copy_ms, write_ms = bound(device, os.path.join(base, "bound"))
        print(json.dumps({"bound": "everything every step", "bytes_per_step": nbytes,
                          "copy_to_pinned_ms": round(copy_ms, 3), "sequential_write_ms": round(write_ms, 3),
                          "bound_ms": round(max(copy_ms, write_ms), 3)}), flush=True)
        red_ms, norm_ms = reductions_time(device)
        print(json.dumps({"reductions": "max/mean/l2 of the model's gradients",
                          "batch_statistics_ms": round(red_ms, 3), "foreach_norm_ms": round(norm_ms, 3)}),
              flush=True)
        rows = []
        skip = set()
        for item in args.skip:
            lib, _, config = item.partition(":")
            if lib not in ("smd", "smdebug") or config not in CONFIGS:
                ap.error(f"--skip {item!r}: LIB is smd or smdebug, CONFIG one of {sorted(CONFIGS)}")
            skip.add((lib, config))
        for precision in args.precisions.split(","):
            results = {}
            for r in range(rounds):  # interleaved: each round runs every configuration once
                for config in CONFIGS:
                    for lib in (["none"] if CONFIGS[config] is None else libs):
                        if (lib, config) in skip:
                            continue
                        out = os.path.join(base, f"{precision}_{r}_{lib}_{len(results)}")
                        med, wall = run(lib, config, precision, device, steps, warmup, out, shape)
                        results.setdefault((config, lib), []).append((med, wall))
                        shutil.rmtree(out, ignore_errors=True)
            base_med = statistics.median(m for m, _ in results[("none", "none")])
            base_wall = statistics.median(w for _, w in results[("none", "none")])
            for (config, lib), vals in results.items():
                med = statistics.median(m for m, _ in vals)
                wall = statistics.median(w for _, w in vals)
                row = {"precision": precision, "config": config, "hook": lib,
                       "median_step_ms": round(med * 1e3, 3), "wall_s": round(wall, 3),
                       "step_ratio": round(med / base_med, 3), "wall_ratio": round(wall / base_wall, 3)}
                rows.append(row)
                print(json.dumps(row), flush=True)
        print(f"\n{machine}; {model_name}, batch {shape[0]}, {steps} steps x {rounds} rounds; "
              f"a step saves {nbytes / 1e6:.1f} MB when everything is saved; bound {max(copy_ms, write_ms):.2f} ms "
              f"(copy to pinned {copy_ms:.2f} ms, write {write_ms:.2f} ms); the gradients' max/mean/l2 "
              f"reductions {red_ms:.3f} ms (torch._foreach_norm {norm_ms:.3f} ms)")
        print(f"{'precision':9} {'configuration':42} {'hook':8} {'median ms':>10} {'x none':>7} {'wall s':>8} {'x none':>7}")
        for r in rows:
            print(f"{r['precision']:9} {r['config']:42} {r['hook']:8} {r['median_step_ms']:10.3f} "
                  f"{r['step_ratio']:7.3f} {r['wall_s']:8.3f} {r['wall_ratio']:7.3f}")
        if args.soak:
            print(json.dumps(soak(device, args.soak, os.path.join(base, "soak"), shape)), flush=True)
    finally:
        if args.out is None:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
