"""smd.tensorflow: smdebug's TensorFlow hooks (``smdebug.tensorflow``) on smd. Importing it
imports TensorFlow; ``tf.keras`` decides between Keras 3 and Keras 2 (TF_USE_LEGACY_KERAS=1)."""
from smd import modes  # noqa: F401
from smd.collection_keys import CollectionKeys  # noqa: F401
from smd.modes import ModeKeys  # noqa: F401
from smd.reduction_config import ReductionConfig  # noqa: F401
from smd.save_config import SaveConfig, SaveConfigMode  # noqa: F401
from smd.tensorflow.estimator import EstimatorHook  # noqa: F401
from smd.tensorflow.keras import KerasCollection, KerasHook  # noqa: F401
from smd.tensorflow.session import SessionHook  # noqa: F401
from smd.hook import Collection  # noqa: F401
from smd.trials import create_trial  # noqa: F401
import smd._framework as _fw
from smd._framework import del_hook, set_hook  # noqa: F401

_HOOK_TYPES = {"session": SessionHook, "estimator": EstimatorHook, "keras": KerasHook}


def get_hook(hook_type=None, json_config_path=None, create_if_not_exists=False):
    """smdebug's get_hook: the hook created last in this process (or given to ``set_hook``).
    ``hook_type`` ("keras", "session", "estimator" or None: any) asks for a hook of that class;
    with ``create_if_not_exists`` one is made from the JSON configuration (``json_config_path``
    or $SMDEBUG_CONFIG_FILE_PATH) if there is none, or None without such a file."""
    if hook_type is not None and hook_type not in _HOOK_TYPES:
        raise ValueError(f"hook_type must be one of {sorted(_HOOK_TYPES)} or None, not {hook_type!r}")
    return _fw.get_hook(_HOOK_TYPES.get(hook_type), json_config_path, create_if_not_exists)
