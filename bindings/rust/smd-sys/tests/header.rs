//! The checked-in declarations must match the C headers: the same functions, each with the same
//! number of parameters; the hand-written types.rs has every `SMD_*` enum constant with the
//! header's value and every opaque `smd_*` handle; and the version the library reports is
//! consistent.
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

/// The text of every public header, comments stripped.
fn headers() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../capi/include/smd");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("capi/include/smd") {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) == Some("h") {
            out.push(strip_comments(&std::fs::read_to_string(&path).unwrap()));
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// name -> parameter count of every `SMD_API` function of the headers.
fn header_functions() -> BTreeMap<String, usize> {
    let mut map = BTreeMap::new();
    for text in headers() {
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

/// name -> value of every `SMD_X = <integer>` enumerator of the headers.
fn header_constants() -> BTreeMap<String, i64> {
    let mut map = BTreeMap::new();
    for text in headers() {
        let mut rest = text.as_str();
        while let Some(i) = rest.find("SMD_") {
            let at = &rest[i..];
            let preceded = rest[..i].chars().next_back().is_some_and(is_ident);
            let name_len = at.find(|c: char| !is_ident(c)).unwrap_or(at.len());
            let (name, after) = at.split_at(name_len);
            rest = after;
            if preceded {
                continue;
            }
            let Some(value) = after.trim_start().strip_prefix('=') else { continue };
            let value = value.trim_start();
            let end = value.find(|c: char| !(c.is_ascii_digit() || c == '-')).unwrap_or(value.len());
            if let Ok(v) = value[..end].parse() {
                map.insert(name.to_string(), v);
            }
        }
    }
    map
}

/// name -> value of every `pub const SMD_...` of types.rs.
fn rust_constants() -> BTreeMap<String, i64> {
    let text = include_str!("../src/types.rs");
    let mut map = BTreeMap::new();
    for line in text.lines() {
        let Some(rest) = line.trim().strip_prefix("pub const SMD_") else { continue };
        let name = format!("SMD_{}", &rest[..rest.find(':').unwrap()]);
        let value = rest[rest.find('=').unwrap() + 1..].trim().trim_end_matches(';');
        map.insert(name, value.parse().unwrap());
    }
    map
}

#[test]
fn constants_match_the_headers() {
    let c = header_constants();
    let rust = rust_constants();
    assert!(c.len() > 50, "found only {} constants in the headers", c.len());
    for (name, v) in &c {
        assert_eq!(rust.get(name), Some(v), "{name} = {v} in the headers; add it to src/types.rs");
    }
    for name in rust.keys() {
        assert!(c.contains_key(name), "{name} is in types.rs but not in the headers");
    }
}

#[test]
fn every_opaque_handle_is_declared() {
    let types = include_str!("../src/types.rs");
    let declared = types.split("opaque!(").nth(1).expect("the opaque! list").split(')').next().unwrap();
    let declared: Vec<&str> = declared.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
    let mut n = 0;
    for text in headers() {
        for decl in text.split("typedef struct ").skip(1) {
            // `typedef struct smd_x smd_x;` declares an opaque handle (a struct body has a brace).
            let head = &decl[..decl.find(';').unwrap()];
            let words: Vec<&str> = head.split_whitespace().collect();
            if let [tag, alias] = words[..] {
                if tag == alias && tag.starts_with("smd_") && !head.contains('{') {
                    n += 1;
                    assert!(declared.contains(&tag), "{tag} is an opaque handle in the headers; add it to opaque! in src/types.rs");
                }
            }
        }
    }
    assert!(n > 15, "found only {n} opaque handles in the headers");
    assert_eq!(declared.len(), n, "opaque! in types.rs declares handles the headers do not: {declared:?}");
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
