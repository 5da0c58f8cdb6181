"""``smd.rules.rule_invoker.invoke_rule``: smdebug's invoke_rule over smd's invoker."""
from smd import smdc as _smd
from smd import exceptions as E


def invoke_rule(rule_obj, start_step=0, end_step=None, raise_eval_cond=False):
    """Evaluates ``rule_obj`` at every global step start_step <= step < end_step (None: until the
    job ends), waiting for steps of a running job. With ``raise_eval_cond`` the first met
    condition raises RuleEvaluationConditionMet. An exception the rule raised (other than
    TensorUnavailableForStep, TensorUnavailable and StepUnavailable, which skip the step) ends
    the invocation and is raised again here."""
    from smd.rules.rule import Rule
    if not isinstance(rule_obj, Rule):
        raise TypeError(f"rule_obj must be an smd.rules.Rule, not {type(rule_obj).__name__}")
    rule_obj._pending = None
    try:
        _smd.smd_rule_invoke(rule_obj._rule, int(start_step), -1 if end_step is None else int(end_step),
                             bool(raise_eval_cond), None)
    except E.SMDebugError as err:
        pending = rule_obj._pending
        if pending is not None and not isinstance(err, E.RuleEvaluationConditionMet):
            raise pending from err
        raise
