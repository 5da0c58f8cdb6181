#!/usr/bin/env python3
"""What the real smdebug answers about a trial, as one JSON document: the reference `smd dump`.

    python smdebug_dump.py TRIAL [-o OUT.json]

`smd dump TRIAL` must print the same bytes, except where smdebug's reader is wrong (the tests list
those places). Everything below comes from smdebug's public Trial and Tensor API.

The document (format "smd-dump/1"):

    format            "smd-dump/1"
    workers           sorted trial.workers()
    modes             trial.modes() without GLOBAL, in the order TRAIN, EVAL, PREDICT
    ended             whether training_job_end.ts is there (smdebug's has_training_ended)
    steps             {mode: trial.steps(mode)} for GLOBAL and every mode of `modes`
    steps_incomplete  the same with show_incomplete_steps=True
    collections       {name: {"include_regex": sorted, "tensor_names": sorted}}
    tensors           {name: {"steps": ..., "at": ...}} for every trial.tensor_names():
      steps           {mode: tensor.steps(mode)} for GLOBAL, and for each mode of `modes` in which
                      the tensor has a step when incomplete steps are shown
      at              {str(global step): {"mode", "mode_step", "workers"}} for every global step of
                      tensor.steps(GLOBAL, show_incomplete_steps=True); mode and mode_step are
                      trial.mode(g) and trial.mode_step(g); workers maps each of tensor.workers(g)
                      to {"value", "shape", "reductions"}:
        value         {"dtype", "shape", "sha256" of the little-endian C-order bytes}, or for
                      string arrays {"dtype": "str", "shape", "values"}; null when value() raises
        shape         shape(g, worker) as a list; null when it raises
        reductions    {"min" | "abs_min" | ...: float}, from reduction_values(g, worker); null
                      when that raises (a single reduction that cannot be shown is null alone)

Numbers that are reductions are written as strings: Python's repr of the value as an IEEE double,
or "nan", "inf", "-inf". The document is json.dumps(doc, sort_keys=True, indent=2,
ensure_ascii=False) plus a newline, in UTF-8.

A call that raises something other than smdebug's TensorUnavailableForStep or
ShapeUnavailableForStep (for instance KeyError for a dtype smdebug's reader cannot decode) still
gives null, and a line on stderr says which tensor, call and steps.

Exit status: 0 the document was written; 1 smdebug raised while opening the trial; 2 usage, or
smdebug is not installed; 3 the trial was not opened because smdebug would wait for it forever
(no collections file, or fewer than the workers it announces, and no training_job_end.ts).
"""
import argparse
import contextlib
import hashlib
import json
import math
import os
import sys
import traceback

import numpy as np

FORMAT = "smd-dump/1"
EXIT_OK, EXIT_RAISED, EXIT_USAGE, EXIT_WOULD_WAIT = 0, 1, 2, 3
MODE_ORDER = ("TRAIN", "EVAL", "PREDICT")


# ---- how values are written ----------------------------------------------------------------

def float_text(x):
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "-inf" if x < 0 else "inf"
    return repr(x)


def value_entry(v):
    a = np.asarray(v)
    shape = [int(n) for n in a.shape]
    if a.dtype.kind in "USO":
        texts = [x.decode("utf-8") if isinstance(x, bytes) else str(x) for x in a.reshape(-1).tolist()]
        return {"dtype": "str", "shape": shape, "values": texts}
    little = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<"), copy=False)
    return {"dtype": a.dtype.name, "shape": shape, "sha256": hashlib.sha256(little.tobytes()).hexdigest()}


def reduction_text(v):
    a = np.asarray(v)
    if a.size != 1 or a.dtype.kind not in "biuf":
        raise TypeError(f"a reduction of dtype {a.dtype} and shape {a.shape} is not a single number")
    return float_text(a.reshape(-1)[0])


def dumps(doc):
    return json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


# ---- unexpected exceptions, reported once per (tensor, call, exception) ----------------------

class Problems:
    def __init__(self):
        self.where = {}

    def null(self, tensor, call, step, worker, exc):
        key = (tensor, call, type(exc).__name__, str(exc)[:120])
        self.where.setdefault(key, []).append(str(step) + (f"/{worker}" if worker else ""))
        return None

    def report(self):
        for (tensor, call, exc_name, text), steps in sorted(self.where.items()):
            listed = ", ".join(steps[:8]) + (f", ... ({len(steps)} in all)" if len(steps) > 8 else "")
            sys.stderr.write(f"smdebug_dump: {tensor!r}: {call} raised {exc_name}({text}) at step(s) "
                             f"{listed}; written as null\n")


# ---- the dump --------------------------------------------------------------------------------

class Dumper:
    def __init__(self):
        import smdebug_env  # noqa: F401  (must come before the smdebug imports)
        from smdebug.core.access_layer.utils import has_training_ended
        from smdebug.core.collection_manager import CollectionManager
        from smdebug.core.modes import ModeKeys
        from smdebug.core.utils import get_path_to_collections, list_collection_files_in_directory
        from smdebug.exceptions import ShapeUnavailableForStep, TensorUnavailableForStep
        from smdebug.trials import create_trial

        self.has_training_ended = has_training_ended
        self.CollectionManager = CollectionManager
        self.ModeKeys = ModeKeys
        self.collections_folder = get_path_to_collections
        self.list_collection_files = list_collection_files_in_directory
        self.ShapeUnavailable = ShapeUnavailableForStep
        self.TensorUnavailable = TensorUnavailableForStep
        self.create_trial = create_trial
        self.problems = Problems()

    def why_it_would_wait(self, path):
        """smdebug's trial polls (every 2 s, without limit) until it finds a collections file and
        then as many as the first one's _meta.num_workers, unless training_job_end.ts exists.
        Returns why it would wait for this local folder, or None."""
        path = os.path.expanduser(path)
        if self.has_training_ended(path):
            return None
        files = self.list_collection_files(self.collections_folder(path))
        if not files:
            missing = "" if os.path.isdir(path) else " (the folder does not exist)"
            return f"no collections/000000000/*collections.json and no training_job_end.ts{missing}"
        workers = self.CollectionManager.load(files[0]).get_num_workers()
        if len(files) < workers:
            return f"{len(files)} collections file(s) for {workers} workers, and no training_job_end.ts"
        return None

    def worker_entry(self, t, name, g, w):
        entry = {}
        try:
            v = t.value(g, worker=w)
            entry["value"] = (value_entry(v) if v is not None else
                              self.problems.null(name, "value()", g, w, TypeError("returned None")))
        except self.TensorUnavailable:
            entry["value"] = None
        except Exception as e:  # noqa: BLE001
            entry["value"] = self.problems.null(name, "value()", g, w, e)
        try:
            entry["shape"] = [int(n) for n in t.shape(g, worker=w)]
        except self.ShapeUnavailable:
            entry["shape"] = None
        except Exception as e:  # noqa: BLE001
            entry["shape"] = self.problems.null(name, "shape()", g, w, e)
        try:
            reductions = {}
            for (rname, absolute), rvalue in t.reduction_values(g, worker=w).items():
                key = "abs_" + rname if absolute else rname
                try:
                    reductions[key] = reduction_text(rvalue)
                except Exception as e:  # noqa: BLE001
                    reductions[key] = self.problems.null(name, f"reduction_values()[{key}]", g, w, e)
            entry["reductions"] = reductions
        except Exception as e:  # noqa: BLE001
            entry["reductions"] = self.problems.null(name, "reduction_values()", g, w, e)
        return entry

    def tensor(self, trial, name, modes):
        GLOBAL = self.ModeKeys.GLOBAL
        t = trial.tensor(name)
        steps = {"GLOBAL": list(t.steps(mode=GLOBAL))}
        for m in modes:
            if t.steps(mode=m, show_incomplete_steps=True):
                steps[m.name] = list(t.steps(mode=m))
        at = {}
        for g in t.steps(mode=GLOBAL, show_incomplete_steps=True):
            mode = trial.mode(g)
            here = {"mode": None if mode is None else mode.name, "mode_step": trial.mode_step(g)}
            try:
                workers = sorted(t.workers(g))
            except Exception as e:  # noqa: BLE001
                here["workers"] = self.problems.null(name, "workers()", g, None, e)
            else:
                here["workers"] = {w: self.worker_entry(t, name, g, w) for w in workers}
            at[str(g)] = here
        return {"steps": steps, "at": at}

    def trial(self, path):
        GLOBAL = self.ModeKeys.GLOBAL
        trial = self.create_trial(path)
        workers = sorted(trial.workers())  # the first call that loads what the folder holds
        modes = sorted((m for m in trial.modes() if m != GLOBAL), key=lambda m: MODE_ORDER.index(m.name))
        every_mode = [GLOBAL] + modes
        collections = {}
        for cname, c in trial.collections().items():
            regex = c.include_regex
            regex = [regex] if isinstance(regex, str) else list(regex or [])
            collections[cname] = {"include_regex": sorted(regex), "tensor_names": sorted(c.tensor_names or [])}
        return {
            "format": FORMAT,
            "workers": workers,
            "modes": [m.name for m in modes],
            "ended": bool(self.has_training_ended(trial.path)),
            "steps": {m.name: list(trial.steps(mode=m)) for m in every_mode},
            "steps_incomplete": {m.name: list(trial.steps(mode=m, show_incomplete_steps=True))
                                 for m in every_mode},
            "collections": collections,
            "tensors": {n: self.tensor(trial, n, modes) for n in trial.tensor_names()},
        }


def main(argv=None):
    ap = argparse.ArgumentParser(description="The reference smd dump of a trial, read by the real smdebug.",
                                 epilog="exit status: 0 written, 1 smdebug raised, 2 usage or no smdebug, "
                                        "3 smdebug would wait for the trial forever")
    ap.add_argument("trial", help="a local trial folder")
    ap.add_argument("-o", "--output", help="write the document to this file instead of stdout")
    args = ap.parse_args(argv)
    path = args.trial.strip()  # as create_trial does
    dumper = Dumper()
    try:
        with contextlib.redirect_stdout(sys.stderr):  # whatever smdebug prints stays out of the JSON
            why = dumper.why_it_would_wait(path)
            if why:
                sys.stderr.write(f"smdebug_dump: not opening {path}: smdebug would wait for it forever: {why}\n")
                return EXIT_WOULD_WAIT
            doc = dumper.trial(path)
    except Exception as e:  # noqa: BLE001
        traceback.print_exc(file=sys.stderr)
        sys.stderr.write(f"smdebug_dump: smdebug raised {type(e).__name__} on {path}\n")
        return EXIT_RAISED
    dumper.problems.report()
    data = dumps(doc).encode("utf-8")
    if args.output:
        with open(args.output, "wb") as f:
            f.write(data)
    else:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
