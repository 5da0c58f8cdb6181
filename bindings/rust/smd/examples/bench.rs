//! bench: the cost of the Rust binding next to the same C calls made directly (through smd-sys,
//! which is exactly what a C program executes), in the same run.
//!
//!     cargo run --release --example bench -- [OUT_DIR]
//!
//! Rows: save_tensor when nothing is due (ns per call), a 4 MiB float32 save_tensor that is due
//! (µs per call, copy into the hook's buffer included), and reading one value
//! (Tensor::value + as_slice, ns per value). Prints the best of 5 rounds of each.
//! SMD_BENCH_TINY=1 (tests/bench/bench_bindings.sh --tiny): one round of each, iteration counts
//! divided by 1000 (at least 1), so that the test command runs it in a moment; its figures mean
//! nothing.
use smd::{sys, Hook, HookOptions, Mode, SaveConfig, Trial};
use std::ffi::CString;
use std::hint::black_box;
use std::ptr;
use std::time::Instant;

fn best<F: FnMut()>(rounds: usize, iters: usize, mut f: F) -> f64 {
    let mut best = f64::MAX;
    for _ in 0..rounds {
        let t = Instant::now();
        for _ in 0..iters {
            f();
        }
        best = best.min(t.elapsed().as_secs_f64() * 1e9 / iters as f64);
    }
    best
}

fn hook(dir: &std::path::Path, interval: i64) -> smd::Result<Hook> {
    let mut sc = SaveConfig::new()?;
    sc.set(Mode::All, interval, 0, -1, &[])?;
    let mut o = HookOptions::new()?;
    o.set_save_config(&sc)?.set_save_all(true)?;
    Hook::new(dir, Some(&o))
}

fn main() -> smd::Result<()> {
    let base = std::env::args().nth(1).map(std::path::PathBuf::from).unwrap_or_else(|| std::env::temp_dir().join(format!("smd-rust-bench-{}", std::process::id())));
    let _ = std::fs::remove_dir_all(&base);
    let name = CString::new("layer1/weight").unwrap();
    let shape = [64i64, 64];
    let small = vec![0.5f32; 64 * 64];
    let tiny = std::env::var_os("SMD_BENCH_TINY").is_some_and(|v| v == "1");
    let rounds = if tiny { 1 } else { 5 };
    let n = |iters: usize| if tiny { (iters / 1000).max(1) } else { iters };

    // 1. Nothing due: step 1 of a hook saving every 1000 steps.
    let h = hook(&base.join("idle"), 1000)?;
    h.begin_step()?;
    h.begin_step()?;
    let raw = |h: &Hook| unsafe {
        let e = sys::smd_hook_save_tensor(hook_ptr(h), name.as_ptr(), sys::SMD_DTYPE_FLOAT32, shape.as_ptr(), 2, small.as_ptr().cast(), small.len() * 4, ptr::null(), 0);
        assert!(e.is_null());
    };
    let idle_c = best(rounds, n(2_000_000), || raw(&h));
    let idle_rust = best(rounds, n(2_000_000), || h.save_tensor(black_box("layer1/weight"), &shape, &small, &[]).unwrap());
    h.close()?;

    // 2. A 4 MiB save that is due, every step.
    let big = vec![1.25f32; 1 << 20];
    let bshape = [1024i64, 1024];
    let h = hook(&base.join("big"), 1)?;
    let mut step_c = 0.0;
    let mut step_rust = 0.0;
    // The two batches alternate which goes first, and each starts with an empty queue; the first
    // two rounds are a warm-up (none when tiny: one round).
    let (big_rounds, warm_up, batch) = if tiny { (1, 0, 1) } else { (12, 2, 8) };
    for round in 0..big_rounds {
        h.begin_step()?;
        let c_batch = || -> smd::Result<f64> {
            let t = Instant::now();
            for i in 0..batch {
                let n = CString::new(format!("c{i}")).unwrap();
                let e = unsafe { sys::smd_hook_save_tensor(hook_ptr(&h), n.as_ptr(), sys::SMD_DTYPE_FLOAT32, bshape.as_ptr(), 2, big.as_ptr().cast(), big.len() * 4, ptr::null(), 0) };
                assert!(e.is_null());
            }
            let us = t.elapsed().as_secs_f64() * 1e6 / batch as f64;
            h.flush()?;
            Ok(us)
        };
        let c_first = round % 2 == 0;
        let c1 = if c_first { Some(c_batch()?) } else { None };
        let t = Instant::now();
        for i in 0..batch {
            h.save_tensor(&format!("r{i}"), &bshape, &big, &[])?;
        }
        let r = t.elapsed().as_secs_f64() * 1e6 / batch as f64;
        h.flush()?;
        let c = match c1 {
            Some(c) => c,
            None => c_batch()?,
        };
        if round >= warm_up {
            step_c = if step_c == 0.0 { c } else { f64::min(step_c, c) };
            step_rust = if step_rust == 0.0 { r } else { f64::min(step_rust, r) };
        }
    }
    h.close()?;

    // 3. Per-value read: 200 steps of a small tensor.
    let steps = n(200) as i64;
    let h = hook(&base.join("read"), 1)?;
    for s in 0..steps {
        h.begin_step()?;
        h.save_tensor("v", &[4], &[s as f32, 1.0, 2.0, 3.0], &[])?;
    }
    h.close()?;
    let trial = Trial::open(base.join("read"), None)?;
    let tensor = trial.tensor("v")?;
    let _ = tensor.values(Mode::Global, None)?; // warm the cache
    let traw = tensor_ptr(&tensor);
    let read_c = best(rounds, n(20), || {
        for s in 0..steps {
            unsafe {
                let mut v = ptr::null_mut();
                assert!(sys::smd_tensor_value(traw, s, sys::SMD_MODE_GLOBAL, ptr::null(), &mut v).is_null());
                black_box(*(sys::smd_value_data(v) as *const f32));
                sys::smd_value_free(v);
            }
        }
    }) / steps as f64;
    let read_rust = best(rounds, n(20), || {
        for s in 0..steps {
            let v = tensor.value(s, Mode::Global, None).unwrap();
            black_box(v.as_slice::<f32>().unwrap()[0]);
        }
    }) / steps as f64;
    let _ = std::fs::remove_dir_all(&base);

    println!("{:<34} {:>12} {:>12} {:>12}", "operation", "C (via sys)", "Rust", "overhead");
    println!("{:<34} {:>9.1} ns {:>9.1} ns {:>9.1} ns", "save_tensor, nothing due", idle_c, idle_rust, idle_rust - idle_c);
    println!("{:<34} {:>9.1} µs {:>9.1} µs {:>9.1} µs", "save_tensor 4 MiB, due", step_c, step_rust, step_rust - step_c);
    println!("{:<34} {:>9.1} ns {:>9.1} ns {:>9.1} ns", "read one value", read_c, read_rust, read_rust - read_c);
    Ok(())
}

fn hook_ptr(h: &Hook) -> *mut sys::smd_hook {
    h.as_raw()
}

fn tensor_ptr(t: &smd::Tensor) -> *const sys::smd_tensor {
    t.as_raw()
}
