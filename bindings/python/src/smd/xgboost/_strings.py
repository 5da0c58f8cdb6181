"""Saving 1-D string arrays (DT_STRING, as smdebug saves numpy str arrays) of the XGBoost hook."""
from smd import smdc as _smd


def save_strings(hook, name, values, collections):
    """Offers the strings `values` as the 1-D string tensor `name` of smd.Hook `hook`."""
    items = [str(v).encode("utf-8", "surrogateescape") for v in values]
    colls = [collections] if isinstance(collections, str) else list(collections)
    _smd.smd_py_hook_save_strings(hook._hook, name, items, colls)
