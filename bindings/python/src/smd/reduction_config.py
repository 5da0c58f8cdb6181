"""smdebug's ReductionConfig: which reductions of a tensor are saved, and whether the raw tensor
and its shape are."""
from smd import smdc as _smd


class ReductionConfig:
    """``reductions`` and ``abs_reductions`` from min, max, mean, std, variance, sum, prod;
    ``norms`` and ``abs_norms`` from l1, l2; ``save_raw_tensor``; ``save_shape``."""

    def __init__(self, reductions=None, abs_reductions=None, norms=None, abs_norms=None,
                 save_raw_tensor=False, save_shape=False):
        self.reductions = list(reductions or [])
        self.abs_reductions = list(abs_reductions or [])
        self.norms = list(norms or [])
        self.abs_norms = list(abs_norms or [])
        self.save_raw_tensor = bool(save_raw_tensor)
        self.save_shape = bool(save_shape)
        self._to_c()  # unknown names fail here, with smd's message

    def _names(self):
        return (self.reductions + ["abs_" + r for r in self.abs_reductions] + self.norms
                + ["abs_" + r for r in self.abs_norms])

    def _to_c(self):
        cfg = _smd.smd_reduction_config_create()
        for name in self._names():
            if not isinstance(name, str):
                raise TypeError(f"reduction names must be str, not {type(name).__name__}")
            _smd.smd_reduction_config_add(cfg, name)
        _smd.smd_reduction_config_set_save_raw_tensor(cfg, self.save_raw_tensor)
        _smd.smd_reduction_config_set_save_shape(cfg, self.save_shape)
        return cfg

    def __repr__(self):
        return (f"<ReductionConfig reductions={self._names()} save_raw_tensor={self.save_raw_tensor} "
                f"save_shape={self.save_shape}>")

__all__ = ["ReductionConfig"]
