//! Finds libsmd and links it.
//!
//! Where from, in order: `SMD_LIB_DIR` (a folder holding libsmd.so and/or libsmd.a, e.g. a CMake
//! build tree's `capi/`), else pkg-config's `smd` package (`PKG_CONFIG_PATH=PREFIX/lib/pkgconfig`
//! for an install under PREFIX), else this repository's own `build/capi`, else libsmd is built
//! from this repository's sources with CMake (the `bundled` feature forces that last way).
//!
//! How: statically when a libsmd.a is found beside it (then a program needs no libsmd at run
//! time, only the system libraries libsmd uses), else against libsmd.so; `SMD_LINK=static` or
//! `SMD_LINK=dynamic` chooses. A dynamic link puts libsmd's folder on the rpath of this
//! workspace's tests and examples; cargo lets no build script set the rpath of another crate's
//! binary, so a program of yours that links libsmd.so from a folder the loader does not search
//! needs `-C link-arg=-Wl,-rpath,DIR` (the warning below says which DIR).
use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The libraries a static libsmd needs, as smd.pc's Libs.private names them (CMakeLists.txt).
const STATIC_DEPS: &[&str] = &["pcre2-8", "cjson", "curl", "crypto", "stdc++", "m", "pthread"];

/// The system packages that building libsmd from source needs: (pkg-config name, what it is).
const BUILD_DEPS: &[(&str, &str)] = &[
    ("libpcre2-8", "PCRE2 (Debian: libpcre2-dev)"),
    ("libcjson", "cJSON (Debian: libcjson-dev)"),
    ("libcurl", "libcurl (Debian: libcurl4-openssl-dev)"),
    ("libcrypto", "OpenSSL (Debian: libssl-dev)"),
];

fn pkg_config(args: &[&str]) -> Option<String> {
    let out = Command::new("pkg-config").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    String::from_utf8(out.stdout).ok()
}

fn pkg_config_libdir() -> Option<PathBuf> {
    let text = pkg_config(&["--libs-only-L", "smd"])?;
    text.split_whitespace().find_map(|t| t.strip_prefix("-L").map(PathBuf::from))
}

/// The libraries libsmd.a needs: smd.pc's when pkg-config has it, else the list above.
fn static_deps(from_pkg_config: bool) -> Vec<String> {
    if from_pkg_config {
        if let Some(text) = pkg_config(&["--static", "--libs-only-l", "smd"]) {
            let libs: Vec<String> = text
                .split_whitespace()
                .filter_map(|t| t.strip_prefix("-l"))
                .filter(|l| *l != "smd")
                .map(String::from)
                .collect();
            if !libs.is_empty() {
                return libs;
            }
        }
    }
    STATIC_DEPS.iter().map(|s| s.to_string()).collect()
}

fn link_mode() -> Option<bool> {
    match env::var("SMD_LINK").ok().as_deref() {
        Some("static") => Some(true),
        Some("dynamic") => Some(false),
        None | Some("") => None,
        Some(other) => panic!("smd-sys: SMD_LINK={other}: expected `static` or `dynamic`"),
    }
}

fn link_static(dir: &Path, deps: &[String]) {
    // A rebuilt libsmd.a must be linked again into the binaries that hold a copy of it.
    println!("cargo:rerun-if-changed={}", dir.join("libsmd.a").display());
    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-lib=static=smd");
    for lib in deps {
        println!("cargo:rustc-link-lib=dylib={lib}");
    }
    println!("cargo:lib_dir={}", dir.display());
    println!("cargo:static=1");
}

fn link_dynamic(dir: &Path) {
    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-lib=dylib=smd");
    // Read by dependents (DEP_SMD_LIB_DIR) to set an rpath on their binaries.
    println!("cargo:lib_dir={}", dir.display());
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
}

/// Builds libsmd.a from the repository holding this crate (a clone, or cargo's checkout of a git
/// dependency) with CMake, and links it statically.
fn bundled(manifest: &Path) {
    let root = manifest.join("../../..");
    if !root.join("capi/include/smd/smd.h").exists() {
        panic!(
            "smd-sys: no libsmd found and no smd sources at {} to build one from.\n\
             Install libsmd (cmake --install) and set PKG_CONFIG_PATH=PREFIX/lib/pkgconfig, \
             or SMD_LIB_DIR to a folder holding libsmd.so or libsmd.a.",
            root.display()
        );
    }
    let root = root.canonicalize().unwrap();
    let mut missing: Vec<&str> = Vec::new();
    if Command::new("cmake").arg("--version").output().is_err() {
        missing.push("CMake >= 3.18 (Debian: cmake)");
    }
    if Command::new("pkg-config").arg("--version").output().is_err() {
        missing.push("pkg-config (Debian: pkg-config)");
    } else {
        for (pc, what) in BUILD_DEPS {
            if pkg_config(&["--exists", pc]).is_none() {
                missing.push(what);
            }
        }
    }
    if !missing.is_empty() {
        panic!(
            "smd-sys: no installed libsmd was found (SMD_LIB_DIR, pkg-config `smd`), so it is \
             built from the sources at {}, which needs what is missing here:\n  {}\n\
             On Debian/Ubuntu: apt-get install cmake g++ pkg-config libpcre2-dev libcjson-dev \
             libcurl4-openssl-dev libssl-dev\n\
             (or install libsmd and set PKG_CONFIG_PATH=PREFIX/lib/pkgconfig)",
            root.display(),
            missing.join("\n  ")
        );
    }
    for dir in ["capi", "impl", "cmake", "pkgconfig"] {
        println!("cargo:rerun-if-changed={}", root.join(dir).display());
    }
    println!("cargo:rerun-if-changed={}", root.join("CMakeLists.txt").display());
    let out = cmake::Config::new(&root)
        .profile("Release")
        .define("SMD_BUILD_TESTS", "OFF")
        .define("SMD_BUILD_TOOLS", "OFF")
        .define("SMD_BUILD_BENCH", "OFF")
        .define("SMD_BUILD_STATIC", "ON")
        .build_target("smd_static")
        .build();
    link_static(&out.join("build/capi"), &static_deps(false));
}

fn main() {
    println!("cargo:rerun-if-env-changed=SMD_LIB_DIR");
    println!("cargo:rerun-if-env-changed=SMD_LINK");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    if env::var_os("CARGO_FEATURE_STATIC").is_some() {
        return; // the final binary links libsmd some other way
    }
    if env::var_os("CARGO_FEATURE_BUNDLED").is_some() {
        return bundled(&manifest);
    }
    let (dir, from_pkg_config) = match env::var_os("SMD_LIB_DIR") {
        Some(dir) => (Some(PathBuf::from(dir)), false),
        None => match pkg_config_libdir() {
            Some(dir) => (Some(dir), true),
            None => {
                let tree = manifest.join("../../../build/capi");
                let found = tree.join("libsmd.so").exists() || tree.join("libsmd.a").exists();
                (found.then_some(tree), false)
            }
        },
    };
    let Some(dir) = dir else {
        return bundled(&manifest);
    };
    let dir = dir.canonicalize().unwrap_or(dir);
    let has_static = dir.join("libsmd.a").exists();
    let has_shared = dir.join("libsmd.so").exists();
    let want_static = match link_mode() {
        Some(true) if !has_static => panic!(
            "smd-sys: SMD_LINK=static but there is no libsmd.a in {} (configure smd with \
             -DSMD_BUILD_STATIC=ON)",
            dir.display()
        ),
        Some(false) if !has_shared => {
            panic!("smd-sys: SMD_LINK=dynamic but there is no libsmd.so in {}", dir.display())
        }
        Some(mode) => mode,
        None => has_static,
    };
    if want_static {
        link_static(&dir, &static_deps(from_pkg_config));
    } else if has_shared {
        link_dynamic(&dir);
        if link_mode().is_none() {
            println!(
                "cargo:warning=smd-sys links libsmd.so from {0}; a program of yours needs that \
                 folder on its rpath (RUSTFLAGS=\"-C link-arg=-Wl,-rpath,{0}\") unless the \
                 loader searches it",
                dir.display()
            );
        }
    } else {
        panic!(
            "smd-sys: {} holds neither libsmd.so nor libsmd.a (from {})",
            dir.display(),
            if from_pkg_config { "pkg-config's smd.pc" } else { "SMD_LIB_DIR" }
        );
    }
}
