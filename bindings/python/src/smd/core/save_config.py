"""``smdebug.core.save_config``: SaveConfig and SaveConfigMode (the same as ``smd.save_config``)."""
from smd.save_config import SaveConfig, SaveConfigMode  # noqa: F401

__all__ = ["SaveConfig", "SaveConfigMode"]
