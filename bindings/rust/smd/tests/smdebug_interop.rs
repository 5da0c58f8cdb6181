//! A trial written from Rust is read by the real smdebug (Python) with identical values, steps,
//! modes and collections. The Python comes from $SMD_PYTHON, else the repository's .venv (made by
//! scripts/setup.sh).
mod common;
use common::TempDir;
use smd::{Hook, HookOptions, Mode, SaveConfig, Trial};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

const READER: &str = r#"
import sys
sys.path.insert(0, sys.argv[2])
import smdebug_env  # noqa: F401
from smdebug.trials import create_trial
from smdebug.core.modes import ModeKeys
t = create_trial(sys.argv[1])
print("steps", *t.steps())
print("train", *t.steps(mode=ModeKeys.TRAIN))
print("eval", *t.steps(mode=ModeKeys.EVAL))
for c in sorted(t.collections()):
    print("collection", c)
for name in sorted(t.tensor_names()):
    tensor = t.tensor(name)
    for step in tensor.steps():
        v = tensor.value(step)
        flat = v.reshape(-1).tolist()
        print("value", name, step, str(v.dtype), "x".join(map(str, v.shape)) or "-", *[repr(x) for x in flat])
"#;

fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("SMD_PYTHON") {
        return PathBuf::from(p);
    }
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../.venv/bin/python");
    assert!(venv.exists(), "no Python with smdebug: run scripts/setup.sh (makes .venv) or set SMD_PYTHON");
    venv
}

#[test]
fn smdebug_reads_a_trial_written_from_rust() {
    let t = TempDir::new("interop");
    let dir = t.join("run");
    let mut sc = SaveConfig::new().unwrap();
    sc.set(Mode::All, 1, 0, -1, &[]).unwrap();
    let mut o = HookOptions::new().unwrap();
    o.set_save_config(&sc).unwrap().set_save_all(true).unwrap();
    let hook = Hook::new(&dir, Some(&o)).unwrap();
    let mut expected: BTreeMap<(String, i64), (String, String, Vec<String>)> = BTreeMap::new();
    for step in 0..4i64 {
        hook.set_mode(if step == 3 { Mode::Eval } else { Mode::Train }).unwrap();
        hook.begin_step().unwrap();
        let w: Vec<f32> = (0..6).map(|i| (i as f32 - 2.5) * 0.1 + step as f32).collect();
        hook.save_tensor("dense/weight", &[2, 3], &w, &["weights"]).unwrap();
        let ids = [step, -step, i64::MAX];
        hook.save_tensor("ids", &[3], &ids, &[]).unwrap();
        hook.save_tensor("mask", &[2], &[true, step % 2 == 0], &[]).unwrap();
        hook.save_scalar("loss", 1.0 / (step as f64 + 3.0)).unwrap();
        expected.insert(("dense/weight".into(), step), ("float32".into(), "2x3".into(), w.iter().map(|x| repr_f64(*x as f64)).collect()));
        expected.insert(("ids".into(), step), ("int64".into(), "3".into(), ids.iter().map(|x| x.to_string()).collect()));
        expected.insert(("mask".into(), step), ("bool".into(), "2".into(), vec!["True".into(), if step % 2 == 0 { "True" } else { "False" }.into()]));
        expected.insert(("scalar/loss".into(), step), ("float64".into(), "1".into(), vec![repr_f64(1.0 / (step as f64 + 3.0))]));
    }
    hook.close().unwrap();

    let interop = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../tests/interop");
    let out = Command::new(python()).arg("-c").arg(READER).arg(&dir).arg(&interop).output().expect("running Python");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "smdebug failed: {}\n{}", stdout, String::from_utf8_lossy(&out.stderr));

    let mut got = BTreeMap::new();
    let mut collections = Vec::new();
    for line in stdout.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        match f[0] {
            "steps" => assert_eq!(f[1..], ["0", "1", "2", "3"]),
            "train" => assert_eq!(f[1..], ["0", "1", "2"]),
            "eval" => assert_eq!(f[1..], ["0"]),
            "collection" => collections.push(f[1].to_string()),
            "value" => {
                let vals = f[5..].iter().map(|s| s.to_string()).collect();
                got.insert((f[1].to_string(), f[2].parse::<i64>().unwrap()), (f[3].to_string(), f[4].to_string(), vals));
            }
            _ => panic!("unexpected line {line}"),
        }
    }
    assert_eq!(got, expected);
    assert!(collections.contains(&"weights".to_string()), "{collections:?}");

    // And smd reads the same values back in Rust.
    let trial = Trial::open(&dir, None).unwrap();
    for ((name, step), (_, _, vals)) in &expected {
        let v = trial.tensor(name).unwrap().value(*step, Mode::Global, None).unwrap();
        let mine: Vec<String> = match v.dtype() {
            smd::DType::Float32 => v.as_slice::<f32>().unwrap().iter().map(|x| repr_f64(*x as f64)).collect(),
            smd::DType::Float64 => v.as_slice::<f64>().unwrap().iter().map(|x| repr_f64(*x)).collect(),
            smd::DType::Int64 => v.as_slice::<i64>().unwrap().iter().map(|x| x.to_string()).collect(),
            smd::DType::Bool => v.as_slice::<bool>().unwrap().iter().map(|b| if *b { "True" } else { "False" }.to_string()).collect(),
            d => panic!("unexpected dtype {d:?}"),
        };
        assert_eq!(&mine, vals, "{name} at {step}");
    }
}

/// Python's repr of a float (shortest round-trip digits), for the formats used here.
fn repr_f64(x: f64) -> String {
    let s = format!("{x:?}");
    // Rust prints 1e-5 as "1e-5", Python as "1e-05"; Rust prints large numbers in full.
    if let Some((m, e)) = s.split_once('e') {
        let (sign, digits) = if let Some(d) = e.strip_prefix('-') { ("-", d) } else { ("+", e) };
        return format!("{m}e{sign}{digits:0>2}");
    }
    s
}
