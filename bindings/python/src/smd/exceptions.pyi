from typing import Any, Optional

class SMDebugError(Exception):
    code: Optional[str]
    msg: str
    def __init__(self, *args: Any) -> None: ...

class SMDebugCustomerError(SMDebugError): ...
class SMDebugTypeError(SMDebugError, TypeError): ...
class SMDebugRuntimeError(SMDebugError, RuntimeError): ...
class SMDebugNotImplementedError(SMDebugError, NotImplementedError): ...
class SMDebugValueError(SMDebugError, ValueError): ...

class InvalidCollectionConfiguration(SMDebugError):
    c_name: str
    def __init__(self, c_name: str) -> None: ...

class StepNotYetAvailable(SMDebugError):
    step: int
    mode: Any
    def __init__(self, step: int, mode: Any) -> None: ...

class MissingCollectionFiles(SMDebugError):
    def __init__(self, msg: str = ...) -> None: ...

class IndexReaderException(SMDebugError):
    def __init__(self, message: str) -> None: ...

class StepUnavailable(SMDebugError):
    step: int
    mode: Any
    def __init__(self, step: int, mode: Any) -> None: ...

class TensorUnavailableForStep(SMDebugError):
    tname: str
    step: int
    mode: Any
    has_reductions: bool
    def __init__(self, tname: str, step: int, mode: Any = ..., has_reductions: bool = ...) -> None: ...

class ShapeUnavailableForStep(SMDebugError):
    tname: str
    step: int
    mode: Any
    def __init__(self, tname: str, step: int, mode: Any = ...) -> None: ...

class TensorUnavailable(SMDebugError):
    tname: str
    def __init__(self, tname: str) -> None: ...

class InvalidWorker(SMDebugError):
    worker: str
    def __init__(self, worker: str) -> None: ...

class NoMoreProfilerData(SMDebugError):
    timestamp: Any
    def __init__(self, timestamp: Any) -> None: ...

class NoMoreData(SMDebugError):
    step: int
    mode: Any
    last_step: int
    def __init__(self, step: int, mode: Any, last_step: int) -> None: ...

class RuleEvaluationConditionMet(SMDebugError):
    rule_name: str
    step: int
    end_of_rule: bool
    def __init__(self, rule_name: str, step: int, end_of_rule: bool = ...) -> None: ...

class InsufficientInformationForRuleInvocation(SMDebugError):
    rule_name: str
    def __init__(self, rule_name: str, message: str) -> None: ...

class FileNotFoundSMDebugError(SMDebugError, FileNotFoundError): ...
class OutOfMemorySMDebugError(SMDebugError, MemoryError): ...
