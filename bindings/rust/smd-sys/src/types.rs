//! The types of smd's C headers, written by hand (the functions are generated).
#![allow(non_camel_case_types)]

use core::ffi::{c_char, c_int, c_void};

/// `smd_code`. An integer, not a Rust enum: the library may return codes added after this crate.
pub type smd_code = c_int;
pub const SMD_OK: smd_code = 0;
pub const SMD_E_INTERNAL: smd_code = 1;
pub const SMD_E_INVALID_ARGUMENT: smd_code = 2;
pub const SMD_E_NOT_FOUND: smd_code = 3;
pub const SMD_E_IO: smd_code = 4;
pub const SMD_E_CORRUPT: smd_code = 5;
pub const SMD_E_OUT_OF_MEMORY: smd_code = 6;
pub const SMD_E_UNSUPPORTED: smd_code = 7;
pub const SMD_E_INVALID_STATE: smd_code = 8;
pub const SMD_E_ALREADY_EXISTS: smd_code = 9;
pub const SMD_E_CANCELLED: smd_code = 10;
pub const SMD_E_TENSOR_UNAVAILABLE_FOR_STEP: smd_code = 11;
pub const SMD_E_TENSOR_UNAVAILABLE: smd_code = 12;
pub const SMD_E_STEP_UNAVAILABLE: smd_code = 13;
pub const SMD_E_STEP_NOT_YET_AVAILABLE: smd_code = 14;
pub const SMD_E_NO_MORE_DATA: smd_code = 15;
pub const SMD_E_MISSING_COLLECTION_FILES: smd_code = 16;
pub const SMD_E_SHAPE_UNAVAILABLE_FOR_STEP: smd_code = 17;
pub const SMD_E_INVALID_WORKER: smd_code = 18;
pub const SMD_E_RULE_CONDITION_MET: smd_code = 19;
pub const SMD_E_HTTP: smd_code = 20;
pub const SMD_E_AUTH: smd_code = 21;

/// `smd_dtype` (TensorFlow's DataType numbers).
pub type smd_dtype = c_int;
pub const SMD_DTYPE_INVALID: smd_dtype = 0;
pub const SMD_DTYPE_FLOAT32: smd_dtype = 1;
pub const SMD_DTYPE_FLOAT64: smd_dtype = 2;
pub const SMD_DTYPE_INT32: smd_dtype = 3;
pub const SMD_DTYPE_UINT8: smd_dtype = 4;
pub const SMD_DTYPE_INT16: smd_dtype = 5;
pub const SMD_DTYPE_INT8: smd_dtype = 6;
pub const SMD_DTYPE_STRING: smd_dtype = 7;
pub const SMD_DTYPE_COMPLEX64: smd_dtype = 8;
pub const SMD_DTYPE_INT64: smd_dtype = 9;
pub const SMD_DTYPE_BOOL: smd_dtype = 10;
pub const SMD_DTYPE_BFLOAT16: smd_dtype = 14;
pub const SMD_DTYPE_UINT16: smd_dtype = 17;
pub const SMD_DTYPE_COMPLEX128: smd_dtype = 18;
pub const SMD_DTYPE_FLOAT16: smd_dtype = 19;
pub const SMD_DTYPE_UINT32: smd_dtype = 22;
pub const SMD_DTYPE_UINT64: smd_dtype = 23;

/// `smd_mode` (smdebug's ModeKeys values).
pub type smd_mode = c_int;
pub const SMD_MODE_ALL: smd_mode = 0;
pub const SMD_MODE_TRAIN: smd_mode = 1;
pub const SMD_MODE_EVAL: smd_mode = 2;
pub const SMD_MODE_PREDICT: smd_mode = 3;
pub const SMD_MODE_GLOBAL: smd_mode = 4;

pub type smd_include_workers = c_int;
pub const SMD_INCLUDE_WORKERS_ONE: smd_include_workers = 0;
pub const SMD_INCLUDE_WORKERS_ALL: smd_include_workers = 1;

pub type smd_step_state = c_int;
pub const SMD_STEP_UNAVAILABLE: smd_step_state = 0;
pub const SMD_STEP_AVAILABLE: smd_step_state = 1;
pub const SMD_STEP_NOT_YET_AVAILABLE: smd_step_state = 2;

pub type smd_rule_end = c_int;
pub const SMD_RULE_END_NONE: smd_rule_end = 0;
pub const SMD_RULE_END_STEP: smd_rule_end = 1;
pub const SMD_RULE_END_NO_MORE_DATA: smd_rule_end = 2;
pub const SMD_RULE_END_OF_RULE: smd_rule_end = 3;
pub const SMD_RULE_END_CONDITION_MET: smd_rule_end = 4;
pub const SMD_RULE_END_ERROR: smd_rule_end = 5;
pub const SMD_RULE_END_STOPPED: smd_rule_end = 6;

pub type smd_rule_outcome = c_int;
pub const SMD_RULE_NOT_MET: smd_rule_outcome = 0;
pub const SMD_RULE_CONDITION_MET: smd_rule_outcome = 1;
pub const SMD_RULE_SKIPPED: smd_rule_outcome = 2;
pub const SMD_RULE_WAITING: smd_rule_outcome = 3;

macro_rules! opaque {
    ($($name:ident),* $(,)?) => {$(
        #[repr(C)]
        pub struct $name {
            _private: [u8; 0],
            _not_send_sync: core::marker::PhantomData<(*mut u8, core::marker::PhantomPinned)>,
        }
    )*};
}
opaque!(
    smd_error,
    smd_save_config,
    smd_reduction_config,
    smd_hook_options,
    smd_hook,
    smd_collection,
    smd_trial,
    smd_tensor,
    smd_trial_options,
    smd_trial_refresh_scope,
    smd_tensor_filter,
    smd_collection_info,
    smd_value,
    smd_rule,
    smd_rule_context,
    smd_rule_finding,
    smd_rule_invoke_options,
    smd_tensorboard_writer,
    smd_storage_options,
);

/// `smd_strarray`: owned by the caller, freed with `smd_strarray_free`.
#[repr(C)]
#[derive(Debug)]
pub struct smd_strarray {
    pub strings: *mut *mut c_char,
    pub count: usize,
}

impl Default for smd_strarray {
    fn default() -> Self {
        smd_strarray { strings: core::ptr::null_mut(), count: 0 }
    }
}

/// `smd_hook_stats`: set `struct_size` to `size_of::<smd_hook_stats>()` before the call.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct smd_hook_stats {
    pub struct_size: usize,
    pub records: u64,
    pub bytes: u64,
    pub steps: u64,
    pub budget_waits: u64,
    pub peak_pending_bytes: u64,
    pub encoder_cpu_seconds: f64,
    pub committer_cpu_seconds: f64,
}

/// `smd_reduction_value`: one reduction the caller computed (`smd_hook_save_reductions`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct smd_reduction_value {
    pub reduction: *const c_char,
    pub abs: bool,
    pub value: f64,
}

pub type smd_rule_invoke_fn = Option<
    unsafe extern "C" fn(ctx: *mut smd_rule_context, step: i64, condition_met: *mut bool, payload: *mut c_void) -> c_int,
>;
pub type smd_rule_required_tensors_fn =
    Option<unsafe extern "C" fn(ctx: *mut smd_rule_context, step: i64, payload: *mut c_void) -> c_int>;
pub type smd_rule_finding_fn = Option<
    unsafe extern "C" fn(rule: *const smd_rule, finding: *const smd_rule_finding, payload: *mut c_void) -> c_int,
>;
pub type smd_rule_progress_fn = Option<
    unsafe extern "C" fn(rule: *const smd_rule, step: i64, outcome: smd_rule_outcome, payload: *mut c_void) -> c_int,
>;

// DLPack 1.1 (smd/dlpack.h).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct DLPackVersion {
    pub major: u32,
    pub minor: u32,
}
pub type DLDeviceType = c_int;
pub const kDLCPU: DLDeviceType = 1;
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct DLDevice {
    pub device_type: DLDeviceType,
    pub device_id: i32,
}
pub type DLDataTypeCode = c_int;
pub const kDLInt: DLDataTypeCode = 0;
pub const kDLUInt: DLDataTypeCode = 1;
pub const kDLFloat: DLDataTypeCode = 2;
pub const kDLBfloat: DLDataTypeCode = 4;
pub const kDLComplex: DLDataTypeCode = 5;
pub const kDLBool: DLDataTypeCode = 6;
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct DLDataType {
    pub code: u8,
    pub bits: u8,
    pub lanes: u16,
}
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct DLTensor {
    pub data: *mut c_void,
    pub device: DLDevice,
    pub ndim: i32,
    pub dtype: DLDataType,
    pub shape: *mut i64,
    pub strides: *mut i64,
    pub byte_offset: u64,
}
#[repr(C)]
pub struct DLManagedTensorVersioned {
    pub version: DLPackVersion,
    pub manager_ctx: *mut c_void,
    pub deleter: Option<unsafe extern "C" fn(self_: *mut DLManagedTensorVersioned)>,
    pub flags: u64,
    pub dl_tensor: DLTensor,
}
