//! train_mlp: the C demo's small training loop (examples/train_mlp.c), instrumented from Rust.
//!
//!     cargo run --example train_mlp -- OUT_DIR [--steps N] [--lr RATE] [--init SCALE] [--tensorboard]
//!
//! A two-layer perceptron (8 inputs, 16 sigmoid hidden units, 1 sigmoid output) learns a
//! synthetic binary task with SGD. The hook saves weights and biases every 10 steps, gradients
//! every 10 steps as reductions only, the loss every step, and the accuracy as a scalar; every 25
//! steps it evaluates in EVAL mode. With --lr 1000 the first layer's gradients vanish and the
//! VanishingGradient rule fires (see the `analyze` example).
// The index loops mirror the C demo line by line.
#![allow(clippy::needless_range_loop)]
use smd::{Hook, HookOptions, Mode, ReductionConfig, SaveConfig};

const N_IN: usize = 8;
const N_HID: usize = 16;
const N_TRAIN: usize = 512;
const N_EVAL: usize = 128;
const BATCH: usize = 32;

struct Rng(u64);
impl Rng {
    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / 9007199254740992.0
    }
    fn normal(&mut self) -> f64 {
        let u = self.uniform() + 1e-12;
        let v = self.uniform();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

#[derive(Clone, Default)]
struct Params {
    w1: Vec<f32>, // N_HID x N_IN
    b1: Vec<f32>,
    w2: Vec<f32>,
    b2: f32,
}

impl Params {
    fn zeros() -> Params {
        Params { w1: vec![0.0; N_HID * N_IN], b1: vec![0.0; N_HID], w2: vec![0.0; N_HID], b2: 0.0 }
    }
}

/// Mean cross-entropy and accuracy over rows [from, from + n); gradients into `g` if given.
fn run(m: &Params, x: &[[f32; N_IN]], y: &[f32], from: usize, n: usize, mut g: Option<&mut Params>) -> (f64, f64) {
    let (mut loss, mut correct) = (0.0, 0);
    if let Some(g) = g.as_deref_mut() {
        *g = Params::zeros();
    }
    for r in from..from + n {
        let mut h = [0.0f64; N_HID];
        let mut z2 = m.b2 as f64;
        for j in 0..N_HID {
            let mut z = m.b1[j] as f64;
            for i in 0..N_IN {
                z += (m.w1[j * N_IN + i] * x[r][i]) as f64;
            }
            h[j] = sigmoid(z);
            z2 += m.w2[j] as f64 * h[j];
        }
        let p = sigmoid(z2);
        let pc = p.clamp(1e-7, 1.0 - 1e-7);
        let t = y[r] as f64;
        loss -= t * pc.ln() + (1.0 - t) * (1.0 - pc).ln();
        correct += usize::from((p > 0.5) == (t > 0.5));
        if let Some(g) = g.as_deref_mut() {
            let d2 = (p - t) / n as f64;
            g.b2 += d2 as f32;
            for j in 0..N_HID {
                g.w2[j] += (d2 * h[j]) as f32;
                let d1 = d2 * m.w2[j] as f64 * h[j] * (1.0 - h[j]);
                g.b1[j] += d1 as f32;
                for i in 0..N_IN {
                    g.w1[j * N_IN + i] += (d1 * x[r][i] as f64) as f32;
                }
            }
        }
    }
    (loss / n as f64, correct as f64 / n as f64)
}

fn main() -> smd::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 2 || args[1] == "--help" {
        eprintln!("usage: train_mlp OUT_DIR [--steps N] [--lr RATE] [--init SCALE] [--tensorboard]");
        std::process::exit(2);
    }
    let out_dir = &args[1];
    let (mut steps, mut lr, mut init, mut tensorboard) = (200usize, 1.0f64, 0.5f64, false);
    let mut a = 2;
    while a < args.len() {
        let value = || args.get(a + 1).cloned().unwrap_or_else(|| panic!("{} needs a value", args[a]));
        match args[a].as_str() {
            "--tensorboard" => {
                tensorboard = true;
                a += 1;
                continue;
            }
            "--steps" => steps = value().parse().expect("--steps N"),
            "--lr" => lr = value().parse().expect("--lr RATE"),
            "--init" => init = value().parse().expect("--init SCALE"),
            other => panic!("unknown option {other}"),
        }
        a += 2;
    }

    let mut rng = Rng(88172645463325252);
    let true_w: Vec<f64> = (0..N_IN).map(|_| rng.normal()).collect();
    let mut x = vec![[0f32; N_IN]; N_TRAIN + N_EVAL];
    let mut y = vec![0f32; N_TRAIN + N_EVAL];
    for r in 0..N_TRAIN + N_EVAL {
        let mut s = 0.0;
        for i in 0..N_IN {
            x[r][i] = rng.normal() as f32;
            s += true_w[i] * x[r][i] as f64;
        }
        y[r] = if s > 0.0 { 1.0 } else { 0.0 };
    }
    let mut m = Params::zeros();
    for j in 0..N_HID {
        for i in 0..N_IN {
            m.w1[j * N_IN + i] = (init * rng.normal()) as f32;
        }
        m.w2[j] = (0.5 * rng.normal()) as f32;
    }

    // The hook: weights/biases/gradients every 10 steps, losses every step.
    let mut every10 = SaveConfig::new()?;
    every10.set(Mode::All, 10, 0, -1, &[])?;
    let mut opts = HookOptions::new()?;
    opts.set_save_config(&every10)?
        .add_include_collection("weights")?
        .add_include_collection("biases")?
        .add_include_collection("gradients")?
        .set_export_tensorboard(tensorboard)?;
    let hook = Hook::new(out_dir, Some(&opts))?;
    hook.collection("gradients")?.set_reduction_config(Some(&ReductionConfig::parse("mean,abs_mean,max,min,l2_norm")?))?;
    let mut every1 = SaveConfig::new()?;
    every1.set(Mode::All, 1, 0, -1, &[])?;
    hook.collection("losses")?.set_save_config(Some(&every1))?;

    let mut g = Params::zeros();
    for step in 0..steps {
        if hook.stop_requested()? {
            println!("step {step:4}  a rule asked to stop the training");
            break;
        }
        hook.set_mode(Mode::Train)?;
        hook.begin_step()?;
        let from = (step * BATCH) % N_TRAIN;
        let (loss, acc) = run(&m, &x, &y, from, BATCH, Some(&mut g));
        hook.save_tensor("fc1.weight", &[N_HID as i64, N_IN as i64], &m.w1, &[])?;
        hook.save_tensor("fc1.bias", &[N_HID as i64], &m.b1, &[])?;
        hook.save_tensor("fc2.weight", &[N_HID as i64], &m.w2, &[])?;
        hook.save_tensor("fc2.bias", &[1], &[m.b2], &[])?;
        hook.save_tensor("gradient/fc1.weight", &[N_HID as i64, N_IN as i64], &g.w1, &[])?;
        hook.save_tensor("gradient/fc1.bias", &[N_HID as i64], &g.b1, &[])?;
        hook.save_tensor("gradient/fc2.weight", &[N_HID as i64], &g.w2, &[])?;
        hook.save_tensor("loss", &[1], &[loss as f32], &[])?;
        hook.save_scalar("train_accuracy", acc)?;
        let lr32 = lr as f32;
        for (w, d) in m.w1.iter_mut().zip(&g.w1) {
            *w -= lr32 * d;
        }
        for (w, d) in m.b1.iter_mut().zip(&g.b1) {
            *w -= lr32 * d;
        }
        for (w, d) in m.w2.iter_mut().zip(&g.w2) {
            *w -= lr32 * d;
        }
        m.b2 -= lr32 * g.b2;

        if (step + 1) % 25 == 0 {
            hook.set_mode(Mode::Eval)?;
            hook.begin_step()?;
            let (eval_loss, eval_acc) = run(&m, &x, &y, N_TRAIN, N_EVAL, None);
            hook.save_tensor("loss", &[1], &[eval_loss as f32], &[])?;
            hook.save_scalar("eval_accuracy", eval_acc)?;
            println!("step {:4}  train loss {loss:.4}  eval loss {eval_loss:.4}  eval accuracy {eval_acc:.3}", step + 1);
        }
    }
    hook.close()?;
    println!("wrote {out_dir}");
    Ok(())
}
