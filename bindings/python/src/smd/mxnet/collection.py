"""smdebug.mxnet.collection's public names under their module path."""
from smd.collection_keys import CollectionKeys  # noqa: F401
from smd.mxnet.hook import Collection  # noqa: F401

__all__ = ["Collection", "CollectionKeys"]
