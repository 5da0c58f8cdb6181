"""Writer benchmark: smd's hook next to the real smdebug hook, on the same workloads, one run.

    .venv/bin/python tests/bench/bench_writer.py [--build build] [--scratch DIR] [--fsync-cost]
                                                 [--tiny]

W1  1000 steps x 50 float32 tensors of 1 KiB, every step saved (end to end, until close returns)
W2  100 steps x 10 float32 tensors of 4 MiB (end to end)
W3  median time the training thread spends in one save of a 4 MiB tensor that is due
W4  median cost of a save when nothing is due at this step
Bounds measured in the same run: W1 creating/writing/renaming the same files, W2 buffered
write() of the same bytes into the same folders, W3 a 4 MiB memcpy.
--fsync-cost: instead, smd's W1 and W2 with the hook's fsync option off and on (the cost of
durability; smdebug has no such option).
--tiny: every workload at a tiny size on both sides (bench_writer --tiny: W1 20 steps x 5 tensors,
W2 3 steps x 2 tensors, W3 16 saves, W4 20,000 calls; smdebug the same W1 and W2, W3 5 saves, W4
1,000 calls): the test command's run, so that the benchmark cannot rot; its figures mean little.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
INTEROP = os.path.join(REPO, "tests", "interop")  # smdebug_env.py, smdebug_hook.py: the real smdebug
sys.path.insert(0, INTEROP)
sys.path.insert(0, HERE)

from benchlib import FreshFilesystem  # noqa: E402


def smdebug_throughput(out, steps, tensors, elems):
    import numpy as np
    from smdebug_hook import NumpyHook
    from smdebug import SaveConfig

    shutil.rmtree(out, ignore_errors=True)
    data = np.arange(elems, dtype=np.float32)
    names = [f"layer{t}/weight" for t in range(tensors)]
    os.sync()
    t0 = time.perf_counter()
    hook = NumpyHook(out, save_config=SaveConfig(save_interval=1), include_collections=["weights"])
    for s in range(steps):
        hook.begin_step()
        for n in names:
            data[0] = s
            hook.record(n, data)
    hook.close()
    dt = time.perf_counter() - t0
    shutil.rmtree(out, ignore_errors=True)
    return dt


def smdebug_call_costs(out, due_calls=50, batches=200):
    """Median seconds of hook.record for a due 4 MiB tensor, and for one when nothing is due."""
    import numpy as np
    from smdebug_hook import NumpyHook
    from smdebug import SaveConfig

    shutil.rmtree(out, ignore_errors=True)
    big = np.arange((4 << 20) // 4, dtype=np.float32)
    hook = NumpyHook(out, save_config=SaveConfig(save_interval=1), include_collections=["weights"])
    due = []
    for _ in range(due_calls):
        hook.begin_step()
        t0 = time.perf_counter()
        hook.record("big/weight", big)
        due.append(time.perf_counter() - t0)
    hook.close()
    shutil.rmtree(out, ignore_errors=True)
    small = np.zeros(256, dtype=np.float32)
    hook = NumpyHook(out, save_config=SaveConfig(save_interval=1000000), include_collections=["weights"])
    hook.begin_step()
    hook.begin_step()  # step 1: nothing due
    per_call = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(100):
            hook.record("layer0/weight", small)
        per_call.append((time.perf_counter() - t0) / 100)
    hook.close()
    shutil.rmtree(out, ignore_errors=True)
    return statistics.median(due), statistics.median(per_call)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--scratch", default="/tmp/smd-bench-writer")
    ap.add_argument("--fsync-cost", action="store_true", help="W1 and W2 with fsync off and on")
    ap.add_argument("--tiny", action="store_true", help="every workload at a tiny size (the test command's run)")
    args = ap.parse_args()
    if args.fsync_cost:
        with FreshFilesystem(args.scratch) as (scratch, where):
            print(f"writing into {where}")
            fsync_cost(args.build, scratch, args.tiny)
        return
    import smdebug_env  # noqa: F401

    with FreshFilesystem(args.scratch) as (scratch, where):
        print(f"writing into {where}")
        run(args.build, scratch, args.tiny)


def fsync_cost(build, scratch, tiny=False):
    prog = os.path.join(build, "tests", "bench", "bench_writer")
    res = {}
    for flag in ([], ["--fsync"]):
        out = subprocess.run([prog, scratch, *flag, *(["--tiny"] if tiny else []), "W1", "W2"], check=True,
                             capture_output=True, text=True)
        res[bool(flag)] = json.loads(out.stdout)
    print(f"{'workload':32} {'fsync off':>12} {'fsync on':>12} {'cost':>8}")
    w1, w2 = res[False]["W1"], res[False]["W2"]
    for w, what in (("W1", f"{w1['steps']} steps x {w1['tensors']} x 1 KiB (s)"),
                    ("W2", f"{w2['steps']} steps x {w2['tensors']} x 4 MiB (s)")):
        off, on = res[False][w]["smd_seconds"], res[True][w]["smd_seconds"]
        print(f"{w + ' ' + what:32} {off:12.2f} {on:12.2f} {on / off:7.1f}x")


def run(build, scratch, tiny=False):
    class A:
        pass

    args = A()
    args.build, args.scratch = build, scratch

    prog = os.path.join(args.build, "tests", "bench", "bench_writer")
    smd = json.loads(subprocess.run([prog, args.scratch, *(["--tiny"] if tiny else [])], check=True,
                                    capture_output=True, text=True).stdout)
    w1, w2, w3, w4 = smd["W1"], smd["W2"], smd["W3"], smd["W4"]

    sd = {}  # the same W1 and W2 as smd's (1000 x 50 and 100 x 10 unless --tiny)
    sd["W1"] = min(smdebug_throughput(os.path.join(args.scratch, "W1_smdebug"), w1["steps"], w1["tensors"], 256)
                   for _ in range(2))
    sd["W2"] = min(smdebug_throughput(os.path.join(args.scratch, "W2_smdebug"), w2["steps"], w2["tensors"],
                                      (4 << 20) // 4) for _ in range(2))
    sd["W3"], sd["W4"] = smdebug_call_costs(os.path.join(args.scratch, "W34_smdebug"),
                                            *((5, 10) if tiny else ()))

    n1 = w1["steps"] * w1["tensors"]
    bytes2 = w2["steps"] * w2["tensors"] * w2["tensor_bytes"]
    rows = []

    def row(name, smdebug, ours, bound, unit, ratio_sd, ratio_bound, target, met):
        rows.append((name, smdebug, ours, bound, ratio_sd, ratio_bound, target, "yes" if met else "NO"))

    r1_sd, r1 = n1 / sd["W1"], n1 / w1["smd_seconds"]
    r1_b = n1 / w1["bound_seconds"]
    row(f"W1 {w1['steps']}x{w1['tensors']} x 1 KiB (tensors/s)", f"{r1_sd:,.0f}", f"{r1:,.0f}", f"{r1_b:,.0f}", "",
        f"{r1 / r1_sd:.1f}x", f"{100 * r1 / r1_b:.0f}%", ">=10x, >=80%",
        r1 / r1_sd >= 10 and r1 / r1_b >= 0.8)
    r2_sd, r2, r2_b = bytes2 / sd["W2"] / 1e6, bytes2 / w2["smd_seconds"] / 1e6, bytes2 / w2["bound_seconds"] / 1e6
    row(f"W2 {w2['steps']}x{w2['tensors']} x 4 MiB (MB/s)", f"{r2_sd:,.0f}", f"{r2:,.0f}", f"{r2_b:,.0f}", "",
        f"{r2 / r2_sd:.1f}x", f"{100 * r2 / r2_b:.0f}%", ">=2x, >=80%", r2 / r2_sd >= 2 and r2 / r2_b >= 0.8)
    t3_sd, t3, t3_b = sd["W3"] * 1e6, w3["smd_median_ns"] / 1e3, w3["memcpy_median_ns"] / 1e3
    row("W3 caller time, 4 MiB save (us)", f"{t3_sd:,.0f}", f"{t3:,.0f}", f"{t3_b:,.0f} (memcpy)", "",
        f"{t3_sd / t3:.0f}x less", f"{t3 / t3_b:.2f}x memcpy", "<=2x memcpy", t3 <= 2 * t3_b)
    t4_sd, t4 = sd["W4"] * 1e9, w4["smd_median_ns"]
    row("W4 save when nothing due (ns)", f"{t4_sd:,.0f}", f"{t4:,.1f}", "-", "", f"{t4_sd / t4:.0f}x less", "-",
        "<100 ns", t4 < 100)

    header = ("workload", "smdebug", "smd", "bound", "smd vs smdebug", "smd vs bound", "target", "met")
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    line = lambda r: "| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths)) + " |"
    print(line(header))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        print(line(r))
    par = smd.get("parallelism")
    if par:
        print(f"\nparallelism of this machine: two busy threads run {par['speedup']:.2f}x as fast as one "
              f"(2.0 on two real cores). The hook's writer threads and the training thread share it;"
              f" with about 1x, their work adds up instead of overlapping.")
    print(f"\nsmd details: {json.dumps(smd)}")
    print(f"smdebug seconds: {json.dumps(sd)}")


if __name__ == "__main__":
    main()
