"""The README's Python examples (its "Python" section) run as written, one after the other as a
user pastes them, in a scratch folder holding the demo's healthy trial (written by the demo's
train_mlp, as scripts/demo.sh does): the first code a user copies cannot rot."""
import re
import subprocess
import sys

import numpy as np

import smd.trials
from conftest import REPO, _train_mlp


def python_examples(section):
    text = (REPO / "README.md").read_text(encoding="utf-8")
    body = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", body, re.S)


def test_the_python_sections_examples_run_as_written(tmp_path):
    analysis, training, rules = python_examples("Python")
    exe = _train_mlp()
    assert exe is not None, "SMD_BUILD_DIR must name a build with examples/train_mlp"
    subprocess.run([str(exe), str(tmp_path / "demo-output" / "healthy"), "--tensorboard"],
                   check=True, capture_output=True)
    # the rules example goes on from the analysis example's `trial`
    for code in (analysis + rules, training):
        r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                           text=True, timeout=300)
        assert r.returncode == 0, f"the example failed:\n{code}\n{r.stderr[-3000:]}"
    # the training example wrote a finished trial: fc.weight every 10 steps, the scalar loss every step
    trial = smd.trials.create_trial(str(tmp_path / "run-numpy"))
    assert trial.tensor("fc.weight").steps() == list(range(0, 100, 10))
    assert trial.tensor("scalar/loss").steps() == list(range(100))
    assert np.isclose(trial.tensor("scalar/loss").value(99), 1.0 / 100)
