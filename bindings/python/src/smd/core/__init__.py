"""smdebug.core's public modules that smd provides: ``smd.core.modes``, ``smd.core.collection``
(Collection, CollectionKeys), ``smd.core.save_config``, ``smd.core.reduction_config`` and
``smd.core.tensor`` (StepState), under smdebug's module paths."""

__all__ = ["collection", "modes", "reduction_config", "save_config", "tensor"]
from smd.core import collection, modes, reduction_config, save_config, tensor  # noqa: E402,F401
