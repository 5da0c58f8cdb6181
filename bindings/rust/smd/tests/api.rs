//! Every public function of the safe API, on trials written and read from Rust.
mod common;
use common::{every_step_options, TempDir};
use smd::{DType, ErrorKind, Hook, HookOptions, IncludeWorkers, Mode, ReductionConfig, SaveConfig, SaveConfigMode, StepState, TensorFilter, Trial, TrialOptions};

#[test]
fn error_kinds_round_trip_every_code() {
    for code in 1..=21 {
        let k = ErrorKind::from_code(code);
        assert_ne!(k, ErrorKind::Other(code), "code {code} has a variant");
        assert_eq!(k.code(), code);
        assert!(k.name().starts_with("SMD_E_"), "{}", k.name());
    }
    assert_eq!(ErrorKind::NotFound.name(), "SMD_E_NOT_FOUND");
    let skipping: Vec<i32> = (0..=22).filter(|&c| ErrorKind::from_code(c).skips_rule_step()).collect();
    assert_eq!(
        skipping,
        vec![
            ErrorKind::TensorUnavailableForStep.code(),
            ErrorKind::TensorUnavailable.code(),
            ErrorKind::StepUnavailable.code()
        ]
    );
    assert_eq!(ErrorKind::from_code(99), ErrorKind::Other(99));
    assert_eq!(ErrorKind::Other(99).name(), "SMD_E_UNKNOWN");
    let e = smd::Error::new(ErrorKind::Io, "disk full");
    assert_eq!(e.to_string(), "SMD_E_IO: disk full");
    assert_eq!(e.kind(), ErrorKind::Io);
    assert_eq!(e.message(), "disk full");
}

#[test]
fn dtypes_modes_and_version() {
    assert_eq!(DType::Float32.size(), 4);
    assert_eq!(DType::Complex128.size(), 16);
    assert_eq!(DType::String.size(), 0);
    for d in DType::ALL {
        assert_eq!(DType::from_name(d.name()).unwrap(), d, "{}", d.name());
    }
    assert_eq!(DType::BFloat16.name(), "bfloat16");
    assert_eq!(DType::from_name("float128").unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(DType::from_name("float\0").unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(Mode::Train.name(), "TRAIN");
    assert_eq!(Mode::from_name("eval").unwrap(), Mode::Eval);
    assert_eq!(Mode::from_name("GLOBAL").unwrap(), Mode::Global);
    assert_eq!(Mode::from_name("training").unwrap_err().kind(), ErrorKind::InvalidArgument);
    let (a, b, c) = smd::version();
    assert_eq!(smd::version_string(), format!("{a}.{b}.{c}"));
}

#[test]
fn save_config() {
    let mut c = SaveConfig::new().unwrap();
    c.set(Mode::Train, 5, 10, 30, &[]).unwrap();
    assert!(c.should_save(10, Mode::Train).unwrap());
    assert!(!c.should_save(11, Mode::Train).unwrap());
    assert!(c.should_save(25, Mode::Train).unwrap());
    assert!(!c.should_save(30, Mode::Train).unwrap());
    c.set(Mode::Eval, 100, 0, -1, &[3, 7]).unwrap();
    assert!(c.should_save(7, Mode::Eval).unwrap());
    assert!(!c.should_save(4, Mode::Eval).unwrap());
    let copy = c.try_clone().unwrap();
    c.set_interval(Mode::Train, 2).unwrap();
    assert!(c.should_save(12, Mode::Train).unwrap());
    assert!(!copy.should_save(12, Mode::Train).unwrap(), "the clone is independent");
    c.unset(Mode::Train).unwrap();
    assert_eq!(c.set(Mode::Train, 0, 0, -1, &[]).unwrap_err().kind(), ErrorKind::InvalidArgument);
}

#[test]
fn reduction_config() {
    let mut r = ReductionConfig::parse("min, abs_mean,l2_norm").unwrap();
    let s = r.to_config_string().unwrap();
    for n in ["min", "abs_mean", "l2_norm"] {
        assert!(s.contains(n), "{s}");
    }
    r.add("max").unwrap().set_save_raw_tensor(true).unwrap().set_save_shape(true).unwrap();
    assert!(r.to_config_string().unwrap().contains("max"));
    let c = r.try_clone().unwrap();
    assert_eq!(c.to_config_string().unwrap(), r.to_config_string().unwrap());
    let mut e = ReductionConfig::new().unwrap();
    assert_eq!(e.to_config_string().unwrap(), "");
    assert_eq!(e.add("bogus").unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(ReductionConfig::parse("min,bogus").unwrap_err().kind(), ErrorKind::InvalidArgument);
    let names = smd::reduction_names().unwrap();
    assert!(names.iter().any(|n| n == "l2_norm") && names.iter().any(|n| n == "mean"), "{names:?}");
}

#[test]
fn hook_options_setters() {
    let mut o = HookOptions::new().unwrap();
    let t = TempDir::new("opts");
    o.set_save_config(&SaveConfig::new().unwrap())
        .unwrap()
        .set_reduction_config(&ReductionConfig::parse("max").unwrap())
        .unwrap()
        .add_include_regex("relu.*")
        .unwrap()
        .add_include_collection("weights")
        .unwrap()
        .set_save_all(false)
        .unwrap()
        .set_include_workers(IncludeWorkers::All)
        .unwrap()
        .set_worker("worker_3")
        .unwrap()
        .set_num_workers(4)
        .unwrap()
        .set_dry_run(false)
        .unwrap()
        .set_real_payload_crc(true)
        .unwrap()
        .set_wall_time_base(5.0)
        .unwrap()
        .set_memory_budget(1 << 20)
        .unwrap()
        .set_max_pending_steps(2)
        .unwrap()
        .set_write_end_marker(true)
        .unwrap()
        .set_export_tensorboard(false)
        .unwrap()
        .set_tensorboard_dir(t.join("tb"))
        .unwrap();
    assert_eq!(o.add_include_collection("").unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(o.add_include_regex("(").unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(o.set_worker("a\0b").unwrap_err().kind(), ErrorKind::InvalidArgument);
    let hook = Hook::new(t.join("run"), Some(&o)).unwrap();
    assert_eq!(hook.worker(), "worker_3");
    hook.close().unwrap();
}

fn bytes_of<T>(v: &[T]) -> Vec<u8> {
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)).to_vec() }
}

/// A scalar's timestamp is its record's wall time; one saved before the first step is kept and
/// written into step 0 (smdebug writes it in its next step).
#[test]
fn scalar_timestamp_and_save_before_the_first_step() {
    let t = TempDir::new("timestamp");
    let hook = Hook::new(t.join("run"), Some(&every_step_options())).unwrap();
    hook.save_scalar_at("early", 2.5f64, 1234.5).unwrap();
    assert_eq!(hook.save_scalar_at("bad", 1i32, f64::NAN).unwrap_err().kind(), ErrorKind::InvalidArgument);
    hook.begin_step().unwrap();
    hook.close().unwrap();
    let events = std::fs::read(t.join("run/events/000000000000/000000000000_worker_0.tfevents")).unwrap();
    let mut want = vec![0x09u8]; // Event.wall_time: field 1, fixed64
    want.extend_from_slice(&1234.5f64.to_le_bytes());
    assert!(events.windows(9).any(|w| w == want.as_slice()), "the event's wall_time is the timestamp");
    let trial = Trial::open(t.join("run"), None).unwrap();
    let v = trial.tensor("scalar/early").unwrap().value(0, Mode::Global, None).unwrap();
    assert_eq!(v.as_slice::<f64>().unwrap(), &[2.5]);
}

#[test]
fn every_dtype_round_trips_with_identical_values() {
    let t = TempDir::new("dtypes");
    let hook = Hook::new(t.join("run"), Some(&every_step_options())).unwrap();
    hook.begin_step().unwrap();
    let f32s = [1.5f32, -2.25, 3.0e-8, f32::MAX, 0.0, -0.0];
    let f64s = [1.0e-300f64, -7.5, std::f64::consts::PI];
    hook.save_tensor("f32", &[2, 3], &f32s, &[]).unwrap();
    hook.save_tensor("f64", &[3], &f64s, &[]).unwrap();
    hook.save_tensor("i32", &[2], &[i32::MIN, i32::MAX], &[]).unwrap();
    hook.save_tensor("u8", &[3], &[0u8, 128, 255], &[]).unwrap();
    hook.save_tensor("i16", &[2], &[i16::MIN, 7i16], &[]).unwrap();
    hook.save_tensor("i8", &[2], &[-128i8, 127], &[]).unwrap();
    hook.save_tensor("i64", &[2], &[i64::MIN, 1i64 << 40], &[]).unwrap();
    hook.save_tensor("bool", &[3], &[true, false, true], &[]).unwrap();
    hook.save_tensor("u16", &[2], &[0u16, 65535], &[]).unwrap();
    hook.save_tensor("u32", &[2], &[1u32, u32::MAX], &[]).unwrap();
    hook.save_tensor("u64", &[2], &[2u64, u64::MAX], &[]).unwrap();
    hook.save_tensor("scalar0d", &[], &[42.0f32], &[]).unwrap();
    // dtypes without a Rust element type go in as bytes.
    let f16 = [0x3c00u16, 0xc000]; // 1.0, -2.0
    let bf16 = [0x3f80u16, 0x4040]; // 1.0, 3.0
    let c64 = [1.0f32, 2.0, -3.0, 0.5];
    let c128 = [1.0f64, -1.0];
    hook.save_tensor_bytes("f16", DType::Float16, &[2], &bytes_of(&f16), &[]).unwrap();
    hook.save_tensor_bytes("bf16", DType::BFloat16, &[2], &bytes_of(&bf16), &[]).unwrap();
    hook.save_tensor_bytes("c64", DType::Complex64, &[2], &bytes_of(&c64), &[]).unwrap();
    hook.save_tensor_bytes("c128", DType::Complex128, &[1], &bytes_of(&c128), &[]).unwrap();
    hook.save_strings("words", &["alpha", "", "γράμμα"], &[]).unwrap();
    hook.save_scalar("loss", 0.125).unwrap();
    hook.save_scalar_typed("count", 7i64).unwrap();
    hook.save_scalar_typed("flag", true).unwrap();
    hook.close().unwrap();

    let trial = Trial::open(t.join("run"), None).unwrap();
    let v = |name: &str| trial.tensor(name).unwrap().value(0, Mode::Global, None).unwrap();
    let f = v("f32");
    assert_eq!(f.dtype(), DType::Float32);
    assert_eq!(f.shape(), &[2, 3]);
    assert_eq!(f.count(), 6);
    assert_eq!(f.nbytes(), 24);
    assert_eq!(f.as_slice::<f32>().unwrap(), &f32s);
    assert_eq!(f.bytes(), bytes_of(&f32s).as_slice());
    assert_eq!(v("f64").as_slice::<f64>().unwrap(), &f64s);
    assert_eq!(v("i32").as_slice::<i32>().unwrap(), &[i32::MIN, i32::MAX]);
    assert_eq!(v("u8").as_slice::<u8>().unwrap(), &[0, 128, 255]);
    assert_eq!(v("i16").as_slice::<i16>().unwrap(), &[i16::MIN, 7]);
    assert_eq!(v("i8").as_slice::<i8>().unwrap(), &[-128, 127]);
    assert_eq!(v("i64").as_slice::<i64>().unwrap(), &[i64::MIN, 1 << 40]);
    assert_eq!(v("bool").as_slice::<bool>().unwrap(), &[true, false, true]);
    assert_eq!(v("u16").as_slice::<u16>().unwrap(), &[0, 65535]);
    assert_eq!(v("u32").as_slice::<u32>().unwrap(), &[1, u32::MAX]);
    assert_eq!(v("u64").as_slice::<u64>().unwrap(), &[2, u64::MAX]);
    let s0 = v("scalar0d");
    assert!(s0.shape().is_empty());
    assert_eq!(s0.as_slice::<f32>().unwrap(), &[42.0]);
    let h = v("f16");
    assert_eq!(h.dtype(), DType::Float16);
    assert_eq!(h.bytes(), bytes_of(&f16).as_slice());
    assert_eq!(h.get_f64(1).unwrap(), -2.0);
    let b = v("bf16");
    assert_eq!(b.dtype(), DType::BFloat16);
    assert_eq!(b.get_f64(1).unwrap(), 3.0);
    assert_eq!(v("c64").bytes(), bytes_of(&c64).as_slice());
    assert_eq!(v("c64").dtype(), DType::Complex64);
    assert_eq!(v("c128").bytes(), bytes_of(&c128).as_slice());
    let w = v("words");
    assert_eq!(w.dtype(), DType::String);
    assert_eq!(w.strings().unwrap(), vec!["alpha", "", "γράμμα"]);
    assert_eq!(w.string(2).unwrap(), "γράμμα");
    assert_eq!(w.string(3).unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(v("scalar/loss").as_slice::<f64>().unwrap(), &[0.125]);
    assert_eq!(v("scalar/count").as_slice::<i64>().unwrap(), &[7]);
    assert_eq!(v("scalar/flag").as_slice::<bool>().unwrap(), &[true]);
    // A view of the wrong type is an error, not a reinterpretation.
    assert_eq!(f.as_slice::<i32>().unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(w.as_slice::<u8>().unwrap_err().kind(), ErrorKind::InvalidArgument);
    // Values outlive their tensor and trial; clones share the data.
    let kept = f.clone();
    drop(f);
    drop(trial);
    assert_eq!(kept.as_slice::<f32>().unwrap(), &f32s);
}

#[test]
fn hook_state_collections_and_trial_queries() {
    let t = TempDir::new("queries");
    let dir = t.join("run");
    let mut opts = HookOptions::new().unwrap();
    let mut every = SaveConfig::new().unwrap();
    every.set(Mode::All, 1, 0, -1, &[]).unwrap();
    opts.set_save_config(&every).unwrap().add_include_collection("weights").unwrap();
    let hook = Hook::new(&dir, Some(&opts)).unwrap();
    assert_eq!(hook.global_step(), -1);
    let weights = hook.collection("weights").unwrap();
    assert_eq!(weights.name(), "weights");
    weights.add_include_regex("^w").unwrap();
    weights.add_tensor_name("bias").unwrap();
    weights.set_save_histogram(false).unwrap();
    let mut red = ReductionConfig::parse("max,min").unwrap();
    red.set_save_raw_tensor(true).unwrap().set_save_shape(true).unwrap();
    weights.set_reduction_config(Some(&red)).unwrap();
    weights.set_save_config(Some(&every)).unwrap();
    let mine = hook.collection("mine").unwrap();
    mine.add_tensor_name("other").unwrap();
    hook.include_collection("mine").unwrap();
    assert!(hook.collection_names().unwrap().iter().any(|n| n == "mine"));
    assert_eq!(hook.collection("").unwrap_err().kind(), ErrorKind::InvalidArgument);

    for step in 0..4i64 {
        hook.set_mode(if step < 3 { Mode::Train } else { Mode::Eval }).unwrap();
        hook.begin_step().unwrap();
        assert_eq!(hook.global_step(), step);
        assert!(hook.any_due());
        assert!(hook.is_due("w1"));
        assert!(!hook.is_due("unrelated"));
        let x = step as f32;
        hook.save_tensor("w1", &[2, 2], &[x, -x, 2.0 * x, 0.5], &[]).unwrap();
        hook.save_tensor("bias", &[1], &[x], &[]).unwrap();
        hook.save_tensor("other", &[1], &[x], &[]).unwrap();
        hook.save_tensor("extra", &[1], &[x], &["custom"]).unwrap();
        assert!(!hook.stop_requested().unwrap());
        hook.flush().unwrap();
    }
    assert_eq!(hook.mode(), Mode::Eval);
    assert_eq!(hook.mode_step(), 0);
    let names = weights.tensor_names().unwrap();
    assert!(names.contains(&"w1".to_string()) && names.contains(&"bias".to_string()), "{names:?}");
    hook.close().unwrap();
    let stats = hook.stats().unwrap();
    assert!(stats.records > 0 && stats.bytes > 0, "{stats:?}");
    assert_eq!(hook.begin_step().unwrap_err().kind(), ErrorKind::InvalidState);
    assert_eq!(hook.save_tensor("w1", &[1], &[1.0f32], &[]).unwrap_err().kind(), ErrorKind::InvalidState);

    let mut to = TrialOptions::new().unwrap();
    to.set_range_steps(-1, -1).unwrap().set_auto_refresh(true).unwrap().set_collection_wait_ms(0).unwrap().set_cache_bytes(1 << 20).unwrap();
    assert_eq!(to.set_range_steps(5, 2).unwrap_err().kind(), ErrorKind::InvalidArgument);
    let trial = Trial::open(&dir, Some(&to)).unwrap();
    assert!(trial.path().ends_with("run"), "{}", trial.path());
    trial.refresh().unwrap();
    assert!(trial.auto_refresh(), "opened with automatic refresh");
    {
        let _off = trial.refresh_scope(false).unwrap();
        assert!(!trial.auto_refresh());
    }
    assert!(trial.auto_refresh(), "the scope ended with its guard");
    to.set_auto_refresh(false).unwrap();
    let manual = Trial::open(&dir, Some(&to)).unwrap();
    assert!(!manual.auto_refresh(), "opened without automatic refresh");
    let on = manual.refresh_scope(true).unwrap();
    assert!(manual.auto_refresh() && !on.as_raw().is_null());
    drop(on);
    assert!(!manual.auto_refresh());
    drop(manual);
    assert!(trial.warnings().unwrap().is_empty());
    assert!(trial.has_ended().unwrap());
    assert_eq!(trial.num_workers(), 1);
    assert_eq!(trial.last_complete_step(), 3);
    assert_eq!(trial.index_cursor().unwrap().as_deref(), Some("index/000000000/000000000003_worker_0.json"));
    assert_eq!(trial.workers().unwrap(), vec!["worker_0"]);
    assert_eq!(trial.steps(Mode::Global, false).unwrap(), vec![0, 1, 2, 3]);
    assert_eq!(trial.steps(Mode::Train, false).unwrap(), vec![0, 1, 2]);
    assert_eq!(trial.modes().unwrap(), vec![Mode::Train, Mode::Eval]);
    assert_eq!(trial.mode(3).unwrap(), Mode::Eval);
    assert_eq!(trial.mode_step(3).unwrap(), 0);
    assert_eq!(trial.global_step(0, Mode::Eval).unwrap(), 3);
    assert_eq!(trial.has_passed_step(2, Mode::Global).unwrap(), StepState::Available);
    assert_eq!(trial.has_passed_step(9, Mode::Global).unwrap(), StepState::Unavailable);
    trial.wait_for_steps(&[0, 3], Mode::Global, 0).unwrap();
    assert_eq!(trial.wait_for_steps(&[9], Mode::Global, 0).unwrap_err().kind(), ErrorKind::NoMoreData);
    let all = trial.tensor_names(None).unwrap();
    for n in ["w1", "bias", "other", "extra"] {
        assert!(all.contains(&n.to_string()), "{n} in {all:?}");
    }
    let mut f = TensorFilter::new().unwrap();
    f.set_collection("weights").unwrap();
    let mut w = trial.tensor_names(Some(&f)).unwrap();
    w.sort();
    assert_eq!(w, vec!["bias", "w1"]);
    let mut f2 = TensorFilter::new().unwrap();
    f2.add_regex("^ext").unwrap().set_step(0).unwrap().set_mode(Mode::Eval).unwrap();
    assert_eq!(trial.tensor_names(Some(&f2)).unwrap(), vec!["extra"]);
    assert!(trial.has_tensor("w1").unwrap());
    assert!(!trial.has_tensor("nope").unwrap());
    assert!(trial.collection_names().unwrap().contains(&"custom".to_string()));
    let info = trial.collection("weights").unwrap();
    assert_eq!(info.name(), "weights");
    assert!(info.include_regex().unwrap().contains(&"^w".to_string()));
    assert!(info.tensor_names().unwrap().contains(&"w1".to_string()));
    assert!(info.reductions().contains("max"), "{}", info.reductions());
    assert!(info.save_raw_tensor());
    assert!(info.save_shape());
    assert!(!info.save_histogram());
    assert_eq!(trial.collection("nope").unwrap_err().kind(), ErrorKind::NotFound);

    let w1 = trial.tensor("w1").unwrap();
    assert_eq!(w1.name(), "w1");
    assert_eq!(w1.steps(Mode::Global, false).unwrap(), vec![0, 1, 2, 3]);
    assert_eq!(w1.steps(Mode::Eval, false).unwrap(), vec![0]);
    let vals = w1.values(Mode::Train, None).unwrap();
    assert_eq!(vals.len(), 3);
    for (s, v) in &vals {
        let x = *s as f32;
        assert_eq!(v.as_slice::<f32>().unwrap(), &[x, -x, 2.0 * x, 0.5]);
    }
    assert_eq!(w1.value(0, Mode::Eval, Some("worker_0")).unwrap().as_slice::<f32>().unwrap(), &[3.0, -3.0, 6.0, 0.5]);
    assert_eq!(w1.shape(1, Mode::Global, None).unwrap(), vec![2, 2]);
    assert_eq!(w1.value_info(1, Mode::Global, None).unwrap(), (DType::Float32, vec![2, 2]));
    let shapes = w1.shapes(Mode::Global, None).unwrap();
    assert_eq!(shapes.steps, vec![0, 1, 2, 3]);
    assert!(shapes.shapes.iter().all(|s| s == &vec![2, 2]));
    let mut rn = w1.reduction_names(2, Mode::Global, None).unwrap();
    rn.sort();
    assert_eq!(rn, vec!["max", "min"]);
    assert_eq!(w1.reduction_value(2, Mode::Global, None, "max").unwrap().get_f64(0).unwrap(), 4.0);
    let rv = w1.reduction_values(2, Mode::Global, None).unwrap();
    let min = rv.iter().find(|(n, _)| n == "min").unwrap();
    assert_eq!(min.1.get_f64(0).unwrap(), -2.0);
    assert_eq!(w1.workers(1, Mode::Global).unwrap(), vec!["worker_0"]);
    assert_eq!(w1.prev_steps(3, Mode::Global, 2).unwrap(), vec![2, 3]);

    // Errors with smdebug's meanings, never a crash.
    assert_eq!(trial.tensor("nope").unwrap_err().kind(), ErrorKind::TensorUnavailable);
    assert_eq!(w1.value(9, Mode::Global, None).unwrap_err().kind(), ErrorKind::StepUnavailable);
    assert_eq!(w1.value(1, Mode::Global, Some("worker_7")).unwrap_err().kind(), ErrorKind::InvalidWorker);
    // A reduction not saved is computed from the raw value, as smdebug does.
    assert_eq!(w1.reduction_value(1, Mode::Global, None, "l1").unwrap().get_f64(0).unwrap(), 4.5);
    assert_eq!(w1.reduction_value(1, Mode::Global, None, "bogus").unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(Trial::open(t.join("missing"), None).unwrap_err().kind(), ErrorKind::NotFound);
    assert_eq!(trial.tensor("a\0b").unwrap_err().kind(), ErrorKind::InvalidArgument);
}

#[test]
fn bad_input_is_an_error_not_a_crash() {
    let t = TempDir::new("bad");
    let hook = Hook::new(t.join("run"), Some(&every_step_options())).unwrap();
    hook.begin_step().unwrap();
    // shape and data length disagree
    let e = hook.save_tensor("x", &[3], &[1.0f32, 2.0], &[]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(!e.message().is_empty());
    assert_eq!(hook.save_tensor("x", &[-1], &[1.0f32], &[]).unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(hook.save_tensor_bytes("x", DType::String, &[1], &[0], &[]).unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(hook.save_tensor_bytes("x", DType::Float64, &[1], &[0; 4], &[]).unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(hook.save_tensor("x\0y", &[1], &[1.0f32], &[]).unwrap_err().kind(), ErrorKind::InvalidArgument);
    let long = "n".repeat(300) + "\0";
    assert_eq!(hook.save_tensor(&long, &[1], &[1.0f32], &[]).unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(hook.save_tensor("x", &[1], &[1.0f32], &[""]).unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(hook.save_scalar("a\0", 1.0).unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert!(!hook.is_due("a\0"));
    assert_eq!(Hook::from_json("{not json", None).unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(Hook::from_json_file(t.join("none.json"), None).unwrap_err().kind(), ErrorKind::NotFound);
    hook.close().unwrap();
    // A second close is harmless; drop after close too.
    let _ = hook.close();
}

#[test]
fn hook_from_json_config() {
    let t = TempDir::new("json");
    let dir = t.join("run");
    let json = format!(
        r#"{{"LocalPath": "{}", "HookParameters": {{"save_interval": "2", "include_regex": "x.*"}}}}"#,
        dir.display()
    );
    let hook = Hook::from_json(&json, None).unwrap();
    for _ in 0..4 {
        hook.begin_step().unwrap();
        hook.save_tensor("xa", &[1], &[1i32], &[]).unwrap();
    }
    hook.close().unwrap();
    let path = t.join("cfg.json");
    std::fs::write(&path, json.replace("\"run\"", "\"run2\"").replace(&dir.display().to_string(), &t.join("run2").display().to_string())).unwrap();
    Hook::from_json_file(&path, None).unwrap().close().unwrap();
    let trial = Trial::open(&dir, None).unwrap();
    assert_eq!(trial.tensor("xa").unwrap().steps(Mode::Global, false).unwrap(), vec![0, 2]);
}

/// A NUL would end the C string: "a\0b" would name "a", "<dir>\0x" would write into <dir>.
/// Every name and path is refused, as is a \u0000 in a JSON configuration's strings; names
/// that cannot fit a file name are refused when given.
#[test]
fn names_and_paths_with_nul_or_too_long_are_refused() {
    let t = TempDir::new("nul");
    let dir = t.join("run");
    let with_nul = format!("{}\0x", dir.display());
    assert_eq!(Hook::new(&with_nul, None).unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(Trial::open(&with_nul, None).unwrap_err().kind(), ErrorKind::InvalidArgument);
    let json = format!(r#"{{"LocalPath": "{}\u0000x"}}"#, dir.display());
    let e = Hook::from_json(&json, None).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("NUL"), "{}", e.message());
    assert!(!dir.exists(), "a hook wrote into the folder named before the NUL");
    let mut o = HookOptions::new().unwrap();
    assert_eq!(o.set_worker("worker_0\0x").unwrap_err().kind(), ErrorKind::InvalidArgument);
    let e = o.set_worker(&"w".repeat(10_000)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("at most 221"), "{}", e.message());
    assert_eq!(o.add_include_collection("c\0d").unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(Hook::new(format!(" {}", dir.display()), None).unwrap_err().kind(), ErrorKind::InvalidArgument);
    let hook = Hook::new(&dir, Some(&every_step_options())).unwrap();
    hook.begin_step().unwrap();
    assert_eq!(hook.collection("c\0d").unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(hook.include_collection("c\0d").unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(hook.save_tensor("t", &[1], &[1.0f32], &["c\0d"]).unwrap_err().kind(), ErrorKind::InvalidArgument);
    hook.save_tensor("a", &[1], &[7.0f32], &[]).unwrap();
    assert_eq!(hook.save_tensor("a\0b", &[1], &[0.0f32], &[]).unwrap_err().kind(), ErrorKind::InvalidArgument);
    hook.close().unwrap();
    let trial = Trial::open(&dir, None).unwrap();
    assert_eq!(trial.tensor_names(None).unwrap(), vec!["a".to_string()]);
}

#[test]
fn handles_are_send_and_sync_as_documented() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<Hook>();
    send_sync::<smd::Collection>();
    send_sync::<Trial>();
    send_sync::<smd::Tensor>();
    send_sync::<smd::Value>();
    send::<smd::Rule>();
    send::<SaveConfig>();
    send::<HookOptions>();
    send::<smd::ReductionConfig>();
    send::<smd::TrialOptions>();
    send::<smd::TensorFilter>();
    send::<smd::TensorBoardWriter>();

    let t = TempDir::new("threads");
    let hook = std::sync::Arc::new(Hook::new(t.join("run"), Some(&every_step_options())).unwrap());
    hook.begin_step().unwrap();
    std::thread::scope(|s| {
        for i in 0..4 {
            let hook = hook.clone();
            s.spawn(move || hook.save_tensor(&format!("t{i}"), &[2], &[i as f64, 1.0], &[]).unwrap());
        }
    });
    hook.close().unwrap();
    let trial = Trial::open(t.join("run"), None).unwrap();
    std::thread::scope(|s| {
        for i in 0..4 {
            let trial = &trial;
            s.spawn(move || {
                let v = trial.tensor(&format!("t{i}")).unwrap().value(0, Mode::Global, None).unwrap();
                assert_eq!(v.as_slice::<f64>().unwrap(), &[i as f64, 1.0]);
            });
        }
    });
}

#[test]
fn dlpack_export_and_save_without_copies_on_our_side() {
    let t = TempDir::new("dlpack");
    let hook = Hook::new(t.join("a"), Some(&every_step_options())).unwrap();
    hook.begin_step().unwrap();
    hook.save_tensor("m", &[2, 2], &[1.0f64, 2.0, 3.0, 4.0], &[]).unwrap();
    hook.close().unwrap();
    let trial = Trial::open(t.join("a"), None).unwrap();
    let v = trial.tensor("m").unwrap().value(0, Mode::Global, None).unwrap();
    let m = v.to_dlpack().unwrap();
    // SAFETY: the library returned a live DLManagedTensorVersioned; we call its deleter once.
    unsafe {
        let dl = &(*m).dl_tensor;
        assert_eq!(dl.ndim, 2);
        assert_eq!(std::slice::from_raw_parts(dl.shape, 2), &[2, 2]);
        assert_eq!((dl.dtype.code as i32, dl.dtype.bits), (smd::sys::kDLFloat, 64));
        assert_eq!(dl.data.cast::<u8>().add(dl.byte_offset as usize) as *const u8, v.bytes().as_ptr(), "no copy");
        let hook2 = Hook::new(t.join("b"), Some(&every_step_options())).unwrap();
        hook2.begin_step().unwrap();
        hook2.save_dlpack("m2", dl, &["mine"]).unwrap();
        hook2.close().unwrap();
        ((*m).deleter.unwrap())(m);
    }
    let back = Trial::open(t.join("b"), None).unwrap().tensor("m2").unwrap().value(0, Mode::Global, None).unwrap();
    assert_eq!(back.as_slice::<f64>().unwrap(), &[1.0, 2.0, 3.0, 4.0]);
    assert_eq!(back.shape(), &[2, 2]);
    assert!(!hook.as_raw().is_null());
}

/// `end_step` completes the step's files while the hook stays open (a trial sees the step); a
/// save made after it is kept for the step `close` begins.
#[test]
fn end_step_leaves_the_hook_open() {
    let t = TempDir::new("end_step");
    let hook = Hook::new(t.join("run"), Some(&every_step_options())).unwrap();
    hook.begin_step().unwrap();
    hook.save_scalar_at("loss", 0.5f64, 0.0).unwrap();
    hook.end_step().unwrap();
    hook.flush().unwrap();
    assert_eq!(hook.global_step(), 0);
    let trial = Trial::open(t.join("run"), None).unwrap();
    assert_eq!(trial.has_passed_step(0, Mode::Global).unwrap(), StepState::Available);
    drop(trial);
    hook.save_scalar_at("after", 2.0f64, 0.0).unwrap();
    hook.close().unwrap();
    assert_eq!(hook.end_step().unwrap_err().kind(), ErrorKind::InvalidState);
    let trial = Trial::open(t.join("run"), None).unwrap();
    let v = trial.tensor("scalar/after").unwrap().value(1, Mode::Global, None).unwrap();
    assert_eq!(v.as_slice::<f64>().unwrap(), &[2.0]);
}

/// `may_save` answers, whatever the step, whether a name (or a numbered family of names) can
/// belong to an included collection; `collections_version` changes when the collections do.
#[test]
fn may_save_follows_the_included_collections() {
    let t = TempDir::new("may_save");
    let mut opts = HookOptions::new().unwrap();
    let mut every = SaveConfig::new().unwrap();
    every.set(Mode::All, 1, 0, -1, &[]).unwrap();
    opts.set_save_config(&every).unwrap();
    let hook = Hook::new(t.join("run"), Some(&opts)).unwrap();
    // by default only losses is saved
    assert!(hook.may_save("CrossEntropyLoss_output_", true));
    assert!(!hook.may_save("layer1.0.conv1_output_", true));
    assert!(!hook.may_save("gradient/Net_fc.weight", false));
    assert!(!hook.may_save("loss\0", false));
    let v0 = hook.collections_version();
    assert_eq!(hook.collections_version(), v0);
    hook.include_collection("gradients").unwrap();
    assert_ne!(hook.collections_version(), v0);
    assert!(hook.may_save("gradient/Net_fc.weight", false));
    hook.collection("acts").unwrap().add_tensor_name("relu_output_3").unwrap();
    hook.include_collection("acts").unwrap();
    assert!(hook.may_save("relu_output_", true));
    assert!(!hook.may_save("relu_", true));
    hook.close().unwrap();
    assert!(!hook.may_save("relu_output_", true));
    assert!(!hook.may_save("CrossEntropyLoss_output_", true));
}

/// `make_due` saves an included collection for the rest of the step whatever its save
/// configuration says; the next step is back to the configuration.
#[test]
fn make_due_saves_a_collection_for_the_rest_of_the_step() {
    let t = TempDir::new("make_due");
    let mut opts = HookOptions::new().unwrap();
    let mut sparse = SaveConfig::new().unwrap();
    sparse.set(Mode::All, 100, 0, -1, &[]).unwrap();
    opts.set_save_config(&sparse).unwrap().add_include_collection("metrics").unwrap();
    let hook = Hook::new(t.join("run"), Some(&opts)).unwrap();
    hook.collection("metrics").unwrap().add_tensor_name("acc").unwrap();
    assert_eq!(hook.make_due("metrics").unwrap_err().kind(), ErrorKind::InvalidState);
    hook.begin_step().unwrap();
    hook.begin_step().unwrap();
    assert!(!hook.is_due("acc"));
    assert_eq!(hook.make_due("nope").unwrap_err().kind(), ErrorKind::NotFound);
    hook.make_due("metrics").unwrap();
    assert!(hook.is_due("acc"));
    hook.save_tensor("acc", &[1], &[0.5f64], &[]).unwrap();
    hook.begin_step().unwrap();
    assert!(!hook.is_due("acc"));
    hook.close().unwrap();
    let trial = Trial::open(t.join("run"), None).unwrap();
    let v = trial.tensor("acc").unwrap().value(1, Mode::Global, None).unwrap();
    assert_eq!(v.as_slice::<f64>().unwrap(), &[0.5]);
}

/// `clear_include_regex` takes out the built-in pattern too; the names added stay.
#[test]
fn clear_include_regex_takes_out_the_builtin_pattern() {
    let t = TempDir::new("clear_regex");
    let mut opts = HookOptions::new().unwrap();
    opts.add_include_collection("weights").unwrap();
    let hook = Hook::new(t.join("run"), Some(&opts)).unwrap();
    let w = hook.collection("weights").unwrap();
    hook.begin_step().unwrap();
    assert!(hook.is_due("fc.weight"));
    w.add_tensor_name("kernel").unwrap();
    w.clear_include_regex().unwrap();
    assert!(!hook.is_due("conv.weight"));
    assert!(hook.is_due("kernel"));
    hook.close().unwrap();
}

/// Writes one more step of "loss" and makes it visible to readers (the hook stays open: the job
/// is still running).
fn write_step(hook: &Hook, loss: f32) {
    hook.begin_step().unwrap();
    hook.save_tensor("loss", &[1], &[loss], &[]).unwrap();
    hook.end_step().unwrap();
    hook.flush().unwrap();
}

/// smdebug's no_refresh / refresh blocks: a refresh scope holds for its own thread only, nests,
/// and ends with its guard.
#[test]
fn refresh_scopes_are_per_thread_and_nest() {
    let t = TempDir::new("scopes");
    let dir = t.join("run");
    let hook = Hook::new(&dir, Some(&every_step_options())).unwrap();
    write_step(&hook, 0.0);
    let trial = Trial::open(&dir, None).unwrap();
    let loss = trial.tensor("loss").unwrap();
    assert_eq!(trial.steps(Mode::Global, true).unwrap(), vec![0]);
    assert!(trial.auto_refresh());

    let off = trial.refresh_scope(false).unwrap();
    assert!(!trial.auto_refresh());
    write_step(&hook, 1.0);
    // Step 1 was written after the scope began: this thread does not see it, through the trial
    // or its tensors.
    assert_eq!(trial.steps(Mode::Global, true).unwrap(), vec![0]);
    assert_eq!(loss.steps(Mode::Global, true).unwrap(), vec![0]);
    assert_eq!(trial.has_passed_step(1, Mode::Global).unwrap(), StepState::NotYetAvailable);
    // Another thread is not in the scope: it refreshes and sees step 1.
    let (other_auto, other_steps) = std::thread::scope(|s| {
        s.spawn(|| (trial.auto_refresh(), trial.steps(Mode::Global, true).unwrap())).join().unwrap()
    });
    assert!(other_auto, "a scope of another thread does not apply");
    assert_eq!(other_steps, vec![0, 1]);
    assert!(!trial.auto_refresh(), "still in the scope");
    // The other thread's refresh loaded step 1 for every reader; this thread still does not refresh.
    assert_eq!(trial.steps(Mode::Global, true).unwrap(), vec![0, 1]);
    write_step(&hook, 2.0);
    assert_eq!(trial.steps(Mode::Global, true).unwrap(), vec![0, 1]);

    // Nested: the innermost scope wins, and dropping it brings back the outer one.
    let on = trial.refresh_scope(true).unwrap();
    assert!(trial.auto_refresh());
    assert_eq!(trial.steps(Mode::Global, true).unwrap(), vec![0, 1, 2]);
    assert_eq!(loss.value(2, Mode::Global, None).unwrap().as_slice::<f32>().unwrap(), &[2.0]);
    {
        let _inner_off = trial.refresh_scope(false).unwrap();
        assert!(!trial.auto_refresh());
        write_step(&hook, 3.0);
        assert_eq!(trial.steps(Mode::Global, true).unwrap(), vec![0, 1, 2]);
    }
    assert!(trial.auto_refresh(), "back in the refresh(true) scope");
    assert_eq!(trial.steps(Mode::Global, true).unwrap(), vec![0, 1, 2, 3]);
    drop(on);
    assert!(!trial.auto_refresh(), "back in the outer no-refresh scope");
    write_step(&hook, 4.0);
    assert_eq!(trial.steps(Mode::Global, true).unwrap(), vec![0, 1, 2, 3]);
    drop(off);
    assert!(trial.auto_refresh(), "no scope left: the setting the trial was opened with");
    assert_eq!(trial.steps(Mode::Global, true).unwrap(), vec![0, 1, 2, 3, 4]);

    // A trial opened without automatic refresh refreshes inside a refresh(true) scope only.
    let mut o = TrialOptions::new().unwrap();
    o.set_auto_refresh(false).unwrap();
    let manual = Trial::open(&dir, Some(&o)).unwrap();
    assert!(!manual.auto_refresh());
    write_step(&hook, 5.0);
    assert_eq!(manual.steps(Mode::Global, true).unwrap(), vec![0, 1, 2, 3, 4]);
    {
        let _on = manual.refresh_scope(true).unwrap();
        assert!(manual.auto_refresh());
        assert_eq!(manual.steps(Mode::Global, true).unwrap(), vec![0, 1, 2, 3, 4, 5]);
    }
    assert!(!manual.auto_refresh());
    // Scopes are per trial: one on `manual` does not change `trial`.
    let _manual_off = manual.refresh_scope(false).unwrap();
    assert!(trial.auto_refresh());
    hook.close().unwrap();
}

fn fixture(name: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../tests/data/trials").join(name)
}

/// The reader's position: the last step every worker wrote and the index file after which the
/// next refresh lists new ones (smdebug's last_complete_step and last_index_token).
#[test]
fn last_complete_step_and_index_cursor() {
    // 3 workers wrote steps 0-5, all three only steps 0-3.
    let running = Trial::open(fixture("workers3_running"), None).unwrap();
    assert_eq!(running.num_workers(), 3);
    assert_eq!(running.last_complete_step(), 3);
    assert_eq!(running.index_cursor().unwrap().as_deref(), Some("index/000000000/000000000003_worker_2.json"));
    assert!(!running.loaded_all_steps());
    let reentry = Trial::open(fixture("modes_reentry"), None).unwrap();
    assert!(reentry.loaded_all_steps()); // ended before it was opened
    assert_eq!(reentry.last_complete_step(), 9);
    assert_eq!(reentry.index_cursor().unwrap().as_deref(), Some("index/000000000/000000000009_worker_0.json"));
    // Before any step is complete (worker_1 of 2 has written nothing): -1 and no cursor.
    let t = TempDir::new("cursor");
    let mut o = every_step_options();
    o.set_include_workers(IncludeWorkers::All).unwrap().set_num_workers(2).unwrap().set_write_end_marker(false).unwrap();
    let hook = Hook::new(t.join("run"), Some(&o)).unwrap();
    hook.begin_step().unwrap();
    hook.save_tensor("w", &[1], &[1.0f32], &[]).unwrap();
    hook.close().unwrap();
    let partial = Trial::open(t.join("run"), None).unwrap();
    assert_eq!(partial.num_workers(), 2);
    assert_eq!(partial.steps(Mode::Global, true).unwrap(), vec![0]);
    assert_eq!(partial.last_complete_step(), -1);
    assert_eq!(partial.index_cursor().unwrap(), None);
}

/// smdebug's Tensor.original_name: the shape entries' "originalname"; none for a tensor saved
/// without its shape.
#[test]
fn tensor_original_name() {
    let shapes = Trial::open(fixture("shapes"), None).unwrap();
    assert_eq!(shapes.tensor("sh_4d").unwrap().original_name().unwrap().as_deref(), Some("sh_4d"));
    let reentry = Trial::open(fixture("modes_reentry"), None).unwrap();
    assert_eq!(reentry.tensor("loss").unwrap().original_name().unwrap(), None);
}

/// set_keep_colon_index: the reductions of `dense/kernel:0` belong to that name (smdebug's
/// TensorFlow hooks); without it to `dense/kernel` (its other hooks).
#[test]
fn keep_colon_index_decides_which_tensor_owns_the_reductions() {
    for keep in [false, true] {
        let t = TempDir::new(if keep { "colon_keep" } else { "colon_drop" });
        let mut o = HookOptions::new().unwrap();
        o.set_reduction_config(&ReductionConfig::parse("max").unwrap())
            .unwrap()
            .set_save_all(true)
            .unwrap()
            .set_keep_colon_index(keep)
            .unwrap();
        let hook = Hook::new(t.join("run"), Some(&o)).unwrap();
        hook.begin_step().unwrap();
        hook.save_tensor("dense/kernel:0", &[2], &[1.0f32, 5.0], &[]).unwrap();
        hook.close().unwrap();
        let trial = Trial::open(t.join("run"), None).unwrap();
        let (owner, other) = if keep { ("dense/kernel:0", "dense/kernel") } else { ("dense/kernel", "dense/kernel:0") };
        let max = trial.tensor(owner).unwrap().reduction_value(0, Mode::Global, None, "max").unwrap();
        assert_eq!(max.get_f64(0).unwrap(), 5.0, "keep={keep}");
        if let Ok(tensor) = trial.tensor(other) {
            assert!(tensor.reduction_value(0, Mode::Global, None, "max").is_err(), "keep={keep}: {other} has it too");
        }
    }
}

#[test]
fn trial_collection_save_config() {
    let t = TempDir::new("coll-save-config");
    let dir = t.join("run");
    let mut opts = HookOptions::new().unwrap();
    let mut every3 = SaveConfig::new().unwrap();
    every3.set(Mode::All, 3, 0, -1, &[]).unwrap();
    opts.set_save_config(&every3).unwrap();
    let hook = Hook::new(&dir, Some(&opts)).unwrap();
    let mine = hook.collection("mine").unwrap();
    mine.add_include_regex("^mine/").unwrap();
    let mut own = SaveConfig::new().unwrap();
    own.set(Mode::Train, 2, 1, 9, &[4, 11]).unwrap();
    mine.set_save_config(Some(&own)).unwrap();
    hook.include_collection("mine").unwrap();
    hook.begin_step().unwrap();
    hook.save_scalar("mine/x", 1.0).unwrap();
    hook.close().unwrap();

    let trial = Trial::open(&dir, None).unwrap();
    let info = trial.collection("mine").unwrap();
    drop(trial);
    let sc = info.save_config().unwrap().expect("a save configuration");
    drop(info); // the configuration is the caller's
    let train = SaveConfigMode { save_interval: 2, start_step: 1, end_step: Some(9), save_steps: vec![4, 11] };
    assert_eq!(sc.settings(Mode::Train).unwrap(), Some(train));
    // the modes the collection left unset: the hook's, as the collections file holds them
    let hooks = SaveConfigMode { save_interval: 3, start_step: 0, end_step: None, save_steps: vec![] };
    assert_eq!(sc.settings(Mode::Eval).unwrap(), Some(hooks));
    assert!(sc.should_save(4, Mode::Train).unwrap());
    assert_eq!(sc.settings(Mode::All).unwrap_err().kind(), ErrorKind::InvalidArgument);

    // a collections file written by hand: null and unset
    let by_hand = t.join("by_hand");
    std::fs::create_dir_all(by_hand.join("collections/000000000")).unwrap();
    std::fs::write(
        by_hand.join("collections/000000000/worker_0_collections.json"),
        r#"{"collections": {"none": {"name": "none", "save_config": null},
            "partial": {"name": "partial", "save_config": {"TRAIN": {"save_interval": 4}, "EVAL": null}}},
            "_meta": {"num_workers": 1}}"#,
    )
    .unwrap();
    std::fs::write(by_hand.join("training_job_end.ts"), "").unwrap();
    let trial = Trial::open(&by_hand, None).unwrap();
    assert!(trial.collection("none").unwrap().save_config().unwrap().is_none());
    let partial = trial.collection("partial").unwrap().save_config().unwrap().unwrap();
    let train = SaveConfigMode { save_interval: 4, start_step: 0, end_step: None, save_steps: vec![] };
    assert_eq!(partial.settings(Mode::Train).unwrap(), Some(train));
    assert_eq!(partial.settings(Mode::Eval).unwrap(), None);
}
