import os
from typing import Callable, Optional, Union

from smd.rules.rule import Finding, Rule

def invoke_rule(rule_obj: Rule, start_step: Optional[int] = ..., end_step: Optional[int] = ...,
                raise_eval_cond: bool = ..., *, message_file: Union[str, "os.PathLike[str]", None] = ...,
                stop_training: bool = ..., stop_at_first: bool = ..., wait_timeout_ms: Optional[int] = ...,
                on_finding: Optional[Callable[[Finding], object]] = ...,
                on_progress: Optional[Callable[[int, str], object]] = ...) -> None: ...
