"""``smd.rules``: smdebug's Rule base class for custom rules written in Python."""
from smd.rules.rule import RequiredTensors, Rule  # noqa: F401

__all__ = ["Rule", "RequiredTensors"]
