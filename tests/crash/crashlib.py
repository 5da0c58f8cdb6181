"""What the crash tests write (the formula of crashlib.h, in numpy) and the checks a reader runs.

Run as a script, it is a long-lived smdebug checker: each stdin line "DIR SEED STEPS" is answered
by one JSON line on stdout. Keeping one process spares the import of smdebug per check, and the
driver puts a time limit on every answer (a reader that hangs is a failure).
"""
import json
import os
import sys

import numpy as np

NUM_TENSORS = 4
MASK = 0xFFFFFFFF
COLLECTIONS_FILE = "collections/000000000/worker_0_collections.json"
END_MARKER = "training_job_end.ts"


def shape(seed, step, t):
    s = step & MASK
    if t == 0:
        return (1, 1)
    if t == 1:
        return (1 + ((seed * 7 + s * 13) & MASK) % 3000, 1)
    if t == 2:
        return (1 + ((seed * 3 + s * 5) & MASK) % 700, 3)
    return (40000 + ((seed + s * 17) & MASK) % 1000, 2)


def values(seed, step, t):
    rows, cols = shape(seed, step, t)
    base = (seed * 2654435761 + step * 40503 + t * 9973) & MASK
    i = np.arange(rows * cols, dtype=np.uint64)
    x = (np.uint64(base) + i * np.uint64(31)) & np.uint64(MASK)
    v = (x % np.uint64(65521)).astype(np.float32) / np.float32(256) - np.float32(100)
    return v.reshape(rows, cols)


def check_with_smdebug(path, seed, total):
    """Opens `path` with the real smdebug; every visible step must read back exactly.
    Returns (steps, values compared, ended)."""
    from smdebug.trials import create_trial

    trial = create_trial(path)
    steps = list(trial.steps())
    if steps != list(range(len(steps))):
        raise AssertionError(f"smdebug sees steps {steps}, not 0..{len(steps) - 1}")
    if len(steps) > total:
        raise AssertionError(f"smdebug sees {len(steps)} steps, the writer wrote {total}")
    compared = 0
    for t in range(NUM_TENSORS):
        if not steps:
            break
        name = f"crash/t{t}"
        tensor = trial.tensor(name)
        for step in steps:
            got = tensor.value(step)
            want = values(seed, step, t)
            if got.dtype != np.float32 or got.shape != want.shape or not np.array_equal(got, want):
                raise AssertionError(f"smdebug: {name} at step {step} differs from what was written")
            compared += want.size
    ended = os.path.exists(os.path.join(path, END_MARKER))
    return len(steps), compared, ended


def serve():
    import logging

    logging.disable(logging.WARNING)
    for line in sys.stdin:
        path, seed, total = line.split()
        try:
            n, compared, ended = check_with_smdebug(path, int(seed), int(total))
            out = {"ok": True, "steps": n, "values": compared, "ended": ended}
        except Exception as e:  # reported to the driver, which fails the test
            out = {"ok": False, "error": f"{type(e).__name__}: {e}"}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    serve()
