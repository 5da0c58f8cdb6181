from smd.hook import Collection as Collection
