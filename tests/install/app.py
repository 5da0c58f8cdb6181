"""The Python program of the README's "Use smd from your program" (the same as app.c): writes a
trial with the hook, reads a value back, runs a built-in rule under invoke_rule.
    python app.py OUT_DIR"""
import sys

import numpy as np
import smd
from smd.rules import AllZero, invoke_rule
from smd.trials import create_trial

out = sys.argv[1]
hook = smd.Hook(out, save_config=smd.SaveConfig(save_interval=1), include_collections=["weights"])
for step in range(3):
    hook.begin_step()
    hook.save_tensor("fc.weight", np.arange(4, dtype=np.float32) * step)  # all zero at step 0
hook.close()

trial = create_trial(out)
x = trial.tensor("fc.weight").value(2)[1]
rule = AllZero(trial, tensor_regex="fc\\..*")
invoke_rule(rule, raise_eval_cond=False)
print(f"python: fc.weight at step 2: {x:g}; AllZero conditions met: {rule.conditions_met}")
