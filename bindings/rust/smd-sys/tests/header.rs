//! The checked-in declarations must match the C headers: the same functions, each with the same
//! number of parameters, and the version the library reports must match version.h's major.
use std::collections::BTreeMap;
use std::path::Path;

fn strip_comments(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("/*") {
        out.push_str(&rest[..i]);
        rest = match rest[i..].find("*/") {
            Some(j) => &rest[i + j + 2..],
            None => "",
        };
    }
    out.push_str(rest);
    out
}

fn arity(params: &str) -> usize {
    let p = params.trim();
    if p.is_empty() || p == "void" {
        0
    } else {
        p.split(',').count()
    }
}

/// name -> parameter count of every `SMD_API` function of the headers.
fn header_functions() -> BTreeMap<String, usize> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../capi/include/smd");
    let mut map = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).expect("capi/include/smd") {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("h") {
            continue;
        }
        let text = strip_comments(&std::fs::read_to_string(&path).unwrap());
        for decl in text.split("SMD_API").skip(1) {
            let Some(end) = decl.find(';') else { continue };
            let decl = &decl[..end];
            let (Some(open), Some(close)) = (decl.find('('), decl.rfind(')')) else {
                continue; // export.h defines SMD_API
            };
            let name = decl[..open].split(|c: char| c.is_whitespace() || c == '*').next_back().unwrap();
            map.insert(name.to_string(), arity(&decl[open + 1..close]));
        }
    }
    map
}

fn rust_functions() -> BTreeMap<String, usize> {
    let text = include_str!("../src/functions.rs");
    let mut map = BTreeMap::new();
    for line in text.lines() {
        if let Some(rest) = line.trim().strip_prefix("pub fn ") {
            let open = rest.find('(').unwrap();
            let close = rest.rfind(')').unwrap();
            map.insert(rest[..open].to_string(), arity(&rest[open + 1..close]));
        }
    }
    map
}

#[test]
fn declarations_match_the_headers() {
    let c = header_functions();
    let rust = rust_functions();
    assert!(c.len() > 150, "found only {} functions in the headers", c.len());
    for (name, n) in &c {
        assert_eq!(rust.get(name), Some(n), "{name}: header has {n} parameters; regenerate with gen_bindings.py");
    }
    for name in rust.keys() {
        assert!(c.contains_key(name), "{name} is declared in functions.rs but not in the headers");
    }
}

#[test]
fn struct_layouts_are_the_c_ones() {
    use smd_sys::*;
    assert_eq!(std::mem::size_of::<smd_strarray>(), 16);
    assert_eq!(std::mem::size_of::<smd_hook_stats>(), 64);
    assert_eq!(std::mem::size_of::<DLTensor>(), 48);
    assert_eq!(std::mem::size_of::<DLManagedTensorVersioned>(), 80);
}

#[test]
fn library_version_is_consistent() {
    let (mut major, mut minor, mut patch) = (-1, -1, -1);
    unsafe { smd_sys::smd_version(&mut major, &mut minor, &mut patch) };
    assert!(major >= 0 && minor >= 0 && patch >= 0);
    let s = unsafe { std::ffi::CStr::from_ptr(smd_sys::smd_version_string()) };
    assert_eq!(s.to_str().unwrap(), format!("{major}.{minor}.{patch}"));
}
