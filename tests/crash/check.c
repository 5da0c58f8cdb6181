/* Checks a folder a killed crash_writer left, through smd's C API:
 *
 *   crash_check OUT_DIR SEED STEPS
 *
 * Every step the index shows is one of 0..STEPS-1, the visible steps are 0..K-1 (the writer
 * completes steps in order), and every tensor of every visible step reads back with the shape and
 * every value crash_writer wrote. (Whether all steps must be there when the job has ended is the
 * driver's call: a writer that met an I/O error still ends its job.)
 * A folder without a collections file (the writer died before writing it) must be refused with
 * SMD_E_MISSING_COLLECTION_FILES, and a folder that is not there with SMD_E_NOT_FOUND.
 * Prints "steps K values V ended E" and exits with 0; on a violation prints it and exits with 1. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crashlib.h"
#include "smd/smd.h"

static const char* g_dir;

static void fail(const char* what, smd_error* err) {
  fprintf(stderr, "crash_check %s: %s", g_dir, what);
  if (err) fprintf(stderr, ": %s: %s", smd_code_name(smd_error_code(err)), smd_error_message(err));
  fprintf(stderr, "\n");
  exit(1);
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: crash_check OUT_DIR SEED STEPS\n");
    return 2;
  }
  g_dir = argv[1];
  const uint32_t seed = (uint32_t)strtoul(argv[2], NULL, 10);
  const int64_t total = strtoll(argv[3], NULL, 10);

  smd_trial_options* opts = NULL;
  if (smd_trial_options_create(&opts) != NULL) fail("options", NULL);
  smd_error* err = smd_trial_options_set_auto_refresh(opts, false);
  if (err) fail("auto refresh", err);
  smd_trial* trial = NULL;
  err = smd_trial_open(g_dir, opts, &trial);
  smd_trial_options_free(opts);
  if (err != NULL) {
    if (smd_error_code(err) == SMD_E_MISSING_COLLECTION_FILES) {
      /* Legitimate only while no collections file exists: the writer died first. */
      printf("steps 0 values 0 ended 0 (no collections file)\n");
      smd_error_free(err);
      return 0;
    }
    if (smd_error_code(err) == SMD_E_NOT_FOUND) {
      /* Killed before the hook created the folder. */
      printf("steps 0 values 0 ended 0 (no folder)\n");
      smd_error_free(err);
      return 0;
    }
    fail("smd_trial_open", err);
  }
  bool ended = false;
  err = smd_trial_has_ended(trial, &ended);
  if (err) fail("has_ended", err);
  int64_t* steps = NULL;
  size_t n = 0;
  err = smd_trial_steps(trial, SMD_MODE_GLOBAL, false, &steps, &n);
  if (err) fail("steps", err);
  for (size_t i = 0; i < n; ++i) {
    if (steps[i] != (int64_t)i) {
      fprintf(stderr, "crash_check %s: visible steps are not 0..%zu: step %lld at position %zu\n",
              g_dir, n - 1, (long long)steps[i], i);
      return 1;
    }
  }
  if ((int64_t)n > total) fail("more steps than the writer wrote", NULL);
  uint64_t values = 0;
  float* want = malloc(sizeof(float) * 2 * 41000);
  for (int t = 0; t < CRASH_NUM_TENSORS && n > 0; ++t) {
    char name[32];
    crash_name(t, name, sizeof name);
    smd_tensor* tensor = NULL;
    err = smd_trial_tensor(trial, name, &tensor);
    if (err) fail(name, err);
    for (size_t i = 0; i < n; ++i) {
      const int64_t step = steps[i];
      smd_value* v = NULL;
      err = smd_tensor_value(tensor, step, SMD_MODE_GLOBAL, NULL, &v);
      if (err) {
        fprintf(stderr, "crash_check %s: %s at step %lld: %s: %s\n", g_dir, name, (long long)step,
                smd_code_name(smd_error_code(err)), smd_error_message(err));
        return 1;
      }
      int64_t shape[2];
      crash_shape(seed, step, t, shape);
      const size_t count = (size_t)(shape[0] * shape[1]);
      if (smd_value_dtype(v) != SMD_DTYPE_FLOAT32 || smd_value_ndim(v) != 2 ||
          smd_value_shape(v)[0] != shape[0] || smd_value_shape(v)[1] != shape[1]) {
        fprintf(stderr, "crash_check %s: %s at step %lld: wrong dtype or shape\n", g_dir, name,
                (long long)step);
        return 1;
      }
      for (size_t k = 0; k < count; ++k) want[k] = crash_value(seed, step, t, k);
      if (memcmp(smd_value_data(v), want, count * sizeof(float)) != 0) {
        fprintf(stderr, "crash_check %s: %s at step %lld: values differ from what was written\n",
                g_dir, name, (long long)step);
        return 1;
      }
      values += count;
      smd_value_free(v);
    }
    smd_tensor_free(tensor);
  }
  free(want);
  smd_free(steps);
  smd_trial_free(trial);
  printf("steps %zu values %llu ended %d\n", n, (unsigned long long)values, ended ? 1 : 0);
  return 0;
}
