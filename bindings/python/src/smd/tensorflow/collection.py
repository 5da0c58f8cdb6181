"""smdebug.tensorflow.collection's public names under their module path."""
from smd.collection_keys import CollectionKeys  # noqa: F401
from smd.hook import Collection  # noqa: F401

__all__ = ["Collection", "CollectionKeys"]
