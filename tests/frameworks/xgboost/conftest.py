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
