"""``smd.rules``: smdebug's rule API. ``Rule`` (custom rules written in Python, over one or more
trials), ``invoke_rule``, ``RequiredTensors``, the actions (``smd.rules.action``), and SageMaker's
built-in rules by name (``VanishingGradient``, ``LossNotDecreasing``, ... from
``smd.rules.generic``), all run by smd's C invoker."""
from smd.rules.action import Actions  # noqa: F401
from smd.rules.generic import *  # noqa: F401,F403
from smd.rules.generic import __all__ as _generic_names
from smd.rules.rule import Finding, RequiredTensors, Rule  # noqa: F401
from smd.rules.rule_invoker import invoke_rule  # noqa: F401

__all__ = ["Rule", "RequiredTensors", "Finding", "Actions", "invoke_rule"] + list(_generic_names)
