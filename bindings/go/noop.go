package smd

/*
#include <stdlib.h>
#include "smd/smd.h"

static void smdgo_noop(void) {}

// The same save as BenchmarkSaveTensorNotDue, n times from C: the C baseline of the binding.
static smd_error *smdgo_bench_save_c(smd_hook *hook, const float *data, long n) {
  const int64_t shape[1] = {4};
  for (long i = 0; i < n; ++i) {
    smd_error *err = smd_hook_save_tensor(hook, "fc1.weight", SMD_DTYPE_FLOAT32, shape, 1, data,
                                          4 * sizeof(float), NULL, 0);
    if (err) return err;
  }
  return NULL;
}

// The step loop of BenchmarkSaveTensor4MiB (begin_step, then a due 4 MiB save), n times from C.
static smd_error *smdgo_bench_save_big_c(smd_hook *hook, const float *data, long n) {
  const int64_t shape[2] = {1024, 1024};
  for (long i = 0; i < n; ++i) {
    smd_error *err = smd_hook_begin_step(hook);
    if (err) return err;
    err = smd_hook_save_tensor(hook, "big", SMD_DTYPE_FLOAT32, shape, 2, data, (size_t)4 << 20, NULL, 0);
    if (err) return err;
  }
  return NULL;
}

// The per-value read of BenchmarkReadValue, n times from C.
static smd_error *smdgo_bench_read_c(const smd_tensor *tensor, long n) {
  for (long i = 0; i < n; ++i) {
    smd_value *v = NULL;
    smd_error *err = smd_tensor_value(tensor, 0, SMD_MODE_GLOBAL, NULL, &v);
    if (err) return err;
    double x = 0;
    err = smd_value_double_at(v, 1, &x);
    smd_value_free(v);
    if (err) return err;
  }
  return NULL;
}
*/
import "C"

// cgoNoop is an empty cgo call: the benchmarks print its cost next to smd's calls.
func cgoNoop() { C.smdgo_noop() }

// benchSaveFromC runs n not-due saves from C (for the benchmarks only).
func benchSaveFromC(h *Hook, n int) error {
	p, err := h.lock()
	if err != nil {
		return err
	}
	defer h.mu.RUnlock()
	data := C.malloc(16)
	defer C.free(data)
	return takeErr(C.smdgo_bench_save_c(p, (*C.float)(data), C.long(n)))
}

// benchSaveBigFromC runs n steps of one due 4 MiB save from C (for the benchmarks only).
func benchSaveBigFromC(h *Hook, data []float32, n int) error {
	p, err := h.lock()
	if err != nil {
		return err
	}
	defer h.mu.RUnlock()
	return takeErr(C.smdgo_bench_save_big_c(p, (*C.float)(&data[0]), C.long(n)))
}

// benchReadFromC runs n per-value reads from C (for the benchmarks only).
func benchReadFromC(t *Tensor, n int) error {
	return t.call(func(p *C.smd_tensor) *C.smd_error { return C.smdgo_bench_read_c(p, C.long(n)) })
}
