#!/usr/bin/env python3
"""The cross-language test's canonical dump of a trial ("smd-cross/1", described in
CrossDump.java), read by the real smdebug:

    python smdebug_crossdump.py TRIAL

Where smdebug 1.0.34's reader cannot decode a value (its dtype table lacks DT_INT16, DT_UINT16,
...) the line says "unreadable:..." as its dtype; the test knows those places.
"""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
import smdebug_env  # noqa: E402,F401  (before any smdebug module)

import numpy as np  # noqa: E402
from smdebug.core.modes import ModeKeys  # noqa: E402
from smdebug.exceptions import ShapeUnavailableForStep, TensorUnavailableForStep  # noqa: E402
from smdebug.trials import create_trial  # noqa: E402


def shape_text(shape):
    return ",".join(str(int(d)) for d in shape)


def main():
    if len(sys.argv) != 2:
        print("usage: smdebug_crossdump.py TRIAL", file=sys.stderr)
        return 2
    trial = create_trial(sys.argv[1])
    out = ["smd-cross/1"]
    for name in sorted(trial.tensor_names(), key=lambda s: s.encode("utf-8")):
        t = trial.tensor(name)
        for g in t.steps(mode=ModeKeys.GLOBAL):
            mode = trial.mode(g).name
            ms = trial.mode_step(g)
            dtype = sh = data = "-"
            try:
                a = np.asarray(t.value(g))
                sh = shape_text(a.shape)
                if a.dtype.kind in "USO":
                    dtype = "str"
                    items = [x if isinstance(x, bytes) else str(x).encode("utf-8") for x in a.reshape(-1).tolist()]
                    data = ",".join(x.hex() for x in items)
                else:
                    dtype = a.dtype.name
                    data = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<"), copy=False).tobytes().hex()
            except KeyError as e:  # a dtype smdebug's reader cannot decode (DT_INT16, ...)
                dtype, sh, data = "unreadable:KeyError(%s)" % e, "-", "-"
            except TensorUnavailableForStep:
                try:
                    sh = shape_text(t.shape(g))
                except (ShapeUnavailableForStep, TensorUnavailableForStep):
                    sh = "-"
            out.append("\t".join(["T", name, str(g), mode, str(ms), dtype, sh, data]))
            red = {}
            for (rname, absolute), v in t.reduction_values(g).items():
                red[("abs_" if absolute else "") + rname] = float(np.asarray(v).reshape(-1)[0])
            if red:
                parts = [k + "=" + struct.pack("<d", red[k]).hex() for k in sorted(red)]
                out.append("\t".join(["R", name, str(g), ",".join(parts)]))
    sys.stdout.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
