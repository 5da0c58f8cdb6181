/* The C program of the README's "Use smd from your program": writes a trial with the hook (three
 * steps of a tensor in the "weights" collection), reads a value back, runs a built-in rule (AllZero
 * fires at step 0 only).
 *   app OUT_DIR */
#include <smd/smd.h>
#include <stdio.h>
#include <stdlib.h>

static void check(smd_error *err, const char *what) {
  if (err) {
    fprintf(stderr, "%s: %s\n", what, smd_error_message(err));
    exit(1);
  }
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: app OUT_DIR\n");
    return 2;
  }
  smd_save_config *every_step;
  check(smd_save_config_create(&every_step), "smd_save_config_create");
  check(smd_save_config_set(every_step, SMD_MODE_ALL, 1, 0, -1, NULL, 0), "smd_save_config_set");
  smd_hook_options *opts;
  check(smd_hook_options_create(&opts), "smd_hook_options_create");
  check(smd_hook_options_set_save_config(opts, every_step), "smd_hook_options_set_save_config");
  check(smd_hook_options_add_include_collection(opts, "weights"), "add_include_collection");
  smd_hook *hook;
  check(smd_hook_create(argv[1], opts, &hook), "smd_hook_create");
  for (int step = 0; step < 3; ++step) {
    float w[4] = {0.0f * step, 1.0f * step, 2.0f * step, 3.0f * step}; /* all zero at step 0 */
    int64_t shape[1] = {4};
    check(smd_hook_begin_step(hook), "smd_hook_begin_step");
    check(smd_hook_save_tensor(hook, "fc.weight", SMD_DTYPE_FLOAT32, shape, 1, w, sizeof w, NULL, 0),
          "smd_hook_save_tensor");
  }
  check(smd_hook_close(hook), "smd_hook_close");
  smd_hook_free(hook);
  smd_hook_options_free(opts);
  smd_save_config_free(every_step);

  smd_trial *trial;
  check(smd_trial_open(argv[1], NULL, &trial), "smd_trial_open");
  smd_tensor *t;
  check(smd_trial_tensor(trial, "fc.weight", &t), "smd_trial_tensor");
  smd_value *v;
  check(smd_tensor_value(t, 2, SMD_MODE_GLOBAL, NULL, &v), "smd_tensor_value");
  double x;
  check(smd_value_double_at(v, 1, &x), "smd_value_double_at");
  smd_rule *rule;
  check(smd_rule_create_builtin("AllZero", trial, NULL, 0, (const char *const[]){"tensor_regex"},
                                (const char *const[]){"fc\\..*"}, 1, &rule),
        "smd_rule_create_builtin");
  check(smd_rule_invoke(rule, 0, -1, false, NULL), "smd_rule_invoke");
  printf("c: fc.weight at step 2: %g; AllZero conditions met: %lld\n", x,
         (long long)smd_rule_conditions_met(rule));
  smd_rule_free(rule);
  smd_value_free(v);
  smd_tensor_free(t);
  smd_trial_free(trial);
  return 0;
}
