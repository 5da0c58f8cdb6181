"""smdebug's exception classes, under the same names and in the same hierarchy.

Every error smd's C library reports arrives as one of these: the classes named after smdebug's
exceptions for the codes that carry their meaning, and ``SMDebugValueError``,
``SMDebugRuntimeError``, ... (or ``FileNotFoundError``, ``MemoryError``) for the others. Each
exception's message is smd's message; ``code`` is smd's error code name (e.g.
``"SMD_E_TENSOR_UNAVAILABLE"``), or None for exceptions raised by Python code.
"""
from smd import smdc as _smd
from smd.modes import GLOBAL


class SMDebugError(Exception):
    """Base of every smd exception (as smdebug's)."""

    code = None

    def __init__(self, *args):
        super().__init__(*args)
        self.msg = str(args[0]) if args else ""

    def __str__(self):
        return self.msg


class SMDebugCustomerError(SMDebugError):
    """An error in how smd was used."""


class SMDebugTypeError(SMDebugError, TypeError):
    """A wrong type."""


class SMDebugRuntimeError(SMDebugError, RuntimeError):
    """A failure while running (I/O, corrupt data, an internal error)."""


class SMDebugNotImplementedError(SMDebugError, NotImplementedError):
    """Something smd does not support."""


class SMDebugValueError(SMDebugError, ValueError):
    """A wrong value."""


class InvalidCollectionConfiguration(SMDebugError):
    """A collection's configuration is not valid."""

    def __init__(self, c_name):
        super().__init__(f"Collection {c_name} is not valid")
        self.c_name = c_name


class StepNotYetAvailable(SMDebugError):
    """The job is running and has not written the step yet."""

    def __init__(self, step, mode):
        super().__init__(f"Step {step} of mode {mode} not yet available")
        self.step, self.mode = step, mode


class MissingCollectionFiles(SMDebugError):
    """The trial has no collections file."""

    def __init__(self, msg="Training job has ended. All the collection files could not be loaded"):
        super().__init__(msg)


class IndexReaderException(SMDebugError):
    """An index file could not be read."""

    def __init__(self, message):
        super().__init__(message)


class StepUnavailable(SMDebugError):
    """The step was not saved."""

    def __init__(self, step, mode):
        super().__init__(f"Step {step} of mode {mode} is not available as it was not saved")
        self.step, self.mode = step, mode


class TensorUnavailableForStep(SMDebugError):
    """The step exists but this tensor was not saved there."""

    def __init__(self, tname, step, mode=GLOBAL, has_reductions=False):
        msg = f"Value for tensor {tname} is not available for step {step} with mode {mode.name if hasattr(mode, 'name') else mode} as it was not saved."
        if has_reductions:
            msg += " This tensor has reductions saved for this step. You might want to query for the reductions."
        super().__init__(msg)
        self.tname, self.step, self.mode, self.has_reductions = tname, step, mode, has_reductions


class ShapeUnavailableForStep(SMDebugError):
    """Neither the shape nor the value of the tensor was saved at the step."""

    def __init__(self, tname, step, mode=GLOBAL):
        super().__init__(f"Shape for tensor {tname} is not available for step {step} with mode {mode}")
        self.tname, self.step, self.mode = tname, step, mode


class TensorUnavailable(SMDebugError):
    """The trial has no tensor of this name."""

    def __init__(self, tname):
        super().__init__(f"Tensor {tname} was not saved.")
        self.tname = tname


class InvalidWorker(SMDebugError):
    """The worker did not save the tensor at the step."""

    def __init__(self, worker):
        super().__init__(f"Invalid Worker: {worker}")
        self.worker = worker


class NoMoreProfilerData(SMDebugError):
    """smdebug's profiler reader reached the end of training (smd reads no profiler data; kept
    for scripts that catch it)."""

    def __init__(self, timestamp):
        super().__init__(f"Looking for timestamp {timestamp} and reached end of training.")
        self.timestamp = timestamp


class NoMoreData(SMDebugError):
    """The job ended before the step."""

    def __init__(self, step, mode, last_step):
        super().__init__(f"Looking for step:{step} for mode {mode} and reached end of training. Max step available is {last_step}")
        self.step, self.mode, self.last_step = step, mode, last_step


class RuleEvaluationConditionMet(SMDebugError):
    """A rule's condition held at a step."""

    def __init__(self, rule_name, step, end_of_rule=False):
        super().__init__(f"Evaluation of the rule {rule_name} at step {step} resulted in the condition being met")
        self.rule_name, self.step, self.end_of_rule = rule_name, step, end_of_rule


class InsufficientInformationForRuleInvocation(SMDebugError):
    """A rule lacks a parameter it needs (e.g. AllZero without collection_names or
    tensor_regex). smd's built-in rules report it as SMDebugValueError at creation."""

    def __init__(self, rule_name, message):
        super().__init__(f"Insufficient information to invoke rule {rule_name}: {message}")
        self.rule_name = rule_name


class FileNotFoundSMDebugError(SMDebugError, FileNotFoundError):
    """smd's SMD_E_NOT_FOUND: a folder, file or collection that does not exist."""


class OutOfMemorySMDebugError(SMDebugError, MemoryError):
    """smd's SMD_E_OUT_OF_MEMORY."""

    def __new__(cls, *args):
        # MemoryError.__new__, which attribute lookup finds first, refuses to make a subclass
        # whose layout base is another exception (TypeError "... is not safe").
        return BaseException.__new__(cls, *args)


# smd's C error codes (smd/common.h, the C library's constants) -> the class raised for them;
# codes not listed raise SMDebugRuntimeError.
_CODE_CLASSES = {
    _smd.SMD_E_INVALID_ARGUMENT: SMDebugValueError,
    _smd.SMD_E_NOT_FOUND: FileNotFoundSMDebugError,
    _smd.SMD_E_CORRUPT: IndexReaderException,
    _smd.SMD_E_OUT_OF_MEMORY: OutOfMemorySMDebugError,
    _smd.SMD_E_UNSUPPORTED: SMDebugNotImplementedError,
    _smd.SMD_E_TENSOR_UNAVAILABLE_FOR_STEP: TensorUnavailableForStep,
    _smd.SMD_E_TENSOR_UNAVAILABLE: TensorUnavailable,
    _smd.SMD_E_STEP_UNAVAILABLE: StepUnavailable,
    _smd.SMD_E_STEP_NOT_YET_AVAILABLE: StepNotYetAvailable,
    _smd.SMD_E_NO_MORE_DATA: NoMoreData,
    _smd.SMD_E_MISSING_COLLECTION_FILES: MissingCollectionFiles,
    _smd.SMD_E_SHAPE_UNAVAILABLE_FOR_STEP: ShapeUnavailableForStep,
    _smd.SMD_E_INVALID_WORKER: InvalidWorker,
    _smd.SMD_E_RULE_CONDITION_MET: RuleEvaluationConditionMet,
}


def _from_code(code, message):
    """The exception for an smd error code, carrying smd's message (not calling the class's
    smdebug-style constructor, whose arguments the C error does not have separately)."""
    cls = _CODE_CLASSES.get(code, SMDebugRuntimeError)
    exc = cls.__new__(cls)
    Exception.__init__(exc, message)
    exc.msg = message
    name = _smd.smd_code_name(code)  # the C library's name of the code
    exc.code = name if name is not None else f"SMD_E_UNKNOWN({code})"
    return exc


def _raise_from_code(code, message):
    raise _from_code(code, message)

__all__ = ["SMDebugError", "SMDebugCustomerError", "SMDebugTypeError", "SMDebugRuntimeError",
           "SMDebugNotImplementedError", "SMDebugValueError", "InvalidCollectionConfiguration",
           "StepNotYetAvailable", "MissingCollectionFiles", "IndexReaderException", "StepUnavailable",
           "TensorUnavailableForStep", "ShapeUnavailableForStep", "TensorUnavailable", "InvalidWorker",
           "NoMoreProfilerData", "NoMoreData", "RuleEvaluationConditionMet",
           "InsufficientInformationForRuleInvocation", "FileNotFoundSMDebugError", "OutOfMemorySMDebugError"]
