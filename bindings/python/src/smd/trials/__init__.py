"""``smd.trials``: ``create_trial`` and the Trial class, as ``smdebug.trials``."""
from smd.trials.trial import LocalTrial, S3Trial, StepState, Trial, create_trial  # noqa: F401

__all__ = ["create_trial", "Trial", "LocalTrial", "S3Trial", "StepState"]
