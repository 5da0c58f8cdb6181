/* Trial read benchmark over the public C API:
 *   bench_trial_read PATH [TENSOR] [REPEATS]
 * Prints the best and median of REPEATS runs (default 7) for: opening the trial (smd_trial_open +
 * the step list), reading every step of one tensor (a fresh trial each run, so no value is
 * cached; the OS page cache is warm), the same through smd_tensor_values(), and reading every
 * value of every tensor. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "smd/smd.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(smd_error *e, const char *what) {
  if (e == NULL) return;
  fprintf(stderr, "%s: %s: %s\n", what, smd_code_name(smd_error_code(e)), smd_error_message(e));
  exit(1);
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void report(const char *what, double *t, int n, double items, const char *unit) {
  qsort(t, (size_t)n, sizeof *t, cmp);
  printf("%-34s best %8.3f ms  median %8.3f ms", what, t[0] * 1e3, t[n / 2] * 1e3);
  if (items > 0) printf("  (%.0f %s/s at best)", items / t[0], unit);
  printf("\n");
}

static smd_trial *open_trial(const char *path) {
  smd_trial *t = NULL;
  die(smd_trial_open(path, NULL, &t), "open");
  return t;
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : NULL;
  const char *tensor = argc > 2 ? argv[2] : NULL;
  int reps = argc > 3 ? atoi(argv[3]) : 7;
  double *t = calloc((size_t)reps, sizeof *t);
  int64_t *steps = NULL;
  size_t nsteps = 0;
  smd_strarray names = {NULL, 0};
  if (path == NULL || reps < 1) {
    fprintf(stderr, "usage: bench_trial_read PATH [TENSOR] [REPEATS]\n");
    return 2;
  }
  for (int r = 0; r < reps; ++r) {
    double t0 = now();
    smd_trial *tr = open_trial(path);
    die(smd_trial_steps(tr, SMD_MODE_GLOBAL, false, &steps, &nsteps), "steps");
    t[r] = now() - t0;
    smd_free(steps);
    smd_trial_free(tr);
  }
  report("open + steps()", t, reps, 0, "");

  {
    smd_trial *tr = open_trial(path);
    die(smd_trial_tensor_names(tr, NULL, &names), "tensor names");
    smd_trial_free(tr);
  }
  if (tensor == NULL) tensor = names.count ? names.strings[0] : "";
  for (int r = 0; r < reps; ++r) {
    smd_trial *tr = open_trial(path);
    smd_tensor *x = NULL;
    double t0;
    die(smd_trial_tensor(tr, tensor, &x), "tensor");
    die(smd_tensor_steps(x, SMD_MODE_GLOBAL, false, &steps, &nsteps), "tensor steps");
    t0 = now();
    for (size_t i = 0; i < nsteps; ++i) {
      smd_value *v = NULL;
      die(smd_tensor_value(x, steps[i], SMD_MODE_GLOBAL, NULL, &v), "value");
      smd_value_free(v);
    }
    t[r] = now() - t0;
    smd_free(steps);
    smd_tensor_free(x);
    smd_trial_free(tr);
  }
  report("one tensor, every step (value)", t, reps, (double)nsteps, "values");

  for (int r = 0; r < reps; ++r) {
    smd_trial *tr = open_trial(path);
    smd_tensor *x = NULL;
    smd_value **values = NULL;
    size_t n = 0;
    double t0;
    die(smd_trial_tensor(tr, tensor, &x), "tensor");
    t0 = now();
    die(smd_tensor_values(x, SMD_MODE_GLOBAL, NULL, &steps, &values, &n), "values");
    t[r] = now() - t0;
    nsteps = n;
    smd_free(steps);
    smd_value_array_free(values, n);
    smd_tensor_free(x);
    smd_trial_free(tr);
  }
  report("one tensor, every step (values)", t, reps, (double)nsteps, "values");

  {
    double total = 0;
    for (int r = 0; r < reps; ++r) {
      smd_trial *tr = open_trial(path);
      double t0 = now();
      total = 0;
      for (size_t k = 0; k < names.count; ++k) {
        smd_tensor *x = NULL;
        die(smd_trial_tensor(tr, names.strings[k], &x), "tensor");
        die(smd_tensor_steps(x, SMD_MODE_GLOBAL, false, &steps, &nsteps), "tensor steps");
        for (size_t i = 0; i < nsteps; ++i) {
          smd_value *v = NULL;
          die(smd_tensor_value(x, steps[i], SMD_MODE_GLOBAL, NULL, &v), "value");
          smd_value_free(v);
          total += 1;
        }
        smd_free(steps);
        smd_tensor_free(x);
      }
      t[r] = now() - t0;
      smd_trial_free(tr);
    }
    report("every tensor, every step", t, reps, total, "values");
  }
  smd_strarray_free(&names);
  free(t);
  return 0;
}
