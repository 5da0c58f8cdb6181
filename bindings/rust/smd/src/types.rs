//! Modes, data types and the element types that can be saved and viewed without copies.
use crate::error::{check, Error, Result};
use crate::util::{borrowed_str, cstring};
use smd_sys as sys;

/// smdebug's modes. `All` is only meaningful for save-configuration setters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Every mode (save configurations only).
    All,
    /// Training.
    Train,
    /// Evaluation.
    Eval,
    /// Prediction.
    Predict,
    /// Global steps (no particular mode).
    Global,
}

impl Mode {
    pub(crate) fn raw(self) -> sys::smd_mode {
        match self {
            Mode::All => sys::SMD_MODE_ALL,
            Mode::Train => sys::SMD_MODE_TRAIN,
            Mode::Eval => sys::SMD_MODE_EVAL,
            Mode::Predict => sys::SMD_MODE_PREDICT,
            Mode::Global => sys::SMD_MODE_GLOBAL,
        }
    }

    pub(crate) fn from_raw(m: sys::smd_mode) -> Result<Mode> {
        Ok(match m {
            sys::SMD_MODE_ALL => Mode::All,
            sys::SMD_MODE_TRAIN => Mode::Train,
            sys::SMD_MODE_EVAL => Mode::Eval,
            sys::SMD_MODE_PREDICT => Mode::Predict,
            sys::SMD_MODE_GLOBAL => Mode::Global,
            other => return Err(Error::new(crate::ErrorKind::Internal, format!("unknown mode {other}"))),
        })
    }

    /// "TRAIN", "EVAL", "PREDICT", "GLOBAL" (and "" for `All`).
    pub fn name(self) -> &'static str {
        // SAFETY: static strings or NULL.
        unsafe { borrowed_str(sys::smd_mode_name(self.raw())) }
    }

    /// Parses a mode name, case-insensitive.
    pub fn from_name(name: &str) -> Result<Mode> {
        let c = cstring(name, "mode name")?;
        let mut out = 0;
        check(unsafe { sys::smd_mode_from_name(c.as_ptr(), &mut out) })?;
        Mode::from_raw(out)
    }
}

/// Element types of tensors (TensorFlow's DataType numbers, as stored in the files).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum DType {
    Float32,
    Float64,
    Int32,
    UInt8,
    Int16,
    Int8,
    /// A 1-D array of UTF-8 strings (`Hook::save_strings`).
    String,
    Complex64,
    Int64,
    /// One byte per element, 0 or 1.
    Bool,
    BFloat16,
    UInt16,
    Complex128,
    Float16,
    UInt32,
    UInt64,
}

const DTYPES: [(DType, sys::smd_dtype); 16] = [
    (DType::Float32, sys::SMD_DTYPE_FLOAT32),
    (DType::Float64, sys::SMD_DTYPE_FLOAT64),
    (DType::Int32, sys::SMD_DTYPE_INT32),
    (DType::UInt8, sys::SMD_DTYPE_UINT8),
    (DType::Int16, sys::SMD_DTYPE_INT16),
    (DType::Int8, sys::SMD_DTYPE_INT8),
    (DType::String, sys::SMD_DTYPE_STRING),
    (DType::Complex64, sys::SMD_DTYPE_COMPLEX64),
    (DType::Int64, sys::SMD_DTYPE_INT64),
    (DType::Bool, sys::SMD_DTYPE_BOOL),
    (DType::BFloat16, sys::SMD_DTYPE_BFLOAT16),
    (DType::UInt16, sys::SMD_DTYPE_UINT16),
    (DType::Complex128, sys::SMD_DTYPE_COMPLEX128),
    (DType::Float16, sys::SMD_DTYPE_FLOAT16),
    (DType::UInt32, sys::SMD_DTYPE_UINT32),
    (DType::UInt64, sys::SMD_DTYPE_UINT64),
];

impl DType {
    /// Every data type.
    pub const ALL: [DType; 16] = {
        let mut out = [DType::Float32; 16];
        let mut i = 0;
        while i < 16 {
            out[i] = DTYPES[i].0;
            i += 1;
        }
        out
    };

    pub(crate) fn raw(self) -> sys::smd_dtype {
        DTYPES.iter().find(|(d, _)| *d == self).map(|(_, r)| *r).unwrap_or(sys::SMD_DTYPE_INVALID)
    }

    pub(crate) fn from_raw(r: sys::smd_dtype) -> Option<DType> {
        DTYPES.iter().find(|(_, x)| *x == r).map(|(d, _)| *d)
    }

    /// Bytes per element (0 for `String`).
    pub fn size(self) -> usize {
        unsafe { sys::smd_dtype_size(self.raw()) }
    }

    /// numpy's name: "float32", "bool", "bfloat16", "str", ...
    pub fn name(self) -> &'static str {
        unsafe { borrowed_str(sys::smd_dtype_name(self.raw())) }
    }

    /// Parses a numpy-style name.
    pub fn from_name(name: &str) -> Result<DType> {
        let c = cstring(name, "dtype name")?;
        let mut out = 0;
        check(unsafe { sys::smd_dtype_from_name(c.as_ptr(), &mut out) })?;
        DType::from_raw(out).ok_or_else(|| Error::invalid(format!("dtype {name:?} has no Rust variant")))
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A Rust type whose slices smd saves and views directly: its layout is the dtype's.
pub trait Element: Copy + sealed::Sealed + 'static {
    /// The data type of this element type.
    const DTYPE: DType;
}

macro_rules! element {
    ($($t:ty => $d:ident),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t { const DTYPE: DType = DType::$d; }
    )*};
}
element!(f32 => Float32, f64 => Float64, i32 => Int32, u8 => UInt8, i16 => Int16, i8 => Int8,
         i64 => Int64, bool => Bool, u16 => UInt16, u32 => UInt32, u64 => UInt64);

/// The library's version (major, minor, patch).
pub fn version() -> (i32, i32, i32) {
    let (mut a, mut b, mut c) = (0, 0, 0);
    unsafe { sys::smd_version(&mut a, &mut b, &mut c) };
    (a, b, c)
}

/// The library's version as "major.minor.patch".
pub fn version_string() -> &'static str {
    unsafe { borrowed_str(sys::smd_version_string()) }
}
