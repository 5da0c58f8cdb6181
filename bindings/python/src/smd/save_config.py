"""smdebug's SaveConfig and SaveConfigMode: when a collection is saved, per mode."""
import json

from smd import smdc as _smd
from smd.exceptions import SMDebugTypeError
from smd.modes import ModeKeys, _mode_value


class SaveConfigMode:
    """When to save in one mode: every ``save_interval`` steps from ``start_step`` up to
    ``end_step`` (exclusive; None: no end), plus the steps in ``save_steps``."""

    def __init__(self, save_interval=None, start_step=None, end_step=None, save_steps=None):
        self.save_interval = 500 if save_interval is None else int(save_interval)
        self.start_step = 0 if start_step is None else int(start_step)
        self.end_step = None if end_step is None else int(end_step)
        self.save_steps = [] if save_steps is None else [int(s) for s in save_steps]
        if self.save_interval < 1:
            raise ValueError(f"save_interval must be >= 1, not {self.save_interval}")

    def __repr__(self):
        return (f"<SaveConfigMode save_interval={self.save_interval} start_step={self.start_step} "
                f"end_step={self.end_step} save_steps={self.save_steps}>")

    def to_json_dict(self):
        """The settings as a dict (smdebug's layout: save_interval, save_steps, start_step,
        end_step)."""
        return {"save_interval": self.save_interval, "save_steps": list(self.save_steps),
                "start_step": self.start_step, "end_step": self.end_step}

    @classmethod
    def from_dict(cls, params):
        """A SaveConfigMode from such a dict (missing keys take the defaults)."""
        if not isinstance(params, dict):
            raise TypeError(f"params must be a dict, not {type(params).__name__}")
        return cls(params.get("save_interval"), params.get("start_step"), params.get("end_step"),
                   params.get("save_steps"))

    def __eq__(self, other):
        return isinstance(other, SaveConfigMode) and self.to_json_dict() == other.to_json_dict()

    __hash__ = None


class SaveConfig:
    """smdebug's SaveConfig: the same settings for every mode, or per mode through
    ``mode_save_configs`` ({ModeKeys: SaveConfigMode or None})."""

    def __init__(self, mode_save_configs=None, save_interval=None, start_step=None, end_step=None,
                 save_steps=None):
        self._listeners = []  # collections whose configuration this is (smd.hook.Collection)
        if mode_save_configs is None:
            default = SaveConfigMode(save_interval, start_step, end_step, save_steps)
            self.mode_save_configs = {m: default for m in ModeKeys}
            return
        # Per mode, as smdebug's: a mode not given (or given None) stays None, which a hook fills
        # with its defaults and a collection with its hook's setting for that mode.
        self.mode_save_configs = {m: None for m in ModeKeys}
        for mode, cfg in mode_save_configs.items():
            if cfg is not None and not isinstance(cfg, SaveConfigMode):
                raise TypeError(f"mode_save_configs values must be SaveConfigMode, not {type(cfg).__name__}")
            self.mode_save_configs[ModeKeys(_mode_value(mode))] = cfg

    def _copy(self):
        c = SaveConfig()
        c.mode_save_configs = dict(self.mode_save_configs)
        return c

    def _set_all(self, key, value):
        for mode, m in list(self.mode_save_configs.items()):
            m = m or SaveConfigMode()  # a mode left None (not given, or null in a collections file)
            fields = {"save_interval": m.save_interval, "start_step": m.start_step, "end_step": m.end_step,
                      "save_steps": m.save_steps}
            fields[key] = value
            self.mode_save_configs[mode] = SaveConfigMode(**fields)
        for listener in list(self._listeners):
            listener(self)

    def _get_all(self, key):
        values = {repr(getattr(m, key, None)) for m in self.mode_save_configs.values()}
        return getattr(self.mode_save_configs[ModeKeys.GLOBAL], key, None) if len(values) == 1 else None

    save_interval = property(lambda self: self._get_all("save_interval"),
                             lambda self, v: self._set_all("save_interval", v),
                             doc="save_interval of every mode (None when the modes differ); assigning sets every mode's.")
    start_step = property(lambda self: self._get_all("start_step"), lambda self, v: self._set_all("start_step", v),
                          doc="start_step of every mode (None when the modes differ); assigning sets every mode's.")
    end_step = property(lambda self: self._get_all("end_step"), lambda self, v: self._set_all("end_step", v),
                        doc="end_step of every mode (None when they differ or have none); assigning sets every mode's.")
    save_steps = property(lambda self: self._get_all("save_steps"), lambda self, v: self._set_all("save_steps", v),
                          doc="save_steps of every mode (None when the modes differ); assigning sets every mode's.")

    def get_save_config(self, mode):
        """The SaveConfigMode of ``mode`` (None when it was not given)."""
        return self.mode_save_configs[ModeKeys(_mode_value(mode))]

    def _to_c(self):
        cfg = _smd.smd_save_config_create()
        for mode, m in self.mode_save_configs.items():
            if m is None:
                continue  # unset: the hook's setting (for a collection) or the defaults
            _smd.smd_save_config_set(cfg, mode.value, m.save_interval, m.start_step,
                                     -1 if m.end_step is None else m.end_step, m.save_steps)
        return cfg

    def should_save_step(self, mode, step_num):
        """Whether mode step ``step_num`` of ``mode`` is saved under this configuration."""
        return _smd.smd_save_config_should_save(self._to_c(), int(step_num), _mode_value(mode))

    def to_json_dict(self):
        """{mode name: SaveConfigMode.to_json_dict()} for TRAIN, EVAL, PREDICT, GLOBAL (None for a
        mode without one: not given, or null in a trial's collections file)."""
        return {m.name: None if self.mode_save_configs[m] is None else self.mode_save_configs[m].to_json_dict()
                for m in (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT, ModeKeys.GLOBAL)}

    def to_json(self):
        """The configuration as JSON text (smdebug's layout; ``SaveConfig.from_json`` reads it)."""
        return json.dumps(self.to_json_dict())

    @classmethod
    def from_dict(cls, params):
        """A SaveConfig from ``to_json_dict``'s layout ({mode name: settings}), or as smdebug's
        takes it: keys ModeKeys or their names, values settings dicts, SaveConfigMode or None;
        None: the defaults."""
        if params is None:
            return cls()
        if not isinstance(params, dict):
            raise TypeError(f"params must be a dict, not {type(params).__name__}")
        return cls({ModeKeys[k] if isinstance(k, str) else k:
                    v if v is None or isinstance(v, SaveConfigMode) else SaveConfigMode.from_dict(v)
                    for k, v in params.items()})

    @classmethod
    def from_save_config_mode(cls, save_config_mode):
        """A SaveConfig with ``save_config_mode`` for every mode."""
        return cls(mode_save_configs={m: save_config_mode for m in ModeKeys})

    @classmethod
    def parse(cls, obj):
        """What smdebug's hooks take as save_config, as a SaveConfig: None (the defaults), a
        SaveConfig (itself), a SaveConfigMode (every mode's) or a dict (``from_dict``)."""
        if obj is None:
            return cls()
        if isinstance(obj, SaveConfig):
            return obj
        if isinstance(obj, SaveConfigMode):
            return cls.from_save_config_mode(obj)
        if isinstance(obj, dict):
            return cls.from_dict(obj)
        raise SMDebugTypeError(f"save_config must be a SaveConfig, a SaveConfigMode or a dict of "
                               f"them by mode, not {type(obj).__name__}")

    @classmethod
    def from_json(cls, text):
        """A SaveConfig from ``to_json``'s text."""
        return cls.from_dict(json.loads(text))

    def __eq__(self, other):
        return isinstance(other, SaveConfig) and self.mode_save_configs == other.mode_save_configs

    __hash__ = None

    def __repr__(self):
        return f"<SaveConfig {self.mode_save_configs}>"

__all__ = ["SaveConfig", "SaveConfigMode"]
