"""smdebug's ReductionConfig: which reductions of a tensor are saved, and whether the raw tensor
and its shape are."""
import json

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

    def to_json_dict(self):
        """smdebug's layout: save_raw_tensor, reductions (one comma-separated string, norms
        spelled l1_norm/l2_norm), save_shape."""
        names = (self.reductions + [_norm_spelling(n) for n in self.norms]
                 + ["abs_" + r for r in self.abs_reductions] + ["abs_" + _norm_spelling(n) for n in self.abs_norms])
        return {"save_raw_tensor": self.save_raw_tensor, "reductions": ",".join(names),
                "save_shape": self.save_shape}

    def to_json(self):
        """The configuration as JSON text (``ReductionConfig.from_json`` reads it)."""
        return json.dumps(self.to_json_dict())

    @classmethod
    def from_dict(cls, params):
        """A ReductionConfig from ``to_json_dict``'s layout (also SageMaker's: reductions as a
        comma-separated string); None: the defaults."""
        if params is None:
            return cls()
        if not isinstance(params, dict):
            raise TypeError(f"params must be a dict, not {type(params).__name__}")
        red, abs_red, norms, abs_norms = [], [], [], []
        for item in str(params.get("reductions", "")).split(","):
            item = item.strip()
            if not item:
                continue
            is_abs = item.startswith("abs_")
            base = item[4:] if is_abs else item
            if base.endswith("_norm"):
                (abs_norms if is_abs else norms).append(base[:-5])
            else:
                (abs_red if is_abs else red).append(base)
        return cls(red, abs_red, norms, abs_norms, _as_bool(params.get("save_raw_tensor", False)),
                   _as_bool(params.get("save_shape", False)))

    @classmethod
    def from_json(cls, text):
        """A ReductionConfig from ``to_json``'s text."""
        return cls.from_dict(json.loads(text))

    def __eq__(self, other):
        return isinstance(other, ReductionConfig) and self.to_json_dict() == other.to_json_dict()

    __hash__ = None

    def __repr__(self):
        return (f"<ReductionConfig reductions={self._names()} save_raw_tensor={self.save_raw_tensor} "
                f"save_shape={self.save_shape}>")


def _norm_spelling(name):
    return name if name.endswith("_norm") else name + "_norm"


def _as_bool(v):
    return v if isinstance(v, bool) else str(v).lower() == "true"

__all__ = ["ReductionConfig"]
