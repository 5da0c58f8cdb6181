"""``smdebug.core.reduction_config``: ReductionConfig (the same as ``smd.reduction_config``) and
smdebug's lists of the reduction and norm names it accepts. smd also accepts "median"
(``smd_reduction_names()`` lists what the C library knows); these lists are smdebug's, which
scripts and tests iterate over to configure every reduction smdebug has."""
from smd.reduction_config import ReductionConfig  # noqa: F401

ALLOWED_REDUCTIONS = ["min", "max", "mean", "std", "variance", "sum", "prod"]
ALLOWED_NORMS = ["l1", "l2"]

__all__ = ["ReductionConfig", "ALLOWED_REDUCTIONS", "ALLOWED_NORMS"]
