from enum import Enum
from typing import List

class ModeKeys(Enum):
    TRAIN = 1
    EVAL = 2
    PREDICT = 3
    GLOBAL = 4

TRAIN: ModeKeys
EVAL: ModeKeys
PREDICT: ModeKeys
GLOBAL: ModeKeys
ALLOWED_MODES: List[ModeKeys]
