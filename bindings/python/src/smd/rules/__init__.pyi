from smd.rules.action import Actions as Actions
from smd.rules.generic import *
from smd.rules.generic import BuiltinRule as BuiltinRule
from smd.rules.generic import builtin_rule as builtin_rule
from smd.rules.generic import builtin_rule_names as builtin_rule_names
from smd.rules.rule import Finding as Finding
from smd.rules.rule import RequiredTensors as RequiredTensors
from smd.rules.rule import Rule as Rule
from smd.rules.rule_invoker import invoke_rule as invoke_rule
