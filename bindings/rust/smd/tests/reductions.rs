//! Reductions the caller computed (Hook::save_reductions) are written as the hook writes its own.
mod common;
use common::{every_step_options, TempDir};
use smd::{DType, ErrorKind, Hook, ReductionConfig};

fn run(dir: std::path::PathBuf, given: bool) {
    let mut opts = every_step_options();
    opts.set_reduction_config(&ReductionConfig::parse("min,max,sum,l1,abs_max").unwrap()).unwrap();
    let hook = Hook::new(&dir, Some(&opts)).unwrap();
    hook.begin_step().unwrap();
    if given {
        let (due, value) = hook.due_reductions("g").unwrap();
        assert_eq!(due, ["min", "max", "sum", "l1", "abs_max"]);
        assert!(!value);
        hook.save_reductions("g", DType::Float32, &[2, 2],
                             &[("l1", false, 10.0), ("max", true, 4.0), ("sum", false, -2.0), ("min", false, -4.0), ("max", false, 3.0)], &[])
            .unwrap();
        let e = hook.save_reductions("g2", DType::Float32, &[4], &[("min", false, 1.0)], &[]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.to_string().contains("max"), "{e}");
    } else {
        hook.save_tensor("g", &[2, 2], &[1.0f32, -2.0, 3.0, -4.0], &[]).unwrap();
    }
    hook.close().unwrap();
}

#[test]
fn save_reductions_writes_what_the_hook_writes() {
    let t = TempDir::new("reductions");
    run(t.join("a"), false);
    run(t.join("b"), true);
    let rel = "events/000000000000/000000000000_worker_0.tfevents";
    let a = std::fs::read(t.join("a").join(rel)).unwrap();
    let b = std::fs::read(t.join("b").join(rel)).unwrap();
    assert!(a.len() > 16);
    assert_eq!(a, b);
}
