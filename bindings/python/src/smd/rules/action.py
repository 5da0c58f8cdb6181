"""smdebug's rule actions (``smdebug.rules.action.Actions``), done locally.

A rule's ``action_str`` is smdebug's JSON action list: one object or a list of objects with a
``name`` of ``"stoptraining"``, ``"email"`` or ``"sms"`` (any case). smd performs no AWS calls:
``stoptraining`` raises smd's stop-training signal (the file ``stop_training.smd`` in the base
trial's folder, which ``smd.Hook.stop_requested()`` polls) when the rule's condition is met;
``email`` and ``sms`` are accepted and recorded, and their text can go to a message file
(``invoke_rule(..., message_file=...)``) instead.
"""
import json

from smd.exceptions import SMDebugValueError

ALLOWED_ACTIONS = ["stoptraining", "sms", "email"]


class Actions:
    """The actions parsed from ``actions_str`` for the rule ``rule_name``.

    ``stop_training`` is True when a ``stoptraining`` action is present; ``message_endpoints``
    lists the ``(name, endpoint)`` of the email and sms actions. Entries that are not objects,
    have no name or an unknown one are ignored, as smdebug ignores them; text that is not JSON
    raises SMDebugValueError naming the rule."""

    def __init__(self, actions_str, rule_name):
        self.rule_name = rule_name
        self.stop_training = False
        self.message_endpoints = []
        text = (actions_str or "").strip()
        if not text:
            return
        try:
            parsed = json.loads(text.lower())
        except ValueError as e:
            raise SMDebugValueError(f"rule {rule_name}: action_str is not JSON ({e}): {actions_str!r}") from None
        entries = [parsed] if isinstance(parsed, dict) else parsed if isinstance(parsed, list) else []
        for entry in entries:
            if not isinstance(entry, dict):
                continue
            name = entry.get("name")
            if name == "stoptraining":
                self.stop_training = True
            elif name in ("email", "sms") and entry.get("endpoint"):
                self.message_endpoints.append((name, entry["endpoint"]))

    def __repr__(self):
        return f"<smd.rules.action.Actions rule={self.rule_name} stop_training={self.stop_training}>"

__all__ = ["ALLOWED_ACTIONS", "Actions"]
