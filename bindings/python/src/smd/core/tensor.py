"""``smdebug.core.tensor``: the Tensor class and StepState (the same as ``smd.tensor.Tensor`` and
``smd.trials.StepState``)."""
from smd.tensor import Tensor  # noqa: F401
from smd.trials.trial import StepState  # noqa: F401

__all__ = ["StepState", "Tensor"]
