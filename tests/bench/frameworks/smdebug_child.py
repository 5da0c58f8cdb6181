"""What the TensorFlow benchmarks share: running the real smdebug's hook in a child interpreter."""
import json
import os
import subprocess
import sys


def run_smdebug_child(script, args, what):
    """Runs `script --smdebug-child ARGS...` with this interpreter, in smdebug's environment
    (protobuf's pure-Python parser, which smdebug's generated code needs with today's protobuf;
    errors only in its log). The child prints {"ms_per_step": ...} last. Returns (ms_per_step,
    "smdebug 1.0.34"), or (None, why) when the child fails: `what` names the framework smdebug
    does not run with."""
    env = dict(os.environ, PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION="python", SMDEBUG_LOG_LEVEL="error")
    env.pop("TRAINING_JOB_NAME", None)
    r = subprocess.run([sys.executable, os.path.abspath(script), "--smdebug-child", *args],
                       capture_output=True, text=True, env=env, timeout=3600)
    if r.returncode == 0 and r.stdout.strip():
        return json.loads(r.stdout.strip().splitlines()[-1])["ms_per_step"], "smdebug 1.0.34"
    last = [line for line in r.stderr.strip().splitlines() if line.strip()]
    reason = last[-1] if last else f"exit status {r.returncode}"
    return None, f"smdebug 1.0.34 does not run with this {what}: {reason[:300]}"
