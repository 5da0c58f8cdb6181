"""A training job under the test's control: the real smdebug hook writing one step per command.

python live_writer.py OUT_DIR, then lines on stdin:
  step           begin a step and save fc.weight (cases.weight(step)) and loss; the previous
                 step's files become visible (smdebug closes a step's writer at the next step)
  close          hook.close(): the last step's files, then training_job_end.ts
  close_running  the same without training_job_end.ts
Each command is answered with "ok <global step>" on stdout once it is done.
"""
import os
import sys

if __name__ == "__main__":
    out = sys.argv[1]
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import numpy as np

    import cases
    from smdebug_hook import NumpyHook, fixed_wall_time
    from smdebug import SaveConfig, modes

    fixed_wall_time()
    hook = NumpyHook(out, save_config=SaveConfig(save_interval=1),
                     include_collections=["weights", "losses"])
    hook.set_mode(modes.TRAIN)
    step = -1
    for line in sys.stdin:
        cmd = line.strip()
        if cmd == "step":
            hook.begin_step()
            step += 1
            hook.record("fc.weight", cases.weight(step))
            hook.record("loss", np.float32(step))
        elif cmd in ("close", "close_running"):
            hook.close(end_of_job=cmd == "close")
        else:
            print(f"error unknown command {cmd!r}", flush=True)
            continue
        print(f"ok {step}", flush=True)
        if cmd.startswith("close"):
            break
