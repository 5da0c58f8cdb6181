"""Fixtures and helpers of the interop tests: smd against the real smdebug (PyPI 1.0.34).

Locations (environment variables, with defaults):
  SMD_BUILD_DIR    the CMake build folder (tools/smd/smd, capi/libsmd.so, tests/smd_scenario);
                   default <repo>/build
The real smdebug is driven by this folder's own code: smdebug_env.py (its environment),
smdebug_hook.py (its hook fed with numpy arrays), smdebug_scenario.py, writer.py and cases.py
(trials it writes) and smdebug_dump.py (what its reader answers). Run with the project's virtual
environment, which has the real smdebug:
  SMD_BUILD_DIR=build .venv/bin/python -m pytest tests/interop
"""
import json
import os
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
BUILD_DIR = pathlib.Path(os.environ.get("SMD_BUILD_DIR", REPO / "build")).resolve()
SMD_BIN = BUILD_DIR / "tools" / "smd" / "smd"
LIBSMD = BUILD_DIR / "capi" / "libsmd.so"

sys.path.insert(0, str(HERE))
import smdebug_env  # noqa: E402,F401  (environment for smdebug; must precede smdebug imports)


def _env():
    env = dict(os.environ)
    env["PYTHONHASHSEED"] = "0"
    env.setdefault("SMDEBUG_LOG_LEVEL", "error")
    env.pop("TRAINING_JOB_NAME", None)
    return env


def _program(name):
    for p in (BUILD_DIR / "tests" / name, BUILD_DIR / name):
        if p.exists():
            return p
    pytest.fail(f"{name} is not built in {BUILD_DIR} (set SMD_BUILD_DIR to the CMake build folder)")


# ---- the writer side: scenarios run by smd_scenario and by smdebug's hook -------------------

@pytest.fixture(scope="session")
def smd_scenario_bin():
    return _program("smd_scenario")


def run_smd_scenario(binary, script_path):
    r = subprocess.run([str(binary), str(script_path)], capture_output=True, text=True)
    assert r.returncode == 0, f"smd_scenario failed:\n{r.stderr}"


def run_oracle(script_path):
    """Runs an smd_scenario script with the real smdebug hook (smdebug_scenario.py)."""
    r = subprocess.run([sys.executable, str(HERE / "smdebug_scenario.py"), str(script_path)],
                       capture_output=True, text=True, env=_env())
    assert r.returncode == 0, f"smdebug (smdebug_scenario.py) failed:\n{r.stderr}"


def reference_dump(trial_dir):
    """smdebug_dump.py's JSON of a trial, read by the real smdebug."""
    code, out, err = run_ref(trial_dir)
    assert code == 0, f"smdebug_dump.py failed on {trial_dir} (exit {code}):\n{err}"
    return out


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


# ---- the reader side: trials written by smdebug, dumped by both ------------------------------

@pytest.fixture(scope="session")
def smd_bin():
    if not SMD_BIN.is_file():
        pytest.fail(f"{SMD_BIN} is not built (set SMD_BUILD_DIR to the CMake build folder)")
    return SMD_BIN


def write_trial(case, out):
    """Writes trial `case` of cases.py into out with the real smdebug."""
    r = subprocess.run([sys.executable, str(HERE / "writer.py"), case, str(out)],
                       env=_env(), capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise RuntimeError(f"writing case {case} failed:\n{r.stdout}\n{r.stderr}")
    return out


@pytest.fixture(scope="session")
def trial_of(tmp_path_factory):
    """trial_of(case) -> path of that case's trial, written once per session."""
    made = {}

    def get(case):
        if case not in made:
            made[case] = write_trial(case, tmp_path_factory.mktemp(case) / "trial")
        return made[case]

    return get


def run_ref(path):
    """(exit status, stdout, stderr) of smdebug_dump.py on path."""
    r = subprocess.run([sys.executable, str(HERE / "smdebug_dump.py"), str(path)], env=_env(),
                       capture_output=True, timeout=600)
    return r.returncode, r.stdout.decode("utf-8"), r.stderr.decode("utf-8", "replace")


def run_smd(smd_bin, *args):
    r = subprocess.run([str(smd_bin), *map(str, args)], capture_output=True, timeout=600)
    return r.returncode, r.stdout.decode("utf-8"), r.stderr.decode("utf-8", "replace")


def dumps(doc):
    """The dump's layout (what smdebug_dump.py prints)."""
    return json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
