from smd.trials.trial import StepState as StepState
from smd.trials.trial import Trial as Trial
from smd.trials.trial import create_trial as create_trial
from smd.trials.trial import LocalTrial as LocalTrial
from smd.trials.trial import S3Trial as S3Trial
