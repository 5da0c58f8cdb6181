"""A framework-free hook with smdebug's constructor arguments: a training program saves numpy
arrays (or any buffer-protocol or DLPack object) and scalars step by step."""
import os

import numpy as np

from smd import smdc as _smd
from smd.collection_keys import CollectionKeys
from smd.exceptions import SMDebugTypeError, SMDebugValueError
from smd.modes import _mode_value, ModeKeys
from smd.reduction_config import ReductionConfig
from smd.save_config import SaveConfig
from smd._storage import storage_options


class Collection:
    """A collection: a named group of tensors with its own save and reduction configuration.

    ``hook.get_collection(name)`` returns the hook's collection of that name (made on first use
    with the hook's configuration). ``Collection(name, include_regex, tensor_names,
    reduction_config, save_config, save_histogram)`` makes a detached one, as smdebug's
    ``Collection`` class, that ``hook.add_collection(collection)`` adds to a hook. Changes to a
    hook's collection apply to the tensors offered from then on. Assigning attributes of its
    ``save_config`` (``coll.save_config.end_step = 0``) changes the collection's configuration
    in every mode."""

    def __init__(self, name, include_regex=None, tensor_names=None, reduction_config=None, save_config=None,
                 save_histogram=True, *, _handle=None, _state=None):
        if _handle is None and not isinstance(name, str):  # Collection(handle), as smd 0.2 made them
            _handle, name = name, _smd.smd_collection_name(name)
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, not {type(name).__name__}")
        self._c = _handle
        self.name = name
        self._state = _state if _state is not None else _new_state(None, None)
        if include_regex is not None:
            self.include(include_regex)
        for t in tensor_names or []:
            self.add_tensor_name(t)
        if reduction_config is not None:
            self.reduction_config = reduction_config
        if save_config is not None:
            self.save_config = save_config
        if save_histogram is not True:
            self.save_histogram = save_histogram

    def __reduce__(self):
        # a hook's collection pickles (and deep-copies) as a detached one of the same
        # configuration, as smdebug's Collection pickles (the hook's handle cannot travel)
        return (Collection, (self.name, list(self.include_regex), set(self.tensor_names),
                             self.reduction_config, self.save_config, self.save_histogram))

    def include(self, regex):
        """Adds a regex (or a list of them) of tensor names."""
        for r in [regex] if isinstance(regex, str) else list(regex):
            if not isinstance(r, str):
                raise TypeError(f"include regexes must be str, not {type(r).__name__}")
            if self._c is not None:
                _smd.smd_collection_add_include_regex(self._c, r)
            if r not in self._state["include_regex"]:
                self._state["include_regex"].append(r)

    def add_tensor_name(self, name):
        """Adds one tensor name to the collection."""
        if not isinstance(name, str):
            raise TypeError(f"tensor names must be str, not {type(name).__name__}")
        if self._c is not None:
            _smd.smd_collection_add_tensor_name(self._c, name)
        self._state["tensor_names"].add(name)

    @property
    def tensor_names(self):
        """The tensor names of the collection (a set): the names added, and for a hook's
        collection the names of the tensors saved into it."""
        if self._c is None:
            return set(self._state["tensor_names"])
        return set(_smd.smd_collection_tensor_names(self._c))

    @tensor_names.setter
    def tensor_names(self, names):
        for n in [names] if isinstance(names, str) else names:
            self.add_tensor_name(n)

    @property
    def include_regex(self):
        """The include regexes added to it (a list). Assigning a list replaces them, and takes
        out the built-in pattern of a built-in collection, as in smdebug."""
        return list(self._state["include_regex"])

    @include_regex.setter
    def include_regex(self, regexes):
        self.clear_include_regex()
        self.include(regexes)

    def clear_include_regex(self):
        """Takes every include regex out of the collection, its built-in one too (tensor names
        added to it, and those it already holds, stay)."""
        if self._c is not None:
            _smd.smd_collection_clear_include_regex(self._c)
        self._state["include_regex"] = []

    @property
    def save_config(self):
        """The collection's SaveConfig: assign one, or assign attributes of this one
        (``save_interval``, ``start_step``, ``end_step``, ``save_steps``) to change every mode."""
        cfg = self._state["save_config"]
        if cfg is None:
            cfg = self._state["save_config"] = SaveConfig()
        if self._apply_save_config not in cfg._listeners:
            cfg._listeners.append(self._apply_save_config)
        return cfg

    @save_config.setter
    def save_config(self, cfg):
        # as smdebug's: a SaveConfig, a dict {mode: SaveConfigMode}, or None (the hook's)
        if isinstance(cfg, dict):
            cfg = SaveConfig(mode_save_configs=cfg)
        elif cfg is not None and not isinstance(cfg, SaveConfig):
            raise SMDebugTypeError(f"save_config must be a SaveConfig, a dict {{mode: SaveConfigMode}} "
                                   f"or None, not {type(cfg).__name__}")
        self._state["save_config"] = cfg
        self._apply_save_config(cfg)

    def _apply_save_config(self, cfg):
        if self._c is not None and self._state["save_config"] is cfg:
            _smd.smd_collection_set_save_config(self._c, None if cfg is None else cfg._to_c())

    @property
    def reduction_config(self):
        """The collection's ReductionConfig (assign a new one to change it)."""
        cfg = self._state["reduction_config"]
        return cfg if cfg is not None else ReductionConfig()

    @reduction_config.setter
    def reduction_config(self, cfg):
        if not isinstance(cfg, ReductionConfig):
            raise TypeError(f"reduction_config must be a ReductionConfig, not {type(cfg).__name__}")
        self._state["reduction_config"] = cfg
        if self._c is not None:
            _smd.smd_collection_set_reduction_config(self._c, cfg._to_c())

    @property
    def save_histogram(self):
        """Whether TensorBoard histograms are exported for the collection's tensors."""
        return self._state["save_histogram"]

    @save_histogram.setter
    def save_histogram(self, on):
        self._state["save_histogram"] = bool(on)
        if self._c is not None:
            _smd.smd_collection_set_save_histogram(self._c, bool(on))

    def _attach(self, handle, state):
        """Makes a detached collection the hook's (handle, state), applying its settings."""
        mine = self._state
        self._c, self._state = handle, state
        self.include(mine["include_regex"])
        for n in mine["tensor_names"]:
            self.add_tensor_name(n)
        if mine["save_config"] is not None:
            self.save_config = mine["save_config"]
        if mine["reduction_config"] is not None:
            self.reduction_config = mine["reduction_config"]
        if not mine["save_histogram"]:
            self.save_histogram = False

    def __repr__(self):
        return f"<smd.Collection {self.name}>"


def _detached(kind):
    from smd._framework import DetachedHook
    return DetachedHook(kind)


def _new_state(save_config, reduction_config):
    return {"include_regex": [], "tensor_names": set(), "save_config": save_config,
            "reduction_config": reduction_config, "save_histogram": True}


# DLPack device types (DLDeviceType) by name, for messages.
_DL_DEVICES = {1: "cpu", 2: "cuda", 3: "cuda_host", 4: "opencl", 7: "vulkan", 8: "metal",
               9: "vpi", 10: "rocm", 11: "rocm_host", 12: "ext_dev", 13: "cuda_managed",
               14: "oneapi", 15: "webgpu", 16: "hexagon", 17: "maia"}
_COPY_ERRORS = (TypeError, BufferError, NotImplementedError, ValueError, RuntimeError)


def _sagemaker_tensorboard_dir():
    """The LocalPath of SageMaker's TensorBoard configuration file ($TENSORBOARD_CONFIG_FILE_PATH,
    else /opt/ml/input/config/tensorboardoutputconfig.json), None when there is no such file or it
    names none. The C library has read and checked the file when the hook was made."""
    import json
    path = os.environ.get("TENSORBOARD_CONFIG_FILE_PATH",
                          "/opt/ml/input/config/tensorboardoutputconfig.json")
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as f:
        local = json.load(f).get("LocalPath")
    return local if isinstance(local, str) and local else None


def _resolved(value):
    """A torch tensor as its plain value: detached (one that requires grad exports only
    detached), its conjugate and negative bits (flags DLPack and numpy do not carry) resolved
    (one copy each when set). Anything else as it is."""
    detach = getattr(value, "detach", None)
    if callable(detach) and getattr(value, "requires_grad", False):
        value = detach()
    for lazy in ("is_conj", "is_neg"):
        flagged = getattr(value, lazy, None)
        if callable(flagged) and flagged():
            value = getattr(value, "resolve_" + lazy[3:])()
    return value


def _dlpack_on_host(name, value):
    """(a DLPack producer on the CPU, or None; a DLPack capsule of a host copy, or None) for a
    DLPack producer: the producer itself when it is on the CPU; a tensor on another device is
    copied to the host by its producer (``__dlpack__(dl_device=(1, 0), copy=True)``), else by
    the framework's own copy (``cpu()``), else refused with a TypeError naming the device."""
    value = _resolved(value)
    dev = value.__dlpack_device__() if hasattr(value, "__dlpack_device__") else (1, 0)
    kind, index = int(dev[0]), int(dev[1])
    if kind == 1:
        return value, None
    where = f"{_DL_DEVICES.get(kind, f'device type {kind}')}:{index}"
    try:
        return None, value.__dlpack__(dl_device=(1, 0), copy=True)
    except _COPY_ERRORS:
        pass
    cpu = getattr(value, "cpu", None)
    if callable(cpu):
        try:
            host = cpu()
        except _COPY_ERRORS as e:
            raise TypeError(f"tensor {name}: it is on {where} and could not be copied to the host: {e}") from e
        if hasattr(host, "__dlpack__"):
            return _dlpack_on_host(name, host)
    raise TypeError(f"tensor {name}: it is on {where}, and its producer can copy it to the host neither "
                    "through __dlpack__(dl_device=(1, 0), copy=True) nor with cpu(): copy it to host "
                    "memory first")


def _as_array(value):
    """A C-contiguous little-endian numpy array of `value` without a copy when it already is one
    (numpy arrays, buffer-protocol objects, DLPack producers); non-contiguous or big-endian
    arrays are copied. String arrays (numpy str/bytes, or object arrays of str/bytes) are
    returned as they are, for _string_items."""
    if hasattr(value, "__dlpack__") and not isinstance(value, np.ndarray):
        value = np.from_dlpack(value)
    a = np.asarray(value)
    if a.dtype.kind in "USO":
        return a
    if a.dtype.byteorder == ">":
        a = a.astype(a.dtype.newbyteorder("<"))
    # np.ascontiguousarray would turn a 0-d array into shape (1,); a 0-d array is contiguous.
    return a if a.flags.c_contiguous else np.ascontiguousarray(a)


def _string_items(name, a):
    """The UTF-8 bytes of each element of a 1-D string array (smdebug saves and reads string
    tensors as 1-D only)."""
    if a.ndim != 1:
        raise SMDebugValueError(f"tensor {name}: string tensors must be 1-D (smdebug reads only 1-D "
                                f"string tensors), not of shape {a.shape}")
    items = []
    for x in a.tolist():
        if isinstance(x, str):
            items.append(x.encode("utf-8", "surrogateescape"))
        elif isinstance(x, bytes):
            items.append(x)
        else:
            raise TypeError(f"tensor {name}: an object array must hold only str or bytes, not {type(x).__name__}")
    return items


def _scalar_array(value):
    """numpy's view of a scalar; a framework's tensor (a torch loss that requires grad, on a GPU,
    in bfloat16) is detached and copied to the host first, bfloat16 read as float32."""
    if isinstance(value, np.ndarray) or not hasattr(value, "__dlpack__"):
        return np.asarray(value)
    value = _resolved(value)
    cpu = getattr(value, "cpu", None)
    if callable(cpu):
        value = cpu()
    try:
        return np.asarray(value)
    except (TypeError, RuntimeError):  # a dtype numpy lacks (torch.bfloat16)
        widen = getattr(value, "float", None)
        if not callable(widen):
            raise
        return np.asarray(widen())


_SCALAR_DTYPES = {"float64", "float32", "float16", "int64", "int32", "int16", "int8", "uint8", "uint16",
                  "uint32", "uint64", "bool", "bfloat16", "complex64", "complex128"}


def _set_smd_options(o, fsync, max_pending_steps, memory_budget, worker, num_workers, storage):
    _smd.smd_hook_options_set_fsync(o, bool(fsync))
    if max_pending_steps is not None:
        _smd.smd_hook_options_set_max_pending_steps(o, _int("max_pending_steps", max_pending_steps))
    if memory_budget is not None:
        if _int("memory_budget", memory_budget) <= 0:
            raise SMDebugValueError(f"memory_budget must be > 0 bytes, not {memory_budget}")
        _smd.smd_hook_options_set_memory_budget(o, memory_budget)
    if worker is not None:
        _smd.smd_hook_options_set_worker(o, _str("worker", worker))
    if num_workers is not None:
        _smd.smd_hook_options_set_num_workers(o, _int("num_workers", num_workers))
    if storage is not None:
        _smd.smd_hook_options_set_storage(o, storage)


def _int(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    return int(value)


def _str(name, value):
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, not {type(value).__name__}")
    return value


class Hook:
    """smdebug's hook without a framework. Call ``begin_step()`` at each step boundary (the
    first call starts step 0), ``save_tensor``/``save_scalar`` during a step, ``close()`` at
    the end (or use the hook as a context manager). A hook that is dropped closes itself."""

    def __init__(self, out_dir, export_tensorboard=False, tensorboard_dir=None, dry_run=False,
                 reduction_config=None, save_config=None, include_regex=None,
                 include_collections=None, save_all=False, include_workers="one", *, fsync=False,
                 max_pending_steps=None, memory_budget=None, worker=None, num_workers=None,
                 s3_endpoint=None, s3_region=None, s3_profile=None, s3_addressing_style=None,
                 s3_ca_bundle=None, s3_credentials=None, s3_max_attempts=None, s3_backoff_ms=None,
                 s3_stall_timeout_ms=None, _handle=None):
        """The arguments of seed 002 (smdebug's hook constructor), then smd's keyword-only ones:

        - ``fsync``: make every file durable (fsync before its rename) before a step shows in
          the index, so that saved steps survive an operating-system crash (default False, as
          smdebug);
        - ``max_pending_steps``: the most steps the writer may fall behind training (None: no
          bound; 0: each step is written before the next begins);
        - ``memory_budget``: bytes of tensor data held waiting for the writer (default 256 MiB);
        - ``worker``, ``num_workers``: this process's worker name and the number of workers
          (default: from the environment, as smdebug);
        - ``s3_endpoint`` ("http[s]://host[:port]"), ``s3_region``, ``s3_profile``,
          ``s3_addressing_style`` ("path" or "virtual"), ``s3_ca_bundle`` (a PEM file),
          ``s3_credentials`` (a tuple (access_key_id, secret_access_key[, session_token])),
          ``s3_max_attempts`` (attempts per request), ``s3_backoff_ms`` (the base of the backoff
          between attempts), ``s3_stall_timeout_ms`` (how long a transfer may stall before it
          is retried): S3 settings for an ``s3://bucket/prefix`` out_dir and TensorBoard folder;
          unset ones (None, or 0 for a retry setting) come from the AWS configuration chain
          (AWS_* variables, ~/.aws) or smd's defaults. A bad one raises SMDebugValueError
          naming it."""
        if save_config is not None:  # what smdebug's SaveConfig.parse takes
            save_config = SaveConfig.parse(save_config)
        self._save_config, self._reduction_config, self._coll_state = save_config, reduction_config, {}
        self._set_attributes(out_dir, export_tensorboard, tensorboard_dir, include_collections, include_regex)
        if _handle is not None:
            self._hook = _handle
            return
        if not isinstance(out_dir, str):
            raise TypeError(f"out_dir must be a str, not {type(out_dir).__name__}")
        storage = storage_options(s3_endpoint=s3_endpoint, s3_region=s3_region, s3_profile=s3_profile,
                                  s3_addressing_style=s3_addressing_style, s3_ca_bundle=s3_ca_bundle,
                                  s3_credentials=s3_credentials, s3_max_attempts=s3_max_attempts,
                                  s3_backoff_ms=s3_backoff_ms, s3_stall_timeout_ms=s3_stall_timeout_ms)
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
        _set_smd_options(o, fsync=fsync, max_pending_steps=max_pending_steps, memory_budget=memory_budget,
                         worker=worker, num_workers=num_workers, storage=storage)
        self._hook = _smd.smd_hook_create(out_dir, o)

    # The collections saved whatever include_collections says (smdebug's default_include_collections
    # of a framework-free hook: losses); a framework hook may name more.
    _DEFAULT_INCLUDE_COLLECTIONS = (CollectionKeys.LOSSES,)

    def _set_attributes(self, out_dir, export_tensorboard, tensorboard_dir, include_collections, include_regex):
        """smdebug's hook attributes: out_dir ("~" expanded for a local folder), tensorboard_dir
        (None without TensorBoard export; the given folder; or <out_dir>/tensorboard when only
        export_tensorboard is set) and include_collections (the names given, or the defaults,
        plus the default ones, plus "default" when include_regex is given)."""
        local = isinstance(out_dir, str) and not out_dir.startswith("s3://")
        self.out_dir = os.path.expanduser(out_dir) if local else out_dir
        if isinstance(tensorboard_dir, str) and tensorboard_dir:
            tb = tensorboard_dir if tensorboard_dir.startswith("s3://") else os.path.expanduser(tensorboard_dir)
        elif export_tensorboard and self.out_dir is not None:
            tb = os.path.join(self.out_dir, "tensorboard")
        else:
            tb = None
        self.tensorboard_dir = tb
        given = [include_collections] if isinstance(include_collections, str) else list(include_collections or [])
        names = given if include_collections is not None else []
        names = list(dict.fromkeys(names + list(self._DEFAULT_INCLUDE_COLLECTIONS)))
        if include_regex is not None and CollectionKeys.DEFAULT not in names:
            names.append(CollectionKeys.DEFAULT)
        self.include_collections = names

    @classmethod
    def create_from_json_file(cls, json_file_path=None):
        """A hook from smdebug's JSON hook configuration (None: $SMDEBUG_CONFIG_FILE_PATH, else
        /opt/ml/input/config/debughookconfig.json)."""
        o = _smd.smd_hook_options_create()
        cls._framework_options(o)
        hook = cls(None, _handle=_smd.smd_hook_create_from_json_file(json_file_path, o))
        hook._attributes_from_json(json_file_path)
        return hook

    def _attributes_from_json(self, json_file_path):
        """out_dir, tensorboard_dir and include_collections as the JSON configuration gives them
        (the C library has read and checked the file already)."""
        import json
        path = json_file_path or os.environ.get("SMDEBUG_CONFIG_FILE_PATH") or \
            "/opt/ml/input/config/debughookconfig.json"
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        params = doc.get("HookParameters") or {}
        colls = [c["CollectionName"] for c in doc.get("CollectionConfigurations") or []]
        export = str(params.get("export_tensorboard", False)).lower() == "true"
        tensorboard_dir = params.get("tensorboard_dir")
        if "TRAINING_JOB_NAME" in os.environ:
            # SageMaker: the TensorBoard configuration file's LocalPath, when the file exists,
            # else no export (what the C library has done with this hook)
            tensorboard_dir = _sagemaker_tensorboard_dir()
            export = tensorboard_dir is not None
        regex = params.get("include_regex")
        self._set_attributes(doc.get("LocalPath", "/opt/ml/output/tensors"), export,
                             tensorboard_dir, list(dict.fromkeys(colls)), regex)

    @classmethod
    def _framework_options(cls, options):
        """Framework hooks set what their framework knows here (e.g. the worker name of an
        initialized process group); the framework-free hook sets nothing."""

    def __reduce_ex__(self, protocol):
        # Pickled or deep-copied (an object holding the hook: a trainer, a callback list), the
        # hook travels as a stand-in that saves nothing; its writer cannot travel (smdebug's
        # hook pickles as an empty one too). This hook is unchanged.
        return (_detached, (type(self).__module__ + "." + type(self).__name__,))

    # -- steps and modes ---------------------------------------------------------------------
    def set_mode(self, mode):
        """Sets the current mode (smd.modes.TRAIN, EVAL, PREDICT or GLOBAL). Call it before
        ``begin_step``: a mode used for the first time starts at mode step -1."""
        seen = self.__dict__.setdefault("_modes_seen", {})  # (mode_steps: every mode set so far)
        left = self.mode
        if left is not ModeKeys.GLOBAL:
            seen[left] = _smd.smd_hook_mode_step(self._hook)
        _smd.smd_hook_set_mode(self._hook, _mode_value(mode))
        new = self.mode
        if new is not ModeKeys.GLOBAL:
            seen.setdefault(new, _smd.smd_hook_mode_step(self._hook))

    def begin_step(self):
        """Ends the current step and starts the next (the first call starts step 0)."""
        _smd.smd_hook_begin_step(self._hook)

    def end_step(self):
        """Ends the current step without beginning another: its files are completed (``flush``
        waits for them), so that a trial sees the step while the hook stays open. Saves made
        before the next ``begin_step`` are kept for the next step (``close`` begins one for
        them). Nothing to do when no step is open."""
        _smd.smd_hook_end_step(self._hook)

    def make_due(self, collection_name):
        """Saves an included collection for the rest of the current step whatever its save
        configuration says: the tensors saved into it until the step ends are written (smdebug's
        Keras hook writes an epoch's logs this way). The next ``begin_step`` or ``end_step`` ends
        it. Raises NotFound for an unknown collection, InvalidState when no step is open."""
        _smd.smd_hook_make_due(self._hook, collection_name)

    @property
    def step(self):
        """The current global step (-1 before the first begin_step)."""
        return _smd.smd_hook_global_step(self._hook)

    @property
    def mode(self):
        """The current mode (a ModeKeys)."""
        return ModeKeys(_smd.smd_hook_mode(self._hook))

    @property
    def mode_steps(self):
        """{mode: its current step} for GLOBAL and every mode a step has begun in (as smdebug's
        hook keeps them)."""
        steps = {ModeKeys.GLOBAL: self.step}
        steps.update(self.__dict__.get("_modes_seen", {}))
        mode = self.mode
        if mode is not ModeKeys.GLOBAL:
            steps[mode] = _smd.smd_hook_mode_step(self._hook)
        return steps

    # -- saving ------------------------------------------------------------------------------
    def save_tensor(self, tensor_name, tensor_value, collections_to_write=CollectionKeys.DEFAULT):
        """Offers a tensor for the current step; it is saved if a collection it belongs to is
        due. ``tensor_value``: a numpy array, a buffer-protocol object or a DLPack producer;
        C-contiguous arrays are passed without a copy on the Python side (smd copies what it
        saves), others are made contiguous first (one copy). float16 and bfloat16
        (``ml_dtypes.bfloat16``) are saved as themselves. A 1-D array of str or bytes (numpy
        ``U``/``S`` dtypes, or an object array of str/bytes) is saved as smdebug saves string
        tensors (DT_STRING, UTF-8): its value only, without reductions. A DLPack producer on
        another device (a GPU) is copied to the host by the producer
        (``__dlpack__(dl_device=(1, 0), copy=True)``) or the framework (``cpu()``), else
        refused with a TypeError naming the device; dtypes numpy lacks (a torch bfloat16
        tensor) go to smd's DLPack path and are saved as themselves. Before the first
        ``begin_step`` the tensor is copied and kept, then offered to step 0 (smdebug writes it
        in its next step)."""
        if not isinstance(tensor_name, str):
            raise TypeError(f"tensor_name must be a str, not {type(tensor_name).__name__}")
        colls = [collections_to_write] if isinstance(collections_to_write, str) else list(collections_to_write)
        if hasattr(tensor_value, "__dlpack__") and not isinstance(tensor_value, np.ndarray):
            host, capsule = _dlpack_on_host(tensor_name, tensor_value)
            if capsule is None:
                try:
                    tensor_value = np.from_dlpack(host)
                except (BufferError, RuntimeError, TypeError):
                    # A dtype numpy does not know (bfloat16; numpy 1.x raises RuntimeError, 2.x
                    # BufferError): smd's DLPack path takes it as it is.
                    contiguous = getattr(host, "is_contiguous", None)
                    if callable(contiguous) and not contiguous():
                        host = host.contiguous()
                    capsule = host.__dlpack__()
            if capsule is not None:
                _smd.smd_py_hook_save_dlpack_capsule(self._hook, tensor_name, capsule, colls)
                return
        a = _as_array(tensor_value)
        if a.dtype.kind == "O" and not all(isinstance(x, (str, bytes)) for x in a.reshape(-1).tolist()):
            raise TypeError(f"tensor {tensor_name}: a {type(tensor_value).__name__} is neither "
                                    "numbers nor text (str or bytes) that smd can save")
        if a.dtype.kind in "USO":
            _smd.smd_py_hook_save_strings(self._hook, tensor_name, _string_items(tensor_name, a), colls)
            return
        dtype = _smd.smd_dtype_from_name(a.dtype.name)
        _smd.smd_hook_save_tensor(self._hook, tensor_name, dtype, list(a.shape), a.reshape(-1).view(np.uint8), colls)

    def save_scalar(self, name, value, sm_metric=False, timestamp=None):
        """Saves a scalar as the tensor "scalar/<name>" (shape [1]) in the current step, whatever
        the save configuration says. As smdebug, the value keeps its type: a Python float is
        float64, an int int64, a bool bool, a numpy scalar or 1-element array its own dtype.
        ``timestamp`` (seconds since the epoch) is the record's wall time (None or 0: the time
        of the call). Before the first ``begin_step`` the scalar is kept and written into step
        0. ``sm_metric`` (SageMaker Metrics) is accepted and has no effect outside SageMaker.
        A value with more than one element raises SMDebugTypeError."""
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, not {type(name).__name__}")
        if isinstance(value, (str, bytes)):
            raise SMDebugTypeError(f"scalar/{name} has non numeric value of type: {type(value)}")
        a = _scalar_array(value)
        if a.size != 1:
            raise SMDebugTypeError(f"scalar/{name} has non scalar value of type: {type(value)}")
        if a.dtype.name not in _SCALAR_DTYPES:
            raise SMDebugTypeError(f"scalar/{name} has a value of unsupported type: {a.dtype}")
        if timestamp is not None and (isinstance(timestamp, bool) or not isinstance(timestamp, (int, float, np.number))):
            raise TypeError(f"timestamp must be a number of seconds or None, not {type(timestamp).__name__}")
        a = np.ascontiguousarray(a.reshape(1).astype(a.dtype.newbyteorder("<")))
        _smd.smd_py_hook_save_scalar_typed(self._hook, name, _smd.smd_dtype_from_name(a.dtype.name),
                                           a.view(np.uint8), float(timestamp or 0))

    def stop_requested(self):
        """Whether a rule asked this training job to stop (smdebug's StopTraining action, done
        locally: the rule writes the signal into this hook's out_dir). Poll it once per step;
        when True, finish the step and close the hook."""
        return _smd.smd_hook_stop_requested(self._hook)

    # -- collections -------------------------------------------------------------------------
    def get_collection(self, name, create=True):
        """The hook's collection ``name``, created with the hook's configuration if missing
        (``create=False``: KeyError instead)."""
        if not create and name not in _smd.smd_hook_collection_names(self._hook):
            raise KeyError(f"the hook has no collection {name!r}")
        return Collection(name, _handle=_smd.smd_hook_get_collection(self._hook, name), _state=self._state_of(name))

    def _state_of(self, name):
        state = self._coll_state.get(name)
        if state is None:
            cfg = self._save_config
            state = self._coll_state[name] = _new_state(None if cfg is None else cfg._copy(), self._reduction_config)
        return state

    def add_collection(self, collection):
        """Adds a collection made with ``Collection(name, ...)`` to the hook, replacing the hook's
        collection of that name as smdebug does: its regexes (a built-in collection's pattern
        too) and configurations give way to the new collection's, and the object becomes that
        collection. (Tensor names added to the old one before stay: the C collection keeps
        them.)"""
        if not isinstance(collection, Collection):
            raise SMDebugTypeError(f"collection must be an instance of Collection class. value of type "
                                   f"{type(collection)} is not supported")
        state = self._state_of(collection.name)
        if collection._state is state:
            return  # already this hook's collection (added before, or from get_collection): as is
        handle = _smd.smd_hook_get_collection(self._hook, collection.name)
        _smd.smd_collection_clear_include_regex(handle)
        _smd.smd_collection_set_save_config(handle, None)  # the hook's, until the new one's
        _smd.smd_collection_set_reduction_config(handle, None)
        _smd.smd_collection_set_save_histogram(handle, True)
        cfg = self._save_config
        names = state["tensor_names"]
        state.update(_new_state(None if cfg is None else cfg._copy(), self._reduction_config))
        state["tensor_names"] = names
        collection._attach(handle, state)

    def get_collections(self):
        """Every collection of the hook: a dict name -> Collection."""
        return {n: self.get_collection(n) for n in _smd.smd_hook_collection_names(self._hook)}

    # -- end ---------------------------------------------------------------------------------
    def flush(self):
        """Waits until everything offered so far is written to the current step's file; raises
        the first error the writer met."""
        _smd.smd_hook_flush(self._hook)

    def close(self):
        """Writes everything queued, the collections file and training_job_end.ts; raises the
        first error the writer met. A second call does nothing."""
        _smd.smd_hook_close(self._hook)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

__all__ = ["Collection", "Hook"]
