/* Rules through the C API: custom rules (callbacks, required tensors, errors), built-in rules
 * (creation, parameters), invocation (skipped steps, NoMoreData, raise_eval_cond, cancellation,
 * live jobs, several rules, two trials), actions (findings, message file, stop signal). */
#include "capi_test.h"

#include <pthread.h>

/* ---- trials written with the hook's C API ------------------------------------------------- */

static smd_hook *new_hook(const char *dir, int64_t interval) {
  smd_hook_options *opts = NULL;
  smd_save_config *sc = NULL;
  smd_hook *hook = NULL;
  CHECK_OK(smd_hook_options_create(&opts));
  CHECK_OK(smd_save_config_create(&sc));
  CHECK_OK(smd_save_config_set(sc, SMD_MODE_ALL, interval, 0, -1, NULL, 0));
  CHECK_OK(smd_hook_options_set_save_config(opts, sc));
  CHECK_OK(smd_hook_options_set_save_all(opts, true));
  CHECK_OK(smd_hook_options_set_wall_time_base(opts, 1700000000.0));
  CHECK_OK(smd_hook_create(dir, opts, &hook));
  smd_save_config_free(sc);
  smd_hook_options_free(opts);
  return hook;
}

static void save_loss(smd_hook *hook, double loss) {
  int64_t shape[1] = {1};
  CHECK_OK(smd_hook_save_tensor(hook, "loss", SMD_DTYPE_FLOAT64, shape, 1, &loss, sizeof loss, NULL, 0));
}

static void save_weight(smd_hook *hook, float a) {
  float w[3] = {a, 2 * a, 3};
  int64_t shape[1] = {3};
  CHECK_OK(smd_hook_save_tensor(hook, "fc.weight", SMD_DTYPE_FLOAT32, shape, 1, w, sizeof w, NULL, 0));
}

/* Steps 0..9 saved every 2 steps (0, 2, 4, 6, 8); loss = step / 10, except 5.0 at step 6. */
static const char *losses_trial(const char *name) {
  const char *dir = scratch_path(name);
  smd_hook *hook = new_hook(dir, 2);
  for (int s = 0; s < 10; ++s) {
    CHECK_OK(smd_hook_begin_step(hook));
    save_loss(hook, s == 6 ? 5.0 : s / 10.0);
    save_weight(hook, (float)s);
  }
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);
  return dir;
}

static smd_trial *open_trial(const char *dir) {
  smd_trial *t = NULL;
  CHECK_OK(smd_trial_open(dir, NULL, &t));
  return t;
}

/* ---- a custom rule: fires when the loss exceeds a threshold --------------------------------- */

struct loss_rule {
  double threshold;
  int calls;
  int64_t steps[32];
  int fail_mode; /* 0 none; 1 hand over the value's error; 2 fail_with CORRUPT; 3 return 5 */
  int require_mode; /* 0 none; 1 require loss at step; 2 require unknown at step 4; 3 bad use */
};

static int loss_rule_invoke(smd_rule_context *ctx, int64_t step, bool *met, void *payload) {
  struct loss_rule *r = payload;
  if (r->calls < 32) r->steps[r->calls] = step;
  r->calls++;
  CHECK(strcmp(smd_rule_context_rule_name(ctx), "LossAbove") == 0);
  CHECK(smd_rule_context_trial_count(ctx) >= 1);
  CHECK(smd_rule_context_trial(ctx, 99) == NULL);
  smd_trial *t = smd_rule_context_trial(ctx, 0);
  if (r->require_mode == 3) {
    int64_t s = step;
    smd_error *e = smd_rule_context_require_tensor(ctx, 0, "loss", false, &s, 1);
    return smd_rule_context_fail(ctx, e); /* INVALID_ARGUMENT: not from the invoke callback */
  }
  smd_tensor *tensor = NULL;
  smd_error *e = smd_trial_tensor(t, "loss", &tensor);
  if (e) return smd_rule_context_fail(ctx, e);
  smd_value *v = NULL;
  /* fail_mode 1: ask for a step that was not saved -> TENSOR_UNAVAILABLE_FOR_STEP/STEP_UNAVAILABLE */
  e = smd_tensor_value(tensor, r->fail_mode == 1 && step == 4 ? 5 : step, SMD_MODE_GLOBAL, NULL, &v);
  smd_tensor_free(tensor);
  if (e) return smd_rule_context_fail(ctx, e);
  double x = 0;
  CHECK_OK(smd_value_double_at(v, 0, &x));
  smd_value_free(v);
  if (r->fail_mode == 2 && step == 4) return smd_rule_context_fail_with(ctx, SMD_E_CORRUPT, "my own failure");
  if (r->fail_mode == 3 && step == 4) return 5;
  *met = x > r->threshold;
  if (*met) {
    char msg[64];
    snprintf(msg, sizeof msg, "loss %.1f above %.1f", x, r->threshold);
    CHECK_OK(smd_rule_context_report(ctx, 0, "loss", msg));
  }
  CHECK_ERR(smd_rule_context_report(ctx, 7, "loss", "x"), SMD_E_INVALID_ARGUMENT, "out of range");
  CHECK_ERR(smd_rule_context_report(ctx, 0, "loss", NULL), SMD_E_INVALID_ARGUMENT, "message");
  return 0;
}

static int loss_rule_required(smd_rule_context *ctx, int64_t step, void *payload) {
  struct loss_rule *r = payload;
  int64_t s = step;
  if (r->require_mode == 1 || r->require_mode == 2) {
    smd_error *e = smd_rule_context_require_tensor(ctx, 0, "loss", false, &s, 1);
    if (e) return smd_rule_context_fail(ctx, e);
    CHECK_OK(smd_rule_context_require_tensor(ctx, 0, "^fc\\.", true, &s, 1));
  }
  if (r->require_mode == 2 && step == 4) {
    return smd_rule_context_fail(ctx, smd_rule_context_require_tensor(ctx, 0, "nope", false, &s, 1));
  }
  return 0;
}

static smd_rule *loss_rule_create(smd_trial *t, struct loss_rule *payload) {
  smd_rule *rule = NULL;
  CHECK_OK(smd_rule_create("LossAbove", t, NULL, 0, loss_rule_invoke, loss_rule_required, payload, &rule));
  return rule;
}

static void test_free_and_null_safety(void) {
  smd_rule_free(NULL);
  smd_rule_invoke_options_free(NULL);
  smd_rule_findings_clear(NULL);
  CHECK_ERR(smd_rule_set_stop_training(NULL, true), SMD_E_INVALID_ARGUMENT, "rule");
  smd_rule_context_end_rule(NULL);
  CHECK(smd_rule_name(NULL) == NULL);
  CHECK(smd_rule_findings_count(NULL) == 0);
  CHECK(smd_rule_findings_at(NULL, 0) == NULL);
  CHECK(smd_rule_finding_step(NULL) == -1);
  CHECK(smd_rule_end_reason(NULL) == SMD_RULE_END_NONE);
  CHECK(smd_rule_failed_step(NULL) == -1);
  CHECK(smd_rule_last_step(NULL) == -1);
  CHECK(smd_rule_context_fail(NULL, NULL) == 0);
  CHECK(smd_rule_builtin_summary("nope") == NULL);
  CHECK(smd_rule_builtin_summary(NULL) == NULL);
  smd_rule *rule = NULL;
  CHECK_ERR(smd_rule_create("x", NULL, NULL, 0, loss_rule_invoke, NULL, NULL, &rule),
            SMD_E_INVALID_ARGUMENT, "base");
  CHECK_ERR(smd_rule_invoke(NULL, 0, -1, false, NULL), SMD_E_INVALID_ARGUMENT, "rule");
  CHECK_ERR(smd_rule_invoke_many(NULL, 0, 0, -1, false, NULL), SMD_E_INVALID_ARGUMENT, "no rules");
  CHECK(rule == NULL);
}

static void test_custom_rule_skips_and_ends_normally(void) {
  smd_trial *t = open_trial(losses_trial("custom"));
  struct loss_rule payload = {0.5, 0, {0}, 0, 0};
  smd_rule *rule = NULL;
  CHECK_ERR(smd_rule_create("", t, NULL, 0, loss_rule_invoke, NULL, &payload, &rule),
            SMD_E_INVALID_ARGUMENT, "name");
  CHECK_ERR(smd_rule_create("x", t, NULL, 0, NULL, NULL, &payload, &rule), SMD_E_INVALID_ARGUMENT,
            "invoke");
  rule = loss_rule_create(t, &payload);
  smd_trial_free(t); /* the rule keeps its own reference */
  CHECK(smd_rule_end_reason(rule) == SMD_RULE_END_NONE);
  CHECK_OK(smd_rule_invoke(rule, 0, -1, false, NULL));
  CHECK(payload.calls == 5);
  CHECK(payload.steps[0] == 0 && payload.steps[1] == 2 && payload.steps[4] == 8);
  CHECK(smd_rule_end_reason(rule) == SMD_RULE_END_NO_MORE_DATA);
  CHECK(smd_rule_failed_step(rule) == -1);
  CHECK(smd_rule_steps_evaluated(rule) == 5);
  CHECK(smd_rule_steps_skipped(rule) == 4); /* 1, 3, 5, 7 */
  CHECK(smd_rule_conditions_met(rule) == 2); /* 5.0 at step 6, 0.8 at step 8 */
  CHECK(smd_rule_last_step(rule) == 8);
  CHECK(smd_rule_findings_count(rule) == 2);
  const smd_rule_finding *f = smd_rule_findings_at(rule, 0);
  CHECK(f != NULL && smd_rule_finding_step(f) == 6);
  CHECK(strcmp(smd_rule_finding_rule(f), "LossAbove") == 0);
  CHECK(strcmp(smd_rule_finding_tensor(f), "loss") == 0);
  CHECK(smd_rule_finding_trial(f) == 0);
  CHECK(strcmp(smd_rule_finding_message(f), "loss 5.0 above 0.5") == 0);
  CHECK(strcmp(smd_rule_finding_line(f), "SMDebugRule:LossAbove fired. step 6, tensor 'loss': loss 5.0 above 0.5") == 0);
  CHECK(smd_rule_findings_at(rule, 2) == NULL);
  /* Bounded, from step 3: evaluates 4 and 6. */
  payload.calls = 0;
  CHECK_OK(smd_rule_invoke(rule, 3, 7, false, NULL));
  CHECK(payload.calls == 2 && payload.steps[0] == 4 && payload.steps[1] == 6);
  CHECK(smd_rule_end_reason(rule) == SMD_RULE_END_STEP);
  CHECK(smd_rule_findings_count(rule) == 3);
  smd_rule_findings_clear(rule);
  CHECK(smd_rule_findings_count(rule) == 0);
  CHECK(smd_rule_conditions_met(rule) == 3);
  smd_rule_free(rule);
}

static void test_raise_eval_cond(void) {
  smd_trial *t = open_trial(losses_trial("raise"));
  struct loss_rule payload = {0.5, 0, {0}, 0, 0};
  smd_rule *rule = loss_rule_create(t, &payload);
  CHECK_ERR(smd_rule_invoke(rule, 0, -1, true, NULL), SMD_E_RULE_CONDITION_MET,
            "Evaluation of the rule LossAbove at step 6 resulted in the condition being met: "
            "tensor 'loss': loss 5.0 above 0.5");
  CHECK(smd_rule_end_reason(rule) == SMD_RULE_END_CONDITION_MET);
  CHECK(payload.calls == 4);
  CHECK_ERR(smd_rule_invoke(rule, 7, -1, true, NULL), SMD_E_RULE_CONDITION_MET, "at step 8");
  smd_rule_free(rule);
  smd_trial_free(t);
}

static void test_callback_errors(void) {
  smd_trial *t = open_trial(losses_trial("errors"));
  struct loss_rule payload = {100, 0, {0}, 1, 0};
  smd_rule *rule = loss_rule_create(t, &payload);
  /* The rule hands over STEP_UNAVAILABLE (step 5 was not saved): step 4 is skipped. */
  CHECK_OK(smd_rule_invoke(rule, 0, -1, false, NULL));
  CHECK(smd_rule_steps_evaluated(rule) == 4 && smd_rule_steps_skipped(rule) == 5);
  /* the codes that skip a step, as the bindings ask for them; every other code ends the run */
  for (int c = 0; c <= SMD_E_AUTH + 1; ++c) {
    bool skips = c == SMD_E_TENSOR_UNAVAILABLE_FOR_STEP || c == SMD_E_TENSOR_UNAVAILABLE ||
                 c == SMD_E_STEP_UNAVAILABLE;
    CHECK(smd_code_skips_rule_step((smd_code)c) == skips);
  }
  CHECK(!smd_code_skips_rule_step((smd_code)-1));
  payload.fail_mode = 2;
  /* the rule itself failed: the error returned is its own, and the rule says where */
  CHECK_ERR(smd_rule_invoke(rule, 0, -1, false, NULL), SMD_E_CORRUPT,
            "rule LossAbove at step 4: my own failure");
  CHECK(smd_rule_end_reason(rule) == SMD_RULE_END_ERROR);
  CHECK(smd_rule_failed_step(rule) == 4);
  payload.fail_mode = 3;
  CHECK_ERR(smd_rule_invoke(rule, 0, -1, false, NULL), SMD_E_CANCELLED, "returned 5");
  /* a cancellation is not the rule's failure: stopped, and the previous failure is gone */
  CHECK(smd_rule_end_reason(rule) == SMD_RULE_END_STOPPED);
  CHECK(smd_rule_failed_step(rule) == -1);
  payload.fail_mode = 0;
  payload.require_mode = 3;
  CHECK_ERR(smd_rule_invoke(rule, 0, -1, false, NULL), SMD_E_INVALID_ARGUMENT, "required tensors");
  smd_rule_free(rule);
  smd_trial_free(t);
}

static void test_required_tensors(void) {
  smd_trial *t = open_trial(losses_trial("required"));
  struct loss_rule payload = {100, 0, {0}, 0, 1};
  smd_rule *rule = loss_rule_create(t, &payload);
  CHECK_OK(smd_rule_invoke(rule, 0, -1, false, NULL));
  CHECK(payload.calls == 5);
  payload.require_mode = 2; /* TENSOR_UNAVAILABLE at step 4: skipped */
  payload.calls = 0;
  CHECK_OK(smd_rule_invoke(rule, 0, -1, false, NULL));
  CHECK(payload.calls == 4);
  smd_rule_free(rule);
  smd_trial_free(t);
}

static int cancel_finding(const smd_rule *rule, const smd_rule_finding *f, void *payload) {
  (void)rule;
  int *seen = payload;
  ++*seen;
  return smd_rule_finding_step(f) == 8 ? 3 : 0;
}

static int cancel_progress(const smd_rule *rule, int64_t step, smd_rule_outcome outcome, void *payload) {
  int *n = payload;
  CHECK(rule != NULL);
  CHECK(outcome != SMD_RULE_WAITING);
  ++*n;
  return step >= 4 ? 1 : 0;
}

static void test_cancellation_and_options(void) {
  smd_trial *t = open_trial(losses_trial("cancel"));
  struct loss_rule payload = {0.5, 0, {0}, 0, 0};
  smd_rule *rule = loss_rule_create(t, &payload);
  smd_rule_invoke_options *o = NULL;
  CHECK_OK(smd_rule_invoke_options_create(&o));
  int seen = 0;
  CHECK_OK(smd_rule_invoke_options_set_finding_callback(o, cancel_finding, &seen));
  CHECK_ERR(smd_rule_invoke(rule, 0, -1, false, o), SMD_E_CANCELLED, "finding callback returned 3");
  CHECK(seen == 2);
  CHECK_OK(smd_rule_invoke_options_set_finding_callback(o, NULL, NULL));
  int n = 0;
  CHECK_OK(smd_rule_invoke_options_set_progress_callback(o, cancel_progress, &n));
  CHECK_ERR(smd_rule_invoke(rule, 0, -1, false, o), SMD_E_CANCELLED, "progress callback");
  CHECK(n == 5); /* 0 evaluated, 1 skipped, 2 evaluated, 3 skipped, 4 evaluated -> cancel */
  CHECK_ERR(smd_rule_invoke_options_set_wait_timeout_ms(o, -2), SMD_E_INVALID_ARGUMENT, "timeout");
  CHECK_ERR(smd_rule_invoke_options_set_wait_slice_ms(o, 0), SMD_E_INVALID_ARGUMENT, "slice");
  CHECK_ERR(smd_rule_invoke_options_set_stop_at_first(NULL, true), SMD_E_INVALID_ARGUMENT, "options");
  /* stop at first, no collection */
  CHECK_OK(smd_rule_invoke_options_set_progress_callback(o, NULL, NULL));
  CHECK_OK(smd_rule_invoke_options_set_stop_at_first(o, true));
  CHECK_OK(smd_rule_invoke_options_set_collect_findings(o, false));
  smd_rule_findings_clear(rule);
  payload.calls = 0;
  CHECK_OK(smd_rule_invoke(rule, 0, -1, false, o));
  CHECK(payload.calls == 4);
  CHECK(smd_rule_end_reason(rule) == SMD_RULE_END_CONDITION_MET);
  CHECK(smd_rule_findings_count(rule) == 0);
  smd_rule_invoke_options_free(o);
  smd_rule_free(rule);
  smd_trial_free(t);
}

static void test_message_file_and_stop_signal(void) {
  const char *dir = scratch_path("stop");
  smd_hook *hook = new_hook(dir, 1);
  for (int s = 0; s < 4; ++s) {
    CHECK_OK(smd_hook_begin_step(hook));
    save_loss(hook, s);
  }
  CHECK_OK(smd_hook_begin_step(hook));
  CHECK_OK(smd_hook_flush(hook));
  bool stop = true;
  CHECK_OK(smd_hook_stop_requested(hook, &stop));
  CHECK(!stop);
  CHECK_ERR(smd_hook_stop_requested(NULL, &stop), SMD_E_INVALID_ARGUMENT, "hook");

  smd_trial *t = open_trial(dir);
  struct loss_rule payload = {1.5, 0, {0}, 0, 0};
  smd_rule *rule = loss_rule_create(t, &payload);
  smd_rule_invoke_options *o = NULL;
  CHECK_OK(smd_rule_invoke_options_create(&o));
  CHECK_OK(smd_rule_invoke_options_set_stop_training(o, true));
  CHECK_OK(smd_rule_invoke_options_set_stop_at_first(o, true));
  CHECK_OK(smd_rule_invoke_options_set_wait_timeout_ms(o, 0));
  char msgs[4200];
  snprintf(msgs, sizeof msgs, "%s/messages.txt", capi_scratch);
  CHECK_OK(smd_rule_invoke_options_set_message_file(o, msgs));
  CHECK_OK(smd_rule_invoke(rule, 0, -1, false, o));
  CHECK(smd_rule_end_reason(rule) == SMD_RULE_END_CONDITION_MET);
  CHECK_OK(smd_hook_stop_requested(hook, &stop));
  CHECK(stop);
  char *signal = read_file(dir, "stop_training.smd");
  CHECK(signal != NULL && strstr(signal, "\"rule\": \"LossAbove\", \"step\": 2") != NULL);
  free(signal);
  char *lines = read_file(capi_scratch, "messages.txt");
  CHECK(lines != NULL &&
        strcmp(lines, "SMDebugRule:LossAbove fired. step 2, tensor 'loss': loss 2.0 above 1.5\n") == 0);
  free(lines);
  /* the rule's own flag */
  CHECK(!smd_rule_stop_training(rule));
  CHECK_OK(smd_rule_set_stop_training(rule, true));
  CHECK(smd_rule_stop_training(rule));
  smd_rule_invoke_options_free(o);
  smd_rule_free(rule);
  smd_trial_free(t);
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);
}

/* ---- built-in rules ----------------------------------------------------------------------- */

static void test_builtin_catalog(void) {
  smd_strarray names = {NULL, 0};
  CHECK_OK(smd_rule_builtin_names(&names));
  CHECK(names.count == 20);
  CHECK(names.count > 0 && strcmp(names.strings[0], "VanishingGradient") == 0);
  for (size_t i = 0; i < names.count; ++i) CHECK(smd_rule_builtin_summary(names.strings[i]) != NULL);
  smd_strarray_free(&names);
  smd_strarray pn = {NULL, 0};
  CHECK_OK(smd_rule_builtin_params("vanishinggradient", &pn));
  CHECK(pn.count == 1 && strcmp(pn.strings[0], "threshold") == 0);
  smd_strarray_free(&pn);
  CHECK(strcmp(smd_rule_builtin_param_default("VanishingGradient", "threshold"), "0.0000001") == 0);
  CHECK(strlen(smd_rule_builtin_param_help("vanishinggradient", "threshold")) > 0);
  CHECK_OK(smd_rule_builtin_params("TensorVariance", &pn));
  CHECK(pn.count == 4 && strcmp(pn.strings[2], "max_threshold") == 0);
  /* max_threshold has no default */
  CHECK(strcmp(smd_rule_builtin_param_default("TensorVariance", pn.strings[2]), "") == 0);
  smd_strarray_free(&pn);
  CHECK(smd_rule_builtin_param_default("TensorVariance", "nope") == NULL);
  CHECK(smd_rule_builtin_param_help("Nope", "threshold") == NULL);
  CHECK(smd_rule_builtin_param_default(NULL, "threshold") == NULL);
  CHECK(smd_rule_builtin_param_help("VanishingGradient", NULL) == NULL);
  CHECK_ERR(smd_rule_builtin_params("Nope", &pn), SMD_E_INVALID_ARGUMENT, "Nope");
  CHECK_ERR(smd_rule_builtin_params("VanishingGradient", NULL), SMD_E_INVALID_ARGUMENT, "out");
}

static void test_builtin_creation_errors(void) {
  smd_trial *t = open_trial(losses_trial("builtin"));
  smd_rule *rule = NULL;
  const char *k1[] = {"threshold"};
  const char *v1[] = {"1e-7x"};
  CHECK_ERR(smd_rule_create_builtin("VanishingGradient", t, NULL, 0, k1, v1, 1, &rule),
            SMD_E_INVALID_ARGUMENT, "rule VanishingGradient: parameter 'threshold' = '1e-7x'");
  const char *k2[] = {"treshold"};
  CHECK_ERR(smd_rule_create_builtin("VanishingGradient", t, NULL, 0, k2, v1, 1, &rule),
            SMD_E_INVALID_ARGUMENT, "unknown parameter 'treshold'");
  CHECK_ERR(smd_rule_create_builtin("AllZero", t, NULL, 0, NULL, NULL, 0, &rule),
            SMD_E_INVALID_ARGUMENT, "Insufficient information to invoke rule AllZero");
  CHECK_ERR(smd_rule_create_builtin("Nope", t, NULL, 0, NULL, NULL, 0, &rule), SMD_E_INVALID_ARGUMENT,
            "unknown built-in rule 'Nope'");
  CHECK_ERR(smd_rule_create_builtin("AllZero", t, NULL, 0, NULL, v1, 1, &rule), SMD_E_INVALID_ARGUMENT,
            "keys or values");
  const char *k3[] = {NULL};
  CHECK_ERR(smd_rule_create_builtin("AllZero", t, NULL, 0, k3, v1, 1, &rule), SMD_E_INVALID_ARGUMENT,
            "parameter name 0");
  CHECK(rule == NULL);
  smd_trial_free(t);
}

static void test_builtin_loss_not_decreasing(void) {
  /* Loss: 0.0, 0.2, ... with a spike at step 6: LossNotDecreasing with num_steps 2 compares
   * each saved step with the one 2 before. */
  smd_trial *t = open_trial(losses_trial("lnd"));
  smd_rule *rule = NULL;
  const char *k[] = {"num_steps", "use_losses_collection", "tensor_regex", "rule_to_invoke"};
  const char *v[] = {"2", "True", "^loss$", "LossNotDecreasing"};
  CHECK_OK(smd_rule_create_builtin("LossNotDecreasing", t, NULL, 0, k, v, 4, &rule));
  CHECK(strcmp(smd_rule_name(rule), "LossNotDecreasing") == 0);
  CHECK_ERR(smd_rule_invoke(rule, 0, -1, true, NULL), SMD_E_RULE_CONDITION_MET, "at step 2");
  smd_rule_free(rule);
  smd_trial_free(t);
}

static void test_similar_across_runs(void) {
  smd_trial *a = open_trial(losses_trial("runA"));
  const char *dir_b = scratch_path("runB");
  smd_hook *hook = new_hook(dir_b, 2);
  for (int s = 0; s < 10; ++s) {
    CHECK_OK(smd_hook_begin_step(hook));
    save_loss(hook, s == 6 ? 5.0 : s / 10.0);
    save_weight(hook, s >= 4 ? (float)s + 1 : (float)s); /* differs from step 4 on */
  }
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);
  smd_trial *b = open_trial(dir_b);
  smd_rule *rule = NULL;
  CHECK_ERR(smd_rule_create_builtin("SimilarAcrossRuns", a, NULL, 0, NULL, NULL, 0, &rule),
            SMD_E_INVALID_ARGUMENT, "another trial");
  CHECK_OK(smd_rule_create_builtin("SimilarAcrossRuns", a, &b, 1, NULL, NULL, 0, &rule));
  CHECK_ERR(smd_rule_invoke(rule, 0, -1, true, NULL), SMD_E_RULE_CONDITION_MET, "at step 4");
  const smd_rule_finding *f = smd_rule_findings_at(rule, 0);
  CHECK(f != NULL && strcmp(smd_rule_finding_tensor(f), "fc.weight") == 0);
  smd_rule_free(rule);
  /* The other trial as SageMaker passes it; comparing the loss only: the runs agree. */
  const char *k[] = {"other_trial_0", "tensor_regex"};
  const char *v[] = {dir_b, "loss"};
  CHECK_OK(smd_rule_create_builtin("SimilarAcrossRuns", a, NULL, 0, k, v, 2, &rule));
  CHECK_OK(smd_rule_invoke(rule, 0, -1, true, NULL));
  CHECK(smd_rule_conditions_met(rule) == 0 && smd_rule_steps_evaluated(rule) == 5);
  smd_rule_free(rule);
  smd_trial_free(a);
  smd_trial_free(b);
}

static void test_invoke_many(void) {
  smd_trial *t = open_trial(losses_trial("many"));
  smd_trial *other = open_trial(losses_trial("many2"));
  struct loss_rule p1 = {0.5, 0, {0}, 0, 0}, p2 = {100, 0, {0}, 0, 0}, p3 = {0, 0, {0}, 0, 0};
  smd_rule *rules[2] = {loss_rule_create(t, &p1), loss_rule_create(t, &p2)};
  CHECK_OK(smd_rule_invoke_many(rules, 2, 0, -1, false, NULL));
  CHECK(p1.calls == 5 && p2.calls == 5);
  CHECK(smd_rule_conditions_met(rules[0]) == 2 && smd_rule_conditions_met(rules[1]) == 0);
  smd_rule *twice[2] = {rules[0], rules[0]};
  CHECK_ERR(smd_rule_invoke_many(twice, 2, 0, -1, false, NULL), SMD_E_INVALID_ARGUMENT, "twice");
  smd_rule *mixed[2] = {rules[0], loss_rule_create(other, &p3)};
  CHECK_ERR(smd_rule_invoke_many(mixed, 2, 0, -1, false, NULL), SMD_E_INVALID_ARGUMENT,
            "share their base trial");
  smd_rule_free(mixed[1]);
  smd_rule_free(rules[0]);
  smd_rule_free(rules[1]);
  smd_trial_free(t);
  smd_trial_free(other);
}

/* ---- a live job: a writer thread adds each step once the rule waits for it ---------------- */

struct live {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int64_t waiting_for;
  int stop;
  smd_hook *hook;
  int waits;
};

static void *live_writer(void *arg) {
  struct live *l = arg;
  for (int64_t s = 1; s < 6; ++s) {
    pthread_mutex_lock(&l->mu);
    while (l->waiting_for < s && !l->stop) pthread_cond_wait(&l->cv, &l->mu);
    int stop = l->stop;
    pthread_mutex_unlock(&l->mu);
    if (stop) break;
    save_loss(l->hook, s == 3 ? 9.0 : 0.1);
    if (s < 5) {
      CHECK_OK(smd_hook_begin_step(l->hook));
    } else {
      CHECK_OK(smd_hook_close(l->hook));
    }
  }
  return NULL;
}

static int live_progress(const smd_rule *rule, int64_t step, smd_rule_outcome outcome, void *payload) {
  struct live *l = payload;
  if (outcome == SMD_RULE_WAITING) {
    CHECK(rule == NULL);
    pthread_mutex_lock(&l->mu);
    if (step > l->waiting_for) l->waiting_for = step;
    l->waits++;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
  }
  return 0;
}

static void test_live_job(void) {
  const char *dir = scratch_path("live");
  struct live l;
  pthread_mutex_init(&l.mu, NULL);
  pthread_cond_init(&l.cv, NULL);
  l.waiting_for = -1;
  l.stop = 0;
  l.waits = 0;
  l.hook = new_hook(dir, 1);
  CHECK_OK(smd_hook_begin_step(l.hook));
  save_loss(l.hook, 0.1);
  CHECK_OK(smd_hook_begin_step(l.hook));
  CHECK_OK(smd_hook_flush(l.hook));
  smd_trial *t = open_trial(dir);
  struct loss_rule payload = {1.0, 0, {0}, 0, 0};
  smd_rule *rule = loss_rule_create(t, &payload);
  smd_rule_invoke_options *o = NULL;
  CHECK_OK(smd_rule_invoke_options_create(&o));
  CHECK_OK(smd_rule_invoke_options_set_wait_slice_ms(o, 10));
  CHECK_OK(smd_rule_invoke_options_set_progress_callback(o, live_progress, &l));
  pthread_t th;
  CHECK(pthread_create(&th, NULL, live_writer, &l) == 0);
  smd_error *e = smd_rule_invoke(rule, 0, -1, false, o);
  pthread_mutex_lock(&l.mu);
  l.stop = 1;
  pthread_cond_broadcast(&l.cv);
  pthread_mutex_unlock(&l.mu);
  pthread_join(th, NULL);
  CHECK_OK(e);
  CHECK(payload.calls == 6);
  CHECK(smd_rule_end_reason(rule) == SMD_RULE_END_NO_MORE_DATA);
  CHECK(smd_rule_findings_count(rule) == 1);
  CHECK(smd_rule_finding_step(smd_rule_findings_at(rule, 0)) == 3);
  CHECK(l.waits >= 5);
  smd_rule_invoke_options_free(o);
  smd_rule_free(rule);
  smd_trial_free(t);
  smd_hook_free(l.hook);
  pthread_mutex_destroy(&l.mu);
  pthread_cond_destroy(&l.cv);
}

static void test_wait_timeout(void) {
  const char *dir = scratch_path("timeout");
  smd_hook *hook = new_hook(dir, 1);
  CHECK_OK(smd_hook_begin_step(hook));
  save_loss(hook, 0.1);
  CHECK_OK(smd_hook_begin_step(hook));
  CHECK_OK(smd_hook_flush(hook));
  smd_trial *t = open_trial(dir);
  struct loss_rule payload = {1.0, 0, {0}, 0, 0};
  smd_rule *rule = loss_rule_create(t, &payload);
  smd_rule_invoke_options *o = NULL;
  CHECK_OK(smd_rule_invoke_options_create(&o));
  CHECK_OK(smd_rule_invoke_options_set_wait_timeout_ms(o, 0));
  CHECK_ERR(smd_rule_invoke(rule, 0, -1, false, o), SMD_E_STEP_NOT_YET_AVAILABLE, "Step 1");
  CHECK(payload.calls == 1);
  CHECK(smd_rule_end_reason(rule) == SMD_RULE_END_STOPPED); /* not a failure of the rule */
  CHECK(smd_rule_failed_step(rule) == -1);
  smd_rule_invoke_options_free(o);
  smd_rule_free(rule);
  smd_trial_free(t);
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);
}

int main(int argc, char **argv) {
  static const struct capi_test tests[] = {
      TEST_ENTRY(test_free_and_null_safety),
      TEST_ENTRY(test_custom_rule_skips_and_ends_normally),
      TEST_ENTRY(test_raise_eval_cond),
      TEST_ENTRY(test_callback_errors),
      TEST_ENTRY(test_required_tensors),
      TEST_ENTRY(test_cancellation_and_options),
      TEST_ENTRY(test_message_file_and_stop_signal),
      TEST_ENTRY(test_builtin_catalog),
      TEST_ENTRY(test_builtin_creation_errors),
      TEST_ENTRY(test_builtin_loss_not_decreasing),
      TEST_ENTRY(test_similar_across_runs),
      TEST_ENTRY(test_invoke_many),
      TEST_ENTRY(test_live_job),
      TEST_ENTRY(test_wait_timeout),
  };
  return capi_run(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
