//! Reductions and TensorBoard histograms the caller computed (Hook::save_reductions) are written
//! as the hook writes its own.
mod common;
use common::{every_step_options, TempDir};
use smd::{histogram_bucket_edges, DType, DueReductions, ErrorKind, Histogram, Hook, HookOptions, Mode, ReductionConfig, SaveConfig, Trial};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn run(dir: std::path::PathBuf, given: bool) {
    let mut opts = every_step_options();
    opts.set_reduction_config(&ReductionConfig::parse("min,max,sum,l1,abs_max").unwrap()).unwrap();
    let hook = Hook::new(&dir, Some(&opts)).unwrap();
    hook.begin_step().unwrap();
    if given {
        let due = hook.due_reductions("g").unwrap();
        assert_eq!(due.reductions, ["min", "max", "sum", "l1", "abs_max"]);
        assert!(!due.value && !due.histogram, "{due:?}"); // no TensorBoard folder: no histogram
        hook.save_reductions("g", DType::Float32, &[2, 2],
                             &[("l1", false, 10.0), ("max", true, 4.0), ("sum", false, -2.0), ("min", false, -4.0), ("max", false, 3.0)], None, &[])
            .unwrap();
        let e = hook.save_reductions("g2", DType::Float32, &[4], &[("min", false, 1.0)], None, &[]).unwrap_err();
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

/// A test tensor: its name, dtype, shape, little-endian bytes and elements as f64.
type HistTensor = (&'static str, DType, Vec<i64>, Vec<u8>, Vec<f64>);

/// The tensors the histogram tests save at a step.
fn hist_tensors(step: i64) -> Vec<HistTensor> {
    macro_rules! tensor {
        ($name:expr, $dtype:expr, $shape:expr, $xs:expr) => {{
            let xs = $xs;
            ($name, $dtype, $shape.to_vec(), xs.iter().flat_map(|x| x.to_le_bytes()).collect(), xs.iter().map(|&x| f64::from(x)).collect())
        }};
    }
    let k = (step + 1) as i16;
    vec![
        tensor!("gradient/w", DType::Float32, [2, 3], [f32::from(k), -2.0, 3.0, -4.0 * f32::from(k), 0.5, 0.0]),
        // 1e21 is beyond the last edge, -1e-13 between 0 and the edge nearest it
        tensor!("gradient/far", DType::Float64, [4], [0.5f64, -1e-13, 1e21 * f64::from(k), -0.0]),
        // in no bucket: no histogram is written
        tensor!("gradient/out", DType::Float32, [2], [f32::INFINITY, f32::NEG_INFINITY]),
        tensor!("gradient/i", DType::Int32, [2, 2], [1i32, -2, 3 * i32::from(k), 7]),
    ]
}

/// A hook that saves the gradients every step as reductions only, with TensorBoard histograms.
fn hist_hook(dir: &Path, tb: &Path) -> Hook {
    let mut sc = SaveConfig::new().unwrap();
    sc.set(Mode::All, 1, 0, -1, &[]).unwrap();
    let mut o = HookOptions::new().unwrap();
    o.set_save_config(&sc).unwrap().add_include_collection("gradients").unwrap().set_wall_time_base(1000.0).unwrap();
    o.set_tensorboard_dir(tb).unwrap();
    let hook = Hook::new(dir, Some(&o)).unwrap();
    let mut rc = ReductionConfig::parse("min,max,mean,sum,l2,abs_max,abs_l1").unwrap();
    rc.set_save_shape(true).unwrap();
    let grads = hook.collection("gradients").unwrap();
    grads.set_reduction_config(Some(&rc)).unwrap();
    grads.set_save_histogram(true).unwrap();
    hook
}

/// Counts `xs` over the bucket edges as smd and numpy do, with the four statistics.
fn count_histogram(xs: &[f64]) -> (f64, f64, f64, f64, Vec<u64>) {
    let edges = histogram_bucket_edges();
    let mut counts = vec![0u64; edges.len() - 1];
    let (mut min, mut max, mut sum, mut sum_squares) = (f64::INFINITY, f64::NEG_INFINITY, 0.0, 0.0);
    for &x in xs {
        min = min.min(x);
        max = max.max(x);
        sum += x;
        sum_squares += x * x;
        if x.is_finite() && x >= edges[0] && x <= edges[edges.len() - 1] {
            // the bucket i with edges[i] <= x < edges[i + 1]; the last one also holds its right edge
            let i = edges.partition_point(|&e| e <= x) - 1;
            counts[i.min(edges.len() - 2)] += 1;
        }
    }
    if xs.iter().any(|x| x.is_nan()) {
        (min, max) = (f64::NAN, f64::NAN);
    }
    (min, max, sum, sum_squares, counts)
}

/// Every file under `root`, by path relative to it.
fn files_under(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                out.insert(p.strip_prefix(root).unwrap().to_path_buf(), std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

#[test]
fn histogram_bucket_edges_are_smds() {
    let edges = histogram_bucket_edges();
    assert_eq!(edges.len(), 1549);
    assert!(edges.windows(2).all(|w| w[0] < w[1]));
    assert!(edges.contains(&0.0));
    assert!(edges[0] < -1e19 && edges[edges.len() - 1] > 1e19);
    assert_eq!(edges.as_ptr(), histogram_bucket_edges().as_ptr()); // one static array
}

#[test]
fn save_reductions_with_histograms_writes_what_the_hook_writes() {
    let t = TempDir::new("histograms");
    const STEPS: i64 = 2;
    let hook = hist_hook(&t.join("a"), &t.join("a_tb"));
    for step in 0..STEPS {
        hook.begin_step().unwrap();
        for (name, dtype, shape, bytes, _) in hist_tensors(step) {
            hook.save_tensor_bytes(name, dtype, &shape, &bytes, &[]).unwrap();
        }
    }
    hook.close().unwrap();

    let trial = Trial::open(t.join("a"), None).unwrap();
    let hook = hist_hook(&t.join("b"), &t.join("b_tb"));
    for step in 0..STEPS {
        hook.begin_step().unwrap();
        for (name, dtype, shape, _, xs) in hist_tensors(step) {
            let due = hook.due_reductions(name).unwrap();
            assert!(!due.value && due.histogram, "{name}: {due:?}");
            assert_eq!(due.reductions, ["min", "max", "mean", "sum", "l2", "abs_max", "abs_l1"]);
            // the values the first run computed, as the trial reads them back
            let tensor = trial.tensor(name).unwrap();
            let full: Vec<(String, f64)> = due
                .reductions
                .iter()
                .map(|r| (r.clone(), tensor.reduction_value(step, Mode::Global, None, r).unwrap().get_f64(0).unwrap()))
                .collect();
            let values: Vec<(&str, bool, f64)> = full
                .iter()
                .map(|(r, v)| match r.strip_prefix("abs_") {
                    Some(base) => (base, true, *v),
                    None => (r.as_str(), false, *v),
                })
                .collect();
            let (min, max, sum, sum_squares, counts) = count_histogram(&xs);
            let histogram = Histogram { min, max, sum, sum_squares, counts: &counts };
            // required when due
            let e = hook.save_reductions(name, dtype, &shape, &values, None, &[]).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
            assert!(e.to_string().contains("histogram"), "{e}");
            hook.save_reductions(name, dtype, &shape, &values, Some(&histogram), &[]).unwrap();
        }
    }
    hook.close().unwrap();

    for (a, b) in [("a", "b"), ("a_tb", "b_tb")] {
        let (fa, fb) = (files_under(&t.join(a)), files_under(&t.join(b)));
        assert_eq!(fa.keys().collect::<Vec<_>>(), fb.keys().collect::<Vec<_>>(), "{a} and {b} hold other files");
        for (path, bytes) in &fa {
            assert!(bytes == &fb[path], "{} differs between {a} and {b}", path.display());
        }
    }
    // the TensorBoard logs hold histograms at all (every step)
    let tb = files_under(&t.join("b_tb"));
    assert_eq!(tb.keys().filter(|p| p.to_string_lossy().ends_with(".tfevents")).count(), STEPS as usize, "{:?}", tb.keys());
}

#[test]
fn save_reductions_histogram_errors() {
    let t = TempDir::new("histogram-errors");
    let hook = hist_hook(&t.join("run"), &t.join("tb"));
    hook.begin_step().unwrap();
    let due = hook.due_reductions("gradient/x").unwrap();
    assert_eq!(
        due,
        DueReductions {
            reductions: ["min", "max", "mean", "sum", "l2", "abs_max", "abs_l1"].map(String::from).to_vec(),
            value: false,
            histogram: true,
        }
    );
    let values: Vec<(&str, bool, f64)> = due
        .reductions
        .iter()
        .map(|r| r.strip_prefix("abs_").map_or((r.as_str(), false, 1.0), |b| (b, true, 1.0)))
        .collect();
    let (min, max, sum, sum_squares, mut counts) = count_histogram(&[1.0, 2.0, 3.0]);
    let save = |h: Option<&Histogram>| hook.save_reductions("gradient/x", DType::Float64, &[3], &values, h, &[]);

    let e = save(None).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.to_string().contains("histogram"), "{e}");

    let mut one_more = counts.clone();
    one_more.push(0);
    let e = save(Some(&Histogram { min, max, sum, sum_squares, counts: &one_more })).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.to_string().contains("1548 buckets"), "{e}");

    let e = save(Some(&Histogram { min, max, sum, sum_squares, counts: &[] })).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");

    counts[0] = 5; // more elements than the tensor has
    let e = save(Some(&Histogram { min, max, sum, sum_squares, counts: &counts })).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.to_string().contains("more than the tensor's 3 elements"), "{e}");
    counts[0] = 0;

    save(Some(&Histogram { min, max, sum, sum_squares, counts: &counts })).unwrap();
    // a histogram that is not due is ignored (a tensor of no collection: nothing is due)
    assert_eq!(hook.due_reductions("other").unwrap(), DueReductions::default());
    hook.save_reductions("other", DType::Float64, &[3], &[], Some(&Histogram { min, max, sum, sum_squares, counts: &counts }), &[]).unwrap();
    hook.close().unwrap();
}
