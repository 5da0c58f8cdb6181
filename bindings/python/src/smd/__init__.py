"""smd: Amazon SageMaker Debugger's Python API (smdebug's module paths) over smd's C library.

``from smd.trials import create_trial`` in place of ``from smdebug.trials import create_trial``;
likewise ``smd.modes``, ``smd.exceptions``, ``smd.rules``, ``smd.SaveConfig``, ``smd.Hook``.
"""
from smd import smdc as _smd
from smd import exceptions, modes  # noqa: F401
from smd._values import DLPackValue, to_dlpack  # noqa: F401
from smd.collection_keys import CollectionKeys  # noqa: F401
from smd.hook import Hook  # noqa: F401
from smd.modes import ModeKeys  # noqa: F401
from smd.reduction_config import ReductionConfig  # noqa: F401
from smd.save_config import SaveConfig, SaveConfigMode  # noqa: F401
from smd.trials.trial import create_trial  # noqa: F401

__version__ = _smd.smd_version_string()

__all__ = ["CollectionKeys", "DLPackValue", "Hook", "ModeKeys", "ReductionConfig", "SaveConfig",
           "SaveConfigMode", "create_trial", "exceptions", "modes", "to_dlpack"]
