"""The crash writer's training loop on the REAL smdebug hook, for measuring what smdebug loses
when killed the same way (docs/durability.md).

    python smdebug_writer.py OUT_DIR SEED STEPS

smdebug has no hook for plain numpy: this subclasses its CallbackHook and fills in the slots a
framework hook fills (worker name and count, default collections, numpy conversion, reductions),
then drives the step lifecycle the way smdebug's framework callbacks do: close the previous
step's writers, advance the step, open writers when something is due, export the collections
once a step was saved. Same tensors, shapes and values as crash_writer (crashlib). Prints
"step N" after each step starts and "closed" at the end.
"""
import os
import sys

os.environ.pop("TRAINING_JOB_NAME", None)  # else smdebug would not write training_job_end.ts
os.environ.setdefault("SMDEBUG_LOG_LEVEL", "error")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import crashlib  # noqa: E402

from smdebug.core.collection import CollectionKeys  # noqa: E402
from smdebug.core.collection_manager import CollectionManager  # noqa: E402
from smdebug.core.hook import CallbackHook  # noqa: E402
from smdebug.core.reductions import get_numpy_reduction  # noqa: E402
from smdebug.core.save_config import SaveConfig  # noqa: E402
from smdebug.core.utils import FRAMEWORK, make_numpy_array  # noqa: E402
from smdebug.profiler.profiler_config_parser import get_profiler_config_parser  # noqa: E402
from smdebug.core.modes import ModeKeys  # noqa: E402


class PlainHook(CallbackHook):
    def __init__(self, out_dir):
        cm = CollectionManager()
        cm.create_collection(CollectionKeys.DEFAULT)
        super().__init__(
            collection_manager=cm,
            default_include_collections=[CollectionKeys.DEFAULT],
            profiler_config_parser=get_profiler_config_parser(FRAMEWORK.PYTORCH),
            data_type_name=np.ndarray.__name__,
            out_dir=out_dir,
            save_config=SaveConfig(save_interval=1),
            include_regex=["crash/.*"],
        )
        self.worker = self._get_worker_name()  # the framework hooks set it after BaseHook's init

    def _get_worker_name(self):
        return "worker_0"

    def _get_num_workers(self):
        return 1

    def _is_not_supported(self):
        return False

    def _get_default_collections(self):
        return [CollectionKeys.DEFAULT]

    def _export_model(self):
        pass

    @staticmethod
    def _get_reduction_of_data(reduction_name, tensor_value, tensor_name, abs):
        return get_numpy_reduction(reduction_name, make_numpy_array(tensor_value), abs)

    @staticmethod
    def _make_numpy_array(tensor_value):
        return make_numpy_array(tensor_value)

    def begin_step(self):
        if self.writer is not None:
            self._close_writers()
        if not self.prepared_collections:
            self._prepare_collections()
            self.prepared_collections = True
        self._increment_step()
        if self._get_collections_to_save_for_step():
            self._initialize_writers()
        if self.last_saved_step is not None and not self.exported_collections:
            self.export_collections()
            self.exported_collections = True

    def save(self, name, value):
        if self._get_collections_to_save_for_step():
            self._save_for_tensor(name, value)
            self.last_saved_step = self.step


def main():
    out_dir, seed, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    hook = PlainHook(out_dir)
    hook.set_mode(ModeKeys.TRAIN)
    for step in range(steps):
        hook.begin_step()
        print(f"step {step}", flush=True)
        for t in range(crashlib.NUM_TENSORS):
            hook.save(f"crash/t{t}", crashlib.values(seed, step, t))
    hook._cleanup()
    print("closed", flush=True)


if __name__ == "__main__":
    main()
