from smd.modes import ALLOWED_MODES as ALLOWED_MODES
from smd.modes import EVAL as EVAL
from smd.modes import GLOBAL as GLOBAL
from smd.modes import PREDICT as PREDICT
from smd.modes import TRAIN as TRAIN
from smd.modes import ModeKeys as ModeKeys
