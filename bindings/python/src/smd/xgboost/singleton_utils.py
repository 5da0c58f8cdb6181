"""smdebug.xgboost.singleton_utils's functions under their module path: the hook singleton."""
from smd.xgboost import del_hook, get_hook, set_hook  # noqa: F401

__all__ = ["get_hook", "set_hook", "del_hook"]
