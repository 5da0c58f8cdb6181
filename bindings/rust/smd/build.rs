//! Puts libsmd's folder (found by smd-sys) on the rpath of this crate's tests, examples and
//! benchmarks, so that they run without LD_LIBRARY_PATH.
fn main() {
    println!("cargo:rerun-if-env-changed=DEP_SMD_LIB_DIR");
    if let Ok(dir) = std::env::var("DEP_SMD_LIB_DIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
}
