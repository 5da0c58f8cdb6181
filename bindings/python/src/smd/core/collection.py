"""``smdebug.core.collection``: the Collection class (the same as ``smd.hook.Collection``) and
CollectionKeys."""
from smd.collection_keys import CollectionKeys  # noqa: F401
from smd.hook import Collection  # noqa: F401

__all__ = ["Collection", "CollectionKeys"]
