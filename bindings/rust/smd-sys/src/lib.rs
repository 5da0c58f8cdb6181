//! Raw declarations of libsmd's C ABI (`smd/smd.h`): every function of the public headers, with
//! the enums as integer constants and the handles as opaque structs. The conventions of
//! `smd/smd.h` apply unchanged (NULL error = success, caller-owned `**out`, borrowed `const char*`).
//! Use the `smd` crate for a safe API.
//!
//! `src/functions.rs` is generated from the headers by `gen_bindings.py`; the test
//! `tests/header.rs` fails when it no longer matches them.
#![no_std]
#![allow(non_camel_case_types, non_upper_case_globals, clippy::missing_safety_doc)]

mod functions;
mod types;

pub use functions::*;
pub use types::*;
