//! The layout test, in the way of git2-rs' systest: the C compiler says what the ABI is, Rust must
//! agree. `gen_bindings.py` writes, from capi/api.json, `tests/layout/layout.c` (a C program that
//! prints the size and alignment of every struct, enum and callback type, the offset and size of
//! every struct field, the value of every enum constant, and the size, alignment and signedness of
//! every C scalar type the API names) and `tests/layout/rust.rs` (the same numbers as Rust computes
//! them for the generated types and the Rust types the scalars map to). This test compiles
//! layout.c with the system C compiler (`$CC`, else `cc`) against capi/include, runs it and
//! compares each number. It also runs `gen_bindings.py --check` (functions.rs, types.rs and these
//! two files must be what api.json gives), and calls the library once (it links; its version).
use std::collections::BTreeMap;
use std::mem;
use std::path::{Path, PathBuf};
use std::process::Command;

use smd_sys::*;

/// The offset of a field, as `core::mem::offset_of!` (Rust >= 1.77; this crate supports 1.70).
macro_rules! field_offset {
    ($t:ty, $f:ident) => {{
        let value = mem::MaybeUninit::<$t>::uninit();
        let base = value.as_ptr();
        // SAFETY: addr_of! computes the field's address inside `value` without reading it.
        let field = unsafe { std::ptr::addr_of!((*base).$f) };
        (field as usize - base as usize) as i128
    }};
}

/// The size of a field's type.
macro_rules! field_size {
    ($t:ty, $f:ident) => {{
        let value = mem::MaybeUninit::<$t>::uninit();
        let base = value.as_ptr();
        // SAFETY: as above.
        size_of_pointee(unsafe { std::ptr::addr_of!((*base).$f) }) as i128
    }};
}

fn size_of_pointee<T>(_: *const T) -> usize {
    mem::size_of::<T>()
}

/// Whether a number type holds -1 (C: `(T)-1 < (T)1`).
fn is_signed<T: TryFrom<i8>>() -> bool {
    T::try_from(-1).is_ok()
}

fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Rust's numbers, key -> value.
fn rust_side() -> Vec<(&'static str, i128)> {
    include!("layout/rust.rs")
}

/// C's numbers: layout.c compiled by the system C compiler and run.
fn c_side() -> BTreeMap<String, i128> {
    let include = crate_dir().join("../../../capi/include");
    let source = crate_dir().join("tests/layout/layout.c");
    let exe = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("smd_sys_layout");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let out = Command::new(&cc)
        .args(["-std=c11", "-Wall", "-o"])
        .arg(&exe)
        .arg("-I")
        .arg(&include)
        .arg(&source)
        .output()
        .unwrap_or_else(|e| panic!("the layout test needs a C compiler: running `{cc}` failed: {e} (set CC)"));
    assert!(
        out.status.success(),
        "`{cc}` could not compile {} against {}:\n{}",
        source.display(),
        include.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&exe).output().expect("run the compiled layout.c");
    assert!(run.status.success(), "{} failed: {}", exe.display(), run.status);
    let mut map = BTreeMap::new();
    for line in String::from_utf8(run.stdout).unwrap().lines() {
        let (key, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("layout.c printed {line:?}"));
        let value = value.parse().unwrap_or_else(|_| panic!("layout.c printed {line:?}"));
        assert!(map.insert(key.to_string(), value).is_none(), "layout.c printed {key} twice");
    }
    map
}

#[test]
fn layouts_and_values_are_the_c_compilers() {
    let c = c_side();
    let rust = rust_side();
    let mut wrong = Vec::new();
    for (key, r) in &rust {
        match c.get(*key) {
            Some(v) if v == r => {}
            Some(v) => wrong.push(format!("{key}: C {v}, Rust {r}")),
            None => wrong.push(format!("{key}: not printed by layout.c")),
        }
    }
    let keys: std::collections::BTreeSet<&str> = rust.iter().map(|(k, _)| *k).collect();
    wrong.extend(c.keys().filter(|k| !keys.contains(k.as_str())).map(|k| format!("{k}: not in rust.rs")));
    assert!(
        wrong.is_empty(),
        "the Rust types differ from the C ABI ({} of {} numbers):\n  {}\n\
         Regenerate with `python3 bindings/rust/smd-sys/gen_bindings.py` (after scripts/gen-api.py); \
         if that changes nothing, its C-to-Rust type mapping is wrong.",
        wrong.len(),
        c.len(),
        wrong.join("\n  ")
    );
    // The test measures what it should: every struct's fields, every enum's constants.
    let count = |prefix: &str| c.keys().filter(|k| k.starts_with(prefix)).count();
    assert!(count("offsetof ") > 30, "layout.c measures only {} fields", count("offsetof "));
    assert!(count("value ") > 80, "layout.c prints only {} enum constants", count("value "));
    assert!(count("opaque ") > 15, "layout.c names only {} opaque handles", count("opaque "));
}

/// functions.rs, types.rs and tests/layout/* must be what gen_bindings.py makes of capi/api.json.
/// Needs Python 3 (`$SMD_PYTHON`, else `python3`); skipped, saying so, without one.
#[test]
fn generated_files_are_current() {
    let python = std::env::var("SMD_PYTHON").unwrap_or_else(|_| "python3".to_string());
    let script = crate_dir().join("gen_bindings.py");
    let out = match Command::new(&python).arg(&script).arg("--check").output() {
        Ok(out) => out,
        Err(e) => {
            eprintln!("skipped: no Python to run gen_bindings.py --check ({python}: {e})");
            return;
        }
    };
    assert!(
        out.status.success(),
        "the generated files are stale: run `python3 bindings/rust/smd-sys/gen_bindings.py`\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn library_links_and_its_version_is_consistent() {
    let (mut major, mut minor, mut patch) = (-1, -1, -1);
    unsafe { smd_version(&mut major, &mut minor, &mut patch) };
    assert!(major >= 0 && minor >= 0 && patch >= 0);
    let s = unsafe { std::ffi::CStr::from_ptr(smd_version_string()) };
    assert_eq!(s.to_str().unwrap(), format!("{major}.{minor}.{patch}"));
}
