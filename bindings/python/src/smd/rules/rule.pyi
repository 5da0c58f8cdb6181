from typing import Any, Iterable, List, NamedTuple, Optional, Sequence

from smd.trials.trial import Trial

class Finding(NamedTuple):
    rule: str
    step: int
    tensor: str
    trial: int
    message: str
    line: str

class RequiredTensors:
    def add(self, name: str, steps: Iterable[int], trial: Optional[Trial] = ...,
            should_match_regex: bool = ...) -> None: ...

class Rule:
    base_trial: Trial
    other_trials: Optional[List[Trial]]
    trials: List[Trial]
    req_tensors: RequiredTensors
    rule_name: str
    action_str: str
    logger: Any
    def __init__(self, base_trial: Trial, action_str: str = ..., other_trials: Optional[Sequence[Trial]] = ...) -> None: ...
    def invoke_at_step(self, step: int) -> bool: ...
    def set_required_tensors(self, step: int) -> None: ...
    @property
    def stop_training(self) -> bool: ...
    @stop_training.setter
    def stop_training(self, on: bool) -> None: ...
    @property
    def findings(self) -> List[Finding]: ...
    def clear_findings(self) -> None: ...
    @property
    def steps_evaluated(self) -> int: ...
    @property
    def steps_skipped(self) -> int: ...
    @property
    def conditions_met(self) -> int: ...
    @property
    def last_step(self) -> int: ...
    @property
    def end_reason(self) -> str: ...
