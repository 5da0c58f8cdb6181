//! Safe Rust API of smd: write SageMaker Debugger (smdebug) trials from a training loop and read
//! them back, run built-in and custom rules, export TensorBoard logs.
//!
//! Handles own their C objects and free them on `Drop`; every fallible call returns
//! [`Result`] with an [`Error`] whose [`ErrorKind`] is the library's code. Values are viewed as
//! `&[T]` borrowed from the [`Value`] without copies. `Hook`, `Trial`, `Tensor` and `Value` are
//! `Send + Sync` (the C library allows concurrent calls on them); `Rule` and the options
//! `HookOptions`, `TrialOptions`, `TensorFilter`, `SaveConfig` and `ReductionConfig` are `Send`
//! only; an [`InvokeOptions`] (whose callbacks need not be `Send`) and a [`RefreshScope`] (which
//! belongs to the thread that made it) are neither.
//!
//! ```no_run
//! use smd::{Hook, Mode, Trial};
//! # fn main() -> smd::Result<()> {
//! let hook = Hook::new("/tmp/run", None)?;
//! hook.begin_step()?;
//! hook.save_tensor("w", &[2], &[1.0f32, 2.0], &["weights"])?;
//! hook.save_scalar("loss", 0.5)?;
//! hook.close()?;
//! let trial = Trial::open("/tmp/run", None)?;
//! let v = trial.tensor("w")?.value(0, Mode::Global, None)?;
//! assert_eq!(v.as_slice::<f32>()?, &[1.0, 2.0]);
//! # Ok(()) }
//! ```
#![warn(missing_docs)]

mod error;
mod hook;
mod rules;
mod s3;
mod tensorboard;
mod trial;
mod types;
mod util;

pub use error::{Error, ErrorKind, Result};
pub use hook::{
    histogram_bucket_edges, reduction_names, Collection, DueReductions, Histogram, Hook, HookOptions, HookStats, IncludeWorkers, ReductionConfig,
    SaveConfig, SaveConfigMode,
};
pub use rules::{builtin_names, builtin_params, builtin_summary, BuiltinParam, Finding, InvokeOptions, Outcome, Rule, RuleContext, RuleEnd, TrialRef};
pub use s3::{S3Credentials, S3Settings};
pub use smd_sys as sys;
pub use tensorboard::TensorBoardWriter;
pub use trial::{CollectionInfo, RefreshScope, Shapes, StepState, Tensor, TensorFilter, Trial, TrialOptions, Value};
pub use types::{version, version_string, DType, Element, Mode};
