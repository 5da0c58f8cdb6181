import json
import os
import subprocess

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SMDEBUG_PYTHON = os.path.join(REPO, ".venv", "bin", "python")


def smdebug_read(trial_dir):
    """What the real smdebug (the repository's .venv) reads from the trial (smdebug_read.py)."""
    r = subprocess.run([SMDEBUG_PYTHON, os.path.join(os.path.dirname(__file__), "smdebug_read.py"),
                        str(trial_dir)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"smdebug could not read {trial_dir}:\n{r.stderr[-3000:]}"
    return json.loads(r.stdout)


@pytest.fixture
def read_with_smdebug():
    if not os.path.exists(SMDEBUG_PYTHON):
        pytest.fail(f"{SMDEBUG_PYTHON} is missing: run scripts/setup.sh first")
    return smdebug_read


def run_rule(trial_dir, rule):
    """`smd rules TRIAL --rule RULE --json` with the C build's tool: (exit status, JSON lines)."""
    build = os.environ.get("SMD_BUILD_DIR", os.path.join(REPO, "build"))
    tool = os.path.join(build, "tools", "smd", "smd")
    if not os.path.exists(tool):
        pytest.fail(f"{tool} is missing: build the C tree first (cmake --build build)")
    r = subprocess.run([tool, "rules", str(trial_dir), "--rule", rule, "--json", "--no-progress"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode in (0, 6), f"smd rules failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    return r.returncode, [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
