from smd.collection_keys import CollectionKeys as CollectionKeys
from smd.hook import Collection as Collection
