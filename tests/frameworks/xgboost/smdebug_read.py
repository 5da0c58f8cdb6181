"""Reads tensors of a trial with the real smdebug (run by the project's .venv python, which has
smdebug 1.0.34) and prints them as JSON:

    python smdebug_read.py TRIAL

{"steps": [...], "collections": {name: sorted tensor names}, "tensors": {name: {step: value}}}
where a value is a nested list (numbers) or a list of str (string tensors); NaN as null.
"""
import json
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "interop"))
import smdebug_env  # noqa: E402,F401
from smdebug.core.modes import ModeKeys  # noqa: E402
from smdebug.trials import create_trial  # noqa: E402


def _plain(v):
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


def main():
    trial = create_trial(sys.argv[1])
    doc = {"steps": trial.steps(), "collections": {}, "tensors": {}, "modes": {}}
    for name, coll in trial.collections().items():
        doc["collections"][name] = sorted(coll.tensor_names)
    for name in trial.tensor_names():
        t = trial.tensor(name)
        doc["tensors"][name] = {str(s): _plain(t.value(s).tolist()) for s in t.steps()}
    for mode in (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT, ModeKeys.GLOBAL):
        doc["modes"][mode.name] = trial.steps(mode=mode)
    json.dump(doc, sys.stdout)


main()
