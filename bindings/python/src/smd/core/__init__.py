"""smdebug.core's public names that smd provides."""

__all__ = ["modes"]
from smd.core import modes  # noqa: E402,F401
