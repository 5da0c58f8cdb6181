"""The README's Python examples (its "Python" section) run as written, one after the other as a
user pastes them, in a scratch folder holding the demo's healthy trial (written by the demo's
train_mlp, as scripts/demo.sh does): the first code a user copies cannot rot."""
import subprocess
import sys

import numpy as np

import smd.trials
from conftest import REPO, _train_mlp

sys.path.insert(0, str(REPO / "tests" / "frameworks"))
from fwtest import readme_python_examples, run_example  # noqa: E402  (shared with the framework suites)


def test_the_python_sections_examples_run_as_written(tmp_path):
    analysis, training, rules = readme_python_examples("Python")
    exe = _train_mlp()
    assert exe is not None, "SMD_BUILD_DIR must name a build with examples/train_mlp"
    subprocess.run([str(exe), str(tmp_path / "demo-output" / "healthy"), "--tensorboard"],
                   check=True, capture_output=True)
    # the rules example goes on from the analysis example's `trial`
    run_example(analysis + rules, tmp_path)
    run_example(training, tmp_path)
    # the training example wrote a finished trial: fc.weight every 10 steps, the scalar loss every step
    trial = smd.trials.create_trial(str(tmp_path / "run-numpy"))
    assert trial.tensor("fc.weight").steps() == list(range(0, 100, 10))
    assert trial.tensor("scalar/loss").steps() == list(range(100))
    assert np.isclose(trial.tensor("scalar/loss").value(99), 1.0 / 100)
