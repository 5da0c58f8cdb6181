from smd import exceptions as exceptions
from smd import modes as modes
from smd._values import DLPackValue as DLPackValue
from smd._values import to_dlpack as to_dlpack
from smd.collection_keys import CollectionKeys as CollectionKeys
from smd.hook import Hook as Hook
from smd.modes import ModeKeys as ModeKeys
from smd.reduction_config import ReductionConfig as ReductionConfig
from smd.save_config import SaveConfig as SaveConfig
from smd.save_config import SaveConfigMode as SaveConfigMode
from smd.trials.trial import create_trial as create_trial

__version__: str
