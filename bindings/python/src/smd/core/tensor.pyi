from smd.tensor import Tensor as Tensor
from smd.trials.trial import StepState as StepState
