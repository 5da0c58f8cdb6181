"""Fixtures and helpers of the interop tests: smd against the real smdebug (PyPI 1.0.34).

Locations (environment variables, with defaults):
  SMD_BUILD_DIR    the CMake build folder (tools/smd/smd, capi/libsmd.so, tests/smd_scenario);
                   default <repo>/build
  SMD_SHARED_DIR   the shared folder beside the repository, holding oracle/ (smd_dump_ref.py,
                   numpy_hook.py); default <repo>/../shared
Run with the project's virtual environment, which has the real smdebug:
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
SHARED = pathlib.Path(os.environ.get("SMD_SHARED_DIR", REPO.parent / "shared")).resolve()
ORACLE = SHARED / "oracle"
BUILD_DIR = pathlib.Path(os.environ.get("SMD_BUILD_DIR", REPO / "build")).resolve()
SMD_BIN = BUILD_DIR / "tools" / "smd" / "smd"
LIBSMD = BUILD_DIR / "capi" / "libsmd.so"

if not (ORACLE / "smd_dump_ref.py").is_file():
    raise RuntimeError(f"the smdebug oracle is not at {ORACLE} (set SMD_SHARED_DIR)")
os.environ["SMD_SHARED_DIR"] = str(SHARED)
sys.path.insert(0, str(ORACLE))
sys.path.insert(0, str(HERE))
import smd_oracle_env  # noqa: E402,F401  (environment for smdebug; must precede smdebug imports)


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
    r = subprocess.run([sys.executable, str(HERE / "oracle_run.py"), str(script_path)],
                       capture_output=True, text=True, env=_env())
    assert r.returncode == 0, f"smdebug (oracle) failed:\n{r.stderr}"


def reference_dump(trial_dir):
    """smd_dump_ref.py's JSON of a trial, read by the real smdebug."""
    code, out, err = run_ref(ORACLE, trial_dir)
    assert code == 0, f"smd_dump_ref.py failed on {trial_dir} (exit {code}):\n{err}"
    return out


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


# ---- the reader side: trials written by smdebug, dumped by both ------------------------------

@pytest.fixture(scope="session")
def oracle():
    return ORACLE


@pytest.fixture(scope="session")
def smd_bin():
    if not SMD_BIN.is_file():
        pytest.fail(f"{SMD_BIN} is not built (set SMD_BUILD_DIR to the CMake build folder)")
    return SMD_BIN


def write_trial(oracle, case, out):
    """Writes trial `case` of cases.py into out with the real smdebug."""
    r = subprocess.run([sys.executable, str(HERE / "writer.py"), str(oracle), case, str(out)],
                       env=_env(), capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise RuntimeError(f"writing case {case} failed:\n{r.stdout}\n{r.stderr}")
    return out


@pytest.fixture(scope="session")
def trial_of(oracle, tmp_path_factory):
    """trial_of(case) -> path of that case's trial, written once per session."""
    made = {}

    def get(case):
        if case not in made:
            made[case] = write_trial(oracle, case, tmp_path_factory.mktemp(case) / "trial")
        return made[case]

    return get


def run_ref(oracle, path):
    r = subprocess.run([sys.executable, str(oracle / "smd_dump_ref.py"), str(path)], env=_env(),
                       capture_output=True, timeout=600)
    return r.returncode, r.stdout.decode("utf-8"), r.stderr.decode("utf-8", "replace")


def run_smd(smd_bin, *args):
    r = subprocess.run([str(smd_bin), *map(str, args)], capture_output=True, timeout=600)
    return r.returncode, r.stdout.decode("utf-8"), r.stderr.decode("utf-8", "replace")


def dumps(doc):
    """DUMP.md's layout (what smd_dump_ref.py prints)."""
    return json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
