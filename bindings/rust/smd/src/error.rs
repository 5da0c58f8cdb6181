//! Errors: every fallible call returns `Result<_, Error>`; the kind is the C library's `smd_code`.
use smd_sys as sys;
use std::ffi::CStr;
use std::fmt;

/// What went wrong, one variant per `smd_code` of `smd/common.h`. The variants from
/// `TensorUnavailableForStep` to `RuleConditionMet` carry the meaning of smdebug's exception
/// classes of the same names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A bug or an unexpected failure (also a panic inside a Rust callback).
    Internal,
    /// NULL pointer, bad size, bad name, bad option value, a string with a NUL byte, ...
    InvalidArgument,
    /// A file, folder, collection or object that does not exist.
    NotFound,
    /// Reading or writing storage failed.
    Io,
    /// Data on storage is malformed.
    Corrupt,
    /// Out of memory.
    OutOfMemory,
    /// A valid request smd cannot serve.
    Unsupported,
    /// The object cannot do this now (e.g. the hook is closed).
    InvalidState,
    /// E.g. out_dir already holds a finished run.
    AlreadyExists,
    /// A callback asked to stop.
    Cancelled,
    /// smdebug's TensorUnavailableForStep.
    TensorUnavailableForStep,
    /// smdebug's TensorUnavailable.
    TensorUnavailable,
    /// smdebug's StepUnavailable.
    StepUnavailable,
    /// smdebug's StepNotYetAvailable.
    StepNotYetAvailable,
    /// smdebug's NoMoreData.
    NoMoreData,
    /// smdebug's MissingCollectionFiles.
    MissingCollectionFiles,
    /// smdebug's ShapeUnavailableForStep.
    ShapeUnavailableForStep,
    /// smdebug's InvalidWorker.
    InvalidWorker,
    /// smdebug's RuleEvaluationConditionMet.
    RuleConditionMet,
    /// An S3/HTTP failure.
    Http,
    /// S3 credentials missing or refused.
    Auth,
    /// A code newer than this crate.
    Other(i32),
}

impl ErrorKind {
    /// The kind of a C `smd_code`.
    pub fn from_code(code: i32) -> ErrorKind {
        use ErrorKind::*;
        match code {
            sys::SMD_E_INTERNAL => Internal,
            sys::SMD_E_INVALID_ARGUMENT => InvalidArgument,
            sys::SMD_E_NOT_FOUND => NotFound,
            sys::SMD_E_IO => Io,
            sys::SMD_E_CORRUPT => Corrupt,
            sys::SMD_E_OUT_OF_MEMORY => OutOfMemory,
            sys::SMD_E_UNSUPPORTED => Unsupported,
            sys::SMD_E_INVALID_STATE => InvalidState,
            sys::SMD_E_ALREADY_EXISTS => AlreadyExists,
            sys::SMD_E_CANCELLED => Cancelled,
            sys::SMD_E_TENSOR_UNAVAILABLE_FOR_STEP => TensorUnavailableForStep,
            sys::SMD_E_TENSOR_UNAVAILABLE => TensorUnavailable,
            sys::SMD_E_STEP_UNAVAILABLE => StepUnavailable,
            sys::SMD_E_STEP_NOT_YET_AVAILABLE => StepNotYetAvailable,
            sys::SMD_E_NO_MORE_DATA => NoMoreData,
            sys::SMD_E_MISSING_COLLECTION_FILES => MissingCollectionFiles,
            sys::SMD_E_SHAPE_UNAVAILABLE_FOR_STEP => ShapeUnavailableForStep,
            sys::SMD_E_INVALID_WORKER => InvalidWorker,
            sys::SMD_E_RULE_CONDITION_MET => RuleConditionMet,
            sys::SMD_E_HTTP => Http,
            sys::SMD_E_AUTH => Auth,
            other => Other(other),
        }
    }

    /// The C `smd_code` of this kind.
    pub fn code(self) -> i32 {
        use ErrorKind::*;
        match self {
            Internal => sys::SMD_E_INTERNAL,
            InvalidArgument => sys::SMD_E_INVALID_ARGUMENT,
            NotFound => sys::SMD_E_NOT_FOUND,
            Io => sys::SMD_E_IO,
            Corrupt => sys::SMD_E_CORRUPT,
            OutOfMemory => sys::SMD_E_OUT_OF_MEMORY,
            Unsupported => sys::SMD_E_UNSUPPORTED,
            InvalidState => sys::SMD_E_INVALID_STATE,
            AlreadyExists => sys::SMD_E_ALREADY_EXISTS,
            Cancelled => sys::SMD_E_CANCELLED,
            TensorUnavailableForStep => sys::SMD_E_TENSOR_UNAVAILABLE_FOR_STEP,
            TensorUnavailable => sys::SMD_E_TENSOR_UNAVAILABLE,
            StepUnavailable => sys::SMD_E_STEP_UNAVAILABLE,
            StepNotYetAvailable => sys::SMD_E_STEP_NOT_YET_AVAILABLE,
            NoMoreData => sys::SMD_E_NO_MORE_DATA,
            MissingCollectionFiles => sys::SMD_E_MISSING_COLLECTION_FILES,
            ShapeUnavailableForStep => sys::SMD_E_SHAPE_UNAVAILABLE_FOR_STEP,
            InvalidWorker => sys::SMD_E_INVALID_WORKER,
            RuleConditionMet => sys::SMD_E_RULE_CONDITION_MET,
            Http => sys::SMD_E_HTTP,
            Auth => sys::SMD_E_AUTH,
            Other(c) => c,
        }
    }

    /// The library's stable name of the code, e.g. `"SMD_E_NOT_FOUND"`.
    pub fn name(self) -> &'static str {
        // smd_code_name returns a static string, or NULL for a code the library does not know.
        let p = unsafe { sys::smd_code_name(self.code()) };
        if p.is_null() {
            return "SMD_E_UNKNOWN";
        }
        // SAFETY: a non-NULL name is a static NUL-terminated string.
        unsafe { CStr::from_ptr(p) }.to_str().unwrap_or("SMD_E_UNKNOWN")
    }

    /// Whether a custom rule failing with this kind skips the step (the data is absent:
    /// `TensorUnavailableForStep`, `TensorUnavailable`, `StepUnavailable`) instead of ending the
    /// invocation; the C library's policy.
    pub fn skips_rule_step(self) -> bool {
        unsafe { sys::smd_code_skips_rule_step(self.code()) }
    }
}

/// An error of the smd library (or of this binding's argument checks).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

impl Error {
    /// An error of the given kind and message.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error { kind, message: message.into() }
    }

    /// The kind of error.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message: what was wrong, naming the file, step, tensor or argument.
    pub fn message(&self) -> &str {
        &self.message
    }

    pub(crate) fn invalid(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::InvalidArgument, message)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.name(), self.message)
    }
}

impl std::error::Error for Error {}

/// The result of every fallible call.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Converts (and frees) an `smd_error*`: NULL is success.
pub(crate) fn check(err: *mut sys::smd_error) -> Result<()> {
    if err.is_null() {
        return Ok(());
    }
    // SAFETY: err is a live error owned by us; the message lives until smd_error_free.
    unsafe {
        let kind = ErrorKind::from_code(sys::smd_error_code(err));
        let message = CStr::from_ptr(sys::smd_error_message(err)).to_string_lossy().into_owned();
        sys::smd_error_free(err);
        Err(Error { kind, message })
    }
}
