from smd.core import collection as collection
from smd.core import modes as modes
from smd.core import reduction_config as reduction_config
from smd.core import save_config as save_config
from smd.core import tensor as tensor
