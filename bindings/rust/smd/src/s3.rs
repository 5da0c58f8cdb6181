//! How to reach an `s3://bucket/prefix` trial, hook or TensorBoard folder.
use crate::error::{check, Error, Result};
use crate::hook::create;
use crate::util::{opt_cstring, opt_ptr};
use smd_sys as sys;
use std::ffi::{c_char, CString};
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

/// S3 settings for an `s3://bucket/prefix` folder (docs/s3.md): a hook's
/// ([`HookOptions::set_s3`](crate::HookOptions::set_s3)), a trial's
/// ([`TrialOptions::set_s3`](crate::TrialOptions::set_s3)) or a TensorBoard writer's
/// ([`TensorBoardWriter::with_s3`](crate::TensorBoardWriter::with_s3)). A field left `None` comes
/// from the AWS configuration chain: the `AWS_*` environment variables, then `~/.aws/credentials`
/// and `~/.aws/config`, then container or instance credentials; a field set here wins. Local
/// paths ignore the settings.
#[derive(Clone, Debug, Default)]
pub struct S3Settings {
    /// `http[s]://host[:port]`, e.g. a MinIO or Ceph server; implies path-style addressing
    /// unless [`S3Settings::addressing_style`] is set.
    pub endpoint: Option<String>,
    /// The signing region, e.g. `us-east-1`.
    pub region: Option<String>,
    /// A profile of `~/.aws/credentials` and `~/.aws/config`.
    pub profile: Option<String>,
    /// `"path"` or `"virtual"`.
    pub addressing_style: Option<String>,
    /// A PEM file that the server's TLS certificate is checked against.
    pub ca_bundle: Option<PathBuf>,
    /// Static credentials.
    pub credentials: Option<S3Credentials>,
    /// Attempts per request (retry policy, docs/s3.md); `None` or 0 keeps the default: 5, or
    /// `AWS_MAX_ATTEMPTS`, or the profile's `max_attempts`. At most `i32::MAX`.
    pub max_attempts: Option<u32>,
    /// The base of the jittered exponential backoff between attempts; `None` or zero keeps the
    /// default (50 ms). Counted in whole milliseconds (rounded up), at most `i32::MAX` of them.
    pub backoff: Option<Duration>,
    /// How long a transfer may move less than a byte a second before it is abandoned and
    /// retried; `None` or zero keeps the default (30 s). Counted in whole milliseconds (rounded up).
    pub stall_timeout: Option<Duration>,
}

/// Static S3 credentials. Their `Debug` form and every error hide the secret key and the token.
#[derive(Clone, Default)]
pub struct S3Credentials {
    /// The access key id.
    pub access_key_id: String,
    /// The secret access key.
    pub secret_access_key: String,
    /// The session token of temporary credentials.
    pub session_token: Option<String>,
}

impl fmt::Debug for S3Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("S3Credentials")
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &"<hidden>")
            .field("session_token", &self.session_token.as_ref().map(|_| "<hidden>"))
            .finish()
    }
}

/// The C storage options object built from [`S3Settings`] (`smd/storage.h`), freed on drop. The
/// functions that take it copy it.
pub(crate) struct StorageOptions {
    raw: *mut sys::smd_storage_options,
}

impl StorageOptions {
    pub(crate) fn as_ptr(&self) -> *const sys::smd_storage_options {
        self.raw
    }

    /// The object, or NULL (the AWS configuration chain) for `None`.
    pub(crate) fn ptr_or_null(storage: &Option<StorageOptions>) -> *const sys::smd_storage_options {
        storage.as_ref().map_or(std::ptr::null(), StorageOptions::as_ptr)
    }
}

impl Drop for StorageOptions {
    fn drop(&mut self) {
        // SAFETY: we own the object; smd_storage_options_free accepts NULL.
        unsafe { sys::smd_storage_options_free(self.raw) }
    }
}

/// A secret as a C string; a NUL byte is an error that does not show the secret.
fn secret_cstring(s: &str, what: &str) -> Result<CString> {
    CString::new(s).map_err(|_| Error::invalid(format!("the S3 {what} contains a NUL byte")))
}

/// Whole milliseconds of `d` as the C setter takes them, rounded up so that a nonzero duration
/// never becomes 0 (the default); `None` when it does not fit in `T`.
fn millis<T: TryFrom<u128>>(d: Duration) -> Option<T> {
    T::try_from((d.as_nanos() + 999_999) / 1_000_000).ok()
}

impl S3Settings {
    /// The C storage options these settings describe.
    pub(crate) fn storage(&self) -> Result<StorageOptions> {
        let storage = StorageOptions { raw: create(|o| unsafe { sys::smd_storage_options_create(o) })? };
        let raw = storage.raw;
        let ca = match &self.ca_bundle {
            Some(p) => Some(p.to_str().ok_or_else(|| Error::invalid(format!("S3 CA bundle {p:?} is not UTF-8")))?),
            None => None,
        };
        type SetStr = unsafe extern "C" fn(*mut sys::smd_storage_options, *const c_char) -> *mut sys::smd_error;
        for (value, what, f) in [
            (self.endpoint.as_deref(), "S3 endpoint", sys::smd_storage_options_set_s3_endpoint as SetStr),
            (self.region.as_deref(), "S3 region", sys::smd_storage_options_set_s3_region),
            (self.profile.as_deref(), "S3 profile", sys::smd_storage_options_set_s3_profile),
            (self.addressing_style.as_deref(), "S3 addressing style", sys::smd_storage_options_set_s3_addressing_style),
            (ca, "S3 CA bundle", sys::smd_storage_options_set_s3_ca_bundle),
        ] {
            if let Some(c) = opt_cstring(value, what)? {
                // SAFETY: raw is the live object above; c outlives the call (the setter copies it).
                check(unsafe { f(raw, c.as_ptr()) })?;
            }
        }
        if let Some(k) = &self.credentials {
            let id = secret_cstring(&k.access_key_id, "access key id")?;
            let secret = secret_cstring(&k.secret_access_key, "secret access key")?;
            let token = k.session_token.as_deref().map(|t| secret_cstring(t, "session token")).transpose()?;
            // SAFETY: as above.
            check(unsafe { sys::smd_storage_options_set_s3_credentials(raw, id.as_ptr(), secret.as_ptr(), opt_ptr(&token)) })?;
        }
        if self.max_attempts.is_some() || self.backoff.is_some() || self.stall_timeout.is_some() {
            let attempts = i32::try_from(self.max_attempts.unwrap_or(0))
                .map_err(|_| Error::invalid(format!("S3 max_attempts {:?} does not fit in an i32", self.max_attempts)))?;
            let backoff = millis::<i32>(self.backoff.unwrap_or_default())
                .ok_or_else(|| Error::invalid(format!("S3 backoff {:?} is over i32::MAX milliseconds", self.backoff)))?;
            let stall = millis::<i64>(self.stall_timeout.unwrap_or_default())
                .ok_or_else(|| Error::invalid(format!("S3 stall_timeout {:?} is over i64::MAX milliseconds", self.stall_timeout)))?;
            // SAFETY: as above.
            check(unsafe { sys::smd_storage_options_set_s3_retries(raw, attempts, backoff, stall) })?;
        }
        Ok(storage)
    }
}
