/* Reductions computed by the caller (smd_hook_save_reductions, smd_hook_due_reductions): the
 * files are byte for byte those the hook writes when it computes the same values itself. */
#include "capi_test.h"

#include <math.h>

#define N_TENSORS 6
static const char *const kNames[N_TENSORS] = {"gradient/w", "gradient/h", "gradient/b",
                                              "gradient/i", "gradient/e", "gradient/t:0"};
static const smd_dtype kDtypes[N_TENSORS] = {SMD_DTYPE_FLOAT32, SMD_DTYPE_FLOAT16,
                                             SMD_DTYPE_BFLOAT16, SMD_DTYPE_INT32,
                                             SMD_DTYPE_FLOAT32, SMD_DTYPE_FLOAT64};
static const int64_t kShapes[N_TENSORS][2] = {{2, 3}, {4, 1}, {3, 1}, {5, 1}, {0, 3}, {2, 2}};
static const size_t kNdims[N_TENSORS] = {2, 1, 1, 1, 2, 2};

static const float kW[6] = {1.0f, -2.0f, 3.0f, -4.0f, 0.5f, -0.25f};
static const uint16_t kH[4] = {0x3c00, 0xc000, 0x3800, 0x4200};   /* 1, -2, 0.5, 3 */
static const uint16_t kB[3] = {0x3f80, 0xc040, 0x3f00};           /* 1, -3, 0.5 */
static const int32_t kI[5] = {1, -2, 3, -4, 5};
static const double kT[4] = {0.1, -0.7, 1e-3, 2.5};

static const void *data_of(int i, size_t *nbytes) {
  switch (i) {
    case 0: *nbytes = sizeof kW; return kW;
    case 1: *nbytes = sizeof kH; return kH;
    case 2: *nbytes = sizeof kB; return kB;
    case 3: *nbytes = sizeof kI; return kI;
    case 4: *nbytes = 0; return NULL;
    default: *nbytes = sizeof kT; return kT;
  }
}

/* The hook both runs use: every step; gradients every 2 steps as reductions and shapes only
 * (every reduction smd knows, plain and abs); the loss raw every step. */
static smd_hook *make_hook_tb(const char *dir, const char *tensorboard_dir) {
  smd_hook_options *opts = NULL;
  smd_save_config *every = NULL, *every2 = NULL;
  smd_reduction_config *rc = NULL;
  smd_collection *grads = NULL;
  smd_hook *hook = NULL;
  CHECK_OK(smd_hook_options_create(&opts));
  CHECK_OK(smd_save_config_create(&every));
  CHECK_OK(smd_save_config_set(every, SMD_MODE_ALL, 1, 0, -1, NULL, 0));
  CHECK_OK(smd_hook_options_set_save_config(opts, every));
  CHECK_OK(smd_hook_options_add_include_collection(opts, "gradients"));
  CHECK_OK(smd_hook_options_set_wall_time_base(opts, 1000.0));
  if (tensorboard_dir != NULL) CHECK_OK(smd_hook_options_set_tensorboard_dir(opts, tensorboard_dir));
  CHECK_OK(smd_hook_create(dir, opts, &hook));
  CHECK_OK(smd_reduction_config_parse("min,max,mean,std,variance,sum,prod,median,l1,l2,abs_min,"
                                      "abs_max,abs_mean,abs_std,abs_variance,abs_sum,abs_prod,"
                                      "abs_median,abs_l1,abs_l2", &rc));
  CHECK_OK(smd_reduction_config_set_save_shape(rc, true));
  CHECK_OK(smd_hook_get_collection(hook, "gradients", &grads));
  CHECK_OK(smd_collection_set_reduction_config(grads, rc));
  CHECK_OK(smd_save_config_create(&every2));
  CHECK_OK(smd_save_config_set(every2, SMD_MODE_ALL, 2, 0, -1, NULL, 0));
  CHECK_OK(smd_collection_set_save_config(grads, every2));
  smd_collection_free(grads);
  smd_reduction_config_free(rc);
  smd_save_config_free(every);
  smd_save_config_free(every2);
  smd_hook_options_free(opts);
  return hook;
}

static smd_hook *make_hook(const char *dir) { return make_hook_tb(dir, NULL); }

static void save_loss(smd_hook *hook, int step) {
  float loss = 1.0f / (float)(step + 1);
  int64_t one = 1;
  const char *colls[1] = {"losses"};
  CHECK_OK(smd_hook_save_tensor(hook, "loss", SMD_DTYPE_FLOAT32, &one, 1, &loss, sizeof loss, colls, 1));
}

static void test_files_equal_the_hooks_own(void) {
  const char *a = scratch_path("computed_by_hook");
  const char *b = scratch_path("given_by_caller");
  enum { STEPS = 4 };
  /* Run A: the hook computes the reductions from the elements. */
  smd_hook *hook = make_hook(a);
  for (int s = 0; s < STEPS; ++s) {
    CHECK_OK(smd_hook_begin_step(hook));
    for (int i = 0; i < N_TENSORS; ++i) {
      size_t nbytes = 0;
      const void *d = data_of(i, &nbytes);
      CHECK_OK(smd_hook_save_tensor(hook, kNames[i], kDtypes[i], kShapes[i], kNdims[i], d, nbytes, NULL, 0));
    }
    save_loss(hook, s);
  }
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);

  /* The values A wrote, per tensor and reduction name (read back at step 0). */
  smd_trial *trial = NULL;
  CHECK_OK(smd_trial_open(a, NULL, &trial));
  if (trial == NULL) return;

  /* Run B: the caller gives the same values as doubles. */
  hook = make_hook(b);
  int due_steps = 0;
  for (int s = 0; s < STEPS; ++s) {
    CHECK_OK(smd_hook_begin_step(hook));
    for (int i = 0; i < N_TENSORS; ++i) {
      smd_strarray due = {NULL, 0};
      bool value = true, hist = true;
      CHECK_OK(smd_hook_due_reductions(hook, kNames[i], &due, &value, &hist));
      CHECK(!value && !hist);
      CHECK(due.count == (s % 2 == 0 ? 20u : 0u));
      if (i == 0 && due.count > 0) ++due_steps;
      if (s == 0 && i == 0 && due.count == 20) {
        CHECK(strcmp(due.strings[0], "min") == 0);
        CHECK(strcmp(due.strings[10], "abs_min") == 0);
        CHECK(strcmp(due.strings[19], "abs_l2") == 0);
      }
      /* smdebug drops ":<digits>" from reduction tags: t:0's reductions read back under "t" */
      smd_tensor *t = NULL;
      CHECK_OK(smd_trial_tensor(trial, i == 5 ? "gradient/t" : kNames[i], &t));
      smd_reduction_value vals[20];
      char names[20][32];
      for (size_t k = 0; k < due.count && k < 20; ++k) {
        const char *full = due.strings[k];
        int abs = strncmp(full, "abs_", 4) == 0;
        snprintf(names[k], sizeof names[k], "%s", full + (abs ? 4 : 0));
        vals[k].reduction = names[k];
        vals[k].abs = abs;
        vals[k].value = NAN;
        smd_value *v = NULL;
        smd_error *e = t ? smd_tensor_reduction_value(t, 0, SMD_MODE_GLOBAL, NULL, full, &v) : NULL;
        if (e == NULL && v != NULL) {
          CHECK_OK(smd_value_double_at(v, 0, &vals[k].value));
        } else {
          /* only min and max of the empty tensor are not written */
          if (!(i == 4 && (strstr(full, "min") || strstr(full, "max")))) {
            fprintf(stderr, "%s %s: %s\n", kNames[i], full, e ? smd_error_message(e) : "no tensor");
            CHECK(0);
          }
          smd_error_free(e);
        }
        smd_value_free(v);
      }
      /* Given in reverse order, with an extra one that is ignored. */
      smd_reduction_value rev[21];
      size_t n = 0;
      for (size_t k = due.count; k > 0; --k) rev[n++] = vals[k - 1];
      rev[n].reduction = "l2_norm";
      rev[n].abs = false;
      rev[n].value = due.count ? vals[due.count - 11].value : 0.0;  /* l2 under its other name */
      ++n;
      CHECK_OK(smd_hook_save_reductions(hook, kNames[i], kDtypes[i], kShapes[i], kNdims[i], rev, n, NULL, NULL, 0));
      smd_tensor_free(t);
      smd_strarray_free(&due);
    }
    save_loss(hook, s);
  }
  CHECK(due_steps == 2);
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);
  smd_trial_free(trial);

  char cmd[8192];
  snprintf(cmd, sizeof cmd, "diff -r '%s' '%s'", a, b);
  CHECK(system(cmd) == 0);
  CHECK(file_exists(b, "events/000000000002/000000000002_worker_0.tfevents"));
}

/* vals[k] = (due name k without abs_, its abs flag, value) for the first 20 due names; names
 * holds the stripped names. */
static size_t fill_values(const smd_strarray *due, smd_reduction_value *vals, char names[][32],
                          double value) {
  size_t k = 0;
  for (; k < due->count && k < 20; ++k) {
    int abs = strncmp(due->strings[k], "abs_", 4) == 0;
    snprintf(names[k], sizeof names[k], "%s", due->strings[k] + (abs ? 4 : 0));
    vals[k].reduction = names[k];
    vals[k].abs = abs;
    vals[k].value = value;
  }
  return k;
}

static void test_errors(void) {
  const char *dir = scratch_path("errors");
  smd_hook *hook = make_hook(dir);
  int64_t shape[1] = {3};
  smd_reduction_value l2 = {"l2", false, 1.0};
  smd_strarray due = {NULL, 0};
  bool value = false, hist = false;
  CHECK_ERR(smd_hook_save_reductions(hook, "gradient/x", SMD_DTYPE_FLOAT32, shape, 1, &l2, 1, NULL, NULL, 0),
            SMD_E_INVALID_STATE, "smd_hook_begin_step");
  CHECK_ERR(smd_hook_due_reductions(hook, "gradient/x", &due, &value, &hist), SMD_E_INVALID_STATE, "begin");
  CHECK_OK(smd_hook_begin_step(hook));
  /* a due reduction without a value, named */
  CHECK_ERR(smd_hook_save_reductions(hook, "gradient/x", SMD_DTYPE_FLOAT32, shape, 1, &l2, 1, NULL, NULL, 0),
            SMD_E_INVALID_ARGUMENT, "reduction min is due");
  smd_reduction_value bad = {"abs_l2", false, 1.0};
  CHECK_ERR(smd_hook_save_reductions(hook, "gradient/x", SMD_DTYPE_FLOAT32, shape, 1, &bad, 1, NULL, NULL, 0),
            SMD_E_INVALID_ARGUMENT, "without abs_");
  bad.reduction = "l3";
  CHECK_ERR(smd_hook_save_reductions(hook, "gradient/x", SMD_DTYPE_FLOAT32, shape, 1, &bad, 1, NULL, NULL, 0),
            SMD_E_INVALID_ARGUMENT, "l3");
  bad.reduction = NULL;
  CHECK_ERR(smd_hook_save_reductions(hook, "gradient/x", SMD_DTYPE_FLOAT32, shape, 1, &bad, 1, NULL, NULL, 0),
            SMD_E_INVALID_ARGUMENT, "NULL");
  CHECK_ERR(smd_hook_save_reductions(hook, "gradient/x", SMD_DTYPE_FLOAT32, shape, 1, NULL, 1, NULL, NULL, 0),
            SMD_E_INVALID_ARGUMENT, "values is NULL");
  CHECK_ERR(smd_hook_save_reductions(hook, "gradient/x", SMD_DTYPE_STRING, shape, 1, &l2, 1, NULL, NULL, 0),
            SMD_E_INVALID_ARGUMENT, "string");
  int64_t neg[1] = {-1};
  CHECK_ERR(smd_hook_save_reductions(hook, "gradient/x", SMD_DTYPE_FLOAT32, neg, 1, &l2, 1, NULL, NULL, 0),
            SMD_E_INVALID_ARGUMENT, "negative");
  /* all twenty for an int32 tensor, one of them a value its dtype cannot hold */
  smd_strarray all = {NULL, 0};
  CHECK_OK(smd_hook_due_reductions(hook, "gradient/x", &all, &value, &hist));
  smd_reduction_value vals[20];
  char names[20][32];
  fill_values(&all, vals, names, 2.0);
  vals[0].value = 1e20; /* min of int32 */
  CHECK_ERR(smd_hook_save_reductions(hook, "gradient/x", SMD_DTYPE_INT32, shape, 1, vals, all.count, NULL, NULL, 0),
            SMD_E_INVALID_ARGUMENT, "range of int32");
  vals[0].value = 1.5;
  CHECK_ERR(smd_hook_save_reductions(hook, "gradient/x", SMD_DTYPE_INT32, shape, 1, vals, all.count, NULL, NULL, 0),
            SMD_E_INVALID_ARGUMENT, "the value 1.5 is not a whole number");
  vals[0].value = -3.0;
  CHECK_OK(smd_hook_save_reductions(hook, "gradient/x", SMD_DTYPE_INT32, shape, 1, vals, all.count, NULL, NULL, 0));
  /* complex: abs reductions are real, the others cannot be given as a double */
  CHECK_ERR(smd_hook_save_reductions(hook, "gradient/c", SMD_DTYPE_COMPLEX64, shape, 1, vals, all.count, NULL, NULL, 0),
            SMD_E_UNSUPPORTED, "complex");
  /* the value itself is due (the loss collection saves raw tensors): refused, nothing lost */
  CHECK_OK(smd_hook_due_reductions(hook, "my_loss", &due, &value, &hist));
  CHECK(value && due.count == 0);
  smd_strarray_free(&due);
  CHECK_ERR(smd_hook_save_reductions(hook, "my_loss", SMD_DTYPE_FLOAT32, shape, 1, &l2, 1, NULL, NULL, 0),
            SMD_E_INVALID_STATE, "smd_hook_save_tensor");
  /* nothing due (not in any saved collection): nothing written, no error */
  CHECK_OK(smd_hook_due_reductions(hook, "other", &due, &value, &hist));
  CHECK(!value && due.count == 0);
  smd_strarray_free(&due);
  CHECK_OK(smd_hook_save_reductions(hook, "other", SMD_DTYPE_FLOAT32, shape, 1, NULL, 0, NULL, NULL, 0));
  smd_strarray_free(&all);
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);
  CHECK_ERR(smd_hook_due_reductions(NULL, "x", &due, &value, &hist), SMD_E_INVALID_ARGUMENT, "hook");
  /* the int32 tensor's min was written as int32 -3 */
  smd_trial *trial = NULL;
  CHECK_OK(smd_trial_open(dir, NULL, &trial));
  smd_tensor *t = NULL;
  if (trial) CHECK_OK(smd_trial_tensor(trial, "gradient/x", &t));
  smd_value *v = NULL;
  if (t) CHECK_OK(smd_tensor_reduction_value(t, 0, SMD_MODE_GLOBAL, NULL, "min", &v));
  if (v) {
    CHECK(smd_value_dtype(v) == SMD_DTYPE_INT32);
    CHECK(*(const int32_t *)smd_value_data(v) == -3);
  }
  smd_value_free(v);
  v = NULL;
  if (t) CHECK_OK(smd_tensor_reduction_value(t, 0, SMD_MODE_GLOBAL, NULL, "sum", &v));
  if (v) CHECK(smd_value_dtype(v) == SMD_DTYPE_INT64);
  smd_value_free(v);
  smd_tensor_free(t);
  smd_trial_free(trial);
}

/* Histograms given by the caller: counted over smd_histogram_bucket_edges as numpy counts. */
static void count_histogram(const double *xs, size_t n, smd_histogram *h, uint64_t *counts) {
  size_t n_edges = 0;
  const double *edges = smd_histogram_bucket_edges(&n_edges);
  memset(counts, 0, (n_edges - 1) * sizeof *counts);
  h->min = INFINITY;
  h->max = -INFINITY;
  h->sum = 0;
  h->sum_squares = 0;
  int nan = 0;
  for (size_t k = 0; k < n; ++k) {
    const double x = xs[k];
    if (isnan(x)) nan = 1;
    if (x < h->min) h->min = x;
    if (x > h->max) h->max = x;
    h->sum += x;
    h->sum_squares += x * x;
    if (!isfinite(x) || x < edges[0] || x > edges[n_edges - 1]) continue;
    size_t lo = 0, hi = n_edges - 1; /* edges[lo] <= x < edges[hi] */
    while (hi - lo > 1) {
      size_t mid = (lo + hi) / 2;
      if (edges[mid] <= x) lo = mid; else hi = mid;
    }
    ++counts[lo];
  }
  if (nan) h->min = h->max = NAN;
  h->counts = counts;
  h->n_counts = n_edges - 1;
}

#define N_HIST 5
static void test_histograms_equal_the_hooks_own(void) {
  static const char *const names[N_HIST] = {"gradient/w", "gradient/i", "gradient/b",
                                            "gradient/far", "gradient/out"};
  static const smd_dtype dtypes[N_HIST] = {SMD_DTYPE_FLOAT32, SMD_DTYPE_INT32, SMD_DTYPE_BFLOAT16,
                                           SMD_DTYPE_FLOAT64, SMD_DTYPE_FLOAT32};
  static const double far[4] = {0.5, -1e-13, 1e21, 0.0};
  static const float out[2] = {INFINITY, -INFINITY}; /* in no bucket: no histogram */
  const void *data[N_HIST] = {kW, kI, kB, far, out};
  const size_t nbytes[N_HIST] = {sizeof kW, sizeof kI, sizeof kB, sizeof far, sizeof out};
  const int64_t counts_of[N_HIST] = {6, 5, 3, 4, 2};
  static const double w_d[6] = {1.0, -2.0, 3.0, -4.0, 0.5, -0.25};
  static const double i_d[5] = {1, -2, 3, -4, 5};
  static const double b_d[3] = {1, -3, 0.5};
  static const double out_d[2] = {INFINITY, -INFINITY};
  const double *as_doubles[N_HIST] = {w_d, i_d, b_d, far, out_d};
  char a[4096], b[4096], tb_a[4096], tb_b[4096];
  snprintf(a, sizeof a, "%s", scratch_path("hist_by_hook"));
  snprintf(b, sizeof b, "%s", scratch_path("hist_given"));
  snprintf(tb_a, sizeof tb_a, "%s", scratch_path("hist_by_hook_tb"));
  snprintf(tb_b, sizeof tb_b, "%s", scratch_path("hist_given_tb"));
  enum { STEPS = 3 };
  smd_hook *hook = make_hook_tb(a, tb_a);
  for (int s = 0; s < STEPS; ++s) {
    CHECK_OK(smd_hook_begin_step(hook));
    for (int i = 0; i < N_HIST; ++i) {
      CHECK_OK(smd_hook_save_tensor(hook, names[i], dtypes[i], &counts_of[i], 1, data[i], nbytes[i], NULL, 0));
    }
  }
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);
  smd_trial *trial = NULL;
  CHECK_OK(smd_trial_open(a, NULL, &trial));
  if (trial == NULL) return;

  size_t n_edges = 0;
  CHECK(smd_histogram_bucket_edges(&n_edges) != NULL && n_edges == 1549);
  uint64_t *counts = calloc(n_edges, sizeof *counts);
  hook = make_hook_tb(b, tb_b);
  for (int s = 0; s < STEPS; ++s) {
    CHECK_OK(smd_hook_begin_step(hook));
    for (int i = 0; i < N_HIST; ++i) {
      smd_strarray due = {NULL, 0};
      bool value = true, hist = false;
      CHECK_OK(smd_hook_due_reductions(hook, names[i], &due, &value, &hist));
      CHECK(!value);
      CHECK(hist == (s % 2 == 0));
      smd_tensor *t = NULL;
      CHECK_OK(smd_trial_tensor(trial, names[i], &t));
      smd_reduction_value vals[20];
      char rnames[20][32];
      size_t n = 0;
      for (size_t k = 0; k < due.count && k < 20; ++k) {
        const char *full = due.strings[k];
        int abs = strncmp(full, "abs_", 4) == 0;
        snprintf(rnames[n], sizeof rnames[n], "%s", full + (abs ? 4 : 0));
        smd_value *v = NULL;
        if (t == NULL) break;
        CHECK_OK(smd_tensor_reduction_value(t, 0, SMD_MODE_GLOBAL, NULL, full, &v));
        if (v == NULL) continue;
        vals[n].reduction = rnames[n];
        vals[n].abs = abs;
        CHECK_OK(smd_value_double_at(v, 0, &vals[n].value));
        smd_value_free(v);
        ++n;
      }
      smd_histogram h;
      count_histogram(as_doubles[i], (size_t)counts_of[i], &h, counts);
      if (hist) {
        /* the histogram is required when due */
        CHECK_ERR(smd_hook_save_reductions(hook, names[i], dtypes[i], &counts_of[i], 1, vals, n, NULL, NULL, 0),
                  SMD_E_INVALID_ARGUMENT, "histogram");
      }
      CHECK_OK(smd_hook_save_reductions(hook, names[i], dtypes[i], &counts_of[i], 1, vals, n, &h, NULL, 0));
      smd_tensor_free(t);
      smd_strarray_free(&due);
    }
  }
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);
  smd_trial_free(trial);
  free(counts);

  char cmd[16384];
  snprintf(cmd, sizeof cmd, "diff -r '%s' '%s' && diff -r '%s' '%s'", a, b, tb_a, tb_b);
  CHECK(system(cmd) == 0);
  /* the run wrote histograms at all (steps 0 and 2) */
  snprintf(cmd, sizeof cmd, "test $(find '%s' -name '*.tfevents' | wc -l) -eq 2", tb_b);
  CHECK(system(cmd) == 0);
}

static void test_histogram_errors(void) {
  const char *dir = scratch_path("hist_errors");
  smd_hook *hook = make_hook_tb(dir, scratch_path("hist_errors_tb"));
  CHECK_OK(smd_hook_begin_step(hook));
  int64_t shape[1] = {3};
  static const double xs[3] = {1, 2, 3};
  size_t n_edges = 0;
  smd_histogram_bucket_edges(&n_edges);
  uint64_t *counts = calloc(n_edges, sizeof *counts);
  smd_histogram h;
  count_histogram(xs, 3, &h, counts);
  smd_strarray due = {NULL, 0};
  bool value = false, hist = false;
  CHECK_OK(smd_hook_due_reductions(hook, "gradient/x", &due, &value, &hist));
  CHECK(hist && !value && due.count == 20);
  smd_reduction_value vals[20];
  char names[20][32];
  fill_values(&due, vals, names, 1.0);
  h.n_counts = n_edges;
  CHECK_ERR(smd_hook_save_reductions(hook, "gradient/x", SMD_DTYPE_FLOAT64, shape, 1, vals, due.count, &h, NULL, 0),
            SMD_E_INVALID_ARGUMENT, "1548 buckets");
  h.n_counts = n_edges - 1;
  counts[0] = 5; /* more elements than the tensor has */
  CHECK_ERR(smd_hook_save_reductions(hook, "gradient/x", SMD_DTYPE_FLOAT64, shape, 1, vals, due.count, &h, NULL, 0),
            SMD_E_INVALID_ARGUMENT, "more than the tensor's 3 elements");
  counts[0] = UINT64_MAX; /* an overflowing sum is caught too */
  counts[1] = 2;
  CHECK_ERR(smd_hook_save_reductions(hook, "gradient/x", SMD_DTYPE_FLOAT64, shape, 1, vals, due.count, &h, NULL, 0),
            SMD_E_INVALID_ARGUMENT, "more than");
  counts[0] = counts[1] = 0;
  h.counts = NULL;
  CHECK_ERR(smd_hook_save_reductions(hook, "gradient/x", SMD_DTYPE_FLOAT64, shape, 1, vals, due.count, &h, NULL, 0),
            SMD_E_INVALID_ARGUMENT, "counts are NULL");
  h.counts = counts;
  CHECK_OK(smd_hook_save_reductions(hook, "gradient/x", SMD_DTYPE_FLOAT64, shape, 1, vals, due.count, &h, NULL, 0));
  /* a histogram that is not due is ignored: the loss is saved raw, and "other" is not saved at all */
  CHECK_OK(smd_hook_save_reductions(hook, "other", SMD_DTYPE_FLOAT64, shape, 1, NULL, 0, &h, NULL, 0));
  CHECK_ERR(smd_hook_due_reductions(hook, "gradient/x", &due, &value, NULL), SMD_E_INVALID_ARGUMENT,
            "histogram_out");
  smd_strarray_free(&due);
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);
  free(counts);
}

int main(int argc, char **argv) {
  static const struct capi_test tests[] = {
      TEST_ENTRY(test_files_equal_the_hooks_own),
      TEST_ENTRY(test_errors),
      TEST_ENTRY(test_histograms_equal_the_hooks_own),
      TEST_ENTRY(test_histogram_errors),
  };
  return capi_run(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
