import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # fwtest.py
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
SMDEBUG_PYTHON = os.path.join(REPO, ".venv", "bin", "python")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def smdebug_read(trial_dir):
    """What the real smdebug (the repository's .venv) reads from the trial."""
    reader = os.path.join(HERE, "..", "xgboost", "smdebug_read.py")
    r = subprocess.run([SMDEBUG_PYTHON, reader, str(trial_dir)], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, f"smdebug could not read {trial_dir}:\n{r.stderr[-3000:]}"
    return json.loads(r.stdout)


@pytest.fixture
def read_with_smdebug():
    if not os.path.exists(SMDEBUG_PYTHON):
        pytest.fail(f"{SMDEBUG_PYTHON} is missing: run scripts/setup.sh first")
    return smdebug_read


def smd_tool():
    build = os.environ.get("SMD_BUILD_DIR", os.path.join(REPO, "build"))
    tool = os.path.join(build, "tools", "smd", "smd")
    if not os.path.exists(tool):
        pytest.fail(f"{tool} is missing: build the C tree first (cmake --build build)")
    return tool


def run_rule(trial_dir, rule):
    """`smd rules TRIAL --rule RULE --json`: (exit status, findings)."""
    r = subprocess.run([smd_tool(), "rules", str(trial_dir), "--rule", rule, "--json", "--no-progress"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode in (0, 6), f"smd rules failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    lines = [json.loads(line) for line in r.stdout.splitlines() if line.strip().startswith("{")]
    return r.returncode, lines


def run_script(script, env=None, timeout=600):
    """Runs a Python script (text) in a fresh interpreter of this venv; returns its stdout's last
    line as JSON."""
    e = dict(os.environ)
    e.update(env or {})
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=e,
                       timeout=timeout, cwd=HERE)
    assert r.returncode == 0, f"script failed ({r.returncode}):\n{r.stdout[-2000:]}\n{r.stderr[-4000:]}"
    return json.loads(r.stdout.strip().splitlines()[-1])
