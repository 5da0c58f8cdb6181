/* Saving DLPack tensors: views are copied, managed tensors are adopted and deleted exactly once. */
#include "capi_test.h"

static int deleted = 0;
static void count_delete(DLManagedTensorVersioned *self) {
  ++deleted;
  free(self->dl_tensor.data);
  free(self->dl_tensor.shape);
  free(self);
}

static DLManagedTensorVersioned *make_managed(int n, uint32_t major) {
  DLManagedTensorVersioned *m = calloc(1, sizeof *m);
  m->version.major = major;
  m->version.minor = 1;
  m->deleter = count_delete;
  m->dl_tensor.device.device_type = kDLCPU;
  m->dl_tensor.ndim = 1;
  m->dl_tensor.shape = malloc(sizeof(int64_t));
  m->dl_tensor.shape[0] = n;
  m->dl_tensor.dtype.code = kDLFloat;
  m->dl_tensor.dtype.bits = 32;
  m->dl_tensor.dtype.lanes = 1;
  float *d = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
  for (int i = 0; i < n; ++i) d[i] = (float)i;
  m->dl_tensor.data = d;
  return m;
}

static smd_hook *hook_every(const char *dir, int64_t interval) {
  smd_hook_options *opts = NULL;
  smd_save_config *sc = NULL;
  smd_hook *hook = NULL;
  CHECK_OK(smd_hook_options_create(&opts));
  CHECK_OK(smd_save_config_create(&sc));
  CHECK_OK(smd_save_config_set(sc, SMD_MODE_ALL, interval, 0, -1, NULL, 0));
  CHECK_OK(smd_hook_options_set_save_config(opts, sc));
  CHECK_OK(smd_hook_options_set_save_all(opts, true));
  CHECK_OK(smd_hook_create(dir, opts, &hook));
  smd_save_config_free(sc);
  smd_hook_options_free(opts);
  return hook;
}

static void test_view_is_copied(void) {
  const char *dir = scratch_path("view");
  smd_hook *hook = hook_every(dir, 1);
  int64_t shape[2] = {2, 2};
  int16_t data[6] = {99, 99, 1, 2, 3, 4}; /* byte_offset skips the first two */
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.device.device_type = kDLCPU;
  t.ndim = 2;
  t.shape = shape;
  t.dtype.code = kDLInt;
  t.dtype.bits = 16;
  t.dtype.lanes = 1;
  t.byte_offset = 2 * sizeof(int16_t);
  CHECK_OK(smd_hook_begin_step(hook));
  CHECK_OK(smd_hook_save_dlpack(hook, "view", &t, NULL, 0));
  data[2] = -7; /* after the call returns the data is ours to change */
  int64_t cstrides[2] = {2, 1};
  t.strides = cstrides; /* explicit compact strides are fine */
  CHECK_OK(smd_hook_save_dlpack(hook, "view2", &t, NULL, 0));
  int64_t fstrides[2] = {1, 2};
  t.strides = fstrides;
  CHECK_ERR(smd_hook_save_dlpack(hook, "fortran", &t, NULL, 0), SMD_E_UNSUPPORTED, "strides");
  t.strides = NULL;
  t.device.device_type = kDLCUDA;
  CHECK_ERR(smd_hook_save_dlpack(hook, "gpu", &t, NULL, 0), SMD_E_UNSUPPORTED, "CPU");
  t.device.device_type = kDLCPU;
  t.dtype.code = kDLFloat8_e4m3fn;
  t.dtype.bits = 8;
  CHECK_ERR(smd_hook_save_dlpack(hook, "fp8", &t, NULL, 0), SMD_E_UNSUPPORTED, "dtype");
  t.dtype.code = kDLFloat;
  t.dtype.bits = 16;
  t.dtype.lanes = 4;
  CHECK_ERR(smd_hook_save_dlpack(hook, "vec", &t, NULL, 0), SMD_E_UNSUPPORTED, "lanes");
  CHECK_ERR(smd_hook_save_dlpack(hook, "null", NULL, NULL, 0), SMD_E_INVALID_ARGUMENT, "tensor");
  /* a shape whose size overflows 64 bits is refused (its product was computed in int64: UB) */
  t.dtype.lanes = 1;
  int64_t huge[3] = {3, (int64_t)1 << 62, 2};
  int64_t hstrides[3] = {0, 2, 1};
  t.ndim = 3;
  t.shape = huge;
  t.strides = hstrides;
  CHECK_ERR(smd_hook_save_dlpack(hook, "huge", &t, NULL, 0), SMD_E_INVALID_ARGUMENT, "too large");
  t.strides = NULL;
  CHECK_ERR(smd_hook_save_dlpack(hook, "huge", &t, NULL, 0), SMD_E_INVALID_ARGUMENT, "too large");
  t.ndim = 2;
  t.shape = shape;
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);
  /* the record of "view" holds 1,2,3,4 (little-endian int16) */
  char *ev = read_file(dir, "events/000000000000/000000000000_worker_0.tfevents");
  long n = file_size(dir, "events/000000000000/000000000000_worker_0.tfevents");
  const char want[] = {1, 0, 2, 0, 3, 0, 4, 0};
  int found = 0;
  for (long i = 0; ev && i + 8 <= n; ++i) found += memcmp(ev + i, want, 8) == 0;
  CHECK(found == 1); /* view2 was saved after data[2] changed */
  free(ev);
}

static void test_managed_deleted_exactly_once(void) {
  const char *dir = scratch_path("managed");
  smd_hook *hook = hook_every(dir, 2);
  deleted = 0;
  CHECK_OK(smd_hook_save_dlpack_managed(hook, "pre", make_managed(10, 1), NULL, 0));
  CHECK(deleted == 1); /* before the first step: copied and held for step 0, released at once */
  deleted = 0;
  CHECK_OK(smd_hook_begin_step(hook)); /* step 0: due */
  CHECK_OK(smd_hook_save_dlpack_managed(hook, "m", make_managed(1000, 1), NULL, 0));
  CHECK_OK(smd_hook_flush(hook));
  CHECK(deleted == 1); /* written, then released */
  CHECK_OK(smd_hook_begin_step(hook)); /* step 1: nothing due -> deleted at once */
  CHECK_OK(smd_hook_save_dlpack_managed(hook, "m", make_managed(10, 1), NULL, 0));
  CHECK(deleted == 2);
  /* errors: still deleted */
  CHECK_ERR(smd_hook_save_dlpack_managed(hook, "m", make_managed(10, 0), NULL, 0), SMD_E_UNSUPPORTED,
            "version");
  CHECK(deleted == 3);
  DLManagedTensorVersioned *gpu = make_managed(10, 1);
  gpu->dl_tensor.device.device_type = kDLCUDA;
  CHECK_ERR(smd_hook_save_dlpack_managed(hook, "m", gpu, NULL, 0), SMD_E_UNSUPPORTED, "CPU");
  CHECK(deleted == 4);
  CHECK_ERR(smd_hook_save_dlpack_managed(NULL, "m", make_managed(10, 1), NULL, 0), SMD_E_INVALID_ARGUMENT,
            "hook");
  CHECK(deleted == 5);
  CHECK_ERR(smd_hook_save_dlpack_managed(hook, NULL, make_managed(10, 1), NULL, 0), SMD_E_INVALID_ARGUMENT,
            "name");
  CHECK(deleted == 6);
  CHECK_ERR(smd_hook_save_dlpack_managed(hook, "nullt", NULL, NULL, 0), SMD_E_INVALID_ARGUMENT, "tensor");
  CHECK_OK(smd_hook_close(hook));
  CHECK_ERR(smd_hook_save_dlpack_managed(hook, "m", make_managed(10, 1), NULL, 0), SMD_E_INVALID_STATE,
            "closed");
  CHECK(deleted == 7);
  smd_hook_free(hook);
  CHECK(file_exists(dir, "index/000000000/000000000000_worker_0.json"));
  CHECK(!file_exists(dir, "index/000000000/000000000001_worker_0.json"));
}

int main(int argc, char **argv) {
  static const struct capi_test tests[] = {
      TEST_ENTRY(test_view_is_copied),
      TEST_ENTRY(test_managed_deleted_exactly_once),
  };
  return capi_run(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
