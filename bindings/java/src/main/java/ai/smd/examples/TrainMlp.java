package ai.smd.examples;

import ai.smd.Collection;
import ai.smd.Hook;
import ai.smd.HookOptions;
import ai.smd.Mode;
import ai.smd.ReductionConfig;
import ai.smd.SaveConfig;
import ai.smd.SmdException;

/**
 * TrainMlp: a small training loop instrumented with smd's hook (the same MLP as
 * examples/train_mlp.c).
 *
 * <pre>java -cp smd.jar ai.smd.examples.TrainMlp OUT_DIR [--steps N] [--lr RATE] [--init SCALE] [--seed S] [--tensorboard]</pre>
 *
 * A two-layer perceptron (8 inputs, 16 sigmoid hidden units, 1 sigmoid output) learns a synthetic
 * binary classification task with plain SGD. Every training step it offers the hook its weights,
 * biases, gradients and loss; every 25 steps it evaluates on held-out data in EVAL mode. Weights
 * and biases are saved every 10 steps, gradients every 10 steps as reductions only, the loss every
 * step. With --lr 1000 the hidden units saturate and the first layer's gradients vanish: the
 * VanishingGradient rule fires (see Analyze).
 */
public final class TrainMlp {
  static final int N_IN = 8;
  static final int N_HID = 16;
  static final int N_TRAIN = 512;
  static final int N_EVAL = 128;
  static final int BATCH = 32;

  private long rng = 88172645463325252L;

  private double uniform() { // xorshift64
    rng ^= rng << 13;
    rng ^= rng >>> 7;
    rng ^= rng << 17;
    return (double) (rng >>> 11) / 9007199254740992.0;
  }

  private double normal() {
    double u = uniform() + 1e-12;
    double v = uniform();
    return Math.sqrt(-2.0 * Math.log(u)) * Math.cos(6.283185307179586 * v);
  }

  private static double sigmoid(double x) {
    return 1.0 / (1.0 + Math.exp(-x));
  }

  final float[] w1 = new float[N_HID * N_IN];
  final float[] b1 = new float[N_HID];
  final float[] w2 = new float[N_HID];
  final float[] b2 = new float[1];
  final float[] gw1 = new float[N_HID * N_IN];
  final float[] gb1 = new float[N_HID];
  final float[] gw2 = new float[N_HID];
  final float[] gb2 = new float[1];
  final float[][] x = new float[N_TRAIN + N_EVAL][N_IN];
  final float[] y = new float[N_TRAIN + N_EVAL];

  /** Mean binary cross-entropy over rows [from, from+n), accumulating gradients if asked. */
  double run(int from, int n, boolean grads, double[] accuracy) {
    double loss = 0;
    int correct = 0;
    if (grads) {
      java.util.Arrays.fill(gw1, 0);
      java.util.Arrays.fill(gb1, 0);
      java.util.Arrays.fill(gw2, 0);
      gb2[0] = 0;
    }
    double[] h = new double[N_HID];
    for (int r = from; r < from + n; ++r) {
      double z2 = b2[0];
      for (int j = 0; j < N_HID; ++j) {
        double z = b1[j];
        for (int i = 0; i < N_IN; ++i) z += w1[j * N_IN + i] * x[r][i];
        h[j] = sigmoid(z);
        z2 += w2[j] * h[j];
      }
      double p = sigmoid(z2);
      double pc = Math.min(Math.max(p, 1e-7), 1 - 1e-7);
      loss -= y[r] * Math.log(pc) + (1 - y[r]) * Math.log(1 - pc);
      if ((p > 0.5) == (y[r] > 0.5)) ++correct;
      if (grads) {
        double d2 = (p - y[r]) / n;
        gb2[0] += (float) d2;
        for (int j = 0; j < N_HID; ++j) {
          gw2[j] += (float) (d2 * h[j]);
          double d1 = d2 * w2[j] * h[j] * (1 - h[j]);
          gb1[j] += (float) d1;
          for (int i = 0; i < N_IN; ++i) gw1[j * N_IN + i] += (float) (d1 * x[r][i]);
        }
      }
    }
    accuracy[0] = (double) correct / n;
    return loss / n;
  }

  public static void main(String[] args) throws SmdException {
    if (args.length < 1 || args[0].equals("--help")) {
      System.err.println("usage: TrainMlp OUT_DIR [--steps N] [--lr RATE] [--init SCALE] [--seed S] [--tensorboard]");
      System.exit(args.length < 1 ? 2 : 0);
    }
    String outDir = args[0];
    int steps = 200;
    double lr = 1.0;
    double init = 0.5;
    boolean tensorboard = false;
    TrainMlp m = new TrainMlp();
    for (int a = 1; a < args.length; a += 2) {
      if (args[a].equals("--tensorboard")) {
        tensorboard = true;
        --a;
        continue;
      }
      if (a + 1 >= args.length) {
        System.err.println("TrainMlp: " + args[a] + " needs a value");
        System.exit(2);
      }
      switch (args[a]) {
        case "--steps": steps = Integer.parseInt(args[a + 1]); break;
        case "--lr": lr = Double.parseDouble(args[a + 1]); break;
        case "--init": init = Double.parseDouble(args[a + 1]); break;
        case "--seed": m.rng ^= Long.parseUnsignedLong(args[a + 1]) * 0x9E3779B97F4A7C15L; break;
        default:
          System.err.println("TrainMlp: unknown option " + args[a]);
          System.exit(2);
      }
    }
    m.train(outDir, steps, lr, init, tensorboard);
    System.out.println("wrote " + outDir);
  }

  void train(String outDir, int steps, double lr, double init, boolean tensorboard) throws SmdException {
    // Synthetic data: the label is 1 when a fixed linear score of the inputs is positive.
    double[] trueW = new double[N_IN];
    for (int i = 0; i < N_IN; ++i) trueW[i] = normal();
    for (int r = 0; r < N_TRAIN + N_EVAL; ++r) {
      double s = 0;
      for (int i = 0; i < N_IN; ++i) {
        x[r][i] = (float) normal();
        s += trueW[i] * x[r][i];
      }
      y[r] = s > 0 ? 1.0f : 0.0f;
    }
    for (int j = 0; j < N_HID; ++j) {
      for (int i = 0; i < N_IN; ++i) w1[j * N_IN + i] = (float) (init * normal());
      b1[j] = 0;
      w2[j] = (float) (0.5 * normal());
    }
    b2[0] = 0;

    try (SaveConfig every10 = SaveConfig.every(10);
         SaveConfig every1 = SaveConfig.every(1);
         ReductionConfig gradRed = ReductionConfig.parse("mean,abs_mean,max,min,l2_norm");
         HookOptions opts = new HookOptions().saveConfig(every10).includeCollection("weights")
             .includeCollection("biases").includeCollection("gradients").exportTensorboard(tensorboard);
         Hook hook = Hook.create(outDir, opts)) {
      try (Collection c = hook.collection("gradients")) {
        c.reductionConfig(gradRed);
      }
      try (Collection c = hook.collection("losses")) {
        c.saveConfig(every1);
      }
      long[] shapeW1 = {N_HID, N_IN};
      long[] shapeHid = {N_HID};
      long[] shape1 = {1};
      double[] acc = new double[1];
      double loss;
      for (int step = 0; step < steps; ++step) {
        if (hook.stopRequested()) {
          System.out.printf("step %4d  a rule asked to stop the training%n", step);
          break;
        }
        hook.setMode(Mode.TRAIN);
        hook.beginStep();
        int from = (step * BATCH) % N_TRAIN;
        loss = run(from, BATCH, true, acc);
        hook.saveTensor("fc1.weight", shapeW1, w1);
        hook.saveTensor("fc1.bias", shapeHid, b1);
        hook.saveTensor("fc2.weight", shapeHid, w2);
        hook.saveTensor("fc2.bias", shape1, b2);
        hook.saveTensor("gradient/fc1.weight", shapeW1, gw1);
        hook.saveTensor("gradient/fc1.bias", shapeHid, gb1);
        hook.saveTensor("gradient/fc2.weight", shapeHid, gw2);
        hook.saveTensor("loss", shape1, new float[] {(float) loss});
        hook.saveScalar("train_accuracy", acc[0]);
        for (int j = 0; j < N_HID; ++j) {
          for (int i = 0; i < N_IN; ++i) w1[j * N_IN + i] -= (float) (lr * gw1[j * N_IN + i]);
          b1[j] -= (float) (lr * gb1[j]);
          w2[j] -= (float) (lr * gw2[j]);
        }
        b2[0] -= (float) (lr * gb2[0]);

        if ((step + 1) % 25 == 0) {
          hook.setMode(Mode.EVAL);
          hook.beginStep();
          double[] evalAcc = new double[1];
          float evalLoss = (float) run(N_TRAIN, N_EVAL, false, evalAcc);
          hook.saveTensor("loss", shape1, new float[] {evalLoss});
          hook.saveScalar("eval_accuracy", evalAcc[0]);
          System.out.printf("step %4d  train loss %.4f  eval loss %.4f  eval accuracy %.3f%n", step + 1, loss,
              evalLoss, evalAcc[0]);
        }
      }
    }
  }
}
