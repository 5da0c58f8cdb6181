/* The NULL and enum sweep of the C API (ctest capi.null_sweep): every function of capi/api.json is
 * called with each pointer argument NULL in turn, the others valid, and with each enum argument out
 * of range. tests/abi/null_sweep.py writes the cases (null_sweep_cases.inc) from api.json and its
 * table of recipes; this file holds what they share: the checks, and the objects the valid
 * arguments are made of (a small trial written here first with the hook, and fresh hooks, options
 * and configurations for calls that change their handle).
 *
 *   capi_null_sweep SCRATCH_DIR
 *
 * What a case asserts (the conventions of smd/smd.h):
 *  - a required pointer that is NULL, or an enum value out of range: SMD_E_INVALID_ARGUMENT with a
 *    message naming the parameter, and no output written;
 *  - an optional pointer that is NULL (the function's comment allows it): success, every output
 *    written;
 *  - a function that cannot fail (a getter, a _free): no crash, and the value its comment gives
 *    for NULL. */
#include "capi_test.h"

/* ---- checks -------------------------------------------------------------------------------- */

#define SW_BYTE 0xA5 /* outputs start filled with this byte; an output still full of it was not written */

static long sw_cases = 0;

static void sw_fail(const char *label, const char *what) {
  fprintf(stderr, "%s: %s\n", label, what);
  capi_current_failed = 1;
}

/* Whether `word` occurs in msg with no identifier character on either side. */
static int sw_names(const char *msg, const char *word) {
  size_t n = strlen(word);
  for (const char *p = strstr(msg, word); p != NULL; p = strstr(p + 1, word)) {
    int before = p > msg && (p[-1] == '_' || (p[-1] >= '0' && p[-1] <= '9') ||
                             (p[-1] >= 'a' && p[-1] <= 'z') || (p[-1] >= 'A' && p[-1] <= 'Z'));
    char c = p[n];
    int after = c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (!before && !after) return 1;
  }
  return 0;
}

/* Expects success. Returns whether the call succeeded (its outputs are then to be freed). */
static int sw_ok(const char *label, smd_error *e) {
  ++sw_cases;
  if (e == NULL) return 1;
  char what[4096];
  snprintf(what, sizeof what, "expected success, got %s: %s", smd_code_name(smd_error_code(e)),
           smd_error_message(e));
  sw_fail(label, what);
  smd_error_free(e);
  return 0;
}

/* Expects SMD_E_INVALID_ARGUMENT whose message names `word`. Returns whether the call failed (its
 * outputs are then to be unchanged); 0 means it succeeded, wrongly, and its outputs are to be
 * freed. */
static int sw_invalid(const char *label, const char *word, smd_error *e) {
  char what[4096];
  ++sw_cases;
  if (e == NULL) {
    snprintf(what, sizeof what, "succeeded; expected SMD_E_INVALID_ARGUMENT naming '%s'", word);
    sw_fail(label, what);
    return 0;
  }
  if (smd_error_code(e) != SMD_E_INVALID_ARGUMENT) {
    snprintf(what, sizeof what, "gave %s (%s); expected SMD_E_INVALID_ARGUMENT naming '%s'",
             smd_code_name(smd_error_code(e)), smd_error_message(e), word);
    sw_fail(label, what);
  } else if (!sw_names(smd_error_message(e), word)) {
    snprintf(what, sizeof what, "message \"%s\" does not name '%s'", smd_error_message(e), word);
    sw_fail(label, what);
  }
  smd_error_free(e);
  return 1;
}

/* After a failure: the output must hold what it held before the call. */
static void sw_unchanged(const char *label, const char *out, const void *p, const void *was, size_t n) {
  if (memcmp(p, was, n) != 0) {
    char what[256];
    snprintf(what, sizeof what, "output %s written although the call failed", out);
    sw_fail(label, what);
  }
}

/* After a success: the output must have been written. */
static int sw_written(const char *label, const char *out, const void *p, const void *was, size_t n) {
  if (memcmp(p, was, n) == 0) {
    char what[256];
    snprintf(what, sizeof what, "output %s not written although the call succeeded", out);
    sw_fail(label, what);
    return 0;
  }
  return 1;
}

static void sw_check(const char *label, int ok, const char *what) {
  ++sw_cases;
  if (!ok) sw_fail(label, what);
}

/* ---- shared objects (made by fx_setup, read-only for the cases) ---------------------------- */

static struct {
  char trial_dir[4096];
  smd_trial *trial;
  smd_tensor *tensor;        /* "sweep/w": float32 [2, 2], value, reductions and shape saved */
  smd_value *value;          /* its value at TRAIN step 0 */
  smd_value *string_value;   /* "sweep/s" at TRAIN step 0: two strings */
  smd_collection_info *info; /* the trial's collection "sweep" */
  smd_trial *trials[1];      /* { trial }, for the other-trials arrays */
  int managed_live;          /* DLPack tensors made by fx_managed and not yet deleted */
  long dirs;
} fx;

static const float fx_data[2] = {1.5f, -2.0f};
static const int64_t fx_shape[1] = {2};
static const int64_t fx_empty_shape[1] = {0};
static const int64_t fx_steps[1] = {0};
static const char *const fx_collections[1] = {"sweep"};
static const char *const fx_strings[2] = {"a", "bc"};
/* arrays holding a NULL element (n_x 2 for the first two, 1 for the others) */
static const char *const fx_collections_with_null[2] = {"sweep", NULL};
static const char *const fx_strings_with_null[2] = {"a", NULL};
static const char *const fx_null_string[1] = {NULL};
static smd_trial *const fx_null_trial[1] = {NULL};
static smd_rule *const fx_null_rule[1] = {NULL};
static const size_t fx_lens[2] = {1, 2};
static const char *const fx_keys[1] = {"threshold"};
static const char *const fx_values[1] = {"0.0000001"};
static const smd_reduction_value fx_reductions[2] = {{"min", false, -2.0}, {"max", false, 1.5}};
static const smd_histogram fx_histogram = {-2.0, 1.5, -0.5, 6.25, NULL, 0};
static const double fx_double = 2.5;

/* A folder path not used before (not created). */
static const char *fx_dir(const char *what) {
  char name[256];
  snprintf(name, sizeof name, "%s-%ld", what, fx.dirs++);
  return scratch_path(name);
}

static smd_hook *fx_hook_with(const char *reductions) {
  smd_hook_options *opts = NULL;
  smd_save_config *sc = NULL;
  smd_reduction_config *rc = NULL;
  smd_collection *c = NULL;
  smd_hook *hook = NULL;
  CHECK_OK(smd_hook_options_create(&opts));
  CHECK_OK(smd_save_config_create(&sc));
  CHECK_OK(smd_save_config_set(sc, SMD_MODE_ALL, 1, 0, -1, NULL, 0));
  CHECK_OK(smd_hook_options_set_save_config(opts, sc));
  CHECK_OK(smd_hook_options_set_worker(opts, "worker_0"));
  CHECK_OK(smd_hook_options_set_write_end_marker(opts, false));
  CHECK_OK(smd_hook_options_add_include_collection(opts, "sweep"));
  if (reductions != NULL) {
    CHECK_OK(smd_reduction_config_parse(reductions, &rc));
    CHECK_OK(smd_hook_options_set_reduction_config(opts, rc));
  }
  CHECK_OK(smd_hook_create(fx_dir("hook"), opts, &hook));
  if (hook != NULL) {
    CHECK_OK(smd_hook_get_collection(hook, "sweep", &c));
    CHECK_OK(smd_hook_begin_step(hook));
  }
  smd_collection_free(c);
  smd_reduction_config_free(rc);
  smd_save_config_free(sc);
  smd_hook_options_free(opts);
  return hook;
}

/* A hook in a fresh folder, step 0 open, every step due, the collection "sweep" included. */
static smd_hook *fx_hook(void) { return fx_hook_with(NULL); }

/* The same saving only the reductions min and max of "sweep": a tensor's value is not due. */
static smd_hook *fx_hook_reductions(void) { return fx_hook_with("min,max"); }

static smd_collection *fx_collection(smd_hook *hook) {
  smd_collection *c = NULL;
  CHECK_OK(smd_hook_get_collection(hook, "sweep", &c));
  return c;
}

static smd_save_config *fx_save_config(void) {
  smd_save_config *sc = NULL;
  CHECK_OK(smd_save_config_create(&sc));
  CHECK_OK(smd_save_config_set_interval(sc, SMD_MODE_TRAIN, 2));
  return sc;
}

static smd_reduction_config *fx_reduction_config(void) {
  smd_reduction_config *rc = NULL;
  CHECK_OK(smd_reduction_config_parse("min", &rc));
  return rc;
}

static smd_hook_options *fx_hook_options(void) {
  smd_hook_options *o = NULL;
  CHECK_OK(smd_hook_options_create(&o));
  return o;
}

static smd_storage_options *fx_storage_options(void) {
  smd_storage_options *o = NULL;
  CHECK_OK(smd_storage_options_create(&o));
  return o;
}

static smd_trial_options *fx_trial_options(void) {
  smd_trial_options *o = NULL;
  CHECK_OK(smd_trial_options_create(&o));
  return o;
}

static smd_tensor_filter *fx_tensor_filter(void) {
  smd_tensor_filter *f = NULL;
  CHECK_OK(smd_tensor_filter_create(&f));
  return f;
}

static smd_rule_invoke_options *fx_rule_invoke_options(void) {
  smd_rule_invoke_options *o = NULL;
  CHECK_OK(smd_rule_invoke_options_create(&o));
  return o;
}

static int fx_rule_invoke(smd_rule_context *ctx, int64_t step, bool *met, void *payload) {
  (void)ctx, (void)step, (void)payload;
  *met = false;
  return 0;
}

static int fx_rule_required(smd_rule_context *ctx, int64_t step, void *payload) {
  (void)ctx, (void)step, (void)payload;
  return 0;
}

static int fx_on_finding(const smd_rule *rule, const smd_rule_finding *finding, void *payload) {
  (void)rule, (void)finding, (void)payload;
  return 0;
}

static int fx_on_progress(const smd_rule *rule, int64_t step, smd_rule_outcome outcome, void *payload) {
  (void)rule, (void)step, (void)outcome, (void)payload;
  return 0;
}

/* A custom rule on the shared trial whose condition is never met. */
static smd_rule *fx_rule(void) {
  smd_rule *r = NULL;
  CHECK_OK(smd_rule_create("sweep", fx.trial, NULL, 0, fx_rule_invoke, NULL, NULL, &r));
  return r;
}

static smd_tensorboard_writer *fx_tensorboard_writer(void) {
  smd_tensorboard_writer *w = NULL;
  CHECK_OK(smd_tensorboard_writer_create(fx_dir("tensorboard"), NULL, &w));
  return w;
}

/* A fresh error (for smd_rule_context_fail, which takes it over). */
static smd_error *fx_error(void) {
  smd_mode m;
  smd_error *e = smd_mode_from_name("no such mode", &m);
  CHECK(e != NULL);
  return e;
}

static void fx_managed_deleter(DLManagedTensorVersioned *self) {
  --fx.managed_live;
  free(self->dl_tensor.data);
  free(self->dl_tensor.shape);
  free(self);
}

/* A managed DLPack tensor float32 [2] that counts its deletions in fx.managed_live. */
static DLManagedTensorVersioned *fx_managed(void) {
  DLManagedTensorVersioned *m = calloc(1, sizeof *m);
  float *data = malloc(sizeof fx_data);
  int64_t *shape = malloc(sizeof(int64_t));
  memcpy(data, fx_data, sizeof fx_data);
  shape[0] = 2;
  m->version.major = DLPACK_MAJOR_VERSION;
  m->version.minor = DLPACK_MINOR_VERSION;
  m->deleter = fx_managed_deleter;
  m->dl_tensor.data = data;
  m->dl_tensor.device.device_type = kDLCPU;
  m->dl_tensor.ndim = 1;
  m->dl_tensor.dtype.code = kDLFloat;
  m->dl_tensor.dtype.bits = 32;
  m->dl_tensor.dtype.lanes = 1;
  m->dl_tensor.shape = shape;
  ++fx.managed_live;
  return m;
}

/* Every managed tensor handed to smd was deleted exactly once (checked once the hook is freed). */
static void fx_managed_settled(const char *label) {
  sw_check(label, fx.managed_live == 0, "the managed DLPack tensor was not deleted exactly once");
  fx.managed_live = 0;
}

static DLTensor fx_dltensor(void) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = (void *)fx_data;
  t.device.device_type = kDLCPU;
  t.ndim = 1;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = (int64_t *)fx_shape;
  return t;
}

/* Hook configuration JSON for a fresh folder (text in a buffer of a small ring). */
static const char *fx_json_text(void) {
  static char buf[4][8192];
  static int k = 0;
  char *p = buf[k++ % 4];
  snprintf(p, sizeof buf[0],
           "{\"LocalPath\": \"%s\", \"HookParameters\": {\"save_interval\": \"1\"}}", fx_dir("json"));
  return p;
}

/* The same in a file, which is also made $SMDEBUG_CONFIG_FILE_PATH (what a NULL json_path reads). */
static const char *fx_json_file(void) {
  static char path[4096];
  snprintf(path, sizeof path, "%s.json", fx_dir("config"));
  FILE *f = fopen(path, "w");
  if (f == NULL || fputs(fx_json_text(), f) < 0) CHECK(!"cannot write the hook configuration");
  if (f != NULL) fclose(f);
  setenv("SMDEBUG_CONFIG_FILE_PATH", path, 1);
  return path;
}

/* ---- the rule-context cases run inside a rule's callbacks --------------------------------- */

enum { SW_IN_INVOKE, SW_IN_REQUIRED };
typedef void (*sw_context_cases)(smd_rule_context *ctx);

struct sw_context_run {
  int where;
  sw_context_cases cases;
  int ran;
};

static int sw_context_invoke(smd_rule_context *ctx, int64_t step, bool *met, void *payload) {
  struct sw_context_run *run = payload;
  (void)step;
  if (run->where == SW_IN_INVOKE && !run->ran) {
    run->ran = 1;
    run->cases(ctx);
  }
  *met = false;
  return 0;
}

static int sw_context_required(smd_rule_context *ctx, int64_t step, void *payload) {
  struct sw_context_run *run = payload;
  (void)step;
  if (run->where == SW_IN_REQUIRED && !run->ran) {
    run->ran = 1;
    run->cases(ctx);
  }
  return 0;
}

/* Runs `cases` once with a live context: from the invoke or the required-tensors callback of a rule
 * invoked at step 0 of the shared trial. */
static void sw_in_context(int where, sw_context_cases cases) {
  struct sw_context_run run = {where, cases, 0};
  smd_rule *rule = NULL;
  CHECK_OK(smd_rule_create("sweep-context", fx.trial, NULL, 0, sw_context_invoke, sw_context_required,
                           &run, &rule));
  CHECK_OK(smd_rule_invoke(rule, 0, 1, false, NULL));
  CHECK(run.ran);
  smd_rule_free(rule);
}

/* smd_rule_context_fail_with with SMD_OK or a code out of range returns 1 like any other (the
 * generated cases check that); what the invocation then fails with is checked here: SMD_E_INTERNAL,
 * a code the caller can name, never the number given. */
static int sw_fail_with_code(smd_rule_context *ctx, int64_t step, bool *met, void *payload) {
  (void)step;
  *met = false;
  return smd_rule_context_fail_with(ctx, *(const smd_code *)payload, "the sweep's failure");
}

static void sw_fail_with_unknown_codes(void) {
  const smd_code codes[3] = {(smd_code)99, (smd_code)-1, SMD_OK};
  for (int i = 0; i < 3; ++i) {
    int failed_before = capi_current_failed;
    smd_rule *rule = NULL;
    capi_current_failed = 0;
    CHECK_OK(smd_rule_create("sweep-fail", fx.trial, NULL, 0, sw_fail_with_code, NULL,
                             (void *)&codes[i], &rule));
    CHECK_ERR(smd_rule_invoke(rule, 0, 1, false, NULL), SMD_E_INTERNAL, "the sweep's failure");
    if (capi_current_failed) fprintf(stderr, "  (smd_rule_context_fail_with code %d)\n", (int)codes[i]);
    capi_current_failed |= failed_before;
    ++sw_cases;
    smd_rule_free(rule);
  }
}

/* ---- setup: the trial the cases read ------------------------------------------------------- */

static void fx_setup(void) {
  smd_hook_options *opts = NULL;
  smd_save_config *sc = NULL;
  smd_reduction_config *rc = NULL;
  smd_hook *hook = NULL;
  float w[4] = {1, -2, 3, -4};
  const int64_t shape[2] = {2, 2};
  snprintf(fx.trial_dir, sizeof fx.trial_dir, "%s/trial", capi_scratch);
  CHECK_OK(smd_hook_options_create(&opts));
  CHECK_OK(smd_save_config_create(&sc));
  CHECK_OK(smd_save_config_set(sc, SMD_MODE_ALL, 1, 0, -1, NULL, 0));
  CHECK_OK(smd_hook_options_set_save_config(opts, sc));
  CHECK_OK(smd_reduction_config_parse("min,max", &rc));
  CHECK_OK(smd_reduction_config_set_save_raw_tensor(rc, true));
  CHECK_OK(smd_reduction_config_set_save_shape(rc, true));
  CHECK_OK(smd_hook_options_set_reduction_config(opts, rc));
  CHECK_OK(smd_hook_options_add_include_collection(opts, "sweep"));
  CHECK_OK(smd_hook_options_set_worker(opts, "worker_0"));
  CHECK_OK(smd_hook_options_set_write_end_marker(opts, true));
  CHECK_OK(smd_hook_create(fx.trial_dir, opts, &hook));
  CHECK_OK(smd_hook_set_mode(hook, SMD_MODE_TRAIN));
  for (int step = 0; step < 3; ++step) {
    CHECK_OK(smd_hook_begin_step(hook));
    w[0] = (float)step;
    CHECK_OK(smd_hook_save_tensor(hook, "sweep/w", SMD_DTYPE_FLOAT32, shape, 2, w, sizeof w,
                                  fx_collections, 1));
    CHECK_OK(smd_hook_save_strings(hook, "sweep/s", fx_strings, NULL, 2, fx_collections, 1));
    CHECK_OK(smd_hook_save_scalar(hook, "sweep_scalar", step));
  }
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);
  smd_reduction_config_free(rc);
  smd_save_config_free(sc);
  smd_hook_options_free(opts);

  CHECK_OK(smd_trial_open(fx.trial_dir, NULL, &fx.trial));
  if (fx.trial == NULL) {
    fprintf(stderr, "cannot open the trial: the sweep cannot run\n");
    exit(1);
  }
  fx.trials[0] = fx.trial;
  smd_tensor *s = NULL;
  CHECK_OK(smd_trial_tensor(fx.trial, "sweep/w", &fx.tensor));
  CHECK_OK(smd_trial_tensor(fx.trial, "sweep/s", &s));
  CHECK_OK(smd_tensor_value(fx.tensor, 0, SMD_MODE_TRAIN, NULL, &fx.value));
  CHECK_OK(smd_tensor_value(s, 0, SMD_MODE_TRAIN, NULL, &fx.string_value));
  CHECK_OK(smd_trial_collection(fx.trial, "sweep", &fx.info));
  smd_tensor_free(s);
  if (fx.tensor == NULL || fx.value == NULL || fx.string_value == NULL || fx.info == NULL) {
    fprintf(stderr, "the trial lacks what the sweep reads: it cannot run\n");
    exit(1);
  }
}

static void fx_teardown(void) {
  smd_collection_info_free(fx.info);
  smd_value_free(fx.string_value);
  smd_value_free(fx.value);
  smd_tensor_free(fx.tensor);
  smd_trial_free(fx.trial);
  printf("null sweep: %ld checks\n", sw_cases);
}

/* ---- the cases ----------------------------------------------------------------------------- */

#include "null_sweep_cases.inc"

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0); /* after a crash, the last "ok" line says where it was */
  return capi_run(argc, argv, sweep_tests, sizeof sweep_tests / sizeof sweep_tests[0]);
}
