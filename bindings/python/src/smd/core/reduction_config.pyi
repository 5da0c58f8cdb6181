from smd.reduction_config import ReductionConfig as ReductionConfig
