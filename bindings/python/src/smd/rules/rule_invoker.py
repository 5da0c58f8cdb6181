"""``smd.rules.rule_invoker.invoke_rule``: smdebug's invoke_rule over smd's invoker."""
from smd import smdc as _smd
from smd import exceptions as E


_OUTCOMES = {0: "not_met", 1: "condition_met", 2: "skipped", 3: "waiting"}


def invoke_rule(rule_obj, start_step=0, end_step=None, raise_eval_cond=False, *, message_file=None,
                stop_training=False, stop_at_first=False, wait_timeout_ms=None, on_finding=None,
                on_progress=None):
    """Evaluates ``rule_obj`` at every global step start_step <= step < end_step (None: until the
    job ends), waiting for steps of a running job. With ``raise_eval_cond`` the first met
    condition raises RuleEvaluationConditionMet. An exception the rule raised (other than
    TensorUnavailableForStep, TensorUnavailable and StepUnavailable, which skip the step) ends
    the invocation and is raised again here. When the job has ended, the invocation returns
    after its last step (smdebug raises NoMoreData there); ``rule_obj.end_reason`` says why it
    stopped.

    smd's keyword-only extras (the actions, done locally):
    ``message_file`` appends one line per finding to this file (smdebug's email/SMS text);
    ``stop_training`` raises the stop-training signal in the base trial's folder when a
    condition is met (as a ``stoptraining`` action does; ``smd.Hook.stop_requested()`` sees
    it); ``stop_at_first`` stops evaluating after the first met condition (a SageMaker rule
    job's end); ``wait_timeout_ms`` bounds the wait for one step of a running job
    (StepNotYetAvailable after it); ``on_finding(finding)`` is called with each
    :class:`smd.rules.rule.Finding` (an exception it raises cancels the invocation, and
    invoke_rule raises it); ``on_progress(step, outcome)`` is called after each step with
    "not_met", "condition_met" or "skipped", and about once a second with "waiting" while a
    running job has not written the next step (an exception it raises cancels the invocation
    the same way: how a script stops following a live job)."""
    from smd.rules.rule import Finding, Rule
    if not isinstance(rule_obj, Rule):
        raise TypeError(f"rule_obj must be an smd.rules.Rule, not {type(rule_obj).__name__}")
    if start_step is None:
        start_step = 0
    if end_step is not None and int(end_step) < 0:
        end_step = 0  # smdebug evaluates no step before a negative end (smd's C reads -1 as none)
    options = None
    callback = progress = None
    if (message_file is not None or stop_training or stop_at_first or wait_timeout_ms is not None
            or on_finding is not None or on_progress is not None):
        options = _smd.smd_rule_invoke_options_create()
        if message_file is not None:
            _smd.smd_rule_invoke_options_set_message_file(options, str(message_file))
        _smd.smd_rule_invoke_options_set_stop_training(options, bool(stop_training))
        _smd.smd_rule_invoke_options_set_stop_at_first(options, bool(stop_at_first))
        if wait_timeout_ms is not None:
            _smd.smd_rule_invoke_options_set_wait_timeout_ms(options, int(wait_timeout_ms))
        if on_finding is not None:
            if not callable(on_finding):
                raise TypeError("on_finding must be callable")

            def callback(*fields):
                try:
                    on_finding(Finding(*fields))
                    return True
                except BaseException as e:  # raised again below, once the invocation has ended
                    rule_obj._pending = e
                    return False
            _smd.smd_py_invoke_options_set_finding_callback(options, callback)
        if on_progress is not None:
            if not callable(on_progress):
                raise TypeError("on_progress must be callable")

            def progress(step, outcome):
                try:
                    on_progress(step, _OUTCOMES.get(outcome, str(outcome)))
                    return True
                except BaseException as e:  # raised again below, once the invocation has ended
                    rule_obj._pending = e
                    return False
            _smd.smd_py_invoke_options_set_progress_callback(options, progress)
    rule_obj._pending = None
    try:
        _smd.smd_rule_invoke(rule_obj._rule, int(start_step), -1 if end_step is None else int(end_step),
                             bool(raise_eval_cond), options)
    except E.SMDebugError as err:
        pending = rule_obj._pending
        if pending is not None and not isinstance(err, E.RuleEvaluationConditionMet):
            raise pending from err
        raise
    finally:
        del callback, progress  # the options (and their callbacks) are no longer used

__all__ = ["invoke_rule"]
