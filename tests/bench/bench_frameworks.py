#!/usr/bin/env python3
"""The framework hooks' overhead table: runs every tests/bench/frameworks/<fw>_bench.py with the
python of its framework's virtual environment and prints one table.

    python tests/bench/bench_frameworks.py [--steps N] [--only FW,...] [--json] [--tiny]

Each benchmark prints one JSON object per line: {"framework", "model", "config", "ms_per_step",
"note"} (and optionally "cpu_ms_per_step": the process's CPU time per step) with config one of
"no hook", "smd every step", "smd every 100", "smdebug every step", "smdebug every 100". The table
adds, per model, the overhead of each configuration against "no hook" (in %) and, for smdebug's
rows, how many times smd's overhead at the same interval smdebug's is; the same again for the CPU
time when the benchmark reports it (wall time on a loaded machine also measures other processes).
The virtual environment of a benchmark <fw>_bench.py is .venv-<venv> at the repository root, where
<venv> comes from VENVS below (made by scripts/frameworks/<venv>.sh); SMD_BENCH_VENV_<FW> (upper
case) overrides it with a path to a python. A missing environment gives a line saying so.
``--tiny`` runs each benchmark at its smallest (``--tiny``: a few steps, one round; what the test
command runs, so that none can rot) and fails if any of them fails or is missing.
frameworks/gpu_bench.py has a table of its own and is not run from here.
"""
import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BENCH_DIR = REPO / "tests" / "bench" / "frameworks"
VENVS = {"torch": "torch", "mxnet": "mxnet", "tf": "tf", "keras": "tf", "tensorflow": "tf", "session": "tf",
         "xgboost": "xgboost"}
NOT_HERE = {"gpu"}  # gpu_bench.py: its own table (GPU step times, the bound of a step's bytes)
CONFIGS = ["no hook", "smd every step", "smd every 100", "smdebug every step", "smdebug every 100"]


def python_for(fw):
    override = os.environ.get(f"SMD_BENCH_VENV_{fw.upper()}")
    if override:
        return Path(override)
    return REPO / f".venv-{VENVS.get(fw, fw)}" / "bin" / "python"


def run_bench(script, steps, tiny=False):
    fw = script.name[: -len("_bench.py")]
    py = python_for(fw)
    if not py.exists():
        return [], f"{script.name}: no {py} (run scripts/frameworks/{VENVS.get(fw, fw)}.sh)"
    cmd = [str(py), str(script)] + (["--steps", str(steps)] if steps else []) + (["--tiny"] if tiny else [])
    r = subprocess.run(cmd, capture_output=True, text=True)
    rows = []
    for line in r.stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            rows.append(json.loads(line))
    if r.returncode != 0:
        return rows, f"{script.name}: exit status {r.returncode}: {r.stderr.strip()[-500:]}"
    return rows, None


def overhead_table(rows):
    """Adds "overhead_pct" and, to smdebug's rows, "smdebug_vs_smd" to each row."""
    by_model = {}
    for row in rows:
        by_model.setdefault((row["framework"], row["model"]), {})[row["config"]] = row
    for cfgs in by_model.values():
        base = cfgs.get("no hook", {}).get("ms_per_step")
        cbase = cfgs.get("no hook", {}).get("cpu_ms_per_step")
        for row in cfgs.values():
            ms = row.get("ms_per_step")
            row["overhead_pct"] = None if (ms is None or not base) else (ms - base) / base * 100
            cms = row.get("cpu_ms_per_step")
            row["cpu_overhead_pct"] = None if (cms is None or not cbase) else (cms - cbase) / cbase * 100
        for interval in ("every step", "every 100"):
            ours = cfgs.get(f"smd {interval}")
            theirs = cfgs.get(f"smdebug {interval}")
            if theirs is None:
                continue
            o = ours and ours.get("overhead_pct")
            t = theirs.get("overhead_pct")
            theirs["smdebug_vs_smd"] = (t / o) if (o and t is not None and o > 0) else None
            o, t = ours and ours.get("cpu_overhead_pct"), theirs.get("cpu_overhead_pct")
            theirs["cpu_smdebug_vs_smd"] = (t / o) if (o and t is not None and o > 0) else None
    return rows


def fmt(x, spec, none="-"):
    return none if x is None else format(x, spec)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=None, help="passed to every benchmark")
    ap.add_argument("--only", default=None, help="comma-separated frameworks (the <fw> of <fw>_bench.py)")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON lines instead")
    ap.add_argument("--tiny", action="store_true", help="each benchmark at its smallest; any failure fails")
    args = ap.parse_args()
    only = set(args.only.split(",")) if args.only else None
    rows, problems = [], []
    for script in sorted(BENCH_DIR.glob("*_bench.py")):
        fw = script.name[: -len("_bench.py")]
        if fw in NOT_HERE or (only and fw not in only):
            continue
        got, problem = run_bench(script, args.steps, args.tiny)
        rows += got
        if problem:
            problems.append(problem)
    overhead_table(rows)
    if args.json:
        for row in rows:
            print(json.dumps(row))
    else:
        head = (f"{'framework':<11} {'model':<38} {'config':<19} {'ms/step':>9} {'overhead':>9} "
                f"{'smdebug/smd':>11} {'cpu ms':>8} {'cpu ovh':>9} {'cpu sd/smd':>10}")
        print(head)
        print("-" * len(head))
        for row in rows:
            ratio = row.get("smdebug_vs_smd")
            print(f"{row['framework']:<11} {row['model'][:38]:<38} {row['config']:<19} "
                  f"{fmt(row.get('ms_per_step'), '9.3f'):>9} "
                  f"{fmt(row.get('overhead_pct'), '+8.1f') + ('%' if row.get('overhead_pct') is not None else ''):>9} "
                  f"{fmt(ratio, '10.1f') + ('x' if ratio is not None else ''):>11} "
                  f"{fmt(row.get('cpu_ms_per_step'), '8.3f'):>8} "
                  f"{fmt(row.get('cpu_overhead_pct'), '+8.1f') + ('%' if row.get('cpu_overhead_pct') is not None else ''):>9} "
                  f"{fmt(row.get('cpu_smdebug_vs_smd'), '9.1f') + ('x' if row.get('cpu_smdebug_vs_smd') is not None else ''):>10}")
        notes = sorted({f"{r['framework']}: {r['note']}" for r in rows if r.get("note")})
        if notes:
            print("\nnotes:")
            for n in notes:
                print("  " + n)
    for p in problems:
        print(f"not run: {p}", file=sys.stderr)
    if args.tiny:
        return 1 if problems or not rows else 0
    return 1 if problems and not rows else 0


if __name__ == "__main__":
    sys.exit(main())
