"""Rule benchmark: VanishingGradient over 1000 steps x 50 gradients with saved abs_mean reductions,
smd against the real smdebug running the same logic as a custom smdebug Rule, on the same folder.

    .venv/bin/python tests/bench/bench_rules.py [--build build] [--scratch DIR] [--steps 1000]
                                                [--tensors 50] [--repeat 3]

The folder is written once with smd's hook (bench_rules write): gradient/layerN.weight (32 x 32
float32) saved as abs_mean reductions only, every step; gradient/layer7.weight (the last layer
when there are fewer) vanishes from step 900 (the last 100 steps) on, so every implementation
must report the condition met at exactly the last 100 steps.
Then, on that folder, each implementation evaluates every step until the end of the job:
  smdebug   smdebug.rules.Rule subclass: per step, tensor_names(collection="gradients") and
            reduction_value(step, "mean", abs=True) < 1e-7 for each; invoke_rule(raise_eval_cond=
            False) until NoMoreData (smdebug 1.0.34, Python)
  smd C     the same logic as a custom rule through the C ABI (smd_rule_create + C callback)
  smd       the built-in VanishingGradient (smd_rule_create_builtin)
Times: trial open, and the invocation; steps/s = steps / invocation time (and / both). The best
of --repeat runs per implementation (smdebug: one run unless --repeat-smdebug). Not a test: it
prints a table.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
INTEROP = os.path.join(REPO, "tests", "interop")  # smdebug_env.py, smdebug_hook.py: the real smdebug

SMDEBUG_RUN = r"""
import json, sys, time
sys.path.insert(0, sys.argv[2])
import smdebug_env  # noqa: F401
from smdebug.exceptions import NoMoreData
from smdebug.rules import Rule, invoke_rule
from smdebug.trials import create_trial


class VanishingGradientRule(Rule):
    def __init__(self, base_trial, threshold="0.0000001"):
        super().__init__(base_trial, action_str="")
        self.threshold = float(threshold)
        self.steps = 0
        self.met = 0

    def invoke_at_step(self, step):
        self.steps += 1
        hit = False
        for name in self.base_trial.tensor_names(collection="gradients"):
            if self.base_trial.tensor(name).reduction_value(step, "mean", abs=True) < self.threshold:
                hit = True
        self.met += hit
        return hit


t0 = time.perf_counter()
trial = create_trial(sys.argv[1])
t1 = time.perf_counter()
rule = VanishingGradientRule(trial)
try:
    invoke_rule(rule, start_step=0, end_step=None, raise_eval_cond=False)
except NoMoreData:
    pass
t2 = time.perf_counter()
print(json.dumps({"open_s": t1 - t0, "invoke_s": t2 - t1, "steps": rule.steps, "met": rule.met}))
"""


def program(build, name):
    for p in (os.path.join(build, "tests", "bench", name), os.path.join(build, name)):
        if os.path.exists(p):
            return p
    sys.exit(f"{name} is not built in {build} (cmake -DSMD_BUILD_BENCH=ON; ninja {name})")


def run_json(cmd, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"{cmd[0]} failed:\n{r.stderr}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def best(results):
    return min(results, key=lambda r: r["invoke_s"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--scratch", default=None)
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--tensors", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--repeat-smdebug", type=int, default=1)
    args = ap.parse_args()

    driver = program(args.build, "bench_rules")
    scratch = args.scratch or tempfile.mkdtemp(prefix="smd-bench-rules-")
    trial = os.path.join(scratch, "trial")
    shutil.rmtree(trial, ignore_errors=True)
    vanish_from = args.steps - 100
    t0 = time.perf_counter()
    subprocess.run([driver, "write", trial, str(args.steps), str(args.tensors), str(vanish_from)],
                   check=True)
    print(f"wrote {trial}: {args.steps} steps x {args.tensors} gradients (abs_mean only) "
          f"in {time.perf_counter() - t0:.2f} s with smd's hook")

    env = dict(os.environ)
    env["SMDEBUG_LOG_LEVEL"] = "error"
    env["PYTHONHASHSEED"] = "0"
    script = os.path.join(scratch, "smdebug_rule.py")
    with open(script, "w") as f:
        f.write(SMDEBUG_RUN)
    # After the with block: the script is complete on disk before smdebug runs it.
    results = {
        "smdebug": best([run_json([sys.executable, script, trial, INTEROP], env)
                         for _ in range(args.repeat_smdebug)]),
        "smd C": best([run_json([driver, "run", trial, "custom"]) for _ in range(args.repeat)]),
        "smd": best([run_json([driver, "run", trial, "builtin"]) for _ in range(args.repeat)]),
    }
    for name, r in results.items():
        if r["steps"] != args.steps or r["met"] != 100:
            sys.exit(f"{name} disagrees: {r} (expected {args.steps} steps, 100 met)")

    labels = {
        "smdebug": "smdebug 1.0.34 custom Rule (Python)",
        "smd C": "smd, same logic as a C custom rule",
        "smd": "smd built-in VanishingGradient",
    }
    base = results["smdebug"]
    print()
    print(f"VanishingGradient, {args.steps} steps x {args.tensors} gradients, saved abs_mean "
          f"reductions; condition met at the last 100 steps by all")
    print()
    print("| implementation | open (s) | rule (s) | steps/s (rule) | steps/s (open + rule) | speed-up |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, r in results.items():
        sps = r["steps"] / r["invoke_s"]
        sps_all = r["steps"] / (r["open_s"] + r["invoke_s"])
        speed = base["invoke_s"] / r["invoke_s"]
        speed_all = (base["open_s"] + base["invoke_s"]) / (r["open_s"] + r["invoke_s"])
        print(f"| {labels[name]} | {r['open_s']:.3f} | {r['invoke_s']:.3f} | {sps:,.0f} | "
              f"{sps_all:,.0f} | {speed:.0f}x ({speed_all:.0f}x with open) |")
    if not args.scratch:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
