from typing import Any, Dict, List, Optional, Sequence

class ReductionConfig:
    reductions: List[str]
    abs_reductions: List[str]
    norms: List[str]
    abs_norms: List[str]
    save_raw_tensor: bool
    save_shape: bool
    def __init__(self, reductions: Optional[Sequence[str]] = ..., abs_reductions: Optional[Sequence[str]] = ...,
                 norms: Optional[Sequence[str]] = ..., abs_norms: Optional[Sequence[str]] = ...,
                 save_raw_tensor: bool = ..., save_shape: bool = ...) -> None: ...
    def to_json_dict(self) -> Dict[str, Any]: ...
    def to_json(self) -> str: ...
    @classmethod
    def from_dict(cls, params: Optional[Dict[str, Any]]) -> "ReductionConfig": ...
    @classmethod
    def from_json(cls, text: str) -> "ReductionConfig": ...
