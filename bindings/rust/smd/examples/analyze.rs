//! analyze: opens a trial (e.g. written by the train_mlp example), prints its steps and losses,
//! and runs the built-in VanishingGradient rule and a custom rule written as a closure (the loss
//! of a TRAIN step above a threshold).
//!
//!     cargo run --example analyze -- TRIAL_DIR [--loss-threshold X]
use smd::{InvokeOptions, Mode, Rule, Trial};

fn main() -> smd::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let Some(dir) = args.get(1) else {
        eprintln!("usage: analyze TRIAL_DIR [--loss-threshold X]");
        std::process::exit(2);
    };
    let threshold: f64 = match args.get(2).map(String::as_str) {
        Some("--loss-threshold") => args.get(3).and_then(|s| s.parse().ok()).expect("--loss-threshold X"),
        _ => 0.69,
    };
    let trial = Trial::open(dir, None)?;
    let steps = trial.steps(Mode::Global, false)?;
    println!("{}: {} steps, workers {:?}, collections {:?}", trial.path(), steps.len(), trial.workers()?, trial.collection_names()?);
    let loss = trial.tensor("loss")?;
    let train = loss.steps(Mode::Train, false)?;
    if let (Some(first), Some(last)) = (train.first(), train.last()) {
        let v0 = loss.value(*first, Mode::Train, None)?;
        let v1 = loss.value(*last, Mode::Train, None)?;
        println!("train loss: step {first} {:.4}, step {last} {:.4}", v0.get_f64(0)?, v1.get_f64(0)?);
    }

    let mut vanishing = Rule::builtin("VanishingGradient", &trial, &[], &[("threshold", "0.0000001")])?;
    let mut high_loss = Rule::custom("HighLoss", &trial, &[], move |ctx, step| {
        let trial = ctx.trial(0)?;
        if trial.mode(step)? != Mode::Train {
            return Ok(false);
        }
        let v = trial.tensor("loss")?.value(step, Mode::Global, None)?;
        let l = v.as_slice::<f32>()?[0] as f64;
        if l > threshold {
            ctx.report(0, "loss", &format!("loss {l:.4} > {threshold}"))?;
            return Ok(true);
        }
        Ok(false)
    })?;
    let mut options = InvokeOptions::new()?;
    options.on_finding(|rule, f| {
        if f.step < 3 {
            println!("{rule}: step {}: {}", f.step, f.message);
        }
        true
    })?;
    Rule::invoke_many(&mut [&mut vanishing, &mut high_loss], 0, -1, false, Some(&mut options))?;
    for rule in [&vanishing, &high_loss] {
        println!(
            "{}: {} steps evaluated, condition met {} times, ended: {:?}",
            rule.name(),
            rule.steps_evaluated(),
            rule.conditions_met(),
            rule.end_reason()
        );
    }
    Ok(())
}
