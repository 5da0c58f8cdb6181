"""Fixtures for the interop tests: the real smdebug (writer and reference dump) against smd.

Locations (environment variables, with defaults):
  SMD_BUILD_DIR    the CMake build folder holding tools/smd/smd and capi/libsmd.so
                   (default: <repo>/build)
  SMD_ORACLE_DIR   shared/oracle (smd_dump_ref.py, numpy_hook.py); default: the first of
                   <repo>/../shared/oracle and /work/shared/oracle that exists
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
BUILD_DIR = pathlib.Path(os.environ.get("SMD_BUILD_DIR", REPO / "build")).resolve()
SMD_BIN = BUILD_DIR / "tools" / "smd" / "smd"
LIBSMD = BUILD_DIR / "capi" / "libsmd.so"


def _oracle_dir():
    for c in (os.environ.get("SMD_ORACLE_DIR"), REPO.parent / "shared" / "oracle",
              pathlib.Path("/work/shared/oracle")):
        if c and (pathlib.Path(c) / "smd_dump_ref.py").is_file():
            return pathlib.Path(c).resolve()
    return None


def _env():
    env = dict(os.environ)
    env["PYTHONHASHSEED"] = "0"
    env.setdefault("SMDEBUG_LOG_LEVEL", "error")
    env.pop("TRAINING_JOB_NAME", None)
    return env


@pytest.fixture(scope="session")
def oracle():
    d = _oracle_dir()
    if d is None:
        pytest.skip("shared/oracle not found (set SMD_ORACLE_DIR)")
    try:
        import smdebug  # noqa: F401
    except ImportError:
        pytest.skip("the real smdebug is not importable (run with the project's .venv)")
    return d


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
