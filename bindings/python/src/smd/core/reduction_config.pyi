from smd.reduction_config import ReductionConfig as ReductionConfig

ALLOWED_REDUCTIONS: list[str]
ALLOWED_NORMS: list[str]
