"""``smd.trials``: ``create_trial`` and the Trial class, as ``smdebug.trials``."""
from smd.trials.trial import StepState, Trial, create_trial  # noqa: F401

__all__ = ["create_trial", "Trial", "StepState"]
