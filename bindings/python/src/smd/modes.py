"""smdebug's modes: ``smd.modes.TRAIN`` ... and the ``ModeKeys`` enum (same values as smdebug)."""
from enum import Enum


class ModeKeys(Enum):
    """The mode a step belongs to; the values are smdebug's (and smd's C ``smd_mode``)."""

    TRAIN = 1
    EVAL = 2
    PREDICT = 3
    GLOBAL = 4

    # A script that moves to smd in steps may still hold smdebug's own ModeKeys (``from smdebug
    # import modes``): a mode of another ModeKeys enum with the same name and value is equal to
    # this one, and hashes alike (an Enum member hashes its name), so comparisons and dict keys
    # work across the two.
    def __eq__(self, other):
        if isinstance(other, ModeKeys):
            return self is other
        if isinstance(other, Enum) and type(other).__name__ == "ModeKeys":
            return self.name == other.name and self.value == other.value
        return NotImplemented

    def __hash__(self):
        return hash(self._name_)


TRAIN = ModeKeys.TRAIN
EVAL = ModeKeys.EVAL
PREDICT = ModeKeys.PREDICT
GLOBAL = ModeKeys.GLOBAL
ALLOWED_MODES = [TRAIN, EVAL, PREDICT, GLOBAL]


def _mode_value(mode):
    """The C value of a mode given as a ModeKeys, an int or a name; TypeError/ValueError otherwise."""
    if isinstance(mode, ModeKeys):
        return mode.value
    if isinstance(getattr(mode, "value", None), int) and getattr(mode, "name", None) in ModeKeys.__members__:
        return ModeKeys[mode.name].value  # another ModeKeys enum, e.g. smdebug's own
    if isinstance(mode, str):
        try:
            return ModeKeys[mode.upper()].value
        except KeyError:
            raise ValueError(f"unknown mode {mode!r}: expected TRAIN, EVAL, PREDICT or GLOBAL") from None
    if isinstance(mode, int) and not isinstance(mode, bool):
        return ModeKeys(mode).value
    raise TypeError(f"mode must be an smd.modes value, not {type(mode).__name__}")

__all__ = ["ModeKeys", "TRAIN", "EVAL", "PREDICT", "GLOBAL", "ALLOWED_MODES"]
