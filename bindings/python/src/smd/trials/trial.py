"""The Trial: smdebug's trial API over smd's C library."""
import os
from enum import Enum

from smd import smdc as _smd
from smd.exceptions import FileNotFoundSMDebugError, SMDebugError, SMDebugValueError
from smd.modes import GLOBAL, ModeKeys, _mode_value
from smd.reduction_config import ReductionConfig
from smd.save_config import SaveConfig, SaveConfigMode
from smd.tensor import Tensor, _int
from smd._storage import storage_options


class StepState(Enum):
    """Whether a trial has passed a step (smdebug's StepState, same values)."""

    UNAVAILABLE = 0
    AVAILABLE = 1
    NOT_YET_AVAILABLE = 2


class Collection:
    """A collection as the trial's collections file stores it (read-only)."""

    def __init__(self, info):
        self.name = _smd.smd_collection_info_name(info)
        self.include_regex = _smd.smd_collection_info_include_regex(info)
        self.tensor_names = set(_smd.smd_collection_info_tensor_names(info))
        reductions = _smd.smd_collection_info_reductions(info)  # None: no reduction_config
        self.reductions = reductions.split(",") if reductions else []
        self.save_raw_tensor = _smd.smd_collection_info_save_raw_tensor(info)
        self.save_shape = _smd.smd_collection_info_save_shape(info)
        self.save_histogram = _smd.smd_collection_info_save_histogram(info)
        self._reduction_config = None if reductions is None else {
            "reductions": reductions, "save_raw_tensor": self.save_raw_tensor,
            "save_shape": self.save_shape}
        self._save_config = _save_config_of(_smd.smd_collection_info_save_config(info))

    @property
    def reduction_config(self):
        """The collection's ReductionConfig as smdebug's ``ReductionConfig.from_dict`` makes it
        of the file's "reduction_config" (None when that is null or missing). Made when first
        read: a reduction name smd does not know raises ValueError then."""
        if isinstance(self._reduction_config, dict):
            self._reduction_config = ReductionConfig.from_dict(self._reduction_config)
        return self._reduction_config

    @property
    def save_config(self):
        """The collection's SaveConfig, one SaveConfigMode per mode (None for a mode the file
        leaves null or missing), as smdebug's ``SaveConfig.from_dict`` makes it of the file's
        "save_config" (None when that is null or missing)."""
        return self._save_config

    def __repr__(self):
        return f"<Collection: name={self.name}, include_regex={self.include_regex}, tensor_names={sorted(self.tensor_names)}>"


def _save_config_of(config):
    """A SaveConfig of an smd_save_config (None for None), its unset modes None."""
    if config is None:
        return None
    modes = {}
    for mode in (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT, ModeKeys.GLOBAL):
        is_set, interval, start, end, steps = _smd.smd_save_config_settings(config, mode.value)
        modes[mode] = SaveConfigMode(interval, start, None if end < 0 else end, steps) if is_set else None
    out = SaveConfig()
    out.mode_save_configs = modes
    return out


def _check_int(name, value):
    return value if type(value) is int else _int(name, value)


def _check_str(name, value):
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, not {type(value).__name__}")
    return value


class Trial:
    """A trial: the folder a training job's hook writes. Made by :func:`create_trial`."""

    def __init__(self, path, name=None, range_steps=None, auto_refresh=True, cache_bytes=None, *,
                 s3_endpoint=None, s3_region=None, s3_profile=None, s3_addressing_style=None,
                 s3_ca_bundle=None, s3_credentials=None, s3_max_attempts=None, s3_backoff_ms=None,
                 s3_stall_timeout_ms=None):
        """Opens the trial in folder ``path`` or under ``s3://bucket/prefix``; see
        :func:`create_trial` for the arguments."""
        path = _check_str("path", path).strip()  # as smdebug: surrounding whitespace is not part of it
        options = _smd.smd_trial_options_create()
        if range_steps is not None:
            begin, end = range_steps
            _smd.smd_trial_options_set_range_steps(options, -1 if begin is None else _check_int("range_steps[0]", begin),
                                                   -1 if end is None else _check_int("range_steps[1]", end))
        _smd.smd_trial_options_set_auto_refresh(options, bool(auto_refresh))
        if cache_bytes is not None:
            if _check_int("cache_bytes", cache_bytes) < 0:
                raise SMDebugValueError(f"cache_bytes must be >= 0, not {cache_bytes}")
            _smd.smd_trial_options_set_cache_bytes(options, cache_bytes)
        storage = storage_options(s3_endpoint=s3_endpoint, s3_region=s3_region, s3_profile=s3_profile,
                                  s3_addressing_style=s3_addressing_style, s3_ca_bundle=s3_ca_bundle,
                                  s3_credentials=s3_credentials, s3_max_attempts=s3_max_attempts,
                                  s3_backoff_ms=s3_backoff_ms, s3_stall_timeout_ms=s3_stall_timeout_ms)
        if storage is not None:
            _smd.smd_trial_options_set_storage(options, storage)
        self._trial = _smd.smd_trial_open(path, options)
        self.path = _smd.smd_trial_path(self._trial)
        self.name = name if name is not None else path.strip().rstrip("/").split("/")[-1]
        self._user_collections = {}  # collections a script made with collection(name)

    def __repr__(self):
        return f"<smd.trials.Trial: name={self.name}, path={self.path}>"

    # -- tensors --------------------------------------------------------------------------------
    def tensor_names(self, show_prefixed_tensors=False, *, step=None, mode=GLOBAL, regex=None, collection=None):
        """Sorted names of the tensors saved (at ``step`` of ``mode``; matching ``regex``, a str or a
        list of str; or members of ``collection``, a name or a Collection)."""
        if regex is not None and collection is not None:
            raise SMDebugValueError("Only one of `regex` or `collection` can be passed to this method")
        f = _smd.smd_tensor_filter_create()
        _smd.smd_tensor_filter_set_mode(f, _mode_value(mode))
        if step is not None:
            _smd.smd_tensor_filter_set_step(f, _check_int("step", step))
        if regex is not None:
            for r in [regex] if isinstance(regex, str) else list(regex):
                _smd.smd_tensor_filter_add_include_regex(f, _check_str("regex", r))
        if collection is not None:
            user = self._user_collection(collection)
            if user is not None:
                return self._user_collection_names(user, step, mode)
            name = collection.name if isinstance(collection, Collection) else collection
            _smd.smd_tensor_filter_set_collection(f, _check_str("collection", name))
        return _smd.smd_trial_tensor_names(self._trial, f)

    def _user_collection(self, collection):
        """The script-made collection that ``collection`` (a name or a collection) names, else None."""
        from smd.hook import Collection as HookCollection
        if isinstance(collection, HookCollection):
            return collection
        if isinstance(collection, str):
            return self._user_collections.get(collection)
        return None

    def _user_collection_names(self, coll, step, mode):
        """smdebug's answer for a collection made by the script: its tensor names and the names
        its regexes match, among the tensors saved (at ``step`` of ``mode``)."""
        names = set(self.tensor_names(step=step, mode=mode))
        chosen = names & set(coll.tensor_names)
        if coll.include_regex:
            chosen.update(self.tensor_names(step=step, mode=mode, regex=coll.include_regex))
        return sorted(chosen)

    def tensors(self, *args, **kwargs):
        """The same as :meth:`tensor_names` (the name smdebug's rule example in its analysis docs
        uses: ``self.base_trial.tensors(collection='gradients')``)."""
        return self.tensor_names(*args, **kwargs)

    def tensor(self, tname):
        """The Tensor of this name; TensorUnavailable if the trial has none."""
        return Tensor(_smd.smd_trial_tensor(self._trial, _check_str("tname", tname)), self)

    def has_tensor(self, tname):
        """Whether the trial has a tensor of this name."""
        return _smd.smd_trial_has_tensor(self._trial, _check_str("tname", tname))

    # -- steps, modes, workers -------------------------------------------------------------------
    def steps(self, mode=GLOBAL, show_incomplete_steps=False):
        """The steps saved in ``mode`` (global steps for GLOBAL), ascending."""
        return _smd.smd_trial_steps(self._trial, _mode_value(mode), bool(show_incomplete_steps))

    def modes(self):
        """The modes other than GLOBAL in which steps were saved (a ``dict_keys`` view, as
        smdebug returns)."""
        return {ModeKeys(m): None for m in _smd.smd_trial_modes(self._trial)}.keys()

    def mode(self, global_step):
        """The mode (a ModeKeys) of a global step; None for a step the trial does not know (as
        smdebug answers)."""
        m = self._known(_smd.smd_trial_mode, _check_int("global_step", global_step))
        return None if m is None else ModeKeys(m)

    def mode_step(self, global_step):
        """The mode step of a global step; None for a step the trial does not know."""
        return self._known(_smd.smd_trial_mode_step, _check_int("global_step", global_step))

    def mode_modestep(self, global_step):
        """(mode, mode step) of a global step; (None, None) for a step the trial does not know."""
        return self.mode(global_step), self.mode_step(global_step)

    def global_step(self, mode, mode_step):
        """The global step of ``mode_step`` in ``mode``; None when no step of ``mode`` has that
        mode step (in GLOBAL, the mode step is the global step)."""
        return self._known(_smd.smd_trial_global_step, _check_int("mode_step", mode_step), _mode_value(mode))

    def _known(self, query, *args):
        try:
            return query(self._trial, *args)
        except FileNotFoundSMDebugError:
            return None

    def workers(self):
        """The worker names, sorted."""
        return _smd.smd_trial_workers(self._trial)

    def has_passed_step(self, step, mode=GLOBAL):
        """Whether the step is complete (StepState.AVAILABLE), may still come
        (NOT_YET_AVAILABLE) or never will (UNAVAILABLE)."""
        return StepState(_smd.smd_trial_has_passed_step(self._trial, _check_int("step", step), _mode_value(mode)))

    def wait_for_steps(self, required_steps, mode=GLOBAL, timeout_ms=-1):
        """Waits until every step in ``required_steps`` is available (StepUnavailable if one was
        skipped, NoMoreData if the job ended before it, StepNotYetAvailable after ``timeout_ms``)."""
        steps = [_check_int("required_steps[]", s) for s in required_steps]
        _smd.smd_trial_wait_for_steps(self._trial, steps, _mode_value(mode), _check_int("timeout_ms", timeout_ms))

    # -- collections, refresh --------------------------------------------------------------------
    def collections(self):
        """The collections of the trial: a dict name -> Collection (those of the collections
        file, then those the script made with :meth:`collection`)."""
        out = {n: self.collection(n) for n in _smd.smd_trial_collection_names(self._trial)}
        out.update(self._user_collections)
        return out

    def collection(self, coll_name):
        """The collection ``coll_name`` of the trial's collections file. For a name the file does
        not have, as smdebug: a new empty collection (an :class:`smd.core.collection.Collection`),
        kept by the trial and returned again for that name, that the script fills (``include``,
        ``add_tensor_name``) and queries with ``tensor_names(collection=...)``."""
        _check_str("coll_name", coll_name)
        user = self._user_collections.get(coll_name)
        if user is not None:
            return user
        if coll_name in _smd.smd_trial_collection_names(self._trial):
            return Collection(_smd.smd_trial_collection(self._trial, coll_name))
        from smd.hook import Collection as HookCollection
        user = self._user_collections[coll_name] = HookCollection(coll_name)
        return user

    @property
    def auto_refresh(self):
        """Whether queries made on the calling thread load new data by themselves: the innermost
        ``no_refresh``/``refresh`` block of this trial open on this thread decides, else the
        ``auto_refresh`` the trial was opened with (fixed for its life). Read-only."""
        return _smd.smd_trial_auto_refresh(self._trial)

    def refresh_data(self):
        """Loads the steps and tensors written since the last refresh."""
        _smd.smd_trial_refresh(self._trial)

    def has_ended(self):
        """Whether the training job has ended (training_job_end.ts is present)."""
        return _smd.smd_trial_has_ended(self._trial)

    @property
    def loaded_all_steps(self):
        """smdebug's attribute: True once the job has ended and every step it wrote is loaded.
        Asking checks for the end of the job; when it has ended, the steps written before it are
        loaded (unless automatic refresh is off on the calling thread, as inside ``no_refresh``:
        then only a refresh made earlier counts, the one at open included). Reading it never
        raises: a file the refresh could not use is reported by the next query (and in
        ``warnings()``), as smdebug's attribute never raises either."""
        if not _smd.smd_trial_loaded_all_steps(self._trial) and self.auto_refresh:
            try:
                if self.has_ended():
                    self.refresh_data()  # the end marker was seen first: this loads every step
            except SMDebugError:
                pass
        return _smd.smd_trial_loaded_all_steps(self._trial)

    @property
    def num_workers(self):
        """The number of workers of the training job."""
        return _smd.smd_trial_num_workers(self._trial)

    @property
    def last_complete_step(self):
        """smdebug's attribute: the last global step every worker has written (-1 before any);
        once the job has ended and everything is loaded, the last step. When more steps than the
        incomplete-step window (SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW, 1000) are incomplete, it
        moves forward by half the window, as smdebug's does."""
        return _smd.smd_trial_last_complete_step(self._trial)

    @property
    def last_index_token(self):
        """smdebug's attribute: the index file after which the next refresh lists new ones (the
        last complete step's file of the last worker), as a path under the trial's folder, or on
        S3 the object's key; None before any step is complete."""
        rel = _smd.smd_trial_index_cursor(self._trial)
        if rel is None:
            return None
        if self.path.startswith("s3://"):
            prefix = self.path[len("s3://"):].partition("/")[2].strip("/")
            return f"{prefix}/{rel}" if prefix else rel
        return os.path.join(self.path.rstrip("/") or "/", rel)

    def warnings(self):
        """Messages about the files skipped so far (malformed index files, unusable file names, a
        collections file without _meta.num_workers), oldest first: a list of str."""
        return _smd.smd_trial_warnings(self._trial)


def create_trial(path=None, name=None, profiler=False, output_dir=None, *, out_dir=None, **kwargs):
    """Opens the trial in folder ``path`` (smdebug's create_trial). Keyword arguments:
    ``range_steps=(begin, end)`` loads only global steps begin <= step < end (None: unbounded);
    ``auto_refresh`` (default True; fixed for the trial's life: ``smd.analysis.utils.no_refresh``
    and ``refresh`` override it on one thread for a block); ``cache_bytes`` (the size of smd's
    value cache). ``out_dir`` is accepted for ``path`` (the hook's name for the folder, as
    smdebug's glossary writes ``create_trial(out_dir=...)``). An ``s3://bucket/prefix`` path is read from S3 with the AWS
    configuration chain (AWS_* variables, ~/.aws), or with the keyword arguments
    ``s3_endpoint`` ("http[s]://host[:port]"), ``s3_region``, ``s3_profile``,
    ``s3_addressing_style`` ("path" or "virtual"), ``s3_ca_bundle`` (a PEM file) and
    ``s3_credentials`` ((access_key_id, secret_access_key[, session_token])), which win over it,
    and the retry settings ``s3_max_attempts`` (attempts per request), ``s3_backoff_ms`` (the base
    of the backoff between attempts) and ``s3_stall_timeout_ms`` (how long a transfer may stall
    before it is retried; None or 0 keeps each default). A bad S3 setting raises
    SMDebugValueError naming it.
    ``profiler=True`` raises NotImplementedError: smd reads no profiler data."""
    if path is None:
        path = out_dir
    if path is None:
        raise TypeError("create_trial() needs the trial's path")
    if profiler:
        raise NotImplementedError("smd does not read profiler data (profiler=True)")
    return Trial(path, name=name, **kwargs)

class LocalTrial(Trial):
    """smdebug's LocalTrial: a trial in a local folder, ``LocalTrial(name, dirname,
    range_steps=None)``. smdebug's remaining arguments (parallel, check, index_mode, cache) are
    accepted and have no effect: smd always reads through the index files."""

    def __init__(self, name, dirname, range_steps=None, parallel=True, check=False, index_mode=True,
                 cache=False, **kwargs):
        super().__init__(_check_str("dirname", dirname), name=name, range_steps=range_steps, **kwargs)


class S3Trial(Trial):
    """smdebug's S3Trial: the trial under ``s3://bucket_name/prefix_name``,
    ``S3Trial(name, bucket_name, prefix_name, range_steps=None)``; the S3 keyword arguments of
    :class:`Trial` are accepted. smdebug's check, index_mode and cache have no effect."""

    def __init__(self, name, bucket_name, prefix_name, range_steps=None, check=False, index_mode=True,
                 cache=False, **kwargs):
        bucket, prefix = _check_str("bucket_name", bucket_name), _check_str("prefix_name", prefix_name)
        super().__init__(f"s3://{bucket}/{prefix.strip('/')}", name=name, range_steps=range_steps, **kwargs)


__all__ = ["Collection", "LocalTrial", "S3Trial", "StepState", "Trial", "create_trial"]
