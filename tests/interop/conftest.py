"""Shared fixtures of the interop tests: where the built smd programs are, where the oracle lives,
and helpers to run a scenario with smd and with the real smdebug."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
SHARED = Path(os.environ.get("SMD_SHARED_DIR", REPO.parent / "shared")).resolve()
BUILD = Path(os.environ.get("SMD_BUILD_DIR", REPO / "build")).resolve()

os.environ["SMD_SHARED_DIR"] = str(SHARED)
sys.path.insert(0, str(SHARED / "oracle"))
sys.path.insert(0, str(HERE))
import smd_oracle_env  # noqa: E402,F401  (environment for smdebug; must precede smdebug imports)


def _program(name):
    p = BUILD / "tests" / name
    if not p.exists():
        p = BUILD / name
    return p


@pytest.fixture(scope="session")
def smd_scenario_bin():
    p = _program("smd_scenario")
    if not p.exists():
        pytest.fail(f"{p} is not built (set SMD_BUILD_DIR to the CMake build folder)")
    return p


def run_smd_scenario(binary, script_path):
    r = subprocess.run([str(binary), str(script_path)], capture_output=True, text=True)
    assert r.returncode == 0, f"smd_scenario failed:\n{r.stderr}"


def run_oracle(script_path):
    env = dict(os.environ, PYTHONHASHSEED="0")
    r = subprocess.run([sys.executable, str(HERE / "oracle_run.py"), str(script_path)],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, f"smdebug (oracle) failed:\n{r.stderr}"


def reference_dump(trial_dir):
    """smd_dump_ref.py's JSON of a trial, read by the real smdebug."""
    r = subprocess.run([sys.executable, str(SHARED / "oracle" / "smd_dump_ref.py"), str(trial_dir)],
                       capture_output=True, text=True)
    assert r.returncode == 0, f"smd_dump_ref.py failed on {trial_dir} (exit {r.returncode}):\n{r.stderr}"
    return r.stdout


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)
