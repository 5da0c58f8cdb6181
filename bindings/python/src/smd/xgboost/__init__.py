"""smd.xgboost: smdebug's XGBoost hook (``smdebug.xgboost``) on smd. Importing it imports xgboost."""
from smd import modes  # noqa: F401
from smd.collection_keys import CollectionKeys  # noqa: F401
from smd.reduction_config import ReductionConfig  # noqa: F401
from smd.save_config import SaveConfig, SaveConfigMode  # noqa: F401
from smd.hook import Collection  # noqa: F401
from smd.trials import create_trial  # noqa: F401
from smd.xgboost.hook import Hook, del_hook, get_hook, set_hook, tree_columns  # noqa: F401
