"""``smdebug.core.modes``: the same enum as ``smd.modes``."""
from smd.modes import ALLOWED_MODES, EVAL, GLOBAL, PREDICT, TRAIN, ModeKeys  # noqa: F401

__all__ = ["ModeKeys", "TRAIN", "EVAL", "PREDICT", "GLOBAL", "ALLOWED_MODES"]
