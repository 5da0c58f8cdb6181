/* C API tests of smd/trial.h, on fixture trials written by the real smdebug (tests/data). */
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capi_check.h"

static const char *scratch;

/* ---- file helpers for the live test ---- */
static void mkdirs(const char *path) {
  char buf[2048];
  size_t n = strlen(path);
  if (n >= sizeof buf) return;
  memcpy(buf, path, n + 1);
  for (size_t i = 1; i <= n; ++i) {
    if (buf[i] == '/' || buf[i] == '\0') {
      char c = buf[i];
      buf[i] = '\0';
      mkdir(buf, 0755);
      buf[i] = c;
    }
  }
}

static int copy_file(const char *from, const char *to) {
  char tmp[2048], dir[2048];
  FILE *in = fopen(from, "rb"), *out;
  char buf[65536];
  size_t n;
  if (in == NULL) return 0;
  snprintf(dir, sizeof dir, "%s", to);
  *strrchr(dir, '/') = '\0';
  mkdirs(dir);
  snprintf(tmp, sizeof tmp, "%s.tmp", to);
  out = fopen(tmp, "wb");
  if (out == NULL) {
    fclose(in);
    return 0;
  }
  while ((n = fread(buf, 1, sizeof buf, in)) > 0) fwrite(buf, 1, n, out);
  fclose(in);
  fclose(out);
  return rename(tmp, to) == 0;
}

/* Copies step `step`'s event file then its index file from fixture `src` into `dst`. */
static void copy_step(const char *src, const char *dst, int step) {
  char a[2048], b[2048];
  snprintf(a, sizeof a, "%s/events/%012d/%012d_worker_0.tfevents", src, step, step);
  snprintf(b, sizeof b, "%s/events/%012d/%012d_worker_0.tfevents", dst, step, step);
  CHECK(copy_file(a, b));
  snprintf(a, sizeof a, "%s/index/000000000/%012d_worker_0.json", src, step);
  snprintf(b, sizeof b, "%s/index/000000000/%012d_worker_0.json", dst, step);
  CHECK(copy_file(a, b));
}

static int strarray_equals(const smd_strarray *a, const char *const *want, size_t n) {
  if (a->count != n) return 0;
  for (size_t i = 0; i < n; ++i) {
    if (strcmp(a->strings[i], want[i]) != 0) return 0;
  }
  return 1;
}

static void test_null_safety(void) {
  smd_trial_options *o = NULL;
  smd_trial *t = NULL;
  smd_strarray a = {NULL, 0};
  int64_t *steps = NULL;
  size_t n = 0;
  bool b = false;

  /* every _free accepts NULL */
  smd_trial_free(NULL);
  smd_trial_options_free(NULL);
  smd_tensor_filter_free(NULL);
  smd_collection_info_free(NULL);
  smd_tensor_free(NULL);
  smd_strarray_free(NULL);
  smd_free(NULL);

  CHECK_CODE(smd_trial_options_create(NULL), SMD_E_INVALID_ARGUMENT);
  CHECK_CODE(smd_trial_options_set_range_steps(NULL, 0, 1), SMD_E_INVALID_ARGUMENT);
  CHECK_CODE(smd_trial_options_set_auto_refresh(NULL, true), SMD_E_INVALID_ARGUMENT);
  CHECK_CODE(smd_trial_options_set_collection_wait_ms(NULL, 1), SMD_E_INVALID_ARGUMENT);
  CHECK_CODE(smd_trial_options_set_cache_bytes(NULL, 1), SMD_E_INVALID_ARGUMENT);
  CHECK_CODE(smd_trial_open(NULL, NULL, &t), SMD_E_INVALID_ARGUMENT);
  CHECK_CODE(smd_trial_open("x", NULL, NULL), SMD_E_INVALID_ARGUMENT);
  CHECK_CODE(smd_trial_open("   ", NULL, &t), SMD_E_INVALID_ARGUMENT);
  CHECK(t == NULL);
  CHECK_CODE(smd_trial_refresh(NULL), SMD_E_INVALID_ARGUMENT);
  CHECK_CODE(smd_trial_warnings(NULL, &a), SMD_E_INVALID_ARGUMENT);
  CHECK_CODE(smd_trial_has_ended(NULL, &b), SMD_E_INVALID_ARGUMENT);
  CHECK_CODE(smd_trial_steps(NULL, SMD_MODE_GLOBAL, false, &steps, &n), SMD_E_INVALID_ARGUMENT);
  CHECK_CODE(smd_trial_workers(NULL, &a), SMD_E_INVALID_ARGUMENT);
  CHECK_CODE(smd_trial_tensor_names(NULL, NULL, &a), SMD_E_INVALID_ARGUMENT);
  CHECK_CODE(smd_trial_collection_names(NULL, &a), SMD_E_INVALID_ARGUMENT);
  CHECK_CODE(smd_tensor_filter_create(NULL), SMD_E_INVALID_ARGUMENT);
  CHECK_CODE(smd_tensor_filter_add_include_regex(NULL, "x"), SMD_E_INVALID_ARGUMENT);
  CHECK(smd_trial_path(NULL) == NULL);
  CHECK(smd_trial_num_workers(NULL) == 0);
  CHECK(smd_trial_last_complete_step(NULL) == -1);
  CHECK(!smd_trial_loaded_all_steps(NULL));
  {
    char *name = (char *)"unchanged";
    CHECK_CODE(smd_tensor_original_name(NULL, &name), SMD_E_INVALID_ARGUMENT);
    CHECK(strcmp(name, "unchanged") == 0); /* untouched on failure */
  }
  {
    char *cursor = (char *)"unchanged";
    CHECK_CODE(smd_trial_index_cursor(NULL, &cursor), SMD_E_INVALID_ARGUMENT);
    CHECK(strcmp(cursor, "unchanged") == 0); /* untouched on failure */
  }
  {
    smd_trial_refresh_scope *scope = (smd_trial_refresh_scope *)1;
    CHECK_CODE(smd_trial_refresh_scope_create(NULL, false, &scope), SMD_E_INVALID_ARGUMENT);
    CHECK(scope == (smd_trial_refresh_scope *)1); /* untouched on failure */
  }
  smd_trial_refresh_scope_free(NULL);
  CHECK(!smd_trial_auto_refresh(NULL));
  CHECK(smd_collection_info_name(NULL) == NULL);
  CHECK(smd_collection_info_reductions(NULL) == NULL);
  CHECK(!smd_collection_info_save_histogram(NULL));
  {
    smd_save_config *sc = (smd_save_config *)1;
    bool set = true;
    int64_t iv = 0, st = 0, en = 0, *steps = NULL;
    size_t n = 0;
    CHECK_CODE(smd_collection_info_save_config(NULL, &sc), SMD_E_INVALID_ARGUMENT);
    CHECK_CODE(smd_save_config_settings(NULL, SMD_MODE_TRAIN, &set, &iv, &st, &en, &steps, &n),
               SMD_E_INVALID_ARGUMENT);
  }

  CHECK_OK(smd_trial_options_create(&o));
  CHECK_CODE(smd_trial_options_set_range_steps(o, 5, 5), SMD_E_INVALID_ARGUMENT);
  CHECK_CODE(smd_trial_options_set_range_steps(o, -2, 5), SMD_E_INVALID_ARGUMENT);
  CHECK_CODE(smd_trial_options_set_collection_wait_ms(o, -1), SMD_E_INVALID_ARGUMENT);
  CHECK_OK(smd_trial_options_set_range_steps(o, -1, -1));
  smd_trial_options_free(o);
}

static void test_open_errors(void) {
  smd_trial *t = NULL;
  char path[2048];
  snprintf(path, sizeof path, "%s/does/not/exist", scratch);
  CHECK_CODE(smd_trial_open(path, NULL, &t), SMD_E_NOT_FOUND);
  snprintf(path, sizeof path, "%s/empty", scratch);
  mkdirs(path);
  CHECK_CODE_MSG(smd_trial_open(path, NULL, &t), SMD_E_MISSING_COLLECTION_FILES, "collections");
  CHECK(t == NULL);
}

static void test_finished_trial(void) {
  smd_trial *t = NULL;
  smd_trial_options *o = NULL;
  smd_strarray a = {NULL, 0};
  int64_t *steps = NULL, g = 0;
  size_t n = 0;
  smd_mode *modes = NULL, m;
  bool b = false;
  smd_step_state state;
  smd_tensor_filter *f = NULL;
  smd_collection_info *c = NULL;
  smd_tensor *tensor = NULL;
  const int64_t want3[] = {3};
  const char *both[] = {"fc.weight", "loss"};

  CHECK_OK(smd_trial_options_create(&o));
  CHECK_OK(smd_trial_options_set_cache_bytes(o, 1 << 20));
  CHECK_OK(smd_trial_open(capi_fixture("modes_reentry"), o, &t));
  smd_trial_options_free(o); /* options are copied */
  if (t == NULL) return;
  CHECK(strstr(smd_trial_path(t), "modes_reentry") != NULL);
  CHECK(smd_trial_num_workers(t) == 1);
  CHECK_OK(smd_trial_has_ended(t, &b));
  CHECK(b);
  CHECK(smd_trial_loaded_all_steps(t)); /* the job had ended when it was opened */

  CHECK_OK(smd_trial_steps(t, SMD_MODE_GLOBAL, false, &steps, &n));
  CHECK_STEPS(steps, n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9);
  smd_free(steps);
  CHECK_OK(smd_trial_steps(t, SMD_MODE_TRAIN, true, &steps, &n));
  CHECK_STEPS(steps, n, 0, 1, 2, 3, 4);
  smd_free(steps);
  CHECK_CODE(smd_trial_steps(t, (smd_mode)9, false, &steps, &n), SMD_E_INVALID_ARGUMENT);

  CHECK_OK(smd_trial_modes(t, &modes, &n));
  CHECK(n == 3 && modes != NULL && modes[0] == SMD_MODE_TRAIN && modes[1] == SMD_MODE_EVAL &&
        modes[2] == SMD_MODE_PREDICT);
  smd_free(modes);
  CHECK_CODE(smd_trial_modes(t, NULL, &n), SMD_E_INVALID_ARGUMENT);

  CHECK_OK(smd_trial_mode(t, 3, &m));
  CHECK(m == SMD_MODE_EVAL);
  CHECK_OK(smd_trial_mode_step(t, 6, &g));
  CHECK(g == 4);
  CHECK_OK(smd_trial_mode(t, 9, &m));
  CHECK(m == SMD_MODE_GLOBAL);
  CHECK_OK(smd_trial_global_step(t, 4, SMD_MODE_TRAIN, &g));
  CHECK(g == 6);
  CHECK_OK(smd_trial_global_step(t, 42, SMD_MODE_GLOBAL, &g));
  CHECK(g == 42);
  CHECK_CODE(smd_trial_mode(t, 99, &m), SMD_E_NOT_FOUND);
  CHECK_CODE(smd_trial_mode_step(t, -5, &g), SMD_E_NOT_FOUND);
  CHECK_CODE(smd_trial_global_step(t, 2, SMD_MODE_EVAL, &g), SMD_E_NOT_FOUND);

  CHECK_OK(smd_trial_workers(t, &a));
  CHECK(a.count == 1 && strcmp(a.strings[0], "worker_0") == 0);
  smd_strarray_free(&a);
  CHECK(a.strings == NULL && a.count == 0);

  CHECK_OK(smd_trial_has_passed_step(t, 4, SMD_MODE_GLOBAL, &state));
  CHECK(state == SMD_STEP_AVAILABLE);
  CHECK_OK(smd_trial_has_passed_step(t, 10, SMD_MODE_GLOBAL, &state));
  CHECK(state == SMD_STEP_UNAVAILABLE);
  CHECK_OK(smd_trial_wait_for_steps(t, want3, 1, SMD_MODE_GLOBAL, 0));
  CHECK_OK(smd_trial_wait_for_steps(t, NULL, 0, SMD_MODE_GLOBAL, 0));
  {
    const int64_t past[] = {20};
    CHECK_CODE_MSG(smd_trial_wait_for_steps(t, past, 1, SMD_MODE_GLOBAL, -1), SMD_E_NO_MORE_DATA,
                   "Max step available is 9");
    CHECK_CODE(smd_trial_wait_for_steps(t, past, 1, (smd_mode)0, -1), SMD_E_INVALID_ARGUMENT);
  }

  /* tensor names and filters */
  CHECK_OK(smd_trial_tensor_names(t, NULL, &a));
  CHECK(strarray_equals(&a, both, 2));
  smd_strarray_free(&a);
  CHECK_OK(smd_tensor_filter_create(&f));
  CHECK_OK(smd_tensor_filter_set_mode(f, SMD_MODE_PREDICT));
  CHECK_OK(smd_tensor_filter_set_step(f, 1));
  CHECK_OK(smd_trial_tensor_names(t, f, &a));
  CHECK(strarray_equals(&a, both, 2));
  smd_strarray_free(&a);
  CHECK_OK(smd_tensor_filter_set_step(f, 7)); /* PREDICT has no step 7 */
  CHECK_OK(smd_trial_tensor_names(t, f, &a));
  CHECK(a.count == 0);
  smd_strarray_free(&a);
  CHECK_CODE(smd_tensor_filter_set_mode(f, (smd_mode)7), SMD_E_INVALID_ARGUMENT);
  smd_tensor_filter_free(f);

  CHECK_OK(smd_tensor_filter_create(&f));
  CHECK_OK(smd_tensor_filter_add_include_regex(f, "^lo"));
  CHECK_OK(smd_trial_tensor_names(t, f, &a));
  CHECK(a.count == 1 && strcmp(a.strings[0], "loss") == 0);
  smd_strarray_free(&a);
  CHECK_OK(smd_tensor_filter_set_collection(f, "weights"));
  CHECK_CODE_MSG(smd_trial_tensor_names(t, f, &a), SMD_E_INVALID_ARGUMENT, "Only one of");
  smd_tensor_filter_free(f);
  CHECK_OK(smd_tensor_filter_create(&f));
  CHECK_OK(smd_tensor_filter_add_include_regex(f, "(bad"));
  CHECK_CODE_MSG(smd_trial_tensor_names(t, f, &a), SMD_E_INVALID_ARGUMENT, "(bad");
  smd_tensor_filter_free(f);
  CHECK_OK(smd_tensor_filter_create(&f));
  CHECK_OK(smd_tensor_filter_set_collection(f, "weights"));
  CHECK_OK(smd_trial_tensor_names(t, f, &a));
  CHECK(a.count == 1 && strcmp(a.strings[0], "fc.weight") == 0);
  smd_strarray_free(&a);
  smd_tensor_filter_free(f);

  CHECK_OK(smd_trial_has_tensor(t, "loss", &b));
  CHECK(b);
  CHECK_OK(smd_trial_has_tensor(t, "nope", &b));
  CHECK(!b);
  CHECK_CODE_MSG(smd_trial_tensor(t, "nope", &tensor), SMD_E_TENSOR_UNAVAILABLE, "Tensor nope was not saved.");
  CHECK(tensor == NULL);

  /* collections */
  CHECK_OK(smd_trial_collection_names(t, &a));
  CHECK(a.count >= 6);
  smd_strarray_free(&a);
  CHECK_CODE(smd_trial_collection(t, "nope", &c), SMD_E_NOT_FOUND);
  CHECK_OK(smd_trial_collection(t, "weights", &c));
  if (c != NULL) {
    CHECK(strcmp(smd_collection_info_name(c), "weights") == 0);
    CHECK_OK(smd_collection_info_include_regex(c, &a));
    CHECK(a.count == 1 && strcmp(a.strings[0], "^(?!gradient).*weight") == 0);
    smd_strarray_free(&a);
    CHECK_OK(smd_collection_info_tensor_names(c, &a));
    CHECK(a.count == 1 && strcmp(a.strings[0], "fc.weight") == 0);
    smd_strarray_free(&a);
    CHECK(smd_collection_info_reductions(c) != NULL);
    CHECK(smd_collection_info_save_raw_tensor(c));
    CHECK(!smd_collection_info_save_shape(c));
  }

  CHECK_OK(smd_trial_warnings(t, &a));
  CHECK(a.count == 0);
  smd_strarray_free(&a);
  CHECK(smd_trial_auto_refresh(t));
  CHECK_CODE(smd_trial_refresh_scope_create(t, false, NULL), SMD_E_INVALID_ARGUMENT);
  CHECK_OK(smd_trial_refresh(t));

  /* borrowed-pointer lifetimes: a tensor (and its name) and a collection outlive the trial */
  CHECK_OK(smd_trial_tensor(t, "loss", &tensor));
  smd_trial_free(t);
  if (tensor != NULL) {
    char *original = (char *)"unchanged";
    CHECK(strcmp(smd_tensor_name(tensor), "loss") == 0);
    CHECK_OK(smd_tensor_original_name(tensor, &original)); /* saved without its shape: none */
    CHECK(original == NULL);
    CHECK_OK(smd_tensor_steps(tensor, SMD_MODE_EVAL, false, &steps, &n));
    CHECK_STEPS(steps, n, 0, 1);
    smd_free(steps);
    smd_tensor_free(tensor);
  }
  if (c != NULL) {
    CHECK(strcmp(smd_collection_info_name(c), "weights") == 0);
    smd_collection_info_free(c);
  }
}

static void test_running_multiworker(void) {
  smd_trial *t = NULL;
  int64_t *steps = NULL;
  size_t n = 0;
  smd_step_state state;
  const int64_t want[] = {5};
  smd_strarray a = {NULL, 0};
  CHECK_OK(smd_trial_open(capi_fixture("workers3_running"), NULL, &t));
  if (t == NULL) return;
  CHECK(smd_trial_num_workers(t) == 3);
  CHECK(!smd_trial_loaded_all_steps(t)); /* running */
  /* steps 0-3 have all three workers: the reader's position is step 3 of the last worker */
  CHECK(smd_trial_last_complete_step(t) == 3);
  {
    char *cursor = NULL;
    CHECK_OK(smd_trial_index_cursor(t, &cursor));
    CHECK(cursor != NULL && strcmp(cursor, "index/000000000/000000000003_worker_2.json") == 0);
    smd_free(cursor);
  }
  CHECK_OK(smd_trial_workers(t, &a));
  CHECK(a.count == 3);
  smd_strarray_free(&a);
  CHECK_OK(smd_trial_steps(t, SMD_MODE_GLOBAL, false, &steps, &n));
  CHECK_STEPS(steps, n, 0, 1, 2, 3);
  smd_free(steps);
  CHECK_OK(smd_trial_steps(t, SMD_MODE_GLOBAL, true, &steps, &n));
  CHECK_STEPS(steps, n, 0, 1, 2, 3, 4, 5);
  smd_free(steps);
  CHECK_OK(smd_trial_has_passed_step(t, 3, SMD_MODE_GLOBAL, &state));
  CHECK(state == SMD_STEP_AVAILABLE);
  CHECK_OK(smd_trial_has_passed_step(t, 4, SMD_MODE_GLOBAL, &state));
  CHECK(state == SMD_STEP_NOT_YET_AVAILABLE);
  CHECK_OK(smd_trial_has_passed_step(t, 40, SMD_MODE_GLOBAL, &state));
  CHECK(state == SMD_STEP_NOT_YET_AVAILABLE);
  CHECK_CODE_MSG(smd_trial_wait_for_steps(t, want, 1, SMD_MODE_GLOBAL, 30),
                 SMD_E_STEP_NOT_YET_AVAILABLE, "Step 5 of mode GLOBAL not yet available");
  smd_trial_free(t);
}

/* A live copy of fixture `src` in scratch/`name` (into dst): its collections file and step 0. */
static void start_live_copy(const char *src, const char *name, char *dst, size_t dst_size) {
  char a[4096], b[4096];
  snprintf(dst, dst_size, "%s/%s", scratch, name);
  mkdirs(dst);
  snprintf(a, sizeof a, "%s/collections/000000000/worker_0_collections.json", src);
  snprintf(b, sizeof b, "%s/collections/000000000/worker_0_collections.json", dst);
  CHECK(copy_file(a, b));
  copy_step(src, dst, 0);
}

static void test_live_copies(void) {
  char dst[2048], b[4096];
  const char *src = capi_fixture("modes_reentry");
  smd_trial *t = NULL;
  int64_t *steps = NULL;
  size_t n = 0;
  smd_step_state state;
  const int64_t want[] = {2};
  start_live_copy(src, "live", dst, sizeof dst);
  CHECK_OK(smd_trial_open(dst, NULL, &t));
  if (t == NULL) return;
  CHECK_OK(smd_trial_steps(t, SMD_MODE_GLOBAL, false, &steps, &n));
  CHECK_STEPS(steps, n, 0);
  smd_free(steps);
  CHECK(smd_trial_last_complete_step(t) == 0);
  {
    char *cursor = NULL;
    CHECK_OK(smd_trial_index_cursor(t, &cursor));
    CHECK(cursor != NULL && strcmp(cursor, "index/000000000/000000000000_worker_0.json") == 0);
    smd_free(cursor);
  }
  CHECK_OK(smd_trial_has_passed_step(t, 1, SMD_MODE_GLOBAL, &state));
  CHECK(state == SMD_STEP_NOT_YET_AVAILABLE);
  copy_step(src, dst, 1);
  copy_step(src, dst, 2);
  CHECK_OK(smd_trial_wait_for_steps(t, want, 1, SMD_MODE_GLOBAL, 5000));
  CHECK(smd_trial_last_complete_step(t) == 2);
  {
    char *cursor = NULL;
    CHECK_OK(smd_trial_index_cursor(t, &cursor));
    CHECK(cursor != NULL && strcmp(cursor, "index/000000000/000000000002_worker_0.json") == 0);
    smd_free(cursor);
  }
  CHECK_OK(smd_trial_steps(t, SMD_MODE_TRAIN, false, &steps, &n));
  CHECK_STEPS(steps, n, 0, 1, 2);
  smd_free(steps);
  /* a corrupt index file: skipped and reported, the rest still loads */
  snprintf(b, sizeof b, "%s/index/000000000/000000000003_worker_0.json", dst);
  {
    FILE *f = fopen(b, "wb");
    fputs("{\"meta\": {\"mode\": \"EVAL\"", f);
    fclose(f);
  }
  copy_step(src, dst, 4);
  CHECK_CODE_MSG(smd_trial_refresh(t), SMD_E_CORRUPT, "000000000003_worker_0.json");
  CHECK_OK(smd_trial_steps(t, SMD_MODE_GLOBAL, true, &steps, &n));
  CHECK_STEPS(steps, n, 0, 1, 2, 4);
  smd_free(steps);
  {
    smd_strarray w = {NULL, 0};
    CHECK_OK(smd_trial_warnings(t, &w));
    CHECK(w.count == 1 && strstr(w.strings[0], "000000000003_worker_0.json") != NULL);
    smd_strarray_free(&w);
  }
  snprintf(b, sizeof b, "%s/training_job_end.ts", dst);
  {
    FILE *f = fopen(b, "wb");
    fclose(f);
  }
  {
    const int64_t later[] = {6};
    CHECK_CODE(smd_trial_wait_for_steps(t, later, 1, SMD_MODE_GLOBAL, 5000), SMD_E_NO_MORE_DATA);
  }
  smd_trial_free(t);
}

/* What another thread sees of a trial while the main thread is inside a no-refresh scope. */
struct scope_probe {
  smd_trial *trial;
  bool auto_refresh;
  size_t n_steps;
};

static void *probe_thread(void *arg) {
  struct scope_probe *p = (struct scope_probe *)arg;
  int64_t *steps = NULL;
  p->auto_refresh = smd_trial_auto_refresh(p->trial);
  smd_error *e = smd_trial_steps(p->trial, SMD_MODE_GLOBAL, true, &steps, &p->n_steps);
  if (e != NULL) p->n_steps = (size_t)-1;
  smd_error_free(e);
  smd_free(steps);
  return NULL;
}

static size_t count_steps(const smd_trial *t) {
  int64_t *steps = NULL;
  size_t n = 0;
  CHECK_OK(smd_trial_steps(t, SMD_MODE_GLOBAL, true, &steps, &n));
  smd_free(steps);
  return n;
}

/* smdebug's no_refresh / refresh blocks: a scope on one thread, the trial itself unchanged. */
static void test_refresh_scopes(void) {
  char dst[2048];
  const char *src = capi_fixture("modes_reentry");
  smd_trial *t = NULL;
  start_live_copy(src, "scopes", dst, sizeof dst);
  CHECK_OK(smd_trial_open(dst, NULL, &t));
  if (t == NULL) return;
  smd_tensor *loss = NULL;
  CHECK_OK(smd_trial_tensor(t, "loss", &loss));
  CHECK(count_steps(t) == 1);

  smd_trial_refresh_scope *off = NULL;
  CHECK_OK(smd_trial_refresh_scope_create(t, false, &off));
  CHECK(!smd_trial_auto_refresh(t));
  copy_step(src, dst, 1);
  CHECK(count_steps(t) == 1); /* no refresh inside the scope, through the trial ... */
  {
    int64_t *steps = NULL;
    size_t n = 0;
    CHECK_OK(smd_tensor_steps(loss, SMD_MODE_GLOBAL, true, &steps, &n));
    CHECK(n == 1); /* ... or its tensors */
    smd_free(steps);
  }
  /* another thread is not in the scope: it refreshes (and loads step 1 for everyone) */
  struct scope_probe probe = {t, false, 0};
  pthread_t th;
  CHECK(pthread_create(&th, NULL, probe_thread, &probe) == 0);
  pthread_join(th, NULL);
  CHECK(probe.auto_refresh);
  CHECK(probe.n_steps == 2);
  CHECK(count_steps(t) == 2);
  copy_step(src, dst, 2);
  CHECK(count_steps(t) == 2);
  /* scopes nest: the innermost wins, and ending it brings the outer one back */
  smd_trial_refresh_scope *on = NULL;
  CHECK_OK(smd_trial_refresh_scope_create(t, true, &on));
  CHECK(smd_trial_auto_refresh(t));
  CHECK(count_steps(t) == 3);
  smd_trial_refresh_scope_free(on);
  CHECK(!smd_trial_auto_refresh(t));
  smd_trial_refresh_scope_free(off);
  CHECK(smd_trial_auto_refresh(t));
  smd_tensor_free(loss);

  /* a trial opened without automatic refresh refreshes inside a refresh scope; the scope keeps
   * the trial alive after its last handle is freed */
  smd_trial *manual = NULL;
  smd_trial_options *o = NULL;
  CHECK_OK(smd_trial_options_create(&o));
  CHECK_OK(smd_trial_options_set_auto_refresh(o, false));
  CHECK_OK(smd_trial_open(dst, o, &manual));
  smd_trial_options_free(o);
  if (manual != NULL) {
    CHECK(!smd_trial_auto_refresh(manual));
    copy_step(src, dst, 4);
    CHECK(count_steps(manual) == 3);
    CHECK_OK(smd_trial_refresh_scope_create(manual, true, &on));
    CHECK(count_steps(manual) == 4);
    smd_trial_free(manual);
    smd_trial_refresh_scope_free(on);
  }
  smd_trial_free(t);
}

/* Writes `text` as the collections file of a new trial folder `name` under the scratch folder
 * (with the end marker: nothing more will come); returns the folder. */
static const char *collections_trial(const char *name, const char *text) {
  static char dir[2048];
  char path[2100];
  snprintf(dir, sizeof dir, "%s/%s", scratch, name);
  snprintf(path, sizeof path, "%s/collections/000000000/worker_0_collections.json", dir);
  {
    char d[2100];
    snprintf(d, sizeof d, "%s/collections/000000000", dir);
    mkdirs(d);
  }
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  if (f == NULL) return dir;
  fputs(text, f);
  fclose(f);
  snprintf(path, sizeof path, "%s/training_job_end.ts", dir);
  f = fopen(path, "wb");
  if (f != NULL) fclose(f);
  return dir;
}

/* Checks one mode of a save configuration: unset (interval < 0 here), or these settings. */
static void check_mode(const smd_save_config *sc, smd_mode mode, int64_t interval, int64_t start,
                       int64_t end, const int64_t *want_steps, size_t n_want, int line) {
  bool set = false;
  int64_t iv = 0, st = 0, en = 0, *steps = NULL;
  size_t n = 7;
  smd_error *e = smd_save_config_settings(sc, mode, &set, &iv, &st, &en, &steps, &n);
  CHECK(e == NULL);
  smd_error_free(e);
  int same;
  if (interval < 0) {
    /* unset: the defaults */
    same = !set && iv == 500 && st == 0 && en == -1 && steps == NULL && n == 0;
  } else {
    same = set && iv == interval && st == start && en == end && n == n_want;
    for (size_t i = 0; same && i < n; ++i) same = steps[i] == want_steps[i];
  }
  if (!same) fprintf(stderr, "test_trial.c:%d: mode %d: set %d interval %lld start %lld end %lld n %zu\n",
                     line, (int)mode, (int)set, (long long)iv, (long long)st, (long long)en, n);
  CHECK(same);
  smd_free(steps);
}
#define CHECK_MODE(sc, mode, interval, start, end) \
  check_mode((sc), (mode), (interval), (start), (end), NULL, 0, __LINE__)
#define CHECK_MODE_STEPS(sc, mode, interval, start, end, ...)                                   \
  do {                                                                                          \
    const int64_t want_[] = {__VA_ARGS__};                                                      \
    check_mode((sc), (mode), (interval), (start), (end), want_, sizeof want_ / sizeof want_[0], \
               __LINE__);                                                                       \
  } while (0)

/* The save configuration of a named collection of the trial in `dir` (NULL: none, or no trial). */
static smd_save_config *collection_save_config(const char *dir, const char *name) {
  smd_trial *t = NULL;
  smd_collection_info *c = NULL;
  smd_save_config *sc = (smd_save_config *)1;
  CHECK_OK(smd_trial_open(dir, NULL, &t));
  if (t == NULL) return NULL;
  CHECK_OK(smd_trial_collection(t, name, &c));
  smd_trial_free(t); /* the collection outlives the trial */
  if (c == NULL) return NULL;
  CHECK_OK(smd_collection_info_save_config(c, &sc));
  smd_collection_info_free(c); /* and the configuration the collection */
  return sc;
}

/* smdebug's Collection.save_config: a hook's per-collection configurations come back. */
static void test_collection_save_config_round_trip(void) {
  char dir[2048];
  snprintf(dir, sizeof dir, "%s/save_config_round_trip", scratch);
  smd_hook_options *opts = NULL;
  smd_save_config *sc = NULL;
  CHECK_OK(smd_hook_options_create(&opts));
  CHECK_OK(smd_save_config_create(&sc));
  CHECK_OK(smd_save_config_set(sc, SMD_MODE_ALL, 3, 0, -1, NULL, 0));
  CHECK_OK(smd_save_config_set_interval(sc, SMD_MODE_EVAL, 7));
  CHECK_OK(smd_hook_options_set_save_config(opts, sc));
  smd_save_config_free(sc);
  smd_hook *hook = NULL;
  CHECK_OK(smd_hook_create(dir, opts, &hook));
  smd_hook_options_free(opts);
  if (hook == NULL) return;
  smd_collection *c = NULL;
  CHECK_OK(smd_hook_get_collection(hook, "mine", &c));
  CHECK_OK(smd_collection_add_include_regex(c, "^mine/"));
  CHECK_OK(smd_save_config_create(&sc));
  {
    const int64_t steps[] = {4, 11, 2};
    CHECK_OK(smd_save_config_set(sc, SMD_MODE_TRAIN, 2, 1, 9, steps, 3));
  }
  CHECK_OK(smd_save_config_set(sc, SMD_MODE_PREDICT, 5, 10, -1, NULL, 0));
  CHECK_OK(smd_collection_set_save_config(c, sc)); /* EVAL, GLOBAL: the hook's */
  smd_save_config_free(sc);
  smd_collection_free(c);
  CHECK_OK(smd_hook_include_collection(hook, "mine"));
  CHECK_OK(smd_hook_begin_step(hook));
  CHECK_OK(smd_hook_save_scalar(hook, "mine/x", 1.0));
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);

  sc = collection_save_config(dir, "mine");
  CHECK(sc != NULL);
  if (sc != NULL) {
    /* the collections file holds every mode, as smdebug's hook writes it */
    CHECK_MODE_STEPS(sc, SMD_MODE_TRAIN, 2, 1, 9, 4, 11, 2);
    CHECK_MODE(sc, SMD_MODE_EVAL, 7, 0, -1);
    CHECK_MODE(sc, SMD_MODE_PREDICT, 5, 10, -1);
    CHECK_MODE(sc, SMD_MODE_GLOBAL, 3, 0, -1);
    bool b = false;
    CHECK_OK(smd_save_config_should_save(sc, 4, SMD_MODE_TRAIN, &b));
    CHECK(b);
    CHECK_OK(smd_save_config_should_save(sc, 6, SMD_MODE_TRAIN, &b));
    CHECK(b);
    CHECK_OK(smd_save_config_should_save(sc, 10, SMD_MODE_TRAIN, &b));
    CHECK(!b);
    {
      bool set;
      int64_t iv, st, en, *steps = NULL;
      size_t n;
      CHECK_CODE(smd_save_config_settings(sc, SMD_MODE_ALL, &set, &iv, &st, &en, &steps, &n),
                 SMD_E_INVALID_ARGUMENT);
      CHECK_CODE(smd_save_config_settings(sc, (smd_mode)9, &set, &iv, &st, &en, &steps, &n),
                 SMD_E_INVALID_ARGUMENT);
      CHECK_CODE(smd_save_config_settings(sc, SMD_MODE_TRAIN, &set, &iv, &st, &en, NULL, &n),
                 SMD_E_INVALID_ARGUMENT);
    }
    smd_save_config_free(sc);
  }
  /* the hook's own collections have its configuration */
  sc = collection_save_config(dir, "losses");
  CHECK(sc != NULL);
  if (sc != NULL) {
    CHECK_MODE(sc, SMD_MODE_TRAIN, 3, 0, -1);
    CHECK_MODE(sc, SMD_MODE_EVAL, 7, 0, -1);
    smd_save_config_free(sc);
  }
  /* a trial smdebug wrote: every mode saved at every step */
  sc = collection_save_config(capi_fixture("modes_reentry"), "weights");
  CHECK(sc != NULL);
  if (sc != NULL) {
    CHECK_MODE(sc, SMD_MODE_TRAIN, 1, 0, -1);
    CHECK_MODE(sc, SMD_MODE_EVAL, 1, 0, -1);
    CHECK_MODE(sc, SMD_MODE_PREDICT, 1, 0, -1);
    CHECK_MODE(sc, SMD_MODE_GLOBAL, 1, 0, -1);
    smd_save_config_free(sc);
  }
}

/* Collections files written by hand: null and missing values as smdebug's loader reads them, and
 * malformed save configurations ignored with a warning naming the file. */
static void test_collection_save_config_by_hand(void) {
  const char *dir = collections_trial(
      "save_config_lenient",
      "{\"collections\": {"
      "\"none\": {\"name\": \"none\", \"include_regex\": [], \"save_config\": null},"
      "\"missing\": {\"name\": \"missing\", \"include_regex\": []},"
      "\"empty\": {\"name\": \"empty\", \"save_config\": {}},"
      "\"partial\": {\"name\": \"partial\", \"save_config\": {"
      "  \"TRAIN\": {\"save_interval\": 4},"
      "  \"EVAL\": null,"
      "  \"PREDICT\": {\"save_interval\": null, \"start_step\": \"3\", \"end_step\": 8,"
      "               \"save_steps\": [5, 1], \"other\": \"ignored\"},"
      "  \"GLOBAL\": {\"save_interval\": 2.0, \"end_step\": -1, \"save_steps\": null}}},"
      "\"repeated\": {\"name\": \"repeated\", \"save_config\": {"
      "  \"TRAIN\": {\"save_interval\": 4}, \"TRAIN\": {\"save_interval\": 6, \"save_interval\": 8}}}"
      "}, \"_meta\": {\"num_workers\": 1}}");
  smd_save_config *sc = collection_save_config(dir, "none");
  CHECK(sc == NULL);
  sc = collection_save_config(dir, "missing");
  CHECK(sc == NULL);
  sc = collection_save_config(dir, "empty");
  CHECK(sc != NULL);
  if (sc != NULL) {
    for (int m = SMD_MODE_TRAIN; m <= SMD_MODE_GLOBAL; ++m) CHECK_MODE(sc, (smd_mode)m, -1, 0, 0);
    smd_save_config_free(sc);
  }
  sc = collection_save_config(dir, "partial");
  CHECK(sc != NULL);
  if (sc != NULL) {
    CHECK_MODE(sc, SMD_MODE_TRAIN, 4, 0, -1);
    CHECK_MODE(sc, SMD_MODE_EVAL, -1, 0, 0);
    CHECK_MODE_STEPS(sc, SMD_MODE_PREDICT, 500, 3, 8, 5, 1);
    CHECK_MODE(sc, SMD_MODE_GLOBAL, 2, 0, 0); /* an end before step 0 */
    smd_save_config_free(sc);
  }
  sc = collection_save_config(dir, "repeated"); /* as Python's json: the last key wins */
  CHECK(sc != NULL);
  if (sc != NULL) {
    CHECK_MODE(sc, SMD_MODE_TRAIN, 8, 0, -1);
    CHECK_MODE(sc, SMD_MODE_GLOBAL, -1, 0, 0);
    smd_save_config_free(sc);
  }

  static const struct {
    const char *save_config, *message;
  } bad[] = {
      {"[]", "the save_config of 'c' is not an object or null"},
      {"\"TRAIN\"", "the save_config of 'c' is not an object or null"},
      {"{\"train\": null}", "unknown mode 'train'"},
      {"{\"TRAIN\": 5}", "the save_config of 'c' for TRAIN is not an object or null"},
      {"{\"TRAIN\": {\"save_interval\": \"often\"}}", "save_interval of the save_config of 'c' for TRAIN is not an integer"},
      {"{\"EVAL\": {\"save_interval\": 0}}", "save_interval of the save_config of 'c' for EVAL is 0"},
      {"{\"EVAL\": {\"save_interval\": 1.5}}", "is not an integer"},
      {"{\"EVAL\": {\"start_step\": true}}", "start_step of the save_config of 'c' for EVAL is not an integer"},
      {"{\"EVAL\": {\"end_step\": [1]}}", "end_step of the save_config of 'c' for EVAL is not an integer"},
      {"{\"GLOBAL\": {\"save_steps\": 3}}", "save_steps of the save_config of 'c' for GLOBAL is not a list"},
      {"{\"GLOBAL\": {\"save_steps\": [1, \"2\"]}}", "holds a non-integer"},
      {"{\"GLOBAL\": {\"save_steps\": [1e300]}}", "out of range"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    char name[64], text[512];
    snprintf(name, sizeof name, "save_config_bad_%zu", i);
    snprintf(text, sizeof text,
             "{\"collections\": {\"c\": {\"name\": \"c\", \"save_config\": %s}}, "
             "\"_meta\": {\"num_workers\": 1}}",
             bad[i].save_config);
    dir = collections_trial(name, text);
    /* The trial opens (it does not need the save_config): the collection has none, and a warning
     * names the file, the collection and what is wrong. */
    smd_trial *t = NULL;
    CHECK_OK(smd_trial_open(dir, NULL, &t));
    if (t == NULL) continue;
    smd_strarray w = {NULL, 0};
    CHECK_OK(smd_trial_warnings(t, &w));
    int ok = w.count == 1 && strstr(w.strings[0], "worker_0_collections.json") != NULL &&
             strstr(w.strings[0], bad[i].message) != NULL &&
             strstr(w.strings[0], "save_config is ignored") != NULL;
    if (!ok) fprintf(stderr, "test_trial.c: save_config %s: %zu warning(s): %s\n", bad[i].save_config,
                     w.count, w.count ? w.strings[0] : "");
    CHECK(ok);
    smd_strarray_free(&w);
    smd_collection_info *c = NULL;
    CHECK_OK(smd_trial_collection(t, "c", &c));
    smd_save_config *sc = (smd_save_config *)1;
    CHECK_OK(smd_collection_info_save_config(c, &sc));
    CHECK(sc == NULL);
    smd_collection_info_free(c);
    smd_trial_free(t);
  }
}

int main(int argc, char **argv) {
  scratch = argc > 1 ? argv[1] : "/tmp/smd_capi_test_trial";
  {
    char cmd[2100];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
    if (system(cmd) != 0) return 2;
    mkdirs(scratch);
  }
  test_null_safety();
  test_open_errors();
  test_finished_trial();
  test_running_multiworker();
  test_live_copies();
  test_refresh_scopes();
  test_collection_save_config_round_trip();
  test_collection_save_config_by_hand();
  return capi_finish("test_trial");
}
