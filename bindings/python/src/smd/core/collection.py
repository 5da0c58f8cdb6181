"""``smdebug.core.collection``: the Collection class (the same as ``smd.hook.Collection``)."""
from smd.hook import Collection  # noqa: F401

__all__ = ["Collection"]
