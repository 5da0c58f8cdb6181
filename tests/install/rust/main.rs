//! The Rust program of the README's "Use smd from your program" (the same as app.c): writes a
//! trial with the hook, reads a value back, runs a built-in rule.
use smd::{Hook, HookOptions, Mode, Rule, SaveConfig, Trial};

fn main() -> smd::Result<()> {
    let dir = std::env::args().nth(1).expect("usage: app OUT_DIR");
    let mut every_step = SaveConfig::new()?;
    every_step.set(Mode::All, 1, 0, -1, &[])?;
    let mut opts = HookOptions::new()?;
    opts.set_save_config(&every_step)?.add_include_collection("weights")?;
    let hook = Hook::new(&dir, Some(&opts))?;
    for step in 0..3 {
        let w: Vec<f32> = (0..4).map(|i| (i * step) as f32).collect(); // all zero at step 0
        hook.begin_step()?;
        hook.save_tensor("fc.weight", &[4], &w, &[])?;
    }
    hook.close()?;

    let trial = Trial::open(&dir, None)?;
    let x = trial.tensor("fc.weight")?.value(2, Mode::Global, None)?.get_f64(1)?;
    let mut rule = Rule::builtin("AllZero", &trial, &[], &[("tensor_regex", "fc\\..*")])?;
    rule.invoke(0, -1, false, None)?;
    println!("rust: fc.weight at step 2: {x}; AllZero conditions met: {}", rule.conditions_met());
    Ok(())
}
