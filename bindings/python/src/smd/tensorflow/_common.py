"""What the TensorFlow hooks share: which Keras a class comes from, tensor names of variables,
the default collections of smdebug's TensorFlow hooks, and reading the JSON configuration's
collection list."""
import json
import os
import weakref

import tensorflow as tf

from smd import smdc as _smd
from smd.collection_keys import CollectionKeys

LAYERS = "layers"
# smdebug's TensorFlow hooks always save these, whatever include_collections says
DEFAULT_INCLUDE_COLLECTIONS = [CollectionKeys.METRICS, CollectionKeys.LOSSES, CollectionKeys.SM_METRICS]


def is_keras3_object(obj):
    """True for objects of Keras 3 (the `keras` package), False for Keras 2 (`tf_keras`)."""
    for cls in type(obj).__mro__:
        mod = cls.__module__ or ""
        if mod.startswith("tf_keras") or mod.startswith("tensorflow.python.keras"):
            return False
        if mod.startswith("keras"):
            return True
    return False


def variable_name(v):
    """smdebug's name of a variable: Keras 2 / tf.Variable names ("dense/kernel:0"); Keras 3
    variables have no unique name, so their path ("sequential/dense/kernel")."""
    path = getattr(v, "path", None)
    if isinstance(path, str) and path and not isinstance(v, tf.Variable):
        return path
    return v.name


def gradient_name(v):
    """smdebug's name of the gradient of a variable: "gradients/<name without :0>Grad"."""
    return "gradients/" + variable_name(v).split(":")[0] + "Grad"


def to_numpy(value):
    """A numpy view (CPU tensors) or copy of a tensor, variable or number."""
    if isinstance(value, tf.IndexedSlices):
        value = tf.convert_to_tensor(value)
    if hasattr(value, "numpy"):
        return value.numpy()
    return value


def json_collections(json_file_path):
    """(collection names, save_all, include_regex given) of smdebug's JSON hook configuration
    (None: $SMDEBUG_CONFIG_FILE_PATH, else /opt/ml/input/config/debughookconfig.json); the C
    library parses and validates the rest."""
    path = json_file_path or os.environ.get("SMDEBUG_CONFIG_FILE_PATH",
                                            "/opt/ml/input/config/debughookconfig.json")
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return [], False, False
    if not isinstance(doc, dict):
        return [], False, False
    names = [c.get("CollectionName") for c in doc.get("CollectionConfigurations") or []
             if isinstance(c, dict) and isinstance(c.get("CollectionName"), str)]
    params = doc.get("HookParameters") or {}
    save_all = str(params.get("save_all", "false")).lower() == "true"
    return names, save_all, bool(params.get("include_regex"))


def tf_options(options):
    """What smdebug's TensorFlow hooks write differently from its other hooks: reduction tags keep
    the ":0" of TensorFlow names ("smdebug/reductions/min/dense/kernel:0"), so that readers attach
    them to the tensor "dense/kernel:0" (and to its collection)."""
    _smd.smd_hook_options_set_keep_colon_index(options, True)


def include_defaults(hook_handle):
    for name in DEFAULT_INCLUDE_COLLECTIONS:
        _smd.smd_hook_include_collection(hook_handle, name)


# optimizer -> weakref of the hook that wrapped it (no attribute is added to framework objects)
_WRAPPED = weakref.WeakKeyDictionary()


def wrapper_of(optimizer):
    try:
        ref = _WRAPPED.get(optimizer)
    except TypeError:  # not weak-referenceable: not an optimizer either
        return None
    return ref() if ref is not None else None


def set_wrapper(optimizer, hook):
    _WRAPPED[optimizer] = weakref.ref(hook)
