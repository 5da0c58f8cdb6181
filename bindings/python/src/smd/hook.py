"""A framework-free hook with smdebug's constructor arguments: a training program saves numpy
arrays (or any buffer-protocol or DLPack object) and scalars step by step."""
import numpy as np

from smd import smdc as _smd
from smd.collection_keys import CollectionKeys
from smd.modes import _mode_value, ModeKeys
from smd.reduction_config import ReductionConfig
from smd.save_config import SaveConfig


class Collection:
    """A collection of the hook (``hook.get_collection(name)``)."""

    def __init__(self, handle):
        self._c = handle
        self.name = _smd.smd_collection_name(handle)

    def include(self, regex):
        """Adds a regex (or a list of them) of tensor names."""
        for r in [regex] if isinstance(regex, str) else list(regex):
            _smd.smd_collection_add_include_regex(self._c, r)

    def add_tensor_name(self, name):
        _smd.smd_collection_add_tensor_name(self._c, name)

    @property
    def tensor_names(self):
        return set(_smd.smd_collection_tensor_names(self._c))

    def _set_save_config(self, cfg):
        if not isinstance(cfg, SaveConfig):
            raise TypeError(f"save_config must be a SaveConfig, not {type(cfg).__name__}")
        _smd.smd_collection_set_save_config(self._c, cfg._to_c())

    def _set_reduction_config(self, cfg):
        if not isinstance(cfg, ReductionConfig):
            raise TypeError(f"reduction_config must be a ReductionConfig, not {type(cfg).__name__}")
        _smd.smd_collection_set_reduction_config(self._c, cfg._to_c())

    save_config = property(None, _set_save_config)
    reduction_config = property(None, _set_reduction_config)

    def __repr__(self):
        return f"<smd.Collection {self.name}>"


def _as_array(value):
    """A C-contiguous little-endian numpy array of `value` without a copy when it already is one
    (numpy arrays, buffer-protocol objects, DLPack producers); non-contiguous or big-endian
    arrays are copied."""
    if hasattr(value, "__dlpack__") and not isinstance(value, np.ndarray):
        value = np.from_dlpack(value)
    a = np.asarray(value)
    if a.dtype.kind in "USO":
        raise TypeError("smd.Hook.save_tensor takes numeric arrays; string arrays are not bound yet")
    if a.dtype.byteorder == ">":
        a = a.astype(a.dtype.newbyteorder("<"))
    return np.ascontiguousarray(a)


class Hook:
    """smdebug's hook without a framework. Call ``begin_step()`` at each step boundary (the
    first call starts step 0), ``save_tensor``/``save_scalar`` during a step, ``close()`` at
    the end (or use the hook as a context manager). A hook that is dropped closes itself."""

    def __init__(self, out_dir, export_tensorboard=False, tensorboard_dir=None, dry_run=False,
                 reduction_config=None, save_config=None, include_regex=None,
                 include_collections=None, save_all=False, include_workers="one", *, _handle=None):
        if _handle is not None:
            self._hook = _handle
            return
        if not isinstance(out_dir, str):
            raise TypeError(f"out_dir must be a str, not {type(out_dir).__name__}")
        o = _smd.smd_hook_options_create()
        _smd.smd_hook_options_set_export_tensorboard(o, bool(export_tensorboard))
        if tensorboard_dir is not None:
            _smd.smd_hook_options_set_tensorboard_dir(o, tensorboard_dir)
        _smd.smd_hook_options_set_dry_run(o, bool(dry_run))
        if reduction_config is not None:
            if not isinstance(reduction_config, ReductionConfig):
                raise TypeError("reduction_config must be a ReductionConfig")
            _smd.smd_hook_options_set_reduction_config(o, reduction_config._to_c())
        if save_config is not None:
            if not isinstance(save_config, SaveConfig):
                raise TypeError("save_config must be a SaveConfig")
            _smd.smd_hook_options_set_save_config(o, save_config._to_c())
        for r in [include_regex] if isinstance(include_regex, str) else (include_regex or []):
            _smd.smd_hook_options_add_include_regex(o, r)
        for c in include_collections or []:
            _smd.smd_hook_options_add_include_collection(o, c)
        _smd.smd_hook_options_set_save_all(o, bool(save_all))
        if include_workers not in ("one", "all"):
            raise ValueError(f"include_workers must be 'one' or 'all', not {include_workers!r}")
        _smd.smd_hook_options_set_include_workers(o, 1 if include_workers == "all" else 0)
        self._framework_options(o)
        self._hook = _smd.smd_hook_create(out_dir, o)

    @classmethod
    def create_from_json_file(cls, json_file_path=None):
        """A hook from smdebug's JSON hook configuration (None: $SMDEBUG_CONFIG_FILE_PATH, else
        /opt/ml/input/config/debughookconfig.json)."""
        o = _smd.smd_hook_options_create()
        cls._framework_options(o)
        return cls(None, _handle=_smd.smd_hook_create_from_json_file(json_file_path, o))

    @classmethod
    def _framework_options(cls, options):
        """Framework hooks set what their framework knows here (e.g. the worker name of an
        initialized process group); the framework-free hook sets nothing."""

    # -- steps and modes ---------------------------------------------------------------------
    def set_mode(self, mode):
        _smd.smd_hook_set_mode(self._hook, _mode_value(mode))

    def begin_step(self):
        """Ends the current step and starts the next (the first call starts step 0)."""
        _smd.smd_hook_begin_step(self._hook)

    @property
    def step(self):
        """The current global step (-1 before the first begin_step)."""
        return _smd.smd_hook_global_step(self._hook)

    @property
    def mode(self):
        return ModeKeys(_smd.smd_hook_mode(self._hook))

    @property
    def mode_steps(self):
        return {self.mode: _smd.smd_hook_mode_step(self._hook)}

    # -- saving ------------------------------------------------------------------------------
    def save_tensor(self, tensor_name, tensor_value, collections_to_write=CollectionKeys.DEFAULT):
        """Offers a tensor for the current step; it is saved if a collection it belongs to is
        due. ``tensor_value``: a numpy array, a buffer-protocol object or a DLPack producer;
        C-contiguous arrays are passed without a copy on the Python side (smd copies what it
        saves), others are made contiguous first (one copy)."""
        if not isinstance(tensor_name, str):
            raise TypeError(f"tensor_name must be a str, not {type(tensor_name).__name__}")
        colls = [collections_to_write] if isinstance(collections_to_write, str) else list(collections_to_write)
        a = _as_array(tensor_value)
        dtype = _smd.smd_dtype_from_name(a.dtype.name)
        _smd.smd_hook_save_tensor(self._hook, tensor_name, dtype, list(a.shape), a.reshape(-1).view(np.uint8), colls)

    def save_scalar(self, name, value, sm_metric=False):
        """Saves a scalar as the tensor "scalar/<name>" (float64) in the current step."""
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, not {type(name).__name__}")
        _smd.smd_hook_save_scalar(self._hook, name, float(value))

    # -- collections -------------------------------------------------------------------------
    def get_collection(self, name, create=True):
        if not create and name not in _smd.smd_hook_collection_names(self._hook):
            raise KeyError(f"the hook has no collection {name!r}")
        return Collection(_smd.smd_hook_get_collection(self._hook, name))

    def get_collections(self):
        return {n: self.get_collection(n) for n in _smd.smd_hook_collection_names(self._hook)}

    # -- end ---------------------------------------------------------------------------------
    def flush(self):
        _smd.smd_hook_flush(self._hook)

    def close(self):
        """Writes everything queued, the collections file and training_job_end.ts; raises the
        first error the writer met. A second call does nothing."""
        _smd.smd_hook_close(self._hook)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
