"""A hook of the real smdebug that takes numpy arrays, for writing reference trials.

smdebug ships hooks for PyTorch, MXNet, TensorFlow and XGBoost only. They all derive from
`smdebug.core.hook.CallbackHook`, which holds every decision about what is written and how (save
configurations, collection matching, reductions, shapes, event, index and collection files,
TensorBoard export, training_job_end.ts). A framework hook adds little on top:

  worker name and worker count     here: constructor arguments
  the default collections          here: the PyTorch set, with PyTorch's regexes for weights,
                                   biases and gradients, and "[Ll]oss" for losses
  converting a tensor to numpy     here: smdebug.core.utils.make_numpy_array
  computing a reduction            here: smdebug.core.reductions.get_numpy_reduction (what the
                                   PyTorch hook does for numpy input; std/variance with ddof=0)
  calling the step lifecycle       here: begin_step() / record() / close(), in the order the
                                   PyTorch and MXNet forward hooks call CallbackHook's methods

Use:

    import smdebug_hook
    from smdebug import SaveConfig, modes
    smdebug_hook.fixed_wall_time()                 # reproducible event files
    hook = smdebug_hook.NumpyHook("/tmp/t", save_config=SaveConfig(save_interval=1),
                                  include_collections=["weights", "losses"])
    hook.set_mode(modes.TRAIN)
    for step in range(3):
        hook.begin_step()
        hook.record("fc.weight", np.ones((2, 3), np.float32) * step)
    hook.close()                                   # close(end_of_job=False): no end marker

Reproducible output: run Python with PYTHONHASHSEED=0 (smdebug iterates sets when it writes the
collections file) and call fixed_wall_time() (smdebug stamps events with time.time()); pass
timestamp= to save_scalar. With several workers, give every worker's hook the same collections
and tensor names: smdebug's reader loads only the first collections file it finds.
"""
import atexit

import numpy as np

import smdebug_env  # noqa: F401  (must come before the smdebug imports)

from smdebug.core import collection as _collection
from smdebug.core.collection_manager import CollectionManager
from smdebug.core.hook import CallbackHook
from smdebug.core.reductions import get_numpy_reduction
from smdebug.core.tfevent import event_file_writer as _event_file_writer
from smdebug.core.utils import FRAMEWORK, error_handling_agent, make_numpy_array, remove_claim_file
from smdebug.profiler.profiler_config_parser import get_profiler_config_parser

WALL_TIME_BASE = 1_700_000_000.0

_wall_time_fixed = False


def fixed_wall_time(base=WALL_TIME_BASE):
    """From now on an event smdebug writes without an explicit timestamp gets base + its global
    step as wall_time (smdebug's reader never looks at wall_time). Idempotent."""
    global _wall_time_fixed
    if _wall_time_fixed:
        return
    writer_class = _event_file_writer.EventFileWriter
    original = writer_class.write_summary_with_index

    def with_fixed_time(self, summary, step, tname, mode, mode_step, timestamp=None):
        when = base + float(step) if timestamp is None else timestamp
        return original(self, summary, step, tname, mode, mode_step, timestamp=when)

    writer_class.write_summary_with_index = with_fixed_time
    _wall_time_fixed = True


def _default_collections():
    keys = _collection.CollectionKeys
    manager = CollectionManager(create_default=True)
    for name in _collection.DEFAULT_PYTORCH_COLLECTIONS:
        manager.create_collection(name)
    for name, regex in ((keys.WEIGHTS, "^(?!gradient).*weight"),
                        (keys.BIASES, "^(?!gradient).*bias"),
                        (keys.GRADIENTS, "^gradient"),
                        (keys.LOSSES, "[Ll]oss")):
        manager.get(name).include(regex)
    return manager


class NumpyHook(CallbackHook):
    """smdebug's CallbackHook with numpy arrays as the framework's tensors."""

    def __init__(self, out_dir, worker="worker_0", num_workers=1, include_workers=None,
                 reduction_config=None, save_config=None, include_regex=None,
                 include_collections=None, save_all=False, export_tensorboard=False,
                 tensorboard_dir=None, collection_manager=None):
        self._worker_name = worker
        self._worker_count = int(num_workers)
        if include_workers is None:
            include_workers = "all" if self._worker_count > 1 else "one"
        super().__init__(
            collection_manager=collection_manager or _default_collections(),
            default_include_collections=[_collection.CollectionKeys.LOSSES],
            profiler_config_parser=get_profiler_config_parser(FRAMEWORK.PYTORCH),
            data_type_name=np.ndarray.__name__,
            out_dir=out_dir,
            export_tensorboard=export_tensorboard,
            tensorboard_dir=tensorboard_dir,
            dry_run=False,
            reduction_config=reduction_config,
            save_config=save_config,
            include_regex=include_regex,
            include_collections=include_collections,
            save_all=save_all,
            include_workers=include_workers,
        )
        self.worker = self._get_worker_name()

    # What BaseHook leaves to a framework.
    def _get_worker_name(self):
        return self._worker_name

    def _get_num_workers(self):
        return self._worker_count

    def _is_not_supported(self):
        return False

    def _get_default_collections(self):
        return _collection.DEFAULT_PYTORCH_COLLECTIONS

    def _export_model(self):
        pass

    @staticmethod
    def _get_reduction_of_data(reduction_name, tensor_value, tensor_name, abs):
        return get_numpy_reduction(reduction_name, make_numpy_array(tensor_value), abs)

    @staticmethod
    def _make_numpy_array(tensor_value):
        return make_numpy_array(tensor_value)

    # The step lifecycle. Like the framework callbacks, errors propagate when the hook was
    # configured explicitly and disable the hook (with a log line) when it was not.
    @error_handling_agent.catch_smdebug_errors()
    def begin_step(self):
        """Ends the previous step (its files become visible) and starts the next one."""
        if self.writer is not None:
            self._close_writers()
        self._close_tb_writer()
        if not self.prepared_collections:
            self._prepare_collections()
            self.prepared_collections = True
        self._increment_step()
        if self._get_collections_to_save_for_step():
            self._initialize_writers()
        if self.last_saved_step is not None and not self.exported_collections:
            self.export_collections()
            self.exported_collections = True
        self._save_custom_tensors_post_step()

    @error_handling_agent.catch_smdebug_errors()
    def record(self, name, value):
        """Offers tensor `name` with numpy value `value` at the current step."""
        if not self._get_collections_to_save_for_step():
            return
        self._save_for_tensor(name, value)
        self.last_saved_step = self.step

    def close(self, end_of_job=True):
        """Ends the job. end_of_job=True is CallbackHook's own cleanup, which writes
        training_job_end.ts; end_of_job=False does the same except that marker, leaving the
        folder as a running job's would look."""
        if end_of_job:
            self._cleanup()
        else:
            if not self.exported_collections:
                self.export_collections()
                self.exported_collections = True
            self._close_writers()
            if self.metrics_writer:
                self.metrics_writer.close()
            self.timeline_writer.close()
            if self.first_process is True:
                remove_claim_file(self.out_dir)
        # CallbackHook registered its cleanup to run at exit; it must not add the marker later.
        atexit.unregister(self._cleanup)
