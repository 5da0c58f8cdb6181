/* C API tests of smd/tensor.h on fixture trials written by the real smdebug (tests/data):
 * every dtype, strings, 0-d values, shapes, reductions, errors, lifetimes. */
#include <math.h>

#include "capi_check.h"

static smd_trial *open_fixture(const char *name) {
  smd_trial *t = NULL;
  CHECK_OK(smd_trial_open(capi_fixture(name), NULL, &t));
  return t;
}

static smd_tensor *get_tensor(smd_trial *t, const char *name) {
  smd_tensor *x = NULL;
  CHECK_OK(smd_trial_tensor(t, name, &x));
  return x;
}

/* cases.dtype_array(d, step) = (arange(6).reshape(2, 3) - 2 + step).astype(d), element i. */
static double expected_element(int i, int step) { return (double)(i - 2 + step); }

static void test_every_dtype(void) {
  static const struct {
    const char *tensor;
    smd_dtype dtype;
  } kCases[] = {
      {"t_float16", SMD_DTYPE_FLOAT16}, {"t_float32", SMD_DTYPE_FLOAT32},
      {"t_float64", SMD_DTYPE_FLOAT64}, {"t_int8", SMD_DTYPE_INT8},
      {"t_uint8", SMD_DTYPE_UINT8},     {"t_int16", SMD_DTYPE_INT16},
      {"t_uint16", SMD_DTYPE_UINT16},   {"t_int32", SMD_DTYPE_INT32},
      {"t_uint32", SMD_DTYPE_UINT32},   {"t_int64", SMD_DTYPE_INT64},
      {"t_uint64", SMD_DTYPE_UINT64},   {"t_bool", SMD_DTYPE_BOOL},
      {"t_complex64", SMD_DTYPE_COMPLEX64}, {"t_complex128", SMD_DTYPE_COMPLEX128},
  };
  smd_trial *t = open_fixture("dtypes");
  if (t == NULL) return;
  for (size_t k = 0; k < sizeof kCases / sizeof kCases[0]; ++k) {
    smd_tensor *x = get_tensor(t, kCases[k].tensor);
    if (x == NULL) continue;
    for (int step = 0; step < 2; ++step) {
      smd_value *v = NULL;
      CHECK_OK(smd_tensor_value(x, step, SMD_MODE_GLOBAL, NULL, &v));
      if (v == NULL) continue;
      CHECK(smd_value_dtype(v) == kCases[k].dtype);
      CHECK(smd_value_ndim(v) == 2);
      CHECK(smd_value_shape(v)[0] == 2 && smd_value_shape(v)[1] == 3);
      CHECK(smd_value_count(v) == 6);
      CHECK(smd_value_nbytes(v) == 6 * smd_dtype_size(kCases[k].dtype));
      CHECK(smd_value_data(v) != NULL && ((uintptr_t)smd_value_data(v)) % 64 == 0);
      for (int i = 0; i < 6; ++i) {
        double d = 0, want = expected_element(i, step);
        if (kCases[k].dtype == SMD_DTYPE_COMPLEX64 || kCases[k].dtype == SMD_DTYPE_COMPLEX128) {
          CHECK_CODE(smd_value_double_at(v, (size_t)i, &d), SMD_E_UNSUPPORTED);
          if (kCases[k].dtype == SMD_DTYPE_COMPLEX64) {
            CHECK(((const float *)smd_value_data(v))[2 * i] == (float)want);
          }
          continue;
        }
        if (kCases[k].dtype == SMD_DTYPE_BOOL) want = want != 0;
        if (kCases[k].dtype == SMD_DTYPE_UINT8 && want < 0) want += 256;
        if (kCases[k].dtype == SMD_DTYPE_UINT16 && want < 0) want += 65536;
        if (kCases[k].dtype == SMD_DTYPE_UINT32 && want < 0) want += 4294967296.0;
        if (kCases[k].dtype == SMD_DTYPE_UINT64 && want < 0) want += 18446744073709551616.0;
        CHECK_OK(smd_value_double_at(v, (size_t)i, &d));
        CHECK(d == want);
      }
      if (kCases[k].dtype == SMD_DTYPE_INT8) {
        CHECK(((const int8_t *)smd_value_data(v))[0] == -2 + step); /* smdebug: 254 (uint8) */
      }
      smd_value_free(v);
    }
    smd_tensor_free(x);
  }
  /* strings */
  {
    smd_tensor *x = get_tensor(t, "t_str");
    smd_value *v = NULL;
    const char *s = NULL;
    size_t len = 0;
    double d;
    CHECK_OK(smd_tensor_value(x, 1, SMD_MODE_TRAIN, NULL, &v));
    if (v != NULL) {
      CHECK(smd_value_dtype(v) == SMD_DTYPE_STRING);
      CHECK(smd_value_count(v) == 3 && smd_value_ndim(v) == 1 && smd_value_shape(v)[0] == 3);
      CHECK(smd_value_data(v) == NULL && smd_value_nbytes(v) == 0);
      CHECK_OK(smd_value_string(v, 1, &s, &len));
      CHECK(len == 3 && strcmp(s, "b\xc3\xa9") == 0);
      CHECK_OK(smd_value_string(v, 2, &s, NULL));
      CHECK(strcmp(s, "1") == 0);
      CHECK_CODE(smd_value_string(v, 3, &s, &len), SMD_E_INVALID_ARGUMENT);
      CHECK_CODE(smd_value_double_at(v, 0, &d), SMD_E_UNSUPPORTED);
      smd_value_free(v);
    }
    smd_tensor_free(x);
  }
  /* 0-d */
  {
    smd_tensor *x = get_tensor(t, "t_0d");
    smd_value *v = NULL;
    double d = 0;
    const char *s;
    CHECK_OK(smd_tensor_value(x, 0, SMD_MODE_GLOBAL, NULL, &v));
    if (v != NULL) {
      CHECK(smd_value_ndim(v) == 0 && smd_value_shape(v) == NULL && smd_value_count(v) == 1);
      CHECK_OK(smd_value_double_at(v, 0, &d));
      CHECK(d == 3.5);
      CHECK_CODE(smd_value_double_at(v, 1, &d), SMD_E_INVALID_ARGUMENT);
      CHECK_CODE(smd_value_string(v, 0, &s, NULL), SMD_E_INVALID_ARGUMENT);
      smd_value_free(v);
    }
    smd_tensor_free(x);
  }
  smd_trial_free(t);
}

static void test_shapes_and_errors(void) {
  smd_trial *t = open_fixture("shapes"); /* EVAL steps 0, 1 (global 0, 1) */
  smd_tensor *sh4 = NULL, *bmat = NULL, *empty = NULL;
  smd_value *v = NULL;
  int64_t *dims = NULL, *steps = NULL;
  size_t ndim = 0, n = 0, *offsets = NULL;
  smd_strarray a = {NULL, 0};
  if (t == NULL) return;
  sh4 = get_tensor(t, "sh_4d");
  bmat = get_tensor(t, "b_mat");
  empty = get_tensor(t, "sh_empty");
  if (sh4 == NULL || bmat == NULL || empty == NULL) return;
  {
    /* the shape entries' "originalname" (smdebug's Tensor.original_name), here the name itself */
    char *original = NULL;
    CHECK_OK(smd_tensor_original_name(sh4, &original));
    CHECK(original != NULL && strcmp(original, "sh_4d") == 0);
    smd_free(original);
    CHECK_CODE(smd_tensor_original_name(sh4, NULL), SMD_E_INVALID_ARGUMENT);
  }
  /* shape only: value unavailable, shape saved */
  CHECK_CODE_MSG(smd_tensor_value(sh4, 0, SMD_MODE_EVAL, NULL, &v), SMD_E_TENSOR_UNAVAILABLE_FOR_STEP,
                 "Value for tensor sh_4d is not available for step 0 with mode EVAL as it was not saved.");
  CHECK(v == NULL);
  CHECK_OK(smd_tensor_shape(sh4, 1, SMD_MODE_GLOBAL, NULL, &dims, &ndim));
  CHECK(ndim == 4 && dims[0] == 2 && dims[1] == 1 && dims[2] == 3 && dims[3] == 2);
  smd_free(dims);
  CHECK_OK(smd_tensor_shape(empty, 0, SMD_MODE_EVAL, NULL, &dims, &ndim));
  CHECK(ndim == 2 && dims[0] == 3 && dims[1] == 0);
  smd_free(dims);
  /* raw + save_shape: both kept (smdebug loses the value) */
  CHECK_OK(smd_tensor_value(bmat, 1, SMD_MODE_EVAL, NULL, &v));
  if (v != NULL) {
    CHECK(smd_value_dtype(v) == SMD_DTYPE_FLOAT32 && smd_value_count(v) == 6);
    CHECK(((const float *)smd_value_data(v))[5] == 5 * 0.25f - 1.0f + 1);
    smd_value_free(v);
  }
  CHECK_OK(smd_tensor_shapes(bmat, SMD_MODE_EVAL, NULL, &steps, &offsets, &dims, &n));
  CHECK(n == 2 && steps[1] == 1 && offsets[0] == 0 && offsets[1] == 2 && offsets[2] == 4);
  CHECK(dims[0] == 3 && dims[1] == 2);
  smd_free(steps);
  smd_free(offsets);
  smd_free(dims);
  /* value info: dtype and shape without the data; nothing for a shape-only entry */
  {
    smd_dtype dt = SMD_DTYPE_INVALID;
    CHECK_OK(smd_tensor_value_info(bmat, 1, SMD_MODE_EVAL, NULL, &dt, &dims, &ndim));
    CHECK(dt == SMD_DTYPE_FLOAT32 && ndim == 2 && dims[0] == 3 && dims[1] == 2);
    smd_free(dims);
    CHECK_CODE(smd_tensor_value_info(sh4, 1, SMD_MODE_EVAL, NULL, &dt, &dims, &ndim),
               SMD_E_TENSOR_UNAVAILABLE_FOR_STEP);
    CHECK_CODE(smd_tensor_value_info(bmat, 1, SMD_MODE_EVAL, NULL, NULL, &dims, &ndim),
               SMD_E_INVALID_ARGUMENT);
    CHECK_CODE(smd_tensor_value_info(bmat, 7, SMD_MODE_EVAL, NULL, &dt, &dims, &ndim),
               SMD_E_STEP_UNAVAILABLE);
  }
  /* per-step errors */
  CHECK_CODE_MSG(smd_tensor_value(bmat, 0, SMD_MODE_TRAIN, NULL, &v), SMD_E_STEP_UNAVAILABLE,
                 "Step 0 of mode TRAIN is not available as it was not saved");
  CHECK_CODE(smd_tensor_value(bmat, 5, SMD_MODE_GLOBAL, NULL, &v), SMD_E_STEP_UNAVAILABLE);
  CHECK_CODE_MSG(smd_tensor_value(bmat, 0, SMD_MODE_GLOBAL, "worker_7", &v), SMD_E_INVALID_WORKER,
                 "Invalid Worker: worker_7");
  CHECK_CODE(smd_tensor_value(bmat, 0, (smd_mode)5, NULL, &v), SMD_E_INVALID_ARGUMENT);
  CHECK_CODE(smd_tensor_value(NULL, 0, SMD_MODE_GLOBAL, NULL, &v), SMD_E_INVALID_ARGUMENT);
  CHECK_CODE(smd_tensor_value(bmat, 0, SMD_MODE_GLOBAL, NULL, NULL), SMD_E_INVALID_ARGUMENT);
  CHECK_CODE(smd_tensor_shape(bmat, 0, SMD_MODE_GLOBAL, NULL, NULL, &ndim), SMD_E_INVALID_ARGUMENT);
  CHECK_CODE(smd_tensor_workers(bmat, 9, SMD_MODE_EVAL, &a), SMD_E_TENSOR_UNAVAILABLE_FOR_STEP);
  CHECK_OK(smd_tensor_workers(bmat, 1, SMD_MODE_EVAL, &a));
  CHECK(a.count == 1 && strcmp(a.strings[0], "worker_0") == 0);
  smd_strarray_free(&a);
  smd_tensor_free(sh4);
  smd_tensor_free(bmat);
  smd_tensor_free(empty);
  smd_trial_free(t);
}

static void test_shape_unavailable(void) {
  smd_trial *t = open_fixture("reductions_float");
  smd_tensor *x;
  int64_t *dims = NULL;
  size_t ndim = 0;
  if (t == NULL) return;
  x = get_tensor(t, "r_vec32"); /* reductions only, no shape */
  CHECK_CODE_MSG(smd_tensor_shape(x, 0, SMD_MODE_GLOBAL, NULL, &dims, &ndim),
                 SMD_E_SHAPE_UNAVAILABLE_FOR_STEP, "Shape for tensor r_vec32 is not available for step 0");
  smd_tensor_free(x);
  smd_trial_free(t);
}

static void test_reductions(void) {
  smd_trial *t = open_fixture("reductions_float"); /* TRAIN steps 0-2 */
  smd_tensor *r = NULL, *rr = NULL;
  smd_strarray names = {NULL, 0};
  smd_value **values = NULL, *v = NULL;
  double d = 0;
  if (t == NULL) return;
  r = get_tensor(t, "r_vec32");  /* reductions only */
  rr = get_tensor(t, "rr_vec32"); /* raw and reductions */
  if (r == NULL || rr == NULL) return;
  CHECK_OK(smd_tensor_reduction_names(r, 1, SMD_MODE_GLOBAL, NULL, &names));
  CHECK(names.count == 18); /* 7 reductions + 2 norms, plain and abs */
  CHECK(names.count > 0 && strcmp(names.strings[0], "abs_l1") == 0);
  smd_strarray_free(&names);
  size_t n_values = 0;
  CHECK_OK(smd_tensor_reduction_values(r, 1, SMD_MODE_TRAIN, NULL, &names, &values, &n_values));
  CHECK(names.count == 18 && values != NULL && n_values == names.count);
  for (size_t i = 0; i < names.count; ++i) {
    CHECK(smd_value_count(values[i]) == 1 && smd_value_ndim(values[i]) == 1);
    if (strcmp(names.strings[i], "max") == 0) {
      /* weight(1, (6,)) = [0, .25, ..., 1.25] */
      CHECK_OK(smd_value_double_at(values[i], 0, &d));
      CHECK(d == 1.25);
    }
  }
  smd_value_array_free(values, names.count);
  smd_strarray_free(&names);
  CHECK_CODE_MSG(smd_tensor_value(r, 1, SMD_MODE_GLOBAL, NULL, &v), SMD_E_TENSOR_UNAVAILABLE_FOR_STEP,
                 "This tensor has reductions saved for this step.");
  /* saved ones, under both spellings */
  CHECK_OK(smd_tensor_reduction_value(r, 1, SMD_MODE_GLOBAL, NULL, "abs_l2_norm", &v));
  smd_value_free(v);
  CHECK_OK(smd_tensor_reduction_value(r, 1, SMD_MODE_GLOBAL, NULL, "l1", &v));
  smd_value_free(v);
  /* not saved and no raw value */
  CHECK_CODE(smd_tensor_reduction_value(r, 1, SMD_MODE_GLOBAL, NULL, "median", &v),
             SMD_E_TENSOR_UNAVAILABLE_FOR_STEP);
  CHECK_CODE(smd_tensor_reduction_value(r, 1, SMD_MODE_GLOBAL, NULL, "bogus", &v), SMD_E_INVALID_ARGUMENT);
  /* computed from the raw value: rr_vec32 at step 2 = [1, 1.25, 1.5] */
  CHECK_OK(smd_tensor_reduction_value(rr, 2, SMD_MODE_GLOBAL, NULL, "sum", &v));
  if (v != NULL) {
    CHECK_OK(smd_value_double_at(v, 0, &d));
    CHECK(fabs(d - 3.75) < 1e-6);
    smd_value_free(v);
  }
  CHECK_CODE(smd_tensor_reduction_value(rr, 2, SMD_MODE_GLOBAL, NULL, NULL, &v), SMD_E_INVALID_ARGUMENT);
  smd_tensor_free(r);
  smd_tensor_free(rr);
  smd_trial_free(t);
}

static void test_steps_values_lifetimes(void) {
  smd_trial *t = open_fixture("modes_reentry");
  smd_tensor *w = NULL;
  smd_value **values = NULL, *v = NULL, *v2 = NULL;
  int64_t *steps = NULL;
  size_t n = 0;
  if (t == NULL) return;
  w = get_tensor(t, "fc.weight");
  if (w == NULL) return;
  CHECK_OK(smd_tensor_steps(w, SMD_MODE_PREDICT, false, &steps, &n));
  CHECK_STEPS(steps, n, 0, 1);
  smd_free(steps);
  CHECK_OK(smd_tensor_steps(w, SMD_MODE_GLOBAL, true, &steps, &n));
  CHECK(n == 10);
  smd_free(steps);
  CHECK_OK(smd_tensor_prev_steps(w, 3, SMD_MODE_TRAIN, 2, &steps, &n));
  CHECK_STEPS(steps, n, 2, 3);
  smd_free(steps);
  CHECK_OK(smd_tensor_prev_steps(w, 100, SMD_MODE_EVAL, 0, &steps, &n));
  CHECK_STEPS(steps, n, 0, 1);
  smd_free(steps);
  CHECK_OK(smd_tensor_values(w, SMD_MODE_TRAIN, NULL, &steps, &values, &n));
  CHECK(n == 5 && steps[4] == 4);
  if (n == 5) CHECK(((const float *)smd_value_data(values[4]))[0] == -1.0f + 6); /* global 6 */
  smd_free(steps);
  smd_value_array_free(values, n);
  smd_value_array_free(NULL, 5);
  smd_value_free(NULL);
  CHECK(smd_value_ref(NULL) == NULL);
  CHECK(smd_value_dtype(NULL) == SMD_DTYPE_INVALID && smd_value_count(NULL) == 0);
  CHECK(smd_value_data(NULL) == NULL && smd_value_shape(NULL) == NULL && smd_tensor_name(NULL) == NULL);

  /* a value outlives its tensor and trial; a second reference outlives the first */
  CHECK_OK(smd_tensor_value(w, 8, SMD_MODE_GLOBAL, "worker_0", &v));
  smd_tensor_free(w);
  smd_trial_free(t);
  if (v != NULL) {
    v2 = smd_value_ref(v);
    smd_value_free(v);
    CHECK(((const float *)smd_value_data(v2))[1] == 0.25f - 1.0f + 8);
    smd_value_free(v2);
  }
}

int main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  smd_tensor_free(NULL);
  test_every_dtype();
  test_shapes_and_errors();
  test_shape_unavailable();
  test_reductions();
  test_steps_values_lifetimes();
  return capi_finish("test_tensor");
}
