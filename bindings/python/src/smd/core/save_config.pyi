from smd.save_config import SaveConfig as SaveConfig
from smd.save_config import SaveConfigMode as SaveConfigMode
