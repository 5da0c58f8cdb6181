"""smdebug's Rule: subclass it, implement ``invoke_at_step(step)`` (return True when the
condition is met) and optionally ``set_required_tensors(step)``; run it with
``smd.rules.rule_invoker.invoke_rule``. smd's invoker steps through the trial, waits for running
jobs, and calls the Python methods with the GIL held."""
from smd import smdc as _smd
from smd import exceptions as E

# Python exceptions a rule raises -> smd codes; the invoker skips the step for the first three,
# as smdebug's invoker does.
_SKIP_CODES = {E.TensorUnavailableForStep: 11, E.TensorUnavailable: 12, E.StepUnavailable: 13}


def _code_of(exc):
    for cls, code in _SKIP_CODES.items():
        if isinstance(exc, cls):
            return code
    if isinstance(exc, E.InsufficientInformationForRuleInvocation):
        return 2
    return 1


class RequiredTensors:
    """``rule.req_tensors``: what ``set_required_tensors`` declares for the current step."""

    def __init__(self, rule):
        self._rule = rule
        self._ctx = None

    def add(self, name, steps, should_match_regex=False, trial=None):
        if self._ctx is None:
            raise E.SMDebugRuntimeError("req_tensors.add is only valid inside set_required_tensors")
        if trial is not None and trial is not self._rule.base_trial:
            raise E.SMDebugNotImplementedError("smd binds rules on one trial only (base_trial)")
        _smd.smd_rule_context_require_tensor(self._ctx, 0, name, bool(should_match_regex),
                                             [int(s) for s in steps])


class Rule:
    """Base class of a custom rule on ``base_trial`` (an smd Trial)."""

    def __init__(self, base_trial, action_str="", other_trials=None):
        from smd.trials.trial import Trial
        if not isinstance(base_trial, Trial):
            raise TypeError(f"base_trial must be an smd Trial, not {type(base_trial).__name__}")
        if other_trials:
            raise E.SMDebugNotImplementedError("smd binds rules on one trial only (other_trials)")
        self.base_trial = base_trial
        self.other_trials = []
        self.trials = [base_trial]
        self.req_tensors = RequiredTensors(self)
        self.action_str = action_str
        self.logger = None
        self._pending = None  # the exception a Python method raised during the last invocation
        required = self._required_cb if type(self).set_required_tensors is not Rule.set_required_tensors else None
        self._callbacks = (self._invoke_cb, required)  # kept alive as long as the smd rule
        self._rule = _smd.smd_py_rule_create(type(self).__name__, base_trial._trial, self._callbacks)

    def invoke_at_step(self, step):
        raise NotImplementedError("a Rule subclass implements invoke_at_step(step)")

    def set_required_tensors(self, step):
        """Declares with ``self.req_tensors.add(name, steps)`` the tensors read at ``step``."""

    def _invoke_cb(self, ctx, step):
        try:
            return (0, bool(self.invoke_at_step(step)))
        except Exception as e:  # handed to smd's invoker as the rule's error
            self._pending = e
            return (_code_of(e), f"{type(e).__name__}: {e}")

    def _required_cb(self, ctx, step):
        self.req_tensors._ctx = ctx
        try:
            self.set_required_tensors(step)
            return 0
        except Exception as e:
            self._pending = e
            return (_code_of(e), f"{type(e).__name__}: {e}")
        finally:
            self.req_tensors._ctx = None

    # -- what the last invocation did ---------------------------------------------------------
    @property
    def steps_evaluated(self):
        return _smd.smd_rule_steps_evaluated(self._rule)

    @property
    def conditions_met(self):
        return _smd.smd_rule_conditions_met(self._rule)

    @property
    def last_step(self):
        return _smd.smd_rule_last_step(self._rule)
