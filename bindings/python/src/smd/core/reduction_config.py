"""``smdebug.core.reduction_config``: ReductionConfig (the same as ``smd.reduction_config``)."""
from smd.reduction_config import ReductionConfig  # noqa: F401

__all__ = ["ReductionConfig"]
