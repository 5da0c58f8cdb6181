//! crossdump: the cross-language test's canonical dump of a trial ("smd-cross/1", described in
//! tests/cross/CrossDump.java), read through the Rust binding.
//!
//!     cargo run --example crossdump -- TRIAL
use smd::{DType, ErrorKind, Mode, Trial};
use std::fmt::Write as _;
use std::io::Write as _;

fn hex(b: &[u8]) -> String {
    let mut s = String::with_capacity(2 * b.len());
    for x in b {
        let _ = write!(s, "{x:02x}");
    }
    s
}

fn shape(s: &[i64]) -> String {
    s.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(",")
}

fn dump(path: &str) -> smd::Result<String> {
    let mut out = String::from("smd-cross/1\n");
    let trial = Trial::open(path, None)?;
    for name in trial.tensor_names(None)? {
        let x = trial.tensor(&name)?;
        for g in x.steps(Mode::Global, false)? {
            let mode = trial.mode(g)?.name();
            let ms = trial.mode_step(g)?;
            let (mut dtype, mut sh, mut data) = ("-".to_string(), "-".to_string(), "-".to_string());
            match x.value(g, Mode::Global, None) {
                Ok(v) => {
                    dtype = v.dtype().name().to_string();
                    sh = shape(v.shape());
                    data = if v.dtype() == DType::String {
                        v.strings()?.iter().map(|s| hex(s.as_bytes())).collect::<Vec<_>>().join(",")
                    } else {
                        hex(v.bytes())
                    };
                }
                Err(e) if e.kind() == ErrorKind::TensorUnavailableForStep => match x.shape(g, Mode::Global, None) {
                    Ok(s) => sh = shape(&s),
                    Err(e) if matches!(e.kind(), ErrorKind::ShapeUnavailableForStep | ErrorKind::TensorUnavailableForStep) => {}
                    Err(e) => return Err(e),
                },
                Err(e) => return Err(e),
            }
            let _ = writeln!(out, "T\t{name}\t{g}\t{mode}\t{ms}\t{dtype}\t{sh}\t{data}");
            let mut red = x.reduction_values(g, Mode::Global, None)?;
            if !red.is_empty() {
                red.sort_by(|a, b| a.0.cmp(&b.0));
                let mut parts = Vec::new();
                for (k, v) in &red {
                    parts.push(format!("{k}={}", hex(&v.get_f64(0)?.to_le_bytes())));
                }
                let _ = writeln!(out, "R\t{name}\t{g}\t{}", parts.join(","));
            }
        }
    }
    Ok(out)
}

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: crossdump TRIAL");
        std::process::exit(2);
    };
    match dump(&path) {
        Ok(s) => {
            let _ = std::io::stdout().write_all(s.as_bytes());
        }
        Err(e) => {
            eprintln!("crossdump: {e}");
            std::process::exit(1);
        }
    }
}
