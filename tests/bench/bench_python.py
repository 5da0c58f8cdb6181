#!/usr/bin/env python3
"""smd's Python binding against the real smdebug, on the same trial, in one run; prints a table.

    SMD_BENCH_STEPS=1000 SMD_BENCH_TENSORS=50 python tests/bench/bench_python.py

(the test command's tiny run: SMD_BENCH_STEPS=20 SMD_BENCH_TENSORS=3 SMD_BENCH_SAVES=10
SMD_BENCH_BIG_MIB=8)

Needs the smd package (pip install ./bindings/python) and smdebug in the same environment. The
trial (STEPS steps x TENSORS float32 tensors of 64 elements) is written once by smd.Hook.
Rows: opening the trial; tensor.value(step) over every step, on a fresh trial and again (smd's
cache); values() of one tensor; the training thread's time per 4 MiB save_tensor in a
SMD_BENCH_SAVES-step (default 100) loop, against a 4 MiB memcpy; the RSS growth after reading one
SMD_BENCH_BIG_MIB (default 400) MiB float32 tensor, each library in a fresh process (after the
read, and the peak during it), as a multiple of the tensor's size.
"""
import logging
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import smd
import smd.trials
import smdebug.trials

logging.disable(logging.CRITICAL)
STEPS = int(os.environ.get("SMD_BENCH_STEPS", "1000"))
TENSORS = int(os.environ.get("SMD_BENCH_TENSORS", "50"))
BIG_MIB = int(os.environ.get("SMD_BENCH_BIG_MIB", "400"))
SAVES = int(os.environ.get("SMD_BENCH_SAVES", "100"))

# Run in a fresh interpreter: RSS before and after reading tensor "big" at step 0, and the peak.
RSS_CHILD = r"""
import logging, sys
logging.disable(logging.CRITICAL)
def status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1]) * 1024
lib, path = sys.argv[1], sys.argv[2]
if lib == "smd":
    import smd.trials as T
else:
    import smdebug.trials as T
import numpy
before = status("VmRSS:")
v = T.create_trial(path).tensor("big").value(0)
print((status("VmRSS:") - before) / v.nbytes, (status("VmHWM:") - before) / v.nbytes)
"""


def rss_after_big_read(tmp):
    path = os.path.join(tmp, "big")
    with smd.Hook(path, save_all=True) as h:
        h.begin_step()
        h.save_tensor("big", np.ones(BIG_MIB << 18, dtype=np.float32))
    out = {}
    for lib in ("smd", "smdebug"):
        r = subprocess.run([sys.executable, "-c", RSS_CHILD, lib, path], check=True, capture_output=True, text=True)
        out[lib] = tuple(float(x) for x in r.stdout.split())
    return out


def timed(f, repeat=1):
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t0)
    return best


def write_trial(path):
    h = smd.Hook(path, save_all=True, save_config=smd.SaveConfig(save_interval=1))
    rng = np.random.default_rng(0)
    data = [rng.random(64, dtype=np.float32) for _ in range(TENSORS)]
    for _ in range(STEPS):
        h.begin_step()
        for i, d in enumerate(data):
            h.save_tensor(f"layer{i:02d}/weight", d)
    h.close()


def main():
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trial")
        write_trial(path)
        for lib, open_trial in (("smd", smd.trials.create_trial), ("smdebug", smdebug.trials.create_trial)):
            t_open = timed(lambda: open_trial(path).tensor_names(), repeat=1 if lib == "smdebug" else 3)
            trial = open_trial(path)
            tensor = trial.tensor("layer00/weight")
            steps = tensor.steps()
            t_value = timed(lambda: [tensor.value(s) for s in steps]) / len(steps)
            t_again = timed(lambda: [tensor.value(s) for s in steps], repeat=3) / len(steps)
            t_values = timed(lambda: open_trial(path).tensor("layer01/weight").values())
            rows.append((lib, t_open, t_value, t_again, t_values))
        big = np.random.default_rng(1).random(1 << 20, dtype=np.float32)  # 4 MiB
        dst = np.empty_like(big)
        t_memcpy = timed(lambda: np.copyto(dst, big), repeat=20)
        h = smd.Hook(os.path.join(tmp, "save"), save_all=True, save_config=smd.SaveConfig(save_interval=1))
        per_step = []
        for _ in range(SAVES):
            h.begin_step()
            t0 = time.perf_counter()
            h.save_tensor("big", big)
            per_step.append(time.perf_counter() - t0)
        h.close()
        t_save = float(np.median(per_step))
        rss = rss_after_big_read(tmp)
    smd_row, ref_row = rows
    print(f"trial: {STEPS} steps x {TENSORS} tensors (float32[64]); smd {smd.__version__}")
    print(f"{'operation':40s} {'smd':>12s} {'smdebug':>12s} {'speed-up':>9s}")
    names = ["open + tensor_names()", "tensor.value(step), per step", "tensor.value(step) again, per step",
             "values() of one tensor (fresh trial)"]
    for i, name in enumerate(names, start=1):
        print(f"{name:40s} {smd_row[i] * 1e3:10.3f}ms {ref_row[i] * 1e3:10.3f}ms {ref_row[i] / smd_row[i]:8.1f}x")
    print(f"{'save_tensor 4 MiB (training thread)':40s} {t_save * 1e3:10.3f}ms {'':>12s} "
          f"{t_save / t_memcpy:6.2f}x a 4 MiB memcpy ({t_memcpy * 1e3:.3f} ms)")
    print(f"{f'RSS after reading {BIG_MIB} MiB (x size)':40s} {rss['smd'][0]:11.3f}x {rss['smdebug'][0]:11.3f}x")
    print(f"{'  peak RSS during the read (x size)':40s} {rss['smd'][1]:11.3f}x {rss['smdebug'][1]:11.3f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
