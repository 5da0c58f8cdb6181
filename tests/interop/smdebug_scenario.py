"""Runs an smd_scenario script with the REAL smdebug hook.

    python smdebug_scenario.py SCRIPT

The script format is the one tests/interop/smd_scenario.c documents; this program gives each
command its smdebug equivalent through smdebug_hook.py (smdebug's own CallbackHook fed with numpy
arrays), so that both implementations write a trial from the same inputs.
Run with PYTHONHASHSEED=0 (smdebug iterates sets).
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from smdebug_hook import NumpyHook, fixed_wall_time  # noqa: E402
from smdebug import modes, ReductionConfig, SaveConfig, SaveConfigMode  # noqa: E402

MODES = {"TRAIN": modes.TRAIN, "EVAL": modes.EVAL, "PREDICT": modes.PREDICT, "GLOBAL": modes.GLOBAL}


def mode_keys(name):
    return list(MODES.values()) if name == "all" else [MODES[name]]


def save_config_mode(interval, start, end, steps):
    return SaveConfigMode(
        save_interval=int(interval),
        start_step=int(start),
        end_step=None if end == "-" else int(end),
        save_steps=[] if steps == "-" else [int(s) for s in steps.split(",")],
    )


def reduction_config(spec, raw, shape):
    kw = {"reductions": [], "abs_reductions": [], "norms": [], "abs_norms": []}
    for item in (i.strip() for i in spec.split(",")):
        if not item:
            continue
        if item.startswith("abs_") and item.endswith("_norm"):
            kw["abs_norms"].append(item.split("_")[1])
        elif item.startswith("abs_"):
            kw["abs_reductions"].append(item.split("_")[1])
        elif item.endswith("_norm"):
            kw["norms"].append(item.split("_")[0])
        else:
            kw["reductions"].append(item)
    return ReductionConfig(save_raw_tensor=raw == "1", save_shape=shape == "1", **kw)


def main(script):
    opts = {"include_collections": [], "include_regex": []}
    hook_modes = {}
    coll_modes = {}
    end_marker = True
    base = 0.0
    hook = None
    with open(script, encoding="utf-8") as f:
        lines = [line.rstrip("\r\n") for line in f]
    for line in lines:
        if not line or line.startswith("#"):
            continue
        f = line.split("\t")
        cmd = f[0]
        if cmd == "option":
            k = f[1]
            if k == "save_config":
                for m in mode_keys(f[2]):
                    hook_modes[m] = save_config_mode(*f[3:7])
            elif k == "reduction_config":
                opts["reduction_config"] = reduction_config(*f[2:5])
            elif k == "include_collection":
                opts["include_collections"].append(f[2])
            elif k == "include_regex":
                opts["include_regex"].append(f[2])
            elif k == "save_all":
                opts["save_all"] = f[2] == "1"
            elif k == "worker":
                opts["worker"] = f[2]
            elif k == "num_workers":
                opts["num_workers"] = int(f[2])
            elif k == "include_workers":
                opts["include_workers"] = f[2]
            elif k == "wall_time_base":
                base = float(f[2])
                fixed_wall_time(base)
            elif k == "export_tensorboard":
                opts["export_tensorboard"] = f[2] == "1"
            elif k == "tensorboard_dir":
                opts["tensorboard_dir"] = f[2]
            elif k == "end_marker":
                end_marker = f[2] == "1"
            elif k in ("real_crc", "memory_budget"):
                raise SystemExit(f"smdebug_scenario: option {k} has no smdebug equivalent")
        elif cmd == "create":
            # smd fills a mode the configuration leaves unset with the defaults; do the same.
            full = {m: hook_modes.get(m, SaveConfigMode()) for m in MODES.values()}
            opts["save_config"] = SaveConfig(mode_save_configs=full)
            if not opts["include_regex"]:
                del opts["include_regex"]
            hook = NumpyHook(f[1], **opts)
        elif cmd == "collection":
            c = hook.get_collection(f[1])
            k = f[2]
            if k == "regex":
                c.include(f[3])
            elif k == "tensor":
                c.add_tensor_name(f[3])
            elif k == "reduction_config":
                c.reduction_config = reduction_config(*f[3:6])
            elif k == "save_config":
                d = coll_modes.setdefault(f[1], {})
                for m in mode_keys(f[3]):
                    d[m] = save_config_mode(*f[4:8])
                c.save_config = SaveConfig(mode_save_configs=dict(d))
            elif k == "histogram":
                c.save_histogram = f[3] == "1"
        elif cmd == "include":
            hook.include_collections.append(f[1])
        elif cmd == "mode":
            hook.set_mode(MODES[f[1]])
        elif cmd == "step":
            hook.begin_step()
        elif cmd == "tensor":
            if len(f) > 5 and f[5]:
                raise SystemExit("smdebug_scenario: explicit collections have no smdebug equivalent")
            dtype = np.dtype(f[2])
            shape = () if f[3] == "-" else tuple(int(d) for d in f[3].split("x"))
            value = np.frombuffer(bytes.fromhex(f[4]), dtype=dtype).reshape(shape)
            hook.record(f[1], value)
        elif cmd == "scalar":
            ts = base + hook.step if base else None
            hook.save_scalar(f[1], float(f[2]), timestamp=ts)
        elif cmd == "scalar_typed":
            ts = base + hook.step if base else None
            value = np.frombuffer(bytes.fromhex(f[3]), dtype=np.dtype(f[2]))[0]
            if f[2] == "bool":
                value = bool(value)  # a Python bool, as a training script passes it
            hook.save_scalar(f[1], value, timestamp=ts)
        elif cmd == "strings":
            items = [] if f[2] == "-" else [bytes.fromhex(h).decode("utf-8") for h in f[2].split(",")]
            hook.record(f[1], np.array(items, dtype=str))
        elif cmd == "close":
            hook.close(end_of_job=end_marker)
        else:
            raise SystemExit(f"smdebug_scenario: cannot parse {line!r}")


if __name__ == "__main__":
    main(sys.argv[1])
