"""``smd.analysis``: smdebug's analysis helpers (``smd.analysis.utils``)."""
from smd.analysis import utils  # noqa: F401

__all__ = ["utils"]
