"""smdebug's PyTorch API over smd: ``import smd.pytorch as smd`` in place of
``import smdebug.pytorch as smd``. Importing this package imports torch; ``import smd`` does not."""
from smd import modes  # noqa: F401
from smd.collection_keys import CollectionKeys  # noqa: F401
from smd.modes import ModeKeys  # noqa: F401
from smd.pytorch.hook import Collection, Hook, del_hook, get_hook, set_hook  # noqa: F401
from smd.reduction_config import ReductionConfig  # noqa: F401
from smd.save_config import SaveConfig, SaveConfigMode  # noqa: F401
from smd.trials import create_trial  # noqa: F401
