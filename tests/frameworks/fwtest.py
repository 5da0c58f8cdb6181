"""Fixtures shared by the framework hook suites (each conftest imports what it uses): the real
smdebug reads a trial in a subprocess of the project's .venv (tests/interop/smdebug_dump.py), and
built-in rules run through the `smd` tool of a build (SMD_BUILD_DIR, default build/)."""
import json
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def smdebug_dump():
    """smdebug_dump(trial) -> the smd-dump/1 document of the real smdebug 1.0.34 over trial."""
    py = REPO / ".venv" / "bin" / "python"
    if not py.exists():
        pytest.fail(f"{py} is missing: scripts/setup.sh makes it (the real smdebug lives there)")

    def dump(trial):
        r = subprocess.run([str(py), str(REPO / "tests" / "interop" / "smdebug_dump.py"), str(trial)],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, f"smdebug could not read {trial}: {r.stderr[-2000:]}"
        return json.loads(r.stdout)
    return dump


@pytest.fixture
def smd_tool():
    build = Path(os.environ.get("SMD_BUILD_DIR", REPO / "build"))
    exe = build / "tools" / "smd" / "smd"
    if not exe.exists():
        pytest.fail(f"{exe} is missing: build the repository (cmake --build build --target smd_tool) "
                    "or set SMD_BUILD_DIR")
    return exe


def smdebug_names_missing(ours, theirs):
    """The public names of smdebug's framework module `theirs` that smd's `ours` lacks: its
    functions, classes and the modes module (its other submodules come along with the package)."""
    import inspect
    have = {n for n in dir(ours) if not n.startswith("_")}
    want = {n for n in dir(theirs) if not n.startswith("_")
            and (not inspect.ismodule(getattr(theirs, n)) or n == "modes")}
    return want - have
