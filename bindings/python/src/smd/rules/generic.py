"""SageMaker Debugger's built-in rules by name (historically ``smdebug.rules.generic``), run by
smd's C implementation (docs/rules.md describes each one).

Each rule is a class named as SageMaker names it (``VanishingGradient``, ``LossNotDecreasing``,
...) taking the base trial, then its parameters (keyword, or positional in the documented order),
``other_trials`` for the rules that compare runs (``SimilarAcrossRuns`` also takes the other trial
as its second positional argument, as SageMaker's did), and ``action_str`` (smdebug's JSON action
list). Parameter values may be Python values (numbers, bools, lists of str, modes) or the strings
SageMaker passes ("0.0000001", "True", "gradients,weights"). An unknown parameter or a value that
does not parse raises SMDebugValueError naming the rule, the parameter and the value.

    from smd.rules import VanishingGradient, invoke_rule
    invoke_rule(VanishingGradient(trial, threshold=1e-7), raise_eval_cond=True)
"""
import numbers
from enum import Enum

from smd import smdc as _smd
from smd.rules.rule import Rule

__all__ = ["BuiltinRule", "builtin_rule", "builtin_rule_names"]


def _param_str(value):
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, Enum):
        return value.name
    if isinstance(value, (list, tuple, set, frozenset)):
        # One item per element: a comma inside an item (a regex's "{1,2}") is escaped as "\,",
        # which smd's list parser reads back as a comma instead of splitting there.
        return ",".join(_param_str(v).replace(",", "\\,") for v in value)
    if isinstance(value, float):
        return repr(float(value))  # np.float64's repr is "np.float64(...)" under numpy 2
    if isinstance(value, numbers.Integral):
        return str(int(value))
    return str(value)


class BuiltinRule(Rule):
    """Base class of the built-in rules; ``rule_name`` names the C implementation."""

    rule_name = None
    #: how many other trials come positionally after base_trial (SimilarAcrossRuns: 1)
    _positional_trials = 0

    def __init__(self, base_trial, *args, other_trials=None, action_str="", **params):
        args = list(args)
        if self._positional_trials and args and other_trials is None:
            if isinstance(args[0], (list, tuple)):  # SimilarAcrossRuns(base, [other, ...])
                other_trials, args = list(args[0]), args[1:]
            else:
                other_trials, args = args[:self._positional_trials], args[self._positional_trials:]
        names = self.parameter_names()
        if len(args) > len(names):
            raise TypeError(f"{self.rule_name} takes at most {len(names)} parameters after the trial(s) "
                            f"({', '.join(names)}), {len(args)} given")
        for name, value in zip(names, args):
            if name in params:
                raise TypeError(f"{self.rule_name} got parameter {name!r} twice")
            params[name] = value
        self._init_common(base_trial, action_str, other_trials)
        strings = {k: _param_str(v) for k, v in params.items() if v is not None}
        if action_str:
            strings["action_json"] = action_str
        self.params = dict(strings)
        self._rule = _smd.smd_py_rule_create_builtin(self.rule_name, base_trial._trial,
                                                     [t._trial for t in self.trials[1:]], strings)

    def invoke_at_step(self, step):
        """Built-in rules are evaluated by smd's invoker (``invoke_rule``), not from Python."""
        raise NotImplementedError(f"{self.rule_name} is evaluated by smd's invoker: use invoke_rule")

    def invoke(self, step):
        """smdebug's single-step invocation: evaluates the rule at global ``step`` by smd's
        invoker (waiting for a running job to write it) and raises RuleEvaluationConditionMet
        when its condition is met there. A step the job did not save is skipped."""
        from smd.rules.rule_invoker import invoke_rule
        invoke_rule(self, start_step=step, end_step=step + 1, raise_eval_cond=True)

    @classmethod
    def parameter_names(cls):
        """The rule's parameter names, in the documented order."""
        return list(_smd.smd_py_rule_builtin_params(cls.rule_name)[0])

    @classmethod
    def parameters(cls):
        """The rule's parameters: a dict name -> (default as SageMaker writes it, "" when none;
        one-line description)."""
        names, defaults, helps = _smd.smd_py_rule_builtin_params(cls.rule_name)
        return {n: (d, h) for n, d, h in zip(names, defaults, helps)}


def builtin_rule_names():
    """The names of smd's built-in rules, in documentation order."""
    return list(_smd.smd_rule_builtin_names())


def builtin_rule(name, base_trial, *args, other_trials=None, action_str="", **params):
    """The built-in rule called ``name`` (any case), as the class of that name would make it."""
    for n in builtin_rule_names():
        if n.lower() == str(name).lower():
            return globals()[n](base_trial, *args, other_trials=other_trials, action_str=action_str, **params)
    from smd.exceptions import SMDebugValueError
    raise SMDebugValueError(f"unknown built-in rule {name!r} (known: {', '.join(builtin_rule_names())})")


def _make(name):
    summary = _smd.smd_rule_builtin_summary(name) or name
    names, defaults, helps = _smd.smd_py_rule_builtin_params(name)
    lines = [f"{summary}.", "", "Parameters (default as SageMaker writes it):"]
    lines += [f"  {n} ({d or 'none'}): {h}" for n, d, h in zip(names, defaults, helps)]
    cls = type(name, (BuiltinRule,), {"rule_name": name, "__doc__": "\n".join(lines),
                                      "__module__": __name__,
                                      "_positional_trials": 1 if name == "SimilarAcrossRuns" else 0})
    globals()[name] = cls
    __all__.append(name)


for _name in _smd.smd_rule_builtin_names():
    _make(_name)
del _name
