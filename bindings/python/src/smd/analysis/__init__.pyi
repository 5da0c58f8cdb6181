from smd.analysis import utils as utils
