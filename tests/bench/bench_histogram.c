/* bench_histogram: time of one TensorBoard histogram (computation, encoding and buffered append)
 * through smd_tensorboard_writer_add_histogram.
 *
 *   bench_histogram OUT_DIR [ELEMENTS] [REPEATS] [DTYPE]
 *
 * ELEMENTS (default 1000000) normally distributed values (sigma 1, a few zeros and NaNs), DTYPE
 * float32 (default) or float64. Prints the best and median time per histogram in milliseconds.
 * tests/bench/bench_histogram.py puts it next to smdebug's own histogram_summary. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "smd/smd.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void check(smd_error *e) {
  if (e != NULL) {
    fprintf(stderr, "bench_histogram: %s\n", smd_error_message(e));
    exit(1);
  }
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: bench_histogram OUT_DIR [ELEMENTS] [REPEATS] [float32|float64]\n");
    return 2;
  }
  size_t n = argc > 2 ? (size_t)strtoull(argv[2], NULL, 10) : 1000000;
  int repeats = argc > 3 ? atoi(argv[3]) : 20;
  int f64 = argc > 4 && strcmp(argv[4], "float64") == 0;
  if (repeats < 1) repeats = 1;
  void *data = malloc(n * (f64 ? 8 : 4));
  unsigned long long s = 88172645463325252ull;
  for (size_t i = 0; i < n; ++i) {
    /* xorshift + Box-Muller */
    double u1, u2;
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    u1 = ((s >> 11) + 1.0) / 9007199254740993.0;
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    u2 = (s >> 11) / 9007199254740992.0;
    double v = sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
    if (i % 1000 == 0) v = 0;
    if (i % 100000 == 7) v = NAN;
    if (f64) {
      ((double *)data)[i] = v;
    } else {
      ((float *)data)[i] = (float)v;
    }
  }
  smd_tensorboard_writer *w = NULL;
  check(smd_tensorboard_writer_create(argv[1], NULL, &w));
  double *t = malloc(sizeof(double) * (size_t)repeats);
  for (int r = 0; r < repeats; ++r) {
    bool written = false;
    double t0 = now_ms();
    check(smd_tensorboard_writer_add_histogram(w, 0, SMD_MODE_TRAIN, 1.0, "bench/values",
                                               f64 ? SMD_DTYPE_FLOAT64 : SMD_DTYPE_FLOAT32, data,
                                               n * (f64 ? 8 : 4), &written));
    t[r] = now_ms() - t0;
    if (!written) {
      fprintf(stderr, "bench_histogram: nothing written\n");
      return 1;
    }
  }
  check(smd_tensorboard_writer_close(w));
  smd_tensorboard_writer_free(w);
  qsort(t, (size_t)repeats, sizeof(double), cmp_double);
  printf("histogram of %zu %s: best %.3f ms, median %.3f ms (%d runs)\n", n,
         f64 ? "float64" : "float32", t[0], t[repeats / 2], repeats);
  free(t);
  free(data);
  return 0;
}
