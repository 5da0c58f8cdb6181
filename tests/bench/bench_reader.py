"""Reader benchmark: smd's trial reader next to the real smdebug's, on the same folders, one run.

    .venv/bin/python tests/bench/bench_reader.py [--build build] [--scratch DIR] [--reps N]
                                                [--no-smdebug-memory] [--tiny]

R1  open a trial of 1000 steps x 50 tensors (smd_trial_open + steps(); smdebug: create_trial +
    steps())
R2  read every step (1000) of one tensor: value() per step, and smd_tensor_values() in one call
    (each step is its own event file, so each value costs at least an open, a pread and a close)
R3  read 100 values of 4 MiB (one tensor, 100 steps)
R4  refresh a live trial after 10 new steps were written, at 1,000 and at 10,000 steps
MEM resident memory added by opening a 10,000 steps x 100 tensors trial, per (tensor, step,
    worker) entry

The trials are written by tests/bench/make_trial (smd's encoders, smdebug's layout and bytes) on a
fresh ext4 file system (benchlib.FreshFilesystem), and read with a warm page cache. Each
repetition opens a new trial, so nothing is served from a value cache. smd figures are the best
of --reps runs (R4: the median of 25 refreshes), smdebug's the best of 3-5 (R4: the median of 3).
Bounds measured in the same run: R1 opening and reading the 1000 index files, R2 open + pread +
close of the 1000 records (1 and 2 threads), R3 pread of the same 400 MiB; files are opened
relative to the trial folder, as smd does.
--tiny: the same workloads at a tiny size (R1/R2 20 steps x 8 tensors, R3 3 values, R4 at 20 and
200 steps with 3 refreshes, MEM 200 steps x 10 tensors, one run of each side): the test command's
run, so that the benchmark cannot rot; its figures mean little.
"""
import argparse
import json
import os
import resource
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

TENSOR = "layer7/weight"

# The sizes of the workloads: FULL is the benchmark, TINY the test command's run (--tiny).
# steps x tensors: R1/R2's trial; big: R3's 4 MiB values; r4: R4's trial sizes; mem: MEM's trial;
# reps: smd's runs (None: --reps); sd_reps: smdebug's runs of R1, R2, R3, R4 (None: 3, 5, 3, 3).
FULL = dict(steps=1000, tensors=50, big=100, r4=(1000, 10000), r4_reps=25, mem=(10000, 100), reps=None,
            sd_reps=None)
TINY = dict(steps=20, tensors=8, big=3, r4=(20, 200), r4_reps=3, mem=(200, 10), reps=2, sd_reps=1)


def run_json(*cmd):
    r = subprocess.run([str(c) for c in cmd], check=True, capture_output=True, text=True)
    return json.loads(r.stdout)


def index_ranges(trial, tensor, out_list):
    """Writes "PATH OFFSET LENGTH" for every record of `tensor` (from the index files), PATH
    relative to the trial."""
    lines = []
    index = os.path.join(trial, "index")
    for d in sorted(os.listdir(index)):
        for f in sorted(os.listdir(os.path.join(index, d))):
            with open(os.path.join(index, d, f)) as fh:
                doc = json.load(fh)
            ev = doc["meta"]["event_file_name"]
            for e in doc["tensor_payload"]:
                if e["tensorname"] == tensor:
                    lines.append(f"{ev} {e['start_idx']} {e['length']}\n")
    with open(out_list, "w") as fh:
        fh.writelines(lines)
    return len(lines)


def index_files(trial, out_list):
    """Writes "PATH 0 SIZE" for every index file of the trial, PATH relative to the trial."""
    lines = []
    index = os.path.join(trial, "index")
    for d in sorted(os.listdir(index)):
        for f in sorted(os.listdir(os.path.join(index, d))):
            p = os.path.join(index, d, f)
            lines.append(f"{os.path.relpath(p, trial)} 0 {os.path.getsize(p)}\n")
    with open(out_list, "w") as fh:
        fh.writelines(lines)
    return len(lines)


# ---- the real smdebug ---------------------------------------------------------------------------

def smdebug_open(path, reps):
    from smdebug.trials import create_trial

    best = None
    for _ in range(reps):
        t0 = time.perf_counter()
        trial = create_trial(path)
        n = len(trial.steps())
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    return best, n, len(trial.tensor_names())


def smdebug_series(path, tensor, reps):
    from smdebug.trials import create_trial

    best = None
    for _ in range(reps):
        trial = create_trial(path)
        t = trial.tensor(tensor)
        steps = t.steps()
        t0 = time.perf_counter()
        nbytes = 0
        for s in steps:
            nbytes += t.value(s).nbytes
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    return best, len(steps), nbytes


def smdebug_refresh(path, make_trial, first, tensors, reps):
    from smdebug.trials import create_trial

    trial = create_trial(path)
    n0 = len(trial.steps(show_incomplete_steps=True))
    times = []
    for r in range(reps):
        subprocess.run([make_trial, path, "10", str(tensors), "--first-step", str(first + 10 * r),
                        "--running"], check=True)
        t0 = time.perf_counter()
        trial.refresh_data()
        times.append(time.perf_counter() - t0)
    assert len(trial.steps(show_incomplete_steps=True)) == n0 + 10 * reps
    return statistics.median(times)


SMDEBUG_MEMORY = r"""
import json, resource, sys
sys.path.insert(0, sys.argv[2])
import smdebug_env  # noqa
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()
from smdebug.trials import create_trial
import numpy  # noqa: imported before measuring (smdebug needs it anyway)
before = rss()
t = create_trial(sys.argv[1])
after = rss()
print(json.dumps({"rss_growth_bytes": after - before, "steps": len(t.steps()),
                  "tensors": len(t.tensor_names())}))
"""


def smdebug_memory(path):
    r = subprocess.run([sys.executable, "-c", SMDEBUG_MEMORY, path, INTEROP],
                       check=True, capture_output=True, text=True)
    return json.loads(r.stdout)


# ---- the run ------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--scratch", default="/tmp/smd-bench-reader")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--no-smdebug-memory", action="store_true",
                    help="skip smdebug's memory run (it reads 1M index entries: about a minute)")
    ap.add_argument("--tiny", action="store_true", help="every workload at a tiny size (the test command's run)")
    args = ap.parse_args()
    import smdebug_env  # noqa: F401  (smdebug's environment: no sleeps after the end marker)

    with FreshFilesystem(args.scratch) as (scratch, where):
        print(f"trials on {where}; page cache warm; {os.cpu_count()} CPUs")
        run(args, scratch)


def best(v):
    return min(v)


def run(args, scratch):
    z = TINY if args.tiny else FULL
    steps, tensors, big = z["steps"], z["tensors"], z["big"]
    r4_small, r4_large = z["r4"]
    mem_steps, mem_tensors = z["mem"]
    sd_r1, sd_r2, sd_r3, sd_r4_reps = (z["sd_reps"],) * 4 if z["sd_reps"] else (3, 5, 3, 3)
    bench = os.path.join(args.build, "tests", "bench", "bench_reader")
    make_trial = os.path.join(args.build, "tests", "bench", "make_trial")
    t1 = os.path.join(scratch, f"r1_{steps}x{tensors}")
    t3 = os.path.join(scratch, f"r3_{big}x4MiB")
    t4 = {n: os.path.join(scratch, f"r4_{n}") for n in (r4_small, r4_large)}
    tm = os.path.join(scratch, f"mem_{mem_steps}x{mem_tensors}")
    subprocess.run([make_trial, t1, str(steps), str(tensors)], check=True)
    subprocess.run([make_trial, t3, str(big), "1", "--elements", str((4 << 20) // 4)], check=True)
    for n, p in t4.items():
        subprocess.run([make_trial, p, str(n), "10", "--running"], check=True)
    subprocess.run([make_trial, tm, str(mem_steps), str(mem_tensors)], check=True)
    reps = z["reps"] or args.reps

    rows = []
    notes = []

    def row(name, smdebug, smd, bound, vs_smdebug, vs_bound, target, met):
        rows.append((name, smdebug, smd, bound, vs_smdebug, vs_bound, target, met))

    # R1
    smd = run_json(bench, "open", t1, reps)
    sd_open, sd_steps, sd_tensors = smdebug_open(t1, sd_r1)
    assert (sd_steps, sd_tensors) == (steps, tensors) and smd["steps"] == steps
    lst = os.path.join(scratch, "index.lst")
    index_files(t1, lst)
    b_idx = best(run_json(bench, "bound", t1, lst, reps, 1)["wall"])
    r1 = best(smd["wall"])
    row(f"R1 open {steps} steps x {tensors} tensors (ms)", f"{sd_open * 1e3:,.0f}", f"{r1 * 1e3:.1f}",
        f"{b_idx * 1e3:.1f} (read the {steps} index files, 1 thread)", f"{sd_open / r1:.0f}x",
        f"{b_idx / r1 * 100:.0f}%", ">= 50x", sd_open / r1 >= 50)

    # R2
    smd = run_json(bench, "series", t1, TENSOR, reps)
    sd_t, sd_n, _ = smdebug_series(t1, TENSOR, sd_r2)
    n = smd["count"]
    assert n == sd_n == steps
    lst = os.path.join(scratch, "records.lst")
    index_ranges(t1, TENSOR, lst)
    b1 = n / best(run_json(bench, "bound", t1, lst, reps, 1)["wall"])
    b2 = n / best(run_json(bench, "bound", t1, lst, reps, 2)["wall"])
    sd_rate = n / sd_t
    loop_rate, bulk_rate = n / best(smd["value_loop"]), n / best(smd["values"])
    row(f"R2 {steps} steps of one tensor, value() (values/s)", f"{sd_rate:,.0f}", f"{loop_rate:,.0f}",
        f"{b1:,.0f} (openat+pread+close, 1 thread)", f"{loop_rate / sd_rate:.1f}x",
        f"{loop_rate / b1 * 100:.0f}%", ">= 50x", loop_rate / sd_rate >= 50)
    row("R2 the same, smd_tensor_values() (values/s)", f"{sd_rate:,.0f}", f"{bulk_rate:,.0f}",
        f"{b2:,.0f} (openat+pread+close, 2 threads)", f"{bulk_rate / sd_rate:.1f}x",
        f"{bulk_rate / b2 * 100:.0f}%", ">= 50x", bulk_rate / sd_rate >= 50)
    row("R2 ceiling: the bound vs smdebug (any reader)", f"{sd_rate:,.0f}", "-",
        f"{b2:,.0f} (2 threads)", f"{b1 / sd_rate:.1f}x / {b2 / sd_rate:.1f}x", "-",
        "(1 / 2 threads)", None)
    notes.append(f"R2: each value is in its own event file; openat + pread + close alone take "
                 f"{1e6 / b1:.2f} us per value here, so no reader of these files gets more than "
                 f"{b1 / sd_rate:.0f}x smdebug on one thread or {b2 / sd_rate:.0f}x on two; "
                 f"smd spends {1e6 / loop_rate:.2f} us per value() and "
                 f"{1e6 / bulk_rate:.2f} us per value in smd_tensor_values().")

    # R3
    smd = run_json(bench, "series", t3, "layer0/weight", reps)
    sd_t, sd_n, sd_bytes = smdebug_series(t3, "layer0/weight", sd_r3)
    assert smd["count"] == sd_n == big and smd["bytes"] == sd_bytes
    lst = os.path.join(scratch, "big.lst")
    index_ranges(t3, "layer0/weight", lst)
    mb = sd_bytes / 1e6
    b = mb / best(run_json(bench, "bound", t3, lst, reps, 1)["wall"])
    sd_rate, r3 = mb / sd_t, mb / min(best(smd["value_loop"]), best(smd["values"]))
    row(f"R3 {big} values of 4 MiB (MB/s)", f"{sd_rate:,.0f}", f"{r3:,.0f}",
        f"{b:,.0f} (pread of the records)", f"{r3 / sd_rate:.1f}x", f"{r3 / b * 100:.0f}%", ">= 2x",
        r3 / sd_rate >= 2)

    # R4
    smd_r4, sd_r4 = {}, {}
    r4_reps = z["r4_reps"]  # a refresh takes a fraction of a millisecond: take the median of many
    for n4, p in t4.items():
        smd_r4[n4] = run_json(bench, "refresh", p, r4_reps, make_trial, n4, 10)
        sd_r4[n4] = smdebug_refresh(p, make_trial, n4 + 10 * r4_reps, 10, sd_r4_reps)
    s1, s10 = (statistics.median(smd_r4[k]["refresh_10_new"]) for k in (r4_small, r4_large))
    i1, i10 = (statistics.median(smd_r4[k]["refresh_nothing_new"]) for k in (r4_small, r4_large))
    row(f"R4 refresh after 10 new steps, {r4_small:,}-step trial (ms)", f"{sd_r4[r4_small] * 1e3:,.1f}",
        f"{s1 * 1e3:.2f}", "-", f"{sd_r4[r4_small] / s1:.0f}x", "-", "-", True)
    row(f"R4 the same, {r4_large:,}-step trial (ms)", f"{sd_r4[r4_large] * 1e3:,.1f}", f"{s10 * 1e3:.2f}",
        "-", f"{sd_r4[r4_large] / s10:.0f}x", "-", "-", True)
    row(f"R4 cost at {r4_large:,} / cost at {r4_small:,} steps", f"{sd_r4[r4_large] / sd_r4[r4_small]:.1f}x",
        f"{s10 / s1:.2f}x", "-", "-", "-", "no growth (<= 1.5x)", s10 <= 1.5 * s1)
    row(f"R4 refresh with nothing new, {r4_small:,} / {r4_large:,} steps (ms)", "-",
        f"{i1 * 1e3:.2f} / {i10 * 1e3:.2f}", "-", "-", "-", "-", True)

    # Memory
    smd = run_json(bench, "memory", tm)
    assert smd["entries"] == mem_steps * mem_tensors
    per = smd["rss_growth_bytes"] / smd["entries"]
    if args.no_smdebug_memory:
        sd_cell, ratio = "(skipped)", "-"
    else:
        sd = smdebug_memory(tm)
        sd_per = sd["rss_growth_bytes"] / (sd["steps"] * sd["tensors"])
        sd_cell, ratio = f"{sd_per:,.0f}", f"{sd_per / per:.0f}x less"
    row(f"MEM bytes per (tensor, step, worker) entry, {mem_steps:,} x {mem_tensors}", sd_cell, f"{per:.0f}",
        f"(smd open: {smd['open'] * 1e3:,.0f} ms)", ratio, "-", "< 200", per < 200)

    header = ("workload", "smdebug", "smd", "bound (same run)", "smd vs smdebug", "smd / bound",
              "target", "met")
    table = [tuple("-" if c is None else ("yes" if c else "NO") if isinstance(c, bool) else str(c)
                   for c in r) for r in rows]
    widths = [max(len(r[i]) for r in table + [header]) for i in range(len(header))]
    line = lambda r: "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |"  # noqa: E731
    print(line(header))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in table:
        print(line(r))
    for n in notes:
        print(n)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
