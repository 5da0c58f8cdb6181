/* Memory of an opened trial: bench_trial_memory PATH. Prints the resident set growth of
 * smd_trial_open and the bytes per (tensor, step, worker) index entry (counted with the C API). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "smd/smd.h"

static long rss_kib(void) {
  long pages = 0, resident = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f == NULL) return -1;
  if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = -1;
  fclose(f);
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  smd_trial *t = NULL;
  smd_strarray names = {NULL, 0}, workers = {NULL, 0};
  double entries = 0, t0;
  long before, after;
  smd_error *e;
  if (argc < 2) {
    fprintf(stderr, "usage: bench_trial_memory PATH\n");
    return 2;
  }
  before = rss_kib();
  t0 = now();
  e = smd_trial_open(argv[1], NULL, &t);
  if (e != NULL) {
    fprintf(stderr, "%s\n", smd_error_message(e));
    return 1;
  }
  printf("open: %.1f ms\n", (now() - t0) * 1e3);
  after = rss_kib();
  if (smd_trial_tensor_names(t, NULL, &names) != NULL) return 1;
  for (size_t i = 0; i < names.count; ++i) {
    smd_tensor *x = NULL;
    int64_t *steps = NULL;
    size_t n = 0;
    if (smd_trial_tensor(t, names.strings[i], &x) != NULL) return 1;
    if (smd_tensor_steps(x, SMD_MODE_GLOBAL, true, &steps, &n) != NULL) return 1;
    for (size_t k = 0; k < n; ++k) {
      if (smd_tensor_workers(x, steps[k], SMD_MODE_GLOBAL, &workers) != NULL) return 1;
      entries += (double)workers.count;
      smd_strarray_free(&workers);
    }
    smd_free(steps);
    smd_tensor_free(x);
  }
  printf("tensors %zu, entries %.0f, RSS growth %.1f MiB, %.1f bytes per entry\n", names.count,
         entries, (after - before) / 1024.0, (after - before) * 1024.0 / entries);
  smd_strarray_free(&names);
  smd_trial_free(t);
  return 0;
}
