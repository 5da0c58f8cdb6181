//! Built-in and custom rules, invocation options and callbacks, TensorBoard export.
mod common;
use common::{every_step_options, TempDir};
use smd::{ErrorKind, Hook, InvokeOptions, Mode, Outcome, Rule, RuleEnd, TensorBoardWriter, Trial};
use std::sync::{Arc, Mutex};

/// A trial of 6 steps: "loss" = 1.0 at steps 0..3, 5.0 at steps 3..6; tiny gradients.
fn write_trial(t: &TempDir) -> std::path::PathBuf {
    let dir = t.join("run");
    let hook = Hook::new(&dir, Some(&every_step_options())).unwrap();
    for step in 0..6 {
        hook.set_mode(Mode::Train).unwrap();
        hook.begin_step().unwrap();
        let loss = if step < 3 { 1.0f32 } else { 5.0 };
        hook.save_tensor("loss", &[1], &[loss], &["losses"]).unwrap();
        hook.save_tensor("gradients/w", &[2], &[1e-12f32, -1e-12], &["gradients"]).unwrap();
    }
    hook.close().unwrap();
    dir
}

#[test]
fn builtin_rule_catalogue() {
    let names = smd::builtin_names().unwrap();
    assert!(names.iter().any(|n| n == "VanishingGradient"), "{names:?}");
    let params = smd::builtin_params("vanishinggradient").unwrap();
    assert_eq!(params.len(), 1, "{params:?}");
    assert_eq!((params[0].name.as_str(), params[0].default.as_str()), ("threshold", "0.0000001"));
    assert!(!params[0].help.is_empty());
    // Names in documentation order; a parameter without a default has "".
    let params = smd::builtin_params("TensorVariance").unwrap();
    assert_eq!(params.len(), 4, "{params:?}");
    assert_eq!(params[2].name, "max_threshold");
    assert_eq!(params[2].default, "");
    assert!(params.iter().all(|p| !p.help.is_empty()), "{params:?}");
    // Every built-in rule's parameters have their help.
    for name in &names {
        for p in smd::builtin_params(name).unwrap() {
            assert!(!p.help.is_empty(), "{name}.{}", p.name);
        }
    }
    assert!(smd::builtin_summary("VanishingGradient").is_some_and(|s| !s.is_empty()));
    assert!(smd::builtin_summary("NoSuchRule").is_none());
    assert_eq!(smd::builtin_params("NoSuchRule").unwrap_err().kind(), ErrorKind::InvalidArgument);
}

#[test]
fn builtin_rule_fires_and_reports() {
    let t = TempDir::new("builtin");
    let trial = Trial::open(write_trial(&t), None).unwrap();
    let e = Rule::builtin("NoSuchRule", &trial, &[], &[]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    let e = Rule::builtin("VanishingGradient", &trial, &[], &[("threshold", "abc")]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("threshold"), "{}", e.message());
    let mut rule = Rule::builtin("VanishingGradient", &trial, &[], &[("threshold", "0.0000001")]).unwrap();
    assert_eq!(rule.name(), "VanishingGradient");
    assert_eq!(rule.end_reason(), RuleEnd::None);
    assert_eq!(rule.last_step(), -1);
    rule.invoke(0, -1, false, None).unwrap();
    assert_eq!(rule.steps_evaluated(), 6);
    assert_eq!(rule.conditions_met(), 6);
    assert_eq!(rule.steps_skipped(), 0);
    assert_eq!(rule.last_step(), 5);
    assert_eq!(rule.end_reason(), RuleEnd::NoMoreData);
    let f = rule.findings();
    assert_eq!(f.len(), 6);
    assert_eq!(f[0].rule, "VanishingGradient");
    assert_eq!(f[0].step, 0);
    assert_eq!(f[0].trial, 0);
    assert!(f[0].tensor.contains("gradients/w"), "{:?}", f[0]);
    assert!(!f[0].message.is_empty() && !f[0].line.is_empty());
    rule.clear_findings();
    assert!(rule.findings().is_empty());
    assert_eq!(rule.conditions_met(), 6, "counts are kept");
    assert_eq!(rule.failed_step(), None);
    // raise_eval_cond: the first met condition ends the invocation with RuleConditionMet.
    let mut again = Rule::builtin("VanishingGradient", &trial, &[], &[]).unwrap();
    assert_eq!(again.invoke(0, -1, true, None).unwrap_err().kind(), ErrorKind::RuleConditionMet);
    assert_eq!(again.end_reason(), RuleEnd::ConditionMet);
}

#[test]
fn custom_rule_closure_sees_the_trial_and_reports() {
    let t = TempDir::new("custom");
    let trial = Trial::open(write_trial(&t), None).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    let mut rule = Rule::custom("LossJump", &trial, &[&trial], move |ctx, step| {
        assert_eq!(ctx.rule_name(), "LossJump");
        assert_eq!(ctx.trial_count(), 2);
        assert!(ctx.trial(2).is_err());
        let tr = ctx.trial(0)?;
        // While a rule evaluates a step its trials do not refresh on the invoking thread.
        assert!(!tr.auto_refresh());
        let v = tr.tensor("loss")?.value(step, Mode::Global, None)?;
        let l = v.as_slice::<f32>()?[0];
        seen2.lock().unwrap().push((step, l));
        if l > 2.0 {
            ctx.report(1, "loss", &format!("loss {l} at {step}"))?;
            return Ok(true);
        }
        Ok(false)
    })
    .unwrap();
    rule.set_stop_training(true).unwrap();
    assert!(rule.stop_training());
    rule.set_stop_training(false).unwrap();
    assert!(!rule.stop_training());
    rule.invoke(0, 5, false, None).unwrap();
    assert!(trial.auto_refresh(), "back to the trial's setting after the invocation");
    assert_eq!(*seen.lock().unwrap(), vec![(0, 1.0), (1, 1.0), (2, 1.0), (3, 5.0), (4, 5.0)]);
    assert_eq!(rule.end_reason(), RuleEnd::Step);
    let f = rule.findings();
    assert_eq!(f.iter().map(|f| f.step).collect::<Vec<_>>(), vec![3, 4]);
    assert_eq!(f[0].trial, 1);
    assert_eq!(f[0].tensor, "loss");
    assert_eq!(f[0].message, "loss 5 at 3");
    // A rule is Send: it can be invoked from another thread.
    let handle = std::thread::spawn(move || {
        rule.invoke(5, -1, false, None).unwrap();
        rule.conditions_met()
    });
    assert_eq!(handle.join().unwrap(), 3);
}

#[test]
fn required_tensors_and_end_rule() {
    let t = TempDir::new("required");
    let trial = Trial::open(write_trial(&t), None).unwrap();
    let required_steps = Arc::new(Mutex::new(Vec::new()));
    let r2 = required_steps.clone();
    let mut rule = Rule::custom_with_required(
        "Stopper",
        &trial,
        &[],
        |ctx, step| {
            if step == 2 {
                ctx.end_rule();
            }
            Ok(false)
        },
        move |ctx, step| {
            r2.lock().unwrap().push(step);
            ctx.require_tensor(0, "loss", false, &[step])?;
            ctx.require_tensor(0, "grad.*", true, &[step])
        },
    )
    .unwrap();
    rule.invoke(0, -1, false, None).unwrap();
    assert_eq!(*required_steps.lock().unwrap(), vec![0, 1, 2]);
    assert_eq!(rule.end_reason(), RuleEnd::EndOfRule);
    // Requiring a tensor that does not exist fails the invocation with smdebug's meaning: the
    // step is skipped.
    let mut missing = Rule::custom_with_required("Missing", &trial, &[], |_, _| Ok(true), |ctx, step| ctx.require_tensor(0, "nope", false, &[step])).unwrap();
    missing.invoke(0, -1, false, None).unwrap();
    assert_eq!(missing.conditions_met(), 0);
    assert_eq!(missing.steps_skipped(), 6);
}

#[test]
fn closure_errors_and_panics_become_errors() {
    let t = TempDir::new("errors");
    let trial = Trial::open(write_trial(&t), None).unwrap();
    // An error from the closure ends the invocation with that error.
    let mut failing = Rule::custom("Failing", &trial, &[], |_, step| {
        if step == 2 {
            Err(smd::Error::new(ErrorKind::Corrupt, "bad data at 2"))
        } else {
            Ok(false)
        }
    })
    .unwrap();
    let e = failing.invoke(0, -1, false, None).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corrupt);
    assert!(e.message().contains("bad data at 2"), "{}", e.message());
    assert!(e.message().contains("rule Failing at step 2"), "{}", e.message());
    assert_eq!(failing.end_reason(), RuleEnd::Error);
    assert_eq!(failing.failed_step(), Some(2));
    // A cancellation is not the rule's failure: it is stopped, and the previous failure is gone.
    let mut cancel = InvokeOptions::new().unwrap();
    cancel.on_progress(|_, step, _| step < 1).unwrap();
    assert_eq!(failing.invoke(0, -1, false, Some(&mut cancel)).unwrap_err().kind(), ErrorKind::Cancelled);
    assert_eq!(failing.end_reason(), RuleEnd::Stopped);
    assert_eq!(failing.failed_step(), None);
    // TensorUnavailableForStep from the closure skips the step (smdebug's behaviour).
    let mut skipping = Rule::custom("Skipping", &trial, &[], |ctx, step| {
        let v = ctx.trial(0)?.tensor("loss")?.value(step + 100, Mode::Global, None);
        v.map(|_| true).map_err(|_| smd::Error::new(ErrorKind::TensorUnavailableForStep, "not there"))
    })
    .unwrap();
    skipping.invoke(0, -1, false, None).unwrap();
    assert_eq!(skipping.steps_skipped(), 6);
    // A panic does not cross the C boundary: it becomes an Internal error.
    let mut panicking = Rule::custom("Panicking", &trial, &[], |_, _| -> smd::Result<bool> { panic!("boom") }).unwrap();
    let e = panicking.invoke(0, -1, false, None).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Internal);
    assert!(e.message().contains("boom"), "{}", e.message());
    assert!(Rule::custom("", &trial, &[], |_, _| Ok(false)).is_err());
}

#[test]
fn invoke_options_callbacks_and_invoke_many() {
    let t = TempDir::new("options");
    let trial = Trial::open(write_trial(&t), None).unwrap();
    let mut high = Rule::custom("High", &trial, &[], |ctx, step| {
        let l = ctx.trial(0)?.tensor("loss")?.value(step, Mode::Global, None)?.get_f64(0)?;
        if l > 2.0 {
            ctx.report(0, "loss", "high")?;
        }
        Ok(l > 2.0)
    })
    .unwrap();
    let mut vanishing = Rule::builtin("VanishingGradient", &trial, &[], &[]).unwrap();
    let findings = Arc::new(Mutex::new(Vec::new()));
    let progress = Arc::new(Mutex::new(Vec::new()));
    let (f2, p2) = (findings.clone(), progress.clone());
    let msg = t.join("messages.txt");
    let mut o = InvokeOptions::new().unwrap();
    o.on_finding(move |rule, f| {
        f2.lock().unwrap().push((rule.to_string(), f.step));
        true
    })
    .unwrap()
    .on_progress(move |rule, step, outcome| {
        p2.lock().unwrap().push((rule.map(str::to_string), step, outcome));
        true
    })
    .unwrap()
    .set_message_file(Some(&msg))
    .unwrap()
    .set_collect_findings(false)
    .unwrap()
    .set_stop_training(false)
    .unwrap()
    .set_stop_at_first(false)
    .unwrap()
    .set_wait_timeout_ms(0)
    .unwrap()
    .set_wait_slice_ms(100)
    .unwrap();
    assert_eq!(o.set_wait_slice_ms(0).unwrap_err().kind(), ErrorKind::InvalidArgument);
    Rule::invoke_many(&mut [&mut high, &mut vanishing], 0, -1, false, Some(&mut o)).unwrap();
    let f = findings.lock().unwrap().clone();
    assert_eq!(f.iter().filter(|(r, _)| r == "High").map(|(_, s)| *s).collect::<Vec<_>>(), vec![3, 4, 5]);
    assert_eq!(f.iter().filter(|(r, _)| r == "VanishingGradient").count(), 6);
    assert!(high.findings().is_empty(), "collect_findings(false)");
    let p = progress.lock().unwrap().clone();
    assert!(p.contains(&(Some("High".into()), 3, Outcome::ConditionMet)), "{p:?}");
    assert!(p.contains(&(Some("High".into()), 0, Outcome::NotMet)), "{p:?}");
    let lines = std::fs::read_to_string(&msg).unwrap();
    assert_eq!(lines.lines().count(), 9, "{lines}");

    // A callback returning false cancels the invocation.
    let mut cancel = InvokeOptions::new().unwrap();
    cancel.on_progress(|_, step, _| step < 1).unwrap();
    let mut r = Rule::builtin("VanishingGradient", &trial, &[], &[]).unwrap();
    assert_eq!(r.invoke(0, -1, false, Some(&mut cancel)).unwrap_err().kind(), ErrorKind::Cancelled);
    assert_eq!((r.end_reason(), r.failed_step()), (RuleEnd::Stopped, None));
    // A panicking callback cancels it too, and the error carries the panic's message (it was a
    // bare Cancelled); the options can be used again afterwards.
    let mut panics = InvokeOptions::new().unwrap();
    panics.on_finding(|_, f| if f.step >= 2 { panic!("finding at {}", f.step) } else { true }).unwrap();
    let mut r = Rule::builtin("VanishingGradient", &trial, &[], &[]).unwrap();
    let e = r.invoke(0, -1, false, Some(&mut panics)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Internal);
    assert_eq!(e.message(), "on_finding callback panicked: finding at 2");
    assert_eq!(r.end_reason(), RuleEnd::Stopped);
    let mut r = Rule::builtin("VanishingGradient", &trial, &[], &[]).unwrap();
    assert_eq!(r.invoke(0, 1, false, Some(&mut panics)).map_err(|e| e.kind()), Ok(()));
    let mut panics = InvokeOptions::new().unwrap();
    panics.on_progress(|_, _, _| panic!("progress")).unwrap();
    let mut r = Rule::builtin("VanishingGradient", &trial, &[], &[]).unwrap();
    let e = Rule::invoke_many(&mut [&mut r], 0, -1, false, Some(&mut panics)).unwrap_err();
    assert_eq!((e.kind(), e.message()), (ErrorKind::Internal, "on_progress callback panicked: progress"));
    let mut stop_first = InvokeOptions::new().unwrap();
    stop_first.set_stop_at_first(true).unwrap();
    let mut r = Rule::builtin("VanishingGradient", &trial, &[], &[]).unwrap();
    r.invoke(0, -1, false, Some(&mut stop_first)).unwrap();
    assert_eq!(r.conditions_met(), 1);
}

/// In `invoke_many` the first failure ends the invocation: the rule that failed ends with
/// `Error` at its step (the call's error is its own), the other one is `Stopped`, whichever
/// order they are in.
#[test]
fn invoke_many_with_a_failing_rule() {
    let t = TempDir::new("many_fail");
    let trial = Trial::open(write_trial(&t), None).unwrap();
    let failing = || {
        Rule::custom("Failing", &trial, &[], |_, step| {
            if step == 3 {
                Err(smd::Error::new(ErrorKind::Corrupt, "bad data"))
            } else {
                Ok(false)
            }
        })
        .unwrap()
    };
    let fine = || Rule::custom("Fine", &trial, &[], |_, _| Ok(false)).unwrap();
    for failing_first in [true, false] {
        let (mut bad, mut good) = (failing(), fine());
        let e = if failing_first {
            Rule::invoke_many(&mut [&mut bad, &mut good], 0, -1, false, None)
        } else {
            Rule::invoke_many(&mut [&mut good, &mut bad], 0, -1, false, None)
        }
        .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corrupt);
        assert!(e.message().contains("rule Failing at step 3") && e.message().contains("bad data"), "{}", e.message());
        assert_eq!(bad.end_reason(), RuleEnd::Error, "failing_first {failing_first}");
        assert_eq!(bad.failed_step(), Some(3));
        assert_eq!(good.end_reason(), RuleEnd::Stopped, "failing_first {failing_first}");
        assert_eq!(good.failed_step(), None);
        assert!(good.last_step() <= 3 && good.last_step() >= 2, "{}", good.last_step());
    }
    // A rule raising its condition stops the others too; it is not a failure.
    let mut high = Rule::custom("High", &trial, &[], |ctx, step| {
        Ok(ctx.trial(0)?.tensor("loss")?.value(step, Mode::Global, None)?.get_f64(0)? > 2.0)
    })
    .unwrap();
    let mut good = fine();
    let e = Rule::invoke_many(&mut [&mut high, &mut good], 0, -1, true, None).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::RuleConditionMet);
    assert_eq!((high.end_reason(), high.failed_step()), (RuleEnd::ConditionMet, None));
    assert_eq!((good.end_reason(), good.failed_step()), (RuleEnd::Stopped, None));
}

/// A wait that times out stops the rule; that is not the rule's failure.
#[test]
fn wait_timeout_stops_the_rule() {
    let t = TempDir::new("timeout");
    let dir = t.join("run");
    let hook = Hook::new(&dir, Some(&every_step_options())).unwrap();
    hook.begin_step().unwrap();
    hook.save_tensor("loss", &[1], &[0.1f32], &[]).unwrap();
    hook.begin_step().unwrap();
    hook.flush().unwrap();
    let trial = Trial::open(&dir, None).unwrap();
    let mut rule = Rule::custom("Loss", &trial, &[], |_, _| Ok(false)).unwrap();
    let mut o = InvokeOptions::new().unwrap();
    o.set_wait_timeout_ms(0).unwrap();
    let e = rule.invoke(0, -1, false, Some(&mut o)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::StepNotYetAvailable);
    assert_eq!(rule.steps_evaluated(), 1);
    assert_eq!((rule.end_reason(), rule.failed_step()), (RuleEnd::Stopped, None));
    hook.close().unwrap();
}

#[test]
fn tensorboard_writer_and_hook_export() {
    let t = TempDir::new("tb");
    let dir = t.join("tb");
    let mut w = TensorBoardWriter::new(&dir).unwrap();
    w.add_scalar(0, Mode::Train, 1.0, "loss", 0.5).unwrap();
    w.add_scalar(1, Mode::Eval, 2.0, "loss", 0.25).unwrap();
    assert!(w.add_histogram(0, Mode::Train, 1.0, "w", &[1.0f32, 2.0, 3.0]).unwrap());
    assert!(!w.add_histogram(0, Mode::Train, 1.0, "nan", &[f64::NAN]).unwrap(), "no value in any bucket");
    assert_eq!(w.add_histogram(0, Mode::Train, 1.0, "empty", &[] as &[f32]).unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(w.add_histogram(0, Mode::Train, 1.0, "b", &[true]).unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(w.add_scalar(0, Mode::Train, 1.0, "a\0b", 1.0).unwrap_err().kind(), ErrorKind::InvalidArgument);
    w.flush().unwrap();
    w.close().unwrap();
    let files = walk(&dir);
    assert!(files.iter().any(|f| f.contains("/TRAIN/") && f.ends_with(".tfevents")), "{files:?}");
    assert!(files.iter().any(|f| f.contains("/EVAL/") && f.ends_with(".tfevents")), "{files:?}");

    let mut o = every_step_options();
    o.set_tensorboard_dir(t.join("hooktb")).unwrap();
    let hook = Hook::new(t.join("run"), Some(&o)).unwrap();
    hook.begin_step().unwrap();
    hook.save_scalar("acc", 0.9).unwrap();
    hook.save_tensor("loss", &[1], &[0.3f32], &["losses"]).unwrap();
    hook.close().unwrap();
    let files = walk(&t.join("hooktb"));
    assert!(files.iter().any(|f| f.ends_with(".tfevents")), "{files:?}");
}

fn walk(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else if std::fs::metadata(&p).map(|m| m.len() > 0).unwrap_or(false) {
                out.push(p.display().to_string());
            }
        }
    }
    out
}
