"""Built-in rules by name from Python, their parameters, actions (message file, stop-training
signal, finding callback) and rules over several trials."""
import json

import numpy as np
import pytest

import smd
import smd.exceptions as E
from smd import smdc
from smd.rules import (Actions, AllZero, Rule, SimilarAcrossRuns, VanishingGradient, builtin_rule,
                       builtin_rule_names, invoke_rule)
from smd.rules.generic import BuiltinRule, LossNotDecreasing
from smd.trials import create_trial

VANISHING_AT = (3, 7)


def write_run(path, steps=10, vanishing_at=VANISHING_AT, scale=1.0, close=True):
    """A run whose gradient `gradient/w` has mean |g| = 1e-9 at `vanishing_at`, else `scale`."""
    hook = smd.Hook(str(path), save_config=smd.SaveConfig(save_interval=1))
    for s in range(steps):
        hook.begin_step()
        g = np.full((4, 4), 1e-9 if s in vanishing_at else scale, dtype=np.float32)
        hook.save_tensor("gradient/w", g, "gradients")
        hook.save_tensor("loss", np.array([10.0 - s], dtype=np.float32), "losses")
    if close:
        hook.close()
    return hook


def test_the_builtin_rules_are_classes_under_their_sagemaker_names():
    names = builtin_rule_names()
    assert "VanishingGradient" in names and "LossNotDecreasing" in names and len(names) >= 20
    import smd.rules
    import smd.rules.generic
    for n in names:
        cls = getattr(smd.rules, n)
        assert cls is getattr(smd.rules.generic, n)
        assert issubclass(cls, BuiltinRule) and issubclass(cls, Rule)
        assert cls.__doc__ and cls.rule_name == n
    assert VanishingGradient.parameters()["threshold"][0] == "0.0000001"
    assert LossNotDecreasing.parameter_names()[:2] == ["collection_names", "tensor_regex"]


def test_builtin_rule_parameters_names_defaults_and_help():
    """Names in documentation order, the default as SageMaker writes it ("" when none) and a
    one-line help (smd_rule_builtin_params + smd_rule_builtin_param_default / _help)."""
    from smd.rules import TensorVariance
    assert VanishingGradient.parameter_names() == ["threshold"]
    (default, help_), = VanishingGradient.parameters().values()
    assert default == "0.0000001" and "gradient" in help_ and "\n" not in help_
    params = TensorVariance.parameters()
    assert list(params) == TensorVariance.parameter_names()
    assert {"max_threshold", "min_threshold"} <= set(params)
    assert params["max_threshold"][0] == "" and params["max_threshold"][1]  # no default, a help
    assert all(isinstance(d, str) and isinstance(h, str) and h for d, h in params.values())
    assert "max_threshold (none): " + params["max_threshold"][1] in TensorVariance.__doc__
    assert "threshold (0.0000001): " in VanishingGradient.__doc__
    # the C lookups under them
    assert smdc.smd_rule_builtin_params("VanishingGradient") == ["threshold"]
    assert smdc.smd_rule_builtin_param_default("VanishingGradient", "threshold") == "0.0000001"
    assert smdc.smd_rule_builtin_param_help("VanishingGradient", "threshold") == help_
    assert smdc.smd_rule_builtin_param_default("TensorVariance", "max_threshold") == ""
    assert smdc.smd_rule_builtin_param_default("VanishingGradient", "nope") is None
    assert smdc.smd_rule_builtin_param_help("NoSuchRule", "threshold") is None
    assert smdc.smd_py_rule_builtin_params("NoSuchRule") is None
    with pytest.raises(E.SMDebugValueError):
        smdc.smd_rule_builtin_params("NoSuchRule")


def test_vanishing_gradient_fires_at_the_steps_where_the_gradient_vanishes(tmp_path):
    write_run(tmp_path / "run")
    trial = create_trial(str(tmp_path / "run"))
    rule = VanishingGradient(trial, threshold=1e-7)
    invoke_rule(rule, start_step=0, end_step=None)
    assert [f.step for f in rule.findings] == list(VANISHING_AT)
    assert {f.tensor for f in rule.findings} == {"gradient/w"}
    assert rule.conditions_met == 2 and rule.steps_evaluated == 10 and rule.end_reason == "no_more_data"
    # the same with the parameter positional and as SageMaker's string, and by name
    for r in (VanishingGradient(trial, "0.0000001"), builtin_rule("vanishinggradient", trial, threshold="1e-7")):
        invoke_rule(r)
        assert [f.step for f in r.findings] == list(VANISHING_AT)


def test_raise_eval_cond_stops_at_the_first_met_condition(tmp_path):
    write_run(tmp_path / "run")
    rule = VanishingGradient(create_trial(str(tmp_path / "run")), threshold=1e-7)
    with pytest.raises(E.RuleEvaluationConditionMet, match="VanishingGradient.*step 3"):
        invoke_rule(rule, raise_eval_cond=True)
    assert rule.end_reason == "condition_met" and rule.last_step == 3
    rule2 = VanishingGradient(create_trial(str(tmp_path / "run")), threshold=1e-7)
    invoke_rule(rule2, start_step=4, end_step=7)  # 4, 5, 6: nothing vanishes there
    assert rule2.findings == [] and rule2.steps_evaluated == 3 and rule2.end_reason == "end_step"


def test_bad_rule_parameters_are_errors_naming_them(tmp_path):
    write_run(tmp_path / "run")
    trial = create_trial(str(tmp_path / "run"))
    with pytest.raises(E.SMDebugValueError, match="treshold"):
        VanishingGradient(trial, treshold=1)
    with pytest.raises(E.SMDebugValueError, match="threshold.*0.0.1"):
        VanishingGradient(trial, threshold="0.0.1")
    with pytest.raises(E.SMDebugValueError, match="AllZero"):
        AllZero(trial)  # needs collection_names or tensor_regex
    with pytest.raises(TypeError):
        VanishingGradient(trial, 1e-7, 2)
    with pytest.raises(E.SMDebugValueError, match="NoSuchRule"):
        builtin_rule("NoSuchRule", trial)
    with pytest.raises(TypeError):
        VanishingGradient("not a trial")


def test_list_and_bool_parameters_take_python_values(tmp_path):
    write_run(tmp_path / "run", vanishing_at=())
    trial = create_trial(str(tmp_path / "run"))
    rule = AllZero(trial, collection_names=["gradients", "weights"], threshold=50)
    assert rule.params == {"collection_names": "gradients,weights", "threshold": "50"}
    invoke_rule(rule)
    assert rule.findings == [] and rule.steps_evaluated == 10


def test_a_list_item_holding_a_comma_stays_one_regex(tmp_path):
    """A regex of a Python list keeps its "{1,2}" (the items are passed one by one, their commas
    escaped, not joined into a comma-separated string that splits them again)."""
    write_run(tmp_path / "run")
    trial = create_trial(str(tmp_path / "run"))
    rule = AllZero(trial, tensor_regex=[r"gradient/\w{1,2}$"], threshold=0)
    invoke_rule(rule)
    assert {f.tensor for f in rule.findings} == {"gradient/w"} and rule.conditions_met == 10
    assert AllZero(trial, tensor_regex=[r"gradient/\w{2,3}$"], threshold=0).params == {
        "tensor_regex": r"gradient/\w{2\,3}$", "threshold": "0"}


def test_numeric_parameters_of_numpy_types(tmp_path):
    """A float subclass is sent as the float it is (numpy 2's repr of np.float64 is
    "np.float64(1e-07)", which no rule parses), a numpy integer as its int."""
    class Float(float):
        def __repr__(self):
            return f"Float({float(self)!r})"
    write_run(tmp_path / "run")
    trial = create_trial(str(tmp_path / "run"))
    for threshold in (Float(1e-7), np.float64(1e-7)):
        rule = VanishingGradient(trial, threshold=threshold)
        assert rule.params == {"threshold": "1e-07"}
        invoke_rule(rule)
        assert [f.step for f in rule.findings] == list(VANISHING_AT)
    from smd.rules import WeightUpdateRatio
    assert WeightUpdateRatio(trial, num_steps=np.int64(3)).params["num_steps"] == "3"


@pytest.mark.parametrize("end_step", [-1, -5, 0])
def test_an_end_step_at_or_below_zero_evaluates_nothing(tmp_path, end_step):
    """smdebug's invoke_rule evaluates the steps below end_step: none for a negative one (smd's C
    call takes -1 as "no end")."""
    write_run(tmp_path / "run")
    rule = VanishingGradient(create_trial(str(tmp_path / "run")), threshold=1e-7)
    invoke_rule(rule, start_step=0, end_step=end_step)
    assert rule.steps_evaluated == 0 and rule.findings == [] and rule.end_reason == "end_step"


def test_message_file_and_finding_callback(tmp_path):
    write_run(tmp_path / "run")
    seen = []
    msgs = tmp_path / "messages.txt"
    rule = VanishingGradient(create_trial(str(tmp_path / "run")), threshold=1e-7)
    invoke_rule(rule, message_file=msgs, on_finding=seen.append)
    lines = msgs.read_text().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("SMDebugRule:VanishingGradient fired. step 3, tensor 'gradient/w'")
    assert [f.step for f in seen] == list(VANISHING_AT) and seen[0].line == lines[0]


def test_a_raising_finding_callback_cancels_the_invocation(tmp_path):
    write_run(tmp_path / "run")
    rule = VanishingGradient(create_trial(str(tmp_path / "run")), threshold=1e-7)

    def boom(finding):
        raise RuntimeError("stop here")
    with pytest.raises(RuntimeError, match="stop here"):
        invoke_rule(rule, on_finding=boom)
    assert rule.last_step == 3
    # cancelled by a callback: stopped unfinished, not a failure of the rule
    assert rule.end_reason == "stopped" and rule.failed_step == -1


@pytest.mark.parametrize("how", ["action_str", "option"])
def test_stop_training_reaches_the_running_hook(tmp_path, how):
    """smdebug's StopTraining action done locally: the rule writes the signal into the trial
    folder and the training loop's hook sees it."""
    hook = write_run(tmp_path / "run", close=False)
    hook.flush()
    assert hook.stop_requested() is False
    trial = create_trial(str(tmp_path / "run"))
    if how == "action_str":
        action = json.dumps({"name": "StopTraining", "training_job_prefix": "job"})
        rule = VanishingGradient(trial, threshold=1e-7, action_str=action)
        assert rule.stop_training
        invoke_rule(rule, end_step=9)
    else:
        rule = VanishingGradient(trial, threshold=1e-7)
        assert not rule.stop_training
        invoke_rule(rule, end_step=9, stop_training=True)
    assert hook.stop_requested() is True
    signal = json.loads((tmp_path / "run" / "stop_training.smd").read_text())
    assert signal["rule"] == "VanishingGradient" and signal["step"] in VANISHING_AT
    assert signal["tensor"] == "gradient/w"
    hook.close()


def test_actions_parse_smdebug_action_lists():
    a = Actions('[{"name": "StopTraining", "training_job_prefix": "x"}, {"name": "email", "endpoint": "a@b.c"},'
                ' {"name": "unknown"}, 3]', "R")
    assert a.stop_training and a.message_endpoints == [("email", "a@b.c")]
    assert not Actions("", "R").stop_training
    with pytest.raises(E.SMDebugValueError, match="rule R"):
        Actions("{not json", "R")


def test_similar_across_runs_compares_two_trials(tmp_path):
    write_run(tmp_path / "a")
    write_run(tmp_path / "b")
    write_run(tmp_path / "c", scale=2.0)
    a, b, c = (create_trial(str(tmp_path / n)) for n in "abc")
    same = SimilarAcrossRuns(a, b, collection_names="gradients")
    invoke_rule(same)
    assert same.findings == [] and same.steps_evaluated == 10
    diff = SimilarAcrossRuns(a, other_trials=[c], collection_names=["gradients"])
    invoke_rule(diff)
    # the runs differ wherever the gradient is not the shared 1e-9
    assert [f.step for f in diff.findings] == [s for s in range(10) if s not in VANISHING_AT]
    # the other trials as a list in second place (SageMaker's 2019 form)
    listed = SimilarAcrossRuns(a, [c], collection_names="gradients")
    invoke_rule(listed)
    assert [f.step for f in listed.findings] == [f.step for f in diff.findings]


def test_a_builtin_rule_invoked_at_one_step(tmp_path):
    """smdebug's Rule.invoke(step) on a built-in: RuleEvaluationConditionMet where the condition
    is met, nothing where it is not (it raised NotImplementedError)."""
    write_run(tmp_path / "run")
    rule = VanishingGradient(create_trial(str(tmp_path / "run")), threshold=1e-7)
    rule.invoke(0)
    with pytest.raises(E.RuleEvaluationConditionMet, match="step 3"):
        rule.invoke(VANISHING_AT[0])
    assert rule.steps_evaluated == 2


def test_a_python_rule_over_two_trials(tmp_path):
    write_run(tmp_path / "a")
    write_run(tmp_path / "c", scale=2.0)

    class Differs(Rule):
        def __init__(self, base_trial, other):
            super().__init__(base_trial, action_str="", other_trials=[other])
            self.met = []

        def set_required_tensors(self, step):
            self.req_tensors.add("gradient/w", steps=[step])
            self.req_tensors.add("gradient/w", steps=[step], trial=self.other_trials[0])

        def invoke_at_step(self, step):
            x = self.base_trial.tensor("gradient/w").value(step)
            y = self.other_trials[0].tensor("gradient/w").value(step)
            if not np.allclose(x, y):
                self.met.append(step)
                return True
            return False

    rule = Differs(create_trial(str(tmp_path / "a")), create_trial(str(tmp_path / "c")))
    assert len(rule.trials) == 2
    invoke_rule(rule)
    assert rule.met == [s for s in range(10) if s not in VANISHING_AT]
    assert [f.step for f in rule.findings] == rule.met
    with pytest.raises(TypeError):
        Differs(create_trial(str(tmp_path / "a")), "not a trial")


def test_progress_callback_reports_each_step_and_can_stop_the_invocation(tmp_path):
    write_run(tmp_path / "run")
    seen = []
    rule = VanishingGradient(create_trial(str(tmp_path / "run")), threshold=1e-7)
    invoke_rule(rule, on_progress=lambda step, outcome: seen.append((step, outcome)))
    assert seen == [(s, "condition_met" if s in VANISHING_AT else "not_met") for s in range(10)]

    class Enough(Exception):
        pass

    def stop_at_5(step, outcome):
        if step == 5:
            raise Enough()
    rule = VanishingGradient(create_trial(str(tmp_path / "run")), threshold=1e-7)
    with pytest.raises(Enough):
        invoke_rule(rule, on_progress=stop_at_5)
    assert rule.last_step == 5 and [f.step for f in rule.findings] == [3]
    assert rule.end_reason == "stopped" and rule.failed_step == -1
    with pytest.raises(TypeError):
        invoke_rule(rule, on_progress="not callable")


def test_progress_callback_stops_following_a_live_job(tmp_path):
    """An open-ended invocation on a running job waits for steps; on_progress gets "waiting"
    and ends the wait by raising."""
    hook = write_run(tmp_path / "run", steps=3, vanishing_at=(), close=False)
    hook.begin_step()  # steps 0..2 complete
    hook.flush()
    waits = []

    class Stop(Exception):
        pass

    def progress(step, outcome):
        if outcome == "waiting":
            waits.append(step)
            raise Stop()
    rule = VanishingGradient(create_trial(str(tmp_path / "run")), threshold=1e-7)
    with pytest.raises(Stop):
        invoke_rule(rule, on_progress=progress)
    assert rule.steps_evaluated == 3 and waits == [3]
    assert rule.end_reason == "stopped" and rule.failed_step == -1
    hook.close()


def test_a_wait_that_times_out_stops_the_rule(tmp_path):
    hook = write_run(tmp_path / "run", steps=3, vanishing_at=(), close=False)
    hook.begin_step()  # steps 0..2 complete; step 3 never comes
    hook.flush()
    rule = VanishingGradient(create_trial(str(tmp_path / "run")), threshold=1e-7)
    with pytest.raises(E.StepNotYetAvailable):
        invoke_rule(rule, wait_timeout_ms=200)
    assert rule.steps_evaluated == 3 and rule.end_reason == "stopped" and rule.failed_step == -1
    hook.close()


def test_a_failing_builtin_rule_ends_with_error_at_its_step(tmp_path):
    """A built-in rule whose tensor cannot be read fails at that step: the exception
    invoke_rule raises is its failure, end_reason "error", failed_step that step."""
    write_run(tmp_path / "run", steps=6)
    index = sorted((tmp_path / "run" / "events").rglob("*000000000004_worker_0.tfevents"))
    assert index, "the event file of step 4"
    index[0].write_bytes(b"not an event file")
    rule = VanishingGradient(create_trial(str(tmp_path / "run")), threshold=1e-7)
    with pytest.raises(E.SMDebugError):
        invoke_rule(rule)
    assert rule.end_reason == "error" and rule.failed_step == 4
    assert [f.step for f in rule.findings] == [3]
