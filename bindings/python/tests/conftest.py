"""Shared fixtures of the smd Python tests.

The trials: the project's fixture trials (tests/data/trials) and, when SMD_BUILD_DIR names a build
of the repository, trials written by smd's C hook (examples/train_mlp). The reference is the real
smdebug, imported in the same process.
"""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "tests" / "data" / "trials"
ENDED_FIXTURES = ["dtypes", "modes_reentry", "reductions_float", "shapes"]
RUNNING_FIXTURES = ["workers3_running"]


def _train_mlp():
    build = os.environ.get("SMD_BUILD_DIR")
    if not build:
        return None
    exe = Path(build) / "examples" / "train_mlp"
    return exe if exe.exists() else None


@pytest.fixture(scope="session")
def hook_trial(tmp_path_factory):
    """A trial written by smd's C hook (the demo's instrumented training loop)."""
    exe = _train_mlp()
    if exe is None:
        pytest.fail("SMD_BUILD_DIR must name a build of the repository with examples/train_mlp "
                    "(the tests compare trials written by smd's hook)")
    out = tmp_path_factory.mktemp("hook") / "run"
    subprocess.run([str(exe), str(out), "--steps", "60"], check=True, capture_output=True)
    return out


@pytest.fixture
def copy_of(tmp_path):
    """A private copy of a fixture trial (tests that modify a trial use it)."""
    def make(name):
        dst = tmp_path / name
        shutil.copytree(FIXTURES / name, dst)
        return dst
    return make
