//! Conversions between Rust and C strings and arrays.
use crate::error::{check, Error, Result};
use smd_sys as sys;
use std::ffi::{c_char, CStr, CString};

/// A NUL-terminated copy of `s`; an interior NUL byte is an `InvalidArgument` naming `what`.
pub(crate) fn cstring(s: &str, what: &str) -> Result<CString> {
    CString::new(s).map_err(|_| Error::invalid(format!("{what} {s:?} contains a NUL byte")))
}

/// Calls `f` with `s` as a C string, built on the stack when it is short (the hot save path).
#[inline]
pub(crate) fn with_cstr<R>(s: &str, what: &str, f: impl FnOnce(*const c_char) -> R) -> Result<R> {
    const STACK: usize = 128;
    let bytes = s.as_bytes();
    if bytes.len() < STACK {
        let mut buf = [0u8; STACK];
        buf[..bytes.len()].copy_from_slice(bytes);
        if bytes.contains(&0) {
            return Err(Error::invalid(format!("{what} {s:?} contains a NUL byte")));
        }
        Ok(f(buf.as_ptr().cast()))
    } else {
        let c = cstring(s, what)?;
        Ok(f(c.as_ptr()))
    }
}

/// An optional string as a C string (NULL for None).
pub(crate) fn opt_cstring(s: Option<&str>, what: &str) -> Result<Option<CString>> {
    s.map(|s| cstring(s, what)).transpose()
}

pub(crate) fn opt_ptr(s: &Option<CString>) -> *const c_char {
    s.as_ref().map_or(std::ptr::null(), |c| c.as_ptr())
}

/// A list of C strings and the pointer array over them.
pub(crate) struct CStrList {
    _owned: Vec<CString>,
    ptrs: Vec<*const c_char>,
}

impl CStrList {
    pub(crate) fn new<S: AsRef<str>>(items: &[S], what: &str) -> Result<CStrList> {
        let owned = items.iter().map(|s| cstring(s.as_ref(), what)).collect::<Result<Vec<_>>>()?;
        let ptrs = owned.iter().map(|c| c.as_ptr()).collect();
        Ok(CStrList { _owned: owned, ptrs })
    }
    pub(crate) fn as_ptr(&self) -> *const *const c_char {
        if self.ptrs.is_empty() {
            std::ptr::null()
        } else {
            self.ptrs.as_ptr()
        }
    }
    pub(crate) fn len(&self) -> usize {
        self.ptrs.len()
    }
}

/// A borrowed C string as a `&str` (lossy for invalid UTF-8 is not possible for borrowed data,
/// so invalid bytes give ""; smd only returns UTF-8). NULL gives "".
///
/// # Safety
/// `p` is NULL or a NUL-terminated string living at least as long as `'a`.
pub(crate) unsafe fn borrowed_str<'a>(p: *const c_char) -> &'a str {
    if p.is_null() {
        ""
    } else {
        CStr::from_ptr(p).to_str().unwrap_or("")
    }
}

/// Calls a C function filling an `smd_strarray` and converts the result.
pub(crate) fn strarray(f: impl FnOnce(*mut sys::smd_strarray) -> *mut sys::smd_error) -> Result<Vec<String>> {
    let mut arr = sys::smd_strarray::default();
    check(f(&mut arr))?;
    Ok(take_strarray(&mut arr))
}

pub(crate) fn take_strarray(arr: &mut sys::smd_strarray) -> Vec<String> {
    let mut out = Vec::with_capacity(arr.count);
    for i in 0..arr.count {
        // SAFETY: the array holds `count` NUL-terminated strings.
        out.push(unsafe { CStr::from_ptr(*arr.strings.add(i)) }.to_string_lossy().into_owned());
    }
    // SAFETY: the array is ours.
    unsafe { sys::smd_strarray_free(arr) };
    out
}

/// Calls a C function giving a caller-owned string (freed with `smd_free`) or NULL, and copies it.
pub(crate) fn owned_string(f: impl FnOnce(*mut *mut c_char) -> *mut sys::smd_error) -> Result<Option<String>> {
    let mut out: *mut c_char = std::ptr::null_mut();
    check(f(&mut out))?;
    if out.is_null() {
        return Ok(None);
    }
    // SAFETY: smd returned a NUL-terminated string, ours to free.
    let s = unsafe { CStr::from_ptr(out) }.to_string_lossy().into_owned();
    unsafe { sys::smd_free(out.cast()) };
    Ok(Some(s))
}

/// Copies and frees a caller-owned array of `n` numbers (freed with `smd_free`).
pub(crate) fn take_array<T: Copy>(ptr: *mut T, n: usize) -> Vec<T> {
    if ptr.is_null() {
        return Vec::new();
    }
    // SAFETY: smd returned `n` elements at ptr, ours to free.
    let v = unsafe { std::slice::from_raw_parts(ptr, n) }.to_vec();
    unsafe { sys::smd_free(ptr.cast()) };
    v
}
