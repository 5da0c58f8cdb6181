//! Finds libsmd: SMD_LIB_DIR (a folder holding libsmd.so, e.g. a CMake build tree's `capi/`),
//! else pkg-config's `smd` package, else the repository's own `build/capi` next to this crate.
use std::path::PathBuf;
use std::process::Command;

fn pkg_config_libdir() -> Option<PathBuf> {
    let out = Command::new("pkg-config").args(["--libs-only-L", "smd"]).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    text.split_whitespace().find_map(|t| t.strip_prefix("-L").map(PathBuf::from))
}

fn main() {
    println!("cargo:rerun-if-env-changed=SMD_LIB_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let dir = std::env::var_os("SMD_LIB_DIR")
        .map(PathBuf::from)
        .or_else(pkg_config_libdir)
        .or_else(|| {
            let tree = manifest.join("../../../build/capi");
            tree.join("libsmd.so").exists().then_some(tree)
        });
    match dir {
        Some(dir) => {
            let dir = dir.canonicalize().unwrap_or(dir);
            println!("cargo:rustc-link-search=native={}", dir.display());
            // Read by dependents (DEP_SMD_LIB_DIR) to set an rpath on their binaries.
            println!("cargo:lib_dir={}", dir.display());
            println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
        }
        None => println!(
            "cargo:warning=libsmd not found: set SMD_LIB_DIR or install smd.pc for pkg-config"
        ),
    }
}
