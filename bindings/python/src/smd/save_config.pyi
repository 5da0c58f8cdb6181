from typing import Any, Dict, List, Optional, Sequence, Union

from smd.modes import ModeKeys

_Mode = Union[ModeKeys, str, int]

class SaveConfigMode:
    save_interval: int
    start_step: int
    end_step: Optional[int]
    save_steps: List[int]
    def __init__(self, save_interval: Optional[int] = ..., start_step: Optional[int] = ...,
                 end_step: Optional[int] = ..., save_steps: Optional[Sequence[int]] = ...) -> None: ...
    def to_json_dict(self) -> Dict[str, Any]: ...
    @classmethod
    def from_dict(cls, params: Dict[str, Any]) -> "SaveConfigMode": ...

class SaveConfig:
    mode_save_configs: Dict[ModeKeys, Optional[SaveConfigMode]]
    def __init__(self, mode_save_configs: Optional[Dict[_Mode, Optional[SaveConfigMode]]] = ...,
                 save_interval: Optional[int] = ..., start_step: Optional[int] = ...,
                 end_step: Optional[int] = ..., save_steps: Optional[Sequence[int]] = ...) -> None: ...
    save_interval: Optional[int]
    start_step: Optional[int]
    end_step: Optional[int]
    save_steps: Optional[List[int]]
    def get_save_config(self, mode: _Mode) -> Optional[SaveConfigMode]: ...
    def should_save_step(self, mode: _Mode, step_num: int) -> bool: ...
    def to_json_dict(self) -> Dict[str, Optional[Dict[str, Any]]]: ...
    def to_json(self) -> str: ...
    @classmethod
    def from_dict(cls, params: Optional[Dict[str, Any]]) -> "SaveConfig": ...
    @classmethod
    def from_json(cls, text: str) -> "SaveConfig": ...
