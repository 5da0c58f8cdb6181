"""smdebug's Rule: subclass it, implement ``invoke_at_step(step)`` (return True when the
condition is met) and optionally ``set_required_tensors(step)``; run it with
``smd.rules.rule_invoker.invoke_rule``. smd's invoker steps through the trial, waits for running
jobs, and calls the Python methods with the GIL held. A rule may read other trials besides its
base trial (``other_trials``), e.g. to compare two runs."""
from collections import namedtuple

from smd import smdc as _smd
from smd import exceptions as E
from smd.rules.action import Actions

# The class of each smd code (smd.exceptions), read backwards: a rule's exception -> its code.
_CLASS_CODES = {cls: code for code, cls in E._CODE_CLASSES.items()}

Finding = namedtuple("Finding", "rule step tensor trial message line")
Finding.__doc__ = """One reason a rule's condition was met: the rule's name, the global step, the
tensor to blame ("" when none), the index of its trial (0: the base trial, i: other_trials[i-1]),
a message, and the one-line text smd writes to a message file."""

# smd_rule_end -> the name of why the last invocation stopped.
_END_REASONS = {_smd.SMD_RULE_END_NONE: "none", _smd.SMD_RULE_END_STEP: "end_step",
                _smd.SMD_RULE_END_NO_MORE_DATA: "no_more_data", _smd.SMD_RULE_END_OF_RULE: "end_of_rule",
                _smd.SMD_RULE_END_CONDITION_MET: "condition_met", _smd.SMD_RULE_END_ERROR: "error",
                _smd.SMD_RULE_END_STOPPED: "stopped"}


def _code_of(exc):
    """The code handed to smd's invoker for a rule's exception: the code of its class when the
    C library says that code skips the step (smdebug's TensorUnavailableForStep,
    TensorUnavailable, StepUnavailable), else INVALID_ARGUMENT for a rule lacking information, else
    INTERNAL (the invocation ends and the exception is raised again)."""
    for cls in type(exc).__mro__:
        code = _CLASS_CODES.get(cls)
        if code is not None and _smd.smd_code_skips_rule_step(code):
            return code
    if isinstance(exc, E.InsufficientInformationForRuleInvocation):
        return _smd.SMD_E_INVALID_ARGUMENT
    return _smd.SMD_E_INTERNAL


def _check_trial(name, trial):
    from smd.trials.trial import Trial
    if not isinstance(trial, Trial):
        raise TypeError(f"{name} must be an smd Trial, not {type(trial).__name__}")
    return trial


class RequiredTensors:
    """``rule.req_tensors``: what ``set_required_tensors`` declares for the current step, and
    smdebug's ways to read it back (``get``, ``get_names``, ``get_tensor_steps``)."""

    def __init__(self, rule):
        self._rule = rule
        self._ctx = None
        self._per_trial = {}  # trial index -> {tensor name: [steps]}, {tensor name: Tensor}

    def _index(self, trial):
        if trial is None:
            return 0
        for i, t in enumerate(self._rule.trials):
            if t is trial:
                return i
        raise E.SMDebugValueError(f"req_tensors: trial {trial!r} is not one of the rule's trials")

    def add(self, name, steps, trial=None, should_match_regex=False):
        """Declares tensor ``name`` (a regex when ``should_match_regex``) of ``trial`` (None: the
        base trial; else the base trial or one of the rule's other trials) at the global
        ``steps``; the invoker waits for them and reads the values before ``invoke_at_step``.
        A name the trial does not have raises TensorUnavailable, as in smdebug."""
        if isinstance(trial, bool):  # smd < 0.3 took (name, steps, should_match_regex, trial)
            trial, should_match_regex = None, trial
        index = self._index(trial)
        t = self._rule.trials[index]
        steps = [int(s) for s in steps]
        names = t.tensor_names(regex=[name]) if should_match_regex else [name]
        if not should_match_regex and not t.has_tensor(name):
            raise E.TensorUnavailable(name)
        tensor_steps, tensors = self._per_trial.setdefault(index, ({}, {}))
        for n in names:
            tensor_steps.setdefault(n, []).extend(steps)
            if n not in tensors:
                tensors[n] = t.tensor(n)
        if self._ctx is not None:
            _smd.smd_rule_context_require_tensor(self._ctx, index, name, bool(should_match_regex), steps)

    def get(self, trial=None):
        """The Tensors declared for ``trial`` (None: the base trial), a ``dict_values`` view as
        smdebug returns."""
        return self._per_trial.get(self._index(trial), ({}, {}))[1].values()

    def get_names(self, trial=None):
        """The names of the tensors declared for ``trial`` (a ``dict_keys`` view)."""
        return self._per_trial.get(self._index(trial), ({}, {}))[0].keys()

    def get_tensor_steps(self, name, trial=None):
        """The steps declared for tensor ``name`` of ``trial`` (KeyError if none were)."""
        return self._per_trial.get(self._index(trial), ({}, {}))[0][name]

    def clear(self):
        """Forgets every declaration."""
        self._per_trial.clear()

    def fetch(self):
        """Waits for the declared steps of every trial and reads each declared value (raising
        what reading raises), as smdebug's invoker does before ``invoke_at_step``."""
        for index, (tensor_steps, tensors) in self._per_trial.items():
            wanted = sorted({s for steps in tensor_steps.values() for s in steps})
            if wanted:
                self._rule.trials[index].wait_for_steps(wanted)
            for n, steps in tensor_steps.items():
                for s in steps:
                    tensors[n].value(s)


class Rule:
    """Base class of a custom rule on ``base_trial`` and optionally ``other_trials`` (smd
    Trials). ``action_str`` is smdebug's JSON action list (see :mod:`smd.rules.action`)."""

    def __init__(self, base_trial, action_str="", other_trials=None):
        self._init_common(base_trial, action_str, other_trials)
        required = self._required_cb if type(self).set_required_tensors is not Rule.set_required_tensors else None
        self._callbacks = (self._invoke_cb, required)  # kept alive as long as the smd rule
        self._rule = _smd.smd_py_rule_create_multi(self.rule_name, base_trial._trial,
                                                   [t._trial for t in self.trials[1:]], self._callbacks)
        if self._actions.stop_training:
            _smd.smd_rule_set_stop_training(self._rule, True)

    def _init_common(self, base_trial, action_str, other_trials):
        self.base_trial = _check_trial("base_trial", base_trial)
        if other_trials is not None and not isinstance(other_trials, (list, tuple)):
            raise TypeError(f"other_trials must be a list of smd Trials or None, not {type(other_trials).__name__}")
        self.other_trials = None if other_trials is None else [_check_trial("other_trials[]", t) for t in other_trials]
        self.trials = [base_trial] + (self.other_trials or [])
        self.req_tensors = RequiredTensors(self)
        self.rule_name = getattr(self, "rule_name", None) or type(self).__name__
        self.action_str = action_str
        self._actions = Actions(action_str, self.rule_name)
        self.logger = None
        self._pending = None  # the exception a Python method raised during the last invocation

    def invoke_at_step(self, step):
        """Evaluates the rule at global ``step``; True when the condition is met."""
        raise NotImplementedError("a Rule subclass implements invoke_at_step(step)")

    def invoke(self, step):
        """smdebug's single-step invocation: waits until the base trial has ``step``, then,
        without refreshing the trials, declares the required tensors, waits for and reads them,
        and calls ``invoke_at_step``; raises RuleEvaluationConditionMet when the condition is
        met. (The actions, stop training and messages, are carried out by ``invoke_rule``.)"""
        from smd.analysis.utils import no_refresh
        self.base_trial.wait_for_steps([step])
        with no_refresh(self.trials):
            self.req_tensors.clear()
            self.set_required_tensors(step)
            self.req_tensors.fetch()
            met = self.invoke_at_step(step)
        if met:
            raise E.RuleEvaluationConditionMet(self.rule_name, step)

    def set_required_tensors(self, step):
        """Declares with ``self.req_tensors.add(name, steps)`` the tensors read at ``step``."""

    def _invoke_cb(self, ctx, step):
        try:
            return (0, bool(self.invoke_at_step(step)))
        except Exception as e:  # handed to smd's invoker as the rule's error
            self._pending = e
            return (_code_of(e), f"{type(e).__name__}: {e}")

    def _required_cb(self, ctx, step):
        self.req_tensors.clear()
        self.req_tensors._ctx = ctx
        try:
            self.set_required_tensors(step)
            return 0
        except Exception as e:
            self._pending = e
            return (_code_of(e), f"{type(e).__name__}: {e}")
        finally:
            self.req_tensors._ctx = None

    # -- actions -----------------------------------------------------------------------------------
    @property
    def stop_training(self):
        """Whether a met condition raises the stop-training signal (a ``stoptraining`` action,
        or set here)."""
        return _smd.smd_rule_stop_training(self._rule)

    @stop_training.setter
    def stop_training(self, on):
        _smd.smd_rule_set_stop_training(self._rule, bool(on))

    # -- what the invocations did ----------------------------------------------------------------
    @property
    def findings(self):
        """The findings of every invocation so far, oldest first: a list of :class:`Finding`."""
        return [Finding(*f) for f in _smd.smd_py_rule_findings(self._rule)]

    def clear_findings(self):
        """Forgets the findings collected so far (the counts are kept)."""
        _smd.smd_rule_findings_clear(self._rule)

    @property
    def steps_evaluated(self):
        """Steps evaluated (condition met or not) over every invocation."""
        return _smd.smd_rule_steps_evaluated(self._rule)

    @property
    def steps_skipped(self):
        """Steps skipped (not saved, or the rule's tensors missing) over every invocation."""
        return _smd.smd_rule_steps_skipped(self._rule)

    @property
    def conditions_met(self):
        """Steps at which the condition was met, over every invocation."""
        return _smd.smd_rule_conditions_met(self._rule)

    @property
    def last_step(self):
        """The last step evaluated or skipped; -1 if none."""
        return _smd.smd_rule_last_step(self._rule)

    @property
    def end_reason(self):
        """Why the last invocation stopped: "none" (not invoked yet), "end_step", "no_more_data",
        "end_of_rule", "condition_met", "error" (this rule failed, at :attr:`failed_step`: the
        exception ``invoke_rule`` raised is its failure) or "stopped" (stopped unfinished: an
        ``on_finding``/``on_progress`` callback cancelled it, or a wait timed out)."""
        return _END_REASONS.get(_smd.smd_rule_end_reason(self._rule), "error")

    @property
    def failed_step(self):
        """The step at which the last invocation failed (``end_reason`` "error"), else -1."""
        return _smd.smd_rule_failed_step(self._rule)

    def __repr__(self):
        return f"<smd.rules.Rule {self.rule_name} on {self.base_trial.name}>"

__all__ = ["Finding", "RequiredTensors", "Rule"]
