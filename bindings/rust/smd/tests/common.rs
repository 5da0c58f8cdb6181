//! Helpers shared by the integration tests.
#![allow(dead_code)]
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A fresh, empty folder under the system temp dir, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let p = std::env::temp_dir().join(format!("smd-rust-{tag}-{}-{}", std::process::id(), N.fetch_add(1, Ordering::SeqCst)));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    pub fn join(&self, s: &str) -> PathBuf {
        self.0.join(s)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Options that save every step and every tensor, with reproducible wall times.
pub fn every_step_options() -> smd::HookOptions {
    let mut sc = smd::SaveConfig::new().unwrap();
    sc.set(smd::Mode::All, 1, 0, -1, &[]).unwrap();
    let mut o = smd::HookOptions::new().unwrap();
    o.set_save_config(&sc).unwrap().set_save_all(true).unwrap().set_wall_time_base(1000.0).unwrap();
    o
}
