"""`python -m build` makes a wheel of the binding with libsmd inside; installed into a fresh virtual
environment, it runs a hook + trial + rule smoke script there.

The wheel is built without build isolation (the project's environment has the build backend), in
a temporary folder. The fresh environment (python -m venv) gets the wheel with `pip install
--no-deps` and numpy through a .pth file naming a folder that links to the numpy of the
environment running the tests, so that the test needs no network and sees no other smd.
"""
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import REPO

SMOKE = r'''
import os, sys, tempfile
import numpy as np
import smd
from smd.trials import create_trial
from smd.rules import VanishingGradient, invoke_rule

assert smd.__file__.startswith(sys.prefix), smd.__file__  # the wheel's copy, not the sources
pkg = os.path.dirname(smd.__file__)
assert os.path.exists(os.path.join(pkg, "py.typed"))
assert any(n.startswith("libsmd.so") for n in os.listdir(pkg)), os.listdir(pkg)
out = os.path.join(tempfile.mkdtemp(), "run")
with smd.Hook(out, save_config=smd.SaveConfig(save_interval=1), include_collections=["gradients", "losses"]) as hook:
    for step in range(6):
        hook.begin_step()
        hook.save_tensor("gradient/w", np.full((3, 3), 1e-9 if step == 4 else 0.5, np.float32), "gradients")
        hook.save_scalar("loss", 1.0 / (step + 1))
trial = create_trial(out)
assert trial.steps() == list(range(6)), trial.steps()
assert trial.tensor("scalar/loss").value(3).tolist() == [0.25]
assert not trial.tensor("gradient/w").value(2).flags.writeable
rule = VanishingGradient(trial, threshold=1e-7)
invoke_rule(rule)
assert [f.step for f in rule.findings] == [4], rule.findings
print("smoke ok", smd.__version__)
'''


def _run(cmd, **kw):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    assert r.returncode == 0, f"{' '.join(map(str, cmd))} failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r


def test_python_m_build_wheel_installs_and_runs_in_a_fresh_venv(tmp_path):
    pytest.importorskip("build", reason="`build` is in scripts/requirements.txt")
    env = dict(os.environ)
    if shutil.which("ccache"):
        env["CMAKE_ARGS"] = "-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache"
    env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", "2")
    dist = tmp_path / "dist"
    _run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", dist, REPO / "bindings" / "python"],
         env=env)
    wheels = list(dist.glob("smd-*.whl"))
    assert len(wheels) == 1, wheels
    names = zipfile.ZipFile(wheels[0]).namelist()
    for want in ("smd/__init__.py", "smd/__init__.pyi", "smd/py.typed", "smd/rules/generic.pyi", "smd/smdc.py"):
        assert want in names, want
    assert any(n.startswith("smd/libsmd.so") for n in names), names
    assert any(n.startswith("smd/_smdc") and n.endswith(".so") for n in names), names

    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PIP_TARGET", "PIP_PREFIX")}
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", venv], env=clean)
    py = venv / "bin" / "python"
    _run([py, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--disable-pip-version-check", wheels[0]],
         env=clean)
    import numpy
    deps = tmp_path / "deps"
    deps.mkdir()
    np_dir = Path(numpy.__file__).parent
    (deps / "numpy").symlink_to(np_dir)
    if (np_dir.parent / "numpy.libs").exists():
        (deps / "numpy.libs").symlink_to(np_dir.parent / "numpy.libs")
    site = _run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], env=clean).stdout.strip()
    Path(site, "numpy_from_tests.pth").write_text(str(deps) + "\n")
    r = _run([py, "-c", SMOKE], env=clean, cwd=tmp_path)
    assert "smoke ok" in r.stdout
