"""``smdebug.core.modes``: the same enum as ``smd.modes``."""
from smd.modes import ALLOWED_MODES, EVAL, GLOBAL, PREDICT, TRAIN, ModeKeys  # noqa: F401
