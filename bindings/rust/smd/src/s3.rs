//! How to reach an `s3://bucket/prefix` trial or hook folder.
use crate::error::{check, Error, Result};
use crate::util::{opt_cstring, opt_ptr};
use smd_sys as sys;
use std::ffi::{c_char, CString};
use std::fmt;
use std::path::PathBuf;

/// S3 settings for a hook's or a trial's `s3://bucket/prefix` folder (docs/s3.md). A field left
/// `None` comes from the AWS configuration chain: the `AWS_*` environment variables, then
/// `~/.aws/credentials` and `~/.aws/config`, then container or instance credentials; a field set
/// here wins. Local paths ignore the settings.
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

type SetStr<T> = unsafe extern "C" fn(*mut T, *const c_char) -> *mut sys::smd_error;
type SetKeys<T> = unsafe extern "C" fn(*mut T, *const c_char, *const c_char, *const c_char) -> *mut sys::smd_error;

/// One options type's C setters (a hook's or a trial's).
pub(crate) struct S3Setters<T> {
    pub(crate) endpoint: SetStr<T>,
    pub(crate) region: SetStr<T>,
    pub(crate) profile: SetStr<T>,
    pub(crate) addressing_style: SetStr<T>,
    pub(crate) ca_bundle: SetStr<T>,
    pub(crate) credentials: SetKeys<T>,
}

/// A secret as a C string; a NUL byte is an error that does not show the secret.
fn secret_cstring(s: &str, what: &str) -> Result<CString> {
    CString::new(s).map_err(|_| Error::invalid(format!("the S3 {what} contains a NUL byte")))
}

impl S3Settings {
    pub(crate) fn apply<T>(&self, raw: *mut T, set: S3Setters<T>) -> Result<()> {
        let ca = match &self.ca_bundle {
            Some(p) => Some(p.to_str().ok_or_else(|| Error::invalid(format!("S3 CA bundle {p:?} is not UTF-8")))?),
            None => None,
        };
        for (value, what, f) in [
            (self.endpoint.as_deref(), "S3 endpoint", set.endpoint),
            (self.region.as_deref(), "S3 region", set.region),
            (self.profile.as_deref(), "S3 profile", set.profile),
            (self.addressing_style.as_deref(), "S3 addressing style", set.addressing_style),
            (ca, "S3 CA bundle", set.ca_bundle),
        ] {
            let c = opt_cstring(value, what)?;
            // SAFETY: raw is a live options object of the setter's type; c outlives the call.
            check(unsafe { f(raw, opt_ptr(&c)) })?;
        }
        if let Some(k) = &self.credentials {
            let id = secret_cstring(&k.access_key_id, "access key id")?;
            let secret = secret_cstring(&k.secret_access_key, "secret access key")?;
            let token = k.session_token.as_deref().map(|t| secret_cstring(t, "session token")).transpose()?;
            // SAFETY: as above.
            check(unsafe { (set.credentials)(raw, id.as_ptr(), secret.as_ptr(), opt_ptr(&token)) })?;
        }
        Ok(())
    }
}
