"""Custom Python rules: smd.rules.Rule subclasses run by smd's invoker fire on the same steps as
the same rule under the real smdebug's invoke_rule."""
import logging
import threading

import numpy as np
import pytest

import smd
import smd.exceptions as E
import smdebug.exceptions
import smdebug.rules.rule
import smdebug.rules.rule_invoker
import smdebug.trials
from smd.rules import Rule
from smd.rules.rule_invoker import invoke_rule
from smd.trials import create_trial
from conftest import FIXTURES

logging.getLogger("smdebug").setLevel(logging.ERROR)


def make_rule(base):
    """The same rule body on either library's Rule: the mean of `tensor` above `threshold`."""

    class MeanAbove(base):
        def __init__(self, trial, tensor, threshold):
            super().__init__(trial, action_str="")
            self.tensor, self.threshold, self.evaluated, self.met = tensor, threshold, [], []

        def set_required_tensors(self, step):
            self.req_tensors.add(self.tensor, steps=[step])

        def invoke_at_step(self, step):
            self.evaluated.append(step)
            v = self.base_trial.tensor(self.tensor).value(step)
            if float(np.mean(v)) > self.threshold:
                self.met.append(step)
                return True
            return False

    return MeanAbove


def _run_both(path, tensor, threshold, **kw):
    ref = make_rule(smdebug.rules.rule.Rule)(smdebug.trials.create_trial(str(path)), tensor, threshold)
    try:
        smdebug.rules.rule_invoker.invoke_rule(ref, **kw)
    except smdebug.exceptions.NoMoreData:
        pass
    mine = make_rule(Rule)(create_trial(str(path)), tensor, threshold)
    invoke_rule(mine, **kw)
    return ref, mine


@pytest.mark.parametrize("tensor, threshold", [("loss", 0.0), ("loss", 1e9), ("fc.weight", 0.1)])
def test_custom_rule_fires_on_the_same_steps_as_smdebug(tensor, threshold):
    ref, mine = _run_both(FIXTURES / "modes_reentry", tensor, threshold)
    assert mine.evaluated == ref.evaluated
    assert mine.met == ref.met
    assert mine.steps_evaluated == len(mine.evaluated)
    assert mine.conditions_met == len(mine.met)


def test_custom_rule_on_a_hook_trial_with_a_step_range(hook_trial):
    ref, mine = _run_both(hook_trial, "loss", 0.5, start_step=5, end_step=40)
    assert mine.evaluated == ref.evaluated and mine.evaluated
    assert mine.met == ref.met


def test_raise_eval_cond_raises_rule_evaluation_condition_met():
    rule = make_rule(Rule)(create_trial(str(FIXTURES / "modes_reentry")), "loss", -1e9)
    with pytest.raises(E.RuleEvaluationConditionMet):
        invoke_rule(rule, raise_eval_cond=True)
    assert rule.met == [rule.evaluated[0]]


def test_a_rule_exception_ends_the_invocation_and_is_raised_again():
    class Broken(Rule):
        def invoke_at_step(self, step):
            if step == 2:
                raise KeyError("broken at 2")
            return False

    rule = Broken(create_trial(str(FIXTURES / "modes_reentry")))
    assert rule.end_reason == "none" and rule.failed_step == -1
    with pytest.raises(KeyError, match="broken at 2"):
        invoke_rule(rule)
    # the rule failed: its end reason and the step where it failed
    assert rule.end_reason == "error" and rule.failed_step == 2 and rule.last_step == 2
    # a later invocation that does not fail clears them
    invoke_rule(rule, start_step=0, end_step=2)
    assert rule.end_reason == "end_step" and rule.failed_step == -1


def test_tensor_unavailable_for_step_skips_the_step():
    class Skips(Rule):
        def __init__(self, trial):
            super().__init__(trial)
            self.seen = []

        def invoke_at_step(self, step):
            self.seen.append(step)
            if step % 2:
                raise E.TensorUnavailableForStep("x", step)
            return False

    rule = Skips(create_trial(str(FIXTURES / "modes_reentry")))
    invoke_rule(rule)
    assert rule.seen == create_trial(str(FIXTURES / "modes_reentry")).steps()


def test_rule_callbacks_while_a_writer_thread_saves(tmp_path):
    """A Python rule evaluated by smd's invoker (GIL taken in the callback) while another Python
    thread writes a trial through smd.Hook (GIL released in smd's calls)."""
    stop = threading.Event()
    errors = []

    def writer():
        try:
            with smd.Hook(str(tmp_path / "side"), save_all=True) as h:
                while not stop.is_set():
                    h.begin_step()
                    h.save_tensor("w", np.random.rand(64, 64).astype(np.float32))
        except Exception as e:  # reported below
            errors.append(e)

    th = threading.Thread(target=writer)
    th.start()
    try:
        for _ in range(20):
            mine = make_rule(Rule)(create_trial(str(FIXTURES / "modes_reentry")), "loss", 0.0)
            invoke_rule(mine)
            assert mine.evaluated == create_trial(str(FIXTURES / "modes_reentry")).steps()
    finally:
        stop.set()
        th.join()
    assert not errors, errors
    assert create_trial(str(tmp_path / "side")).tensor("w").steps()


def test_rule_needs_an_smd_trial():
    with pytest.raises(TypeError):
        make_rule(Rule)("not a trial", "loss", 0.0)
    with pytest.raises(TypeError):
        invoke_rule(object())
