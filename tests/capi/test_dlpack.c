/* C API tests of smd_value_to_dlpack: zero-copy, read-only, and the data outlives every smd
 * handle until the consumer calls the deleter (run under ASan to catch a use after free). */
#include "capi_check.h"

static DLManagedTensorVersioned *export_value(const char *fixture, const char *tensor, int64_t step,
                                              const void **data_out) {
  smd_trial *t = NULL;
  smd_tensor *x = NULL;
  smd_value *v = NULL;
  DLManagedTensorVersioned *m = NULL;
  CHECK_OK(smd_trial_open(capi_fixture(fixture), NULL, &t));
  CHECK_OK(smd_trial_tensor(t, tensor, &x));
  CHECK_OK(smd_tensor_value(x, step, SMD_MODE_GLOBAL, NULL, &v));
  CHECK_OK(smd_value_to_dlpack(v, &m));
  if (m != NULL) CHECK(m->dl_tensor.data == smd_value_data(v)); /* no copy */
  *data_out = smd_value_data(v);
  /* free every smd handle before using the export */
  smd_value_free(v);
  smd_tensor_free(x);
  smd_trial_free(t);
  return m;
}

int main(int argc, char **argv) {
  const void *data = NULL;
  DLManagedTensorVersioned *m;
  (void)argc;
  (void)argv;

  m = export_value("dtypes", "t_float32", 1, &data);
  if (m != NULL) {
    const float *f = (const float *)m->dl_tensor.data;
    CHECK(m->version.major == DLPACK_MAJOR_VERSION && m->version.minor == DLPACK_MINOR_VERSION);
    CHECK(m->flags & DLPACK_FLAG_BITMASK_READ_ONLY);
    CHECK(m->dl_tensor.device.device_type == kDLCPU && m->dl_tensor.device.device_id == 0);
    CHECK(m->dl_tensor.dtype.code == kDLFloat && m->dl_tensor.dtype.bits == 32 &&
          m->dl_tensor.dtype.lanes == 1);
    CHECK(m->dl_tensor.ndim == 2 && m->dl_tensor.shape[0] == 2 && m->dl_tensor.shape[1] == 3);
    CHECK(m->dl_tensor.strides == NULL && m->dl_tensor.byte_offset == 0);
    CHECK(f[0] == -1.0f && f[5] == 4.0f);
    m->deleter(m);
  }

  m = export_value("dtypes", "t_int8", 0, &data);
  if (m != NULL) {
    CHECK(m->dl_tensor.dtype.code == kDLInt && m->dl_tensor.dtype.bits == 8);
    CHECK(((const int8_t *)m->dl_tensor.data)[0] == -2);
    m->deleter(m);
  }
  m = export_value("dtypes", "t_bool", 0, &data);
  if (m != NULL) {
    CHECK(m->dl_tensor.dtype.code == kDLBool && m->dl_tensor.dtype.bits == 8);
    m->deleter(m);
  }
  m = export_value("dtypes", "t_complex128", 0, &data);
  if (m != NULL) {
    CHECK(m->dl_tensor.dtype.code == kDLComplex && m->dl_tensor.dtype.bits == 128);
    m->deleter(m);
  }
  m = export_value("dtypes", "t_0d", 1, &data);
  if (m != NULL) {
    CHECK(m->dl_tensor.ndim == 0 && m->dl_tensor.shape == NULL);
    CHECK(((const double *)m->dl_tensor.data)[0] == 4.5);
    m->deleter(m);
  }

  /* two exports of one value share the data and are deleted independently */
  {
    smd_trial *t = NULL;
    smd_tensor *x = NULL;
    smd_value *v = NULL;
    DLManagedTensorVersioned *a = NULL, *b = NULL;
    CHECK_OK(smd_trial_open(capi_fixture("dtypes"), NULL, &t));
    CHECK_OK(smd_trial_tensor(t, "t_uint64", &x));
    CHECK_OK(smd_tensor_value(x, 1, SMD_MODE_TRAIN, NULL, &v));
    CHECK_OK(smd_value_to_dlpack(v, &a));
    CHECK_OK(smd_value_to_dlpack(v, &b));
    if (a && b) {
      CHECK(a->dl_tensor.data == b->dl_tensor.data);
      CHECK(a->dl_tensor.dtype.code == kDLUInt && a->dl_tensor.dtype.bits == 64);
      a->deleter(a);
      smd_value_free(v);
      v = NULL;
      CHECK(((const uint64_t *)b->dl_tensor.data)[1] == 0);
      b->deleter(b);
    }
    smd_value_free(v);
    /* strings have no DLPack form */
    smd_tensor_free(x);
    x = NULL;
    v = NULL;
    CHECK_OK(smd_trial_tensor(t, "t_str", &x));
    CHECK_OK(smd_tensor_value(x, 0, SMD_MODE_GLOBAL, NULL, &v));
    a = NULL;
    CHECK_CODE(smd_value_to_dlpack(v, &a), SMD_E_UNSUPPORTED);
    CHECK(a == NULL);
    CHECK_CODE(smd_value_to_dlpack(NULL, &a), SMD_E_INVALID_ARGUMENT);
    CHECK_CODE(smd_value_to_dlpack(v, NULL), SMD_E_INVALID_ARGUMENT);
    smd_value_free(v);
    smd_tensor_free(x);
    smd_trial_free(t);
  }
  return capi_finish("test_dlpack");
}
