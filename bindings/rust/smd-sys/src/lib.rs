//! Raw declarations of libsmd's C ABI (`smd/smd.h`): every function of the public headers, with
//! the enums as integer constants and the handles as opaque structs. The conventions of
//! `smd/smd.h` apply unchanged (NULL error = success, caller-owned `**out`, borrowed `const char*`).
//! Use the `smd` crate for a safe API.
//!
//! Generated, not written: `gen_bindings.py` makes `src/functions.rs` (the functions) and
//! `src/types.rs` (enums, opaque handles, `#[repr(C)]` structs, callbacks) from `capi/api.json`,
//! the description of the C API that `scripts/gen-api.py` parses out of the headers. The test
//! `tests/layout.rs` checks them: it compiles and runs a C program (also generated) that prints
//! every struct's size, alignment and field offsets and every enum constant's value as the C
//! compiler sees them, compares each number with Rust's, and runs `gen_bindings.py --check`.
#![no_std]
#![allow(non_camel_case_types, non_upper_case_globals, clippy::missing_safety_doc)]

mod functions;
mod types;

pub use functions::*;
pub use types::*;
