/* train_mlp: a small training loop instrumented with smd's hook.
 *
 *   train_mlp OUT_DIR [--steps N] [--lr RATE] [--init SCALE] [--seed S] [--tensorboard]
 *             [--max-pending-steps N]
 *
 * A two-layer perceptron (8 inputs, 16 sigmoid hidden units, 1 sigmoid output) learns a synthetic
 * binary classification task with plain SGD. Every training step it offers the hook its weights,
 * biases, gradients and loss; every 25 steps it evaluates on held-out data in EVAL mode. The hook
 * saves:
 *   - weights and biases every 10 steps (raw values),
 *   - gradients every 10 steps as reductions only (mean, abs_mean, max, min, l2_norm),
 *   - the loss every step (the "losses" collection), plus the accuracy as a scalar.
 * The defaults train well. With --lr 1000 the first updates throw the hidden units into
 * saturation, after which the first layer's gradients vanish (about 1e-9) and the loss stays high:
 * the VanishingGradient rule fires (smd rules OUT_DIR --rule VanishingGradient).
 * --tensorboard also writes TensorBoard logs into OUT_DIR/tensorboard.
 * Each step it polls the hook's stop signal: `smd rules OUT_DIR --follow --stop-training ...`
 * running next to it stops the training when a rule fires. --max-pending-steps N keeps the
 * training loop at most N steps ahead of the hook's writer, so that it stops within about N
 * steps (plus the rule's own delay) of the step the rule flags.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "smd/smd.h"

#define N_IN 8
#define N_HID 16
#define N_TRAIN 512
#define N_EVAL 128
#define BATCH 32

static void check(smd_error *err, const char *what) {
  if (err == NULL) return;
  fprintf(stderr, "train_mlp: %s: %s: %s\n", what, smd_code_name(smd_error_code(err)),
          smd_error_message(err));
  smd_error_free(err);
  exit(1);
}

static unsigned long long rng_state = 88172645463325252ULL;
static double uniform(void) { /* xorshift64 */
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (double)(rng_state >> 11) / 9007199254740992.0;
}
static double normal(void) {
  double u = uniform() + 1e-12, v = uniform();
  return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}
static double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

struct model {
  float w1[N_HID][N_IN], b1[N_HID], w2[N_HID], b2;
};
struct grads {
  float w1[N_HID][N_IN], b1[N_HID], w2[N_HID], b2;
};

/* Forward pass over rows [from, from+n) of x; returns the mean binary cross-entropy and the
 * accuracy; accumulates gradients into g when g is not NULL. */
static double run(const struct model *m, float x[][N_IN], const float *y, int from, int n,
                  struct grads *g, double *accuracy) {
  double loss = 0;
  int correct = 0;
  if (g) memset(g, 0, sizeof *g);
  for (int r = from; r < from + n; ++r) {
    double h[N_HID], z2 = m->b2;
    for (int j = 0; j < N_HID; ++j) {
      double z = m->b1[j];
      for (int i = 0; i < N_IN; ++i) z += m->w1[j][i] * x[r][i];
      h[j] = sigmoid(z);
      z2 += m->w2[j] * h[j];
    }
    double p = sigmoid(z2);
    double pc = fmin(fmax(p, 1e-7), 1 - 1e-7);
    loss -= y[r] * log(pc) + (1 - y[r]) * log(1 - pc);
    correct += (p > 0.5) == (y[r] > 0.5);
    if (g) {
      double d2 = (p - y[r]) / n;
      g->b2 += (float)d2;
      for (int j = 0; j < N_HID; ++j) {
        g->w2[j] += (float)(d2 * h[j]);
        double d1 = d2 * m->w2[j] * h[j] * (1 - h[j]);
        g->b1[j] += (float)d1;
        for (int i = 0; i < N_IN; ++i) g->w1[j][i] += (float)(d1 * x[r][i]);
      }
    }
  }
  *accuracy = (double)correct / n;
  return loss / n;
}

static void save(smd_hook *hook, const char *name, const float *data, int64_t rows, int64_t cols) {
  int64_t shape[2] = {rows, cols};
  size_t ndim = cols > 0 ? 2 : 1;
  size_t count = (size_t)rows * (size_t)(cols > 0 ? cols : 1);
  check(smd_hook_save_tensor(hook, name, SMD_DTYPE_FLOAT32, shape, ndim, data, count * sizeof(float), NULL, 0),
        name);
}

int main(int argc, char **argv) {
  if (argc < 2 || strcmp(argv[1], "--help") == 0) {
    fprintf(stderr, "usage: train_mlp OUT_DIR [--steps N] [--lr RATE] [--init SCALE] [--seed S] [--tensorboard]\n"
                    "                 [--max-pending-steps N]\n");
    return argc < 2 ? 2 : 0;
  }
  const char *out_dir = argv[1];
  int steps = 200;
  double lr = 1.0, init = 0.5;
  bool tensorboard = false;
  long long max_pending = -1;
  for (int a = 2; a < argc; a += 2) {
    if (strcmp(argv[a], "--tensorboard") == 0) {
      tensorboard = true;
      --a;
      continue;
    }
    if (a + 1 >= argc) {
      fprintf(stderr, "train_mlp: %s needs a value\n", argv[a]);
      return 2;
    }
    if (strcmp(argv[a], "--steps") == 0) steps = atoi(argv[a + 1]);
    else if (strcmp(argv[a], "--lr") == 0) lr = atof(argv[a + 1]);
    else if (strcmp(argv[a], "--init") == 0) init = atof(argv[a + 1]);
    else if (strcmp(argv[a], "--max-pending-steps") == 0) max_pending = atoll(argv[a + 1]);
    else if (strcmp(argv[a], "--seed") == 0) rng_state ^= strtoull(argv[a + 1], NULL, 10) * 0x9E3779B97F4A7C15ULL;
    else {
      fprintf(stderr, "train_mlp: unknown option %s\n", argv[a]);
      return 2;
    }
  }

  /* Synthetic data: the label is 1 when a fixed linear score of the inputs is positive. */
  static float x[N_TRAIN + N_EVAL][N_IN], y[N_TRAIN + N_EVAL];
  double true_w[N_IN];
  for (int i = 0; i < N_IN; ++i) true_w[i] = normal();
  for (int r = 0; r < N_TRAIN + N_EVAL; ++r) {
    double s = 0;
    for (int i = 0; i < N_IN; ++i) {
      x[r][i] = (float)normal();
      s += true_w[i] * x[r][i];
    }
    y[r] = s > 0 ? 1.0f : 0.0f;
  }
  struct model m;
  for (int j = 0; j < N_HID; ++j) {
    for (int i = 0; i < N_IN; ++i) m.w1[j][i] = (float)(init * normal());
    m.b1[j] = 0;
    m.w2[j] = (float)(0.5 * normal());
  }
  m.b2 = 0;

  /* The hook: weights/biases/gradients every 10 steps, losses every step. */
  smd_hook_options *opts = NULL;
  smd_save_config *every10 = NULL, *every1 = NULL;
  smd_reduction_config *grad_red = NULL;
  check(smd_hook_options_create(&opts), "options");
  check(smd_save_config_create(&every10), "save config");
  check(smd_save_config_set(every10, SMD_MODE_ALL, 10, 0, -1, NULL, 0), "save config");
  check(smd_hook_options_set_save_config(opts, every10), "save config");
  check(smd_hook_options_add_include_collection(opts, "weights"), "include");
  check(smd_hook_options_add_include_collection(opts, "biases"), "include");
  check(smd_hook_options_add_include_collection(opts, "gradients"), "include");
  if (tensorboard) check(smd_hook_options_set_export_tensorboard(opts, true), "tensorboard");
  check(smd_hook_options_set_max_pending_steps(opts, (int64_t)max_pending), "max pending steps");
  smd_hook *hook = NULL;
  check(smd_hook_create(out_dir, opts, &hook), "creating the hook");

  smd_collection *c = NULL;
  check(smd_hook_get_collection(hook, "gradients", &c), "gradients");
  check(smd_reduction_config_parse("mean,abs_mean,max,min,l2_norm", &grad_red), "reductions");
  check(smd_collection_set_reduction_config(c, grad_red), "gradients");
  smd_collection_free(c);
  check(smd_hook_get_collection(hook, "losses", &c), "losses");
  check(smd_save_config_create(&every1), "save config");
  check(smd_save_config_set(every1, SMD_MODE_ALL, 1, 0, -1, NULL, 0), "save config");
  check(smd_collection_set_save_config(c, every1), "losses");
  smd_collection_free(c);

  struct grads g;
  double acc = 0, loss = 0;
  for (int step = 0; step < steps; ++step) {
    bool stop = false;
    check(smd_hook_stop_requested(hook, &stop), "stop signal");
    if (stop) {
      printf("step %4d  a rule asked to stop the training\n", step);
      break;
    }
    check(smd_hook_set_mode(hook, SMD_MODE_TRAIN), "mode");
    check(smd_hook_begin_step(hook), "step");
    int from = (step * BATCH) % N_TRAIN;
    loss = run(&m, x, y, from, BATCH, &g, &acc);
    save(hook, "fc1.weight", &m.w1[0][0], N_HID, N_IN);
    save(hook, "fc1.bias", m.b1, N_HID, 0);
    save(hook, "fc2.weight", m.w2, N_HID, 0);
    save(hook, "fc2.bias", &m.b2, 1, 0);
    save(hook, "gradient/fc1.weight", &g.w1[0][0], N_HID, N_IN);
    save(hook, "gradient/fc1.bias", g.b1, N_HID, 0);
    save(hook, "gradient/fc2.weight", g.w2, N_HID, 0);
    float lossf = (float)loss;
    save(hook, "loss", &lossf, 1, 0);
    check(smd_hook_save_scalar(hook, "train_accuracy", acc), "scalar");
    /* SGD */
    for (int j = 0; j < N_HID; ++j) {
      for (int i = 0; i < N_IN; ++i) m.w1[j][i] -= (float)(lr * g.w1[j][i]);
      m.b1[j] -= (float)(lr * g.b1[j]);
      m.w2[j] -= (float)(lr * g.w2[j]);
    }
    m.b2 -= (float)(lr * g.b2);

    if ((step + 1) % 25 == 0) {
      check(smd_hook_set_mode(hook, SMD_MODE_EVAL), "mode");
      check(smd_hook_begin_step(hook), "step");
      double eval_acc;
      float eval_loss = (float)run(&m, x, y, N_TRAIN, N_EVAL, NULL, &eval_acc);
      save(hook, "loss", &eval_loss, 1, 0);
      check(smd_hook_save_scalar(hook, "eval_accuracy", eval_acc), "scalar");
      printf("step %4d  train loss %.4f  eval loss %.4f  eval accuracy %.3f\n", step + 1, loss,
             eval_loss, eval_acc);
    }
  }
  check(smd_hook_close(hook), "closing the hook");
  smd_hook_free(hook);
  smd_hook_options_free(opts);
  smd_save_config_free(every10);
  smd_save_config_free(every1);
  smd_reduction_config_free(grad_red);
  printf("wrote %s\n", out_dir);
  return 0;
}
