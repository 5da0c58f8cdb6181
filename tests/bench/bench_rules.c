/* Rule benchmark driver (public C API only), run by bench_rules.py.
 *
 *   bench_rules write DIR STEPS TENSORS VANISH_FROM
 *       writes DIR with smd's hook: STEPS steps, TENSORS gradients "gradient/layerN.weight"
 *       (32 x 32 float32) saved as abs_mean reductions only; from step VANISH_FROM on,
 *       gradient/layer7.weight vanishes (abs_mean ~ 1e-9; the last layer when there are fewer).
 *   bench_rules run DIR builtin|custom
 *       opens DIR and runs VanishingGradient over every step until the job's end: the built-in
 *       rule, or a custom rule (C callback) doing what the smdebug custom Rule does: for every
 *       tensor of collection "gradients", reduction_value(step, "mean", abs=True) < threshold.
 *       Prints {"open_s": .., "invoke_s": .., "steps": .., "met": ..} on one line.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "smd/smd.h"

static void die(smd_error *e, const char *what) {
  if (e == NULL) return;
  fprintf(stderr, "bench_rules: %s: %s: %s\n", what, smd_code_name(smd_error_code(e)),
          smd_error_message(e));
  smd_error_free(e);
  exit(1);
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int write_trial(const char *dir, int steps, int tensors, int vanish_from) {
  smd_hook_options *opts = NULL;
  smd_save_config *sc = NULL;
  smd_reduction_config *rc = NULL;
  smd_hook *hook = NULL;
  smd_collection *grads = NULL;
  die(smd_hook_options_create(&opts), "options");
  die(smd_save_config_create(&sc), "save config");
  die(smd_save_config_set(sc, SMD_MODE_ALL, 1, 0, -1, NULL, 0), "save config");
  die(smd_hook_options_set_save_config(opts, sc), "save config");
  die(smd_hook_options_add_include_collection(opts, "gradients"), "include");
  die(smd_hook_create(dir, opts, &hook), "hook");
  die(smd_reduction_config_parse("abs_mean", &rc), "reductions");
  die(smd_reduction_config_set_save_raw_tensor(rc, false), "reductions");
  die(smd_hook_get_collection(hook, "gradients", &grads), "collection");
  die(smd_collection_set_reduction_config(grads, rc), "collection");
  die(smd_hook_set_mode(hook, SMD_MODE_TRAIN), "mode");
  float g[32 * 32];
  int64_t shape[2] = {32, 32};
  unsigned seed = 1;
  const int vanishing = tensors > 7 ? 7 : tensors - 1;
  for (int s = 0; s < steps; ++s) {
    die(smd_hook_begin_step(hook), "step");
    for (int t = 0; t < tensors; ++t) {
      char name[64];
      snprintf(name, sizeof name, "gradient/layer%d.weight", t);
      const float scale = (t == vanishing && vanish_from >= 0 && s >= vanish_from) ? 1e-9f : 1e-2f;
      for (int i = 0; i < 32 * 32; ++i) {
        seed = seed * 1103515245u + 12345u;
        g[i] = scale * ((float)((seed >> 8) & 0xffff) / 65536.0f - 0.5f);
      }
      die(smd_hook_save_tensor(hook, name, SMD_DTYPE_FLOAT32, shape, 2, g, sizeof g, NULL, 0), "save");
    }
  }
  die(smd_hook_close(hook), "close");
  smd_hook_free(hook);
  smd_collection_free(grads);
  smd_reduction_config_free(rc);
  smd_save_config_free(sc);
  smd_hook_options_free(opts);
  return 0;
}

/* The smdebug custom rule's logic through the C API. */
static int custom_invoke(smd_rule_context *ctx, int64_t step, bool *met, void *payload) {
  (void)payload;
  smd_trial *t = smd_rule_context_trial(ctx, 0);
  smd_tensor_filter *f = NULL;
  smd_strarray names = {NULL, 0};
  smd_error *e = smd_tensor_filter_create(&f);
  if (!e) e = smd_tensor_filter_set_collection(f, "gradients");
  if (!e) e = smd_trial_tensor_names(t, f, &names);
  smd_tensor_filter_free(f);
  if (e) return smd_rule_context_fail(ctx, e);
  *met = false;
  for (size_t i = 0; i < names.count && !e; ++i) {
    smd_tensor *tensor = NULL;
    smd_value *v = NULL;
    double m = 0;
    e = smd_trial_tensor(t, names.strings[i], &tensor);
    if (!e) e = smd_tensor_reduction_value(tensor, step, SMD_MODE_GLOBAL, NULL, "abs_mean", &v);
    if (!e) e = smd_value_double_at(v, 0, &m);
    smd_value_free(v);
    smd_tensor_free(tensor);
    if (!e && m < 1e-7) *met = true;
  }
  smd_strarray_free(&names);
  if (e) return smd_rule_context_fail(ctx, e);
  return 0;
}

static int run(const char *dir, const char *which) {
  double t0 = now();
  smd_trial *t = NULL;
  die(smd_trial_open(dir, NULL, &t), "open");
  double t1 = now();
  smd_rule *rule = NULL;
  if (strcmp(which, "builtin") == 0) {
    die(smd_rule_create_builtin("VanishingGradient", t, NULL, 0, NULL, NULL, 0, &rule), "rule");
  } else {
    die(smd_rule_create("VanishingGradientRule", t, NULL, 0, custom_invoke, NULL, NULL, &rule), "rule");
  }
  smd_rule_invoke_options *o = NULL;
  die(smd_rule_invoke_options_create(&o), "options");
  die(smd_rule_invoke_options_set_collect_findings(o, false), "options");
  die(smd_rule_invoke(rule, 0, -1, false, o), "invoke");
  double t2 = now();
  if (smd_rule_end_reason(rule) != SMD_RULE_END_NO_MORE_DATA) {
    fprintf(stderr, "bench_rules: unexpected end %d\n", (int)smd_rule_end_reason(rule));
    return 1;
  }
  printf("{\"open_s\": %.6f, \"invoke_s\": %.6f, \"steps\": %lld, \"met\": %lld}\n", t1 - t0,
         t2 - t1, (long long)smd_rule_steps_evaluated(rule), (long long)smd_rule_conditions_met(rule));
  smd_rule_invoke_options_free(o);
  smd_rule_free(rule);
  smd_trial_free(t);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 6 && strcmp(argv[1], "write") == 0) {
    return write_trial(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
  }
  if (argc == 4 && strcmp(argv[1], "run") == 0) return run(argv[2], argv[3]);
  fprintf(stderr,
          "usage: bench_rules write DIR STEPS TENSORS VANISH_FROM\n"
          "       bench_rules run DIR builtin|custom\n");
  return 2;
}
