/* bench_writer: the hook's writer workloads and this machine's bounds, printed as JSON.
 *
 *   bench_writer SCRATCH_DIR [--fsync] [--tiny] [W1|W2|W3|W4 ...]
 *
 * --fsync turns on the hook's fsync option (smd_hook_options_set_fsync) for every workload.
 * --tiny runs every workload at a tiny size (W1 20 steps x 5 tensors, W2 3 steps x 2 tensors,
 *     W3 16 saves, W4 20,000 calls, a shorter parallelism probe): the test command's run, so
 *     that the benchmark cannot rot; its figures mean little.
 * W1  1000 steps x 50 float32 tensors of 1 KiB, saved every step: seconds until close returns;
 *     bound: create, write and rename the same files of the same sizes in the same layout.
 * W2  100 steps x 10 float32 tensors of 4 MiB: seconds until close returns; bound: buffered
 *     write() of the same bytes into files in the same folders.
 * W3  median nanoseconds the caller spends in smd_hook_save_tensor for a 4 MiB tensor that is
 *     due; bound: median of a 4 MiB memcpy into a warm buffer.
 * W4  median nanoseconds of smd_hook_save_tensor when nothing is due this step.
 * tests/bench/bench_writer.py runs this next to the real smdebug and prints the table.
 */
#define _DEFAULT_SOURCE
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdbool.h>
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "smd/smd.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void check(smd_error *err, const char *what) {
  if (err == NULL) return;
  fprintf(stderr, "bench_writer: %s: %s\n", what, smd_error_message(err));
  exit(1);
}

static void rm_rf(const char *path) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
  if (system(cmd) != 0) exit(1);
}

static void settle(void) { sync(); } /* start each run without the previous run's dirty pages */

static bool g_fsync; /* --fsync */
static bool g_tiny;  /* --tiny */

static smd_hook *make_hook(const char *dir, int64_t interval) {
  smd_hook_options *opts = NULL;
  smd_save_config *sc = NULL;
  smd_hook *hook = NULL;
  check(smd_hook_options_create(&opts), "options");
  check(smd_save_config_create(&sc), "save config");
  check(smd_save_config_set(sc, SMD_MODE_ALL, interval, 0, -1, NULL, 0), "save config");
  check(smd_hook_options_set_save_config(opts, sc), "options");
  check(smd_hook_options_add_include_collection(opts, "weights"), "options");
  if (g_fsync) check(smd_hook_options_set_fsync(opts, true), "options");
  check(smd_hook_create(dir, opts, &hook), "hook");
  smd_save_config_free(sc);
  smd_hook_options_free(opts);
  return hook;
}

static double caller_seconds, caller_cpu, encoder_cpu, committer_cpu;

static double thread_cpu(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Runs steps x tensors of `elems` float32 through a hook; returns seconds until close. */
static double run_hook(const char *dir, int steps, int tensors, size_t elems) {
  float *data = malloc(elems * sizeof(float));
  for (size_t i = 0; i < elems; ++i) data[i] = (float)i;
  char names[64][32];
  for (int t = 0; t < tensors; ++t) snprintf(names[t], sizeof names[t], "layer%d/weight", t);
  int64_t shape[1] = {(int64_t)elems};
  settle();
  double t0 = now();
  double c0 = thread_cpu();
  smd_hook *hook = make_hook(dir, 1);
  for (int s = 0; s < steps; ++s) {
    check(smd_hook_begin_step(hook), "step");
    for (int t = 0; t < tensors; ++t) {
      data[0] = (float)s;
      check(smd_hook_save_tensor(hook, names[t], SMD_DTYPE_FLOAT32, shape, 1, data, elems * sizeof(float), NULL, 0),
            "save");
    }
  }
  caller_seconds = now() - t0;
  caller_cpu = thread_cpu() - c0;
  check(smd_hook_close(hook), "close");
  double dt = now() - t0;
  smd_hook_stats st;
  memset(&st, 0, sizeof st);
  st.struct_size = sizeof st;
  check(smd_hook_writer_stats(hook, &st), "stats");
  encoder_cpu = st.encoder_cpu_seconds;
  committer_cpu = st.committer_cpu_seconds;
  smd_hook_free(hook);
  free(data);
  return dt;
}

static long file_size_of(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static void write_file(const char *path, const char *buf, size_t n, size_t chunk) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    perror(tmp);
    exit(1);
  }
  for (size_t off = 0; off < n; off += chunk) {
    size_t len = n - off < chunk ? n - off : chunk;
    if (write(fd, buf + (off % (1 << 20)), len) != (ssize_t)len) exit(1);
  }
  close(fd);
  if (rename(tmp, path) != 0) exit(1);
}

/* The same files (sizes taken from a run of the hook) created, written and renamed in the same
 * folders: one event file and one index file per step. */
static double run_bound(const char *dir, int steps, long event_size, long index_size, size_t chunk) {
  size_t bufsize = (size_t)1 << 20;
  char *buf = malloc(bufsize);
  memset(buf, 'x', bufsize);
  char path[4096];
  settle();
  double t0 = now();
  mkdir(dir, 0755);
  snprintf(path, sizeof path, "%s/events", dir);
  mkdir(path, 0755);
  snprintf(path, sizeof path, "%s/index", dir);
  mkdir(path, 0755);
  snprintf(path, sizeof path, "%s/index/000000000", dir);
  mkdir(path, 0755);
  for (int s = 0; s < steps; ++s) {
    snprintf(path, sizeof path, "%s/events/%012d", dir, s);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/events/%012d/%012d_worker_0.tfevents", dir, s, s);
    write_file(path, buf, (size_t)event_size, chunk);
    snprintf(path, sizeof path, "%s/index/000000000/%012d_worker_0.json", dir, s);
    write_file(path, buf, (size_t)index_size, chunk);
  }
  double dt = now() - t0;
  free(buf);
  return dt;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof(double), cmp_double);
  return v[n / 2];
}

static void workload_throughput(const char *scratch, const char *id, int steps, int tensors,
                                size_t elems, size_t bound_chunk) {
  char dir[4096], bdir[4096], ev[4096], ix[4096];
  snprintf(dir, sizeof dir, "%s/%s_smd", scratch, id);
  snprintf(bdir, sizeof bdir, "%s/%s_bound", scratch, id);
  rm_rf(dir);
  rm_rf(bdir);
  double smd = run_hook(dir, steps, tensors, elems);
  double best_caller = caller_seconds, best_ccpu = caller_cpu, best_enc = encoder_cpu, best_com = committer_cpu;
  snprintf(ev, sizeof ev, "%s/events/%012d/%012d_worker_0.tfevents", dir, 1, 1);
  snprintf(ix, sizeof ix, "%s/index/000000000/%012d_worker_0.json", dir, 1);
  long es = file_size_of(ev), is = file_size_of(ix);
  rm_rf(dir);
  double bound = run_bound(bdir, steps, es, is, bound_chunk);
  rm_rf(bdir);
  /* second round, keep the better of the two for each (the machine is shared and noisy) */
  double smd2 = run_hook(dir, steps, tensors, elems);
  rm_rf(dir);
  double bound2 = run_bound(bdir, steps, es, is, bound_chunk);
  rm_rf(bdir);
  if (smd2 < smd) {
    smd = smd2;
    best_caller = caller_seconds;
    best_ccpu = caller_cpu;
    best_enc = encoder_cpu;
    best_com = committer_cpu;
  }
  if (bound2 < bound) bound = bound2;
  printf("\"%s\": {\"steps\": %d, \"tensors\": %d, \"tensor_bytes\": %zu, \"smd_seconds\": %.6f, "
         "\"bound_seconds\": %.6f, \"event_file_bytes\": %ld, \"index_file_bytes\": %ld, "
         "\"caller_seconds\": %.6f, \"caller_cpu_seconds\": %.6f, \"encoder_cpu_seconds\": %.6f, "
         "\"committer_cpu_seconds\": %.6f}",
         id, steps, tensors, elems * sizeof(float), smd, bound, es, is, best_caller, best_ccpu, best_enc, best_com);
}

/* W3: a training step produces a 4 MiB tensor (a pass over it, so it is in the cache as a freshly
 * computed tensor would be) and saves it. The baseline is a memcpy of the same freshly produced
 * tensor into a separate buffer, measured in the same loop, so both see the same cache state.
 * After every 8 steps the writer is given time to catch up, as the rest of a training step would. */
static void produce(float *data, size_t elems, int step) {
  for (size_t i = 0; i < elems; ++i) data[i] = (float)(i + (size_t)step);
}

static void workload_w3(const char *scratch) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/W3_smd", scratch);
  rm_rf(dir);
  size_t elems = (4u << 20) / sizeof(float);
  float *data = malloc(elems * sizeof(float));
  char *dst = malloc(elems * sizeof(float));
  memset(dst, 1, elems * sizeof(float));
  int64_t shape[1] = {(int64_t)elems};
  enum { NMAX = 200 };
  const int N = g_tiny ? 16 : NMAX;
  double in_save[NMAX], in_memcpy[NMAX];
  smd_hook *hook = make_hook(dir, 1);
  for (int i = 0; i < N; ++i) {
    check(smd_hook_begin_step(hook), "step");
    produce(data, elems, i);
    double t0 = now();
    memcpy(dst, data, elems * sizeof(float));
    in_memcpy[i] = (now() - t0) * 1e9;
    __asm__ volatile("" : : "r"(dst) : "memory");
    produce(data, elems, i + 1);
    t0 = now();
    check(smd_hook_save_tensor(hook, "big/weight", SMD_DTYPE_FLOAT32, shape, 1, data, elems * sizeof(float), NULL, 0),
          "save");
    in_save[i] = (now() - t0) * 1e9;
    if (i % 8 == 7) check(smd_hook_flush(hook), "flush");
  }
  check(smd_hook_close(hook), "close");
  smd_hook_free(hook);
  rm_rf(dir);
  free(dst);
  free(data);
  printf("\"W3\": {\"calls\": %d, \"tensor_bytes\": %zu, \"smd_median_ns\": %.0f, \"memcpy_median_ns\": %.0f}",
         N, elems * sizeof(float), median(in_save, N), median(in_memcpy, N));
}

static void workload_w4(const char *scratch) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/W4_smd", scratch);
  rm_rf(dir);
  float data[256] = {0};
  int64_t shape[1] = {256};
  smd_hook *hook = make_hook(dir, 1000000); /* only step 0 is due */
  check(smd_hook_begin_step(hook), "step");
  check(smd_hook_begin_step(hook), "step"); /* step 1: nothing due */
  enum { BATCHES_MAX = 2000, PER = 1000 };
  const int BATCHES = g_tiny ? 20 : BATCHES_MAX;
  static double per_call[BATCHES_MAX];
  for (int b = 0; b < BATCHES; ++b) {
    double t0 = now();
    for (int i = 0; i < PER; ++i) {
      smd_error *e = smd_hook_save_tensor(hook, "layer0/weight", SMD_DTYPE_FLOAT32, shape, 1, data,
                                          sizeof data, NULL, 0);
      if (e) check(e, "save");
    }
    per_call[b] = (now() - t0) * 1e9 / PER;
  }
  check(smd_hook_close(hook), "close");
  smd_hook_free(hook);
  rm_rf(dir);
  printf("\"W4\": {\"calls\": %d, \"smd_median_ns\": %.1f}", BATCHES * PER, median(per_call, BATCHES));
}

/* How much faster two busy threads get through work than one: 2.0 on two real cores, about 1.0
 * when the two vCPUs share one core. The hook's writer overlaps its work with the training thread
 * and the file system; how much it can gain from that depends on this. */
static void *spin(void *arg) {
  volatile unsigned long x = 0;
  const unsigned long n = g_tiny ? 2000000UL : 200000000UL;
  for (unsigned long i = 0; i < n; ++i) x += i * i;
  (void)arg;
  return NULL;
}

static void parallelism(void) {
  double t0 = now();
  spin(NULL);
  double one = now() - t0;
  pthread_t a, b;
  t0 = now();
  pthread_create(&a, NULL, spin, NULL);
  pthread_create(&b, NULL, spin, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  double two = now() - t0;
  printf("\"parallelism\": {\"one_thread_seconds\": %.3f, \"two_threads_seconds\": %.3f, \"speedup\": %.2f}",
         one, two, 2 * one / two);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: bench_writer SCRATCH_DIR [--fsync] [--tiny] [W1|W2|W3|W4 ...]\n");
    return 2;
  }
  const char *scratch = argv[1];
  mkdir(scratch, 0755);
  int nsel = argc - 2;
  for (int a = 2; a < argc; ++a) {
    if (strcmp(argv[a], "--fsync") == 0) {
      g_fsync = true;
      --nsel;
    } else if (strcmp(argv[a], "--tiny") == 0) {
      g_tiny = true;
      --nsel;
    }
  }
  int all = nsel == 0;
  int first = 1;
  printf("{");
  for (int w = 1; w <= 4; ++w) {
    char id[4];
    snprintf(id, sizeof id, "W%d", w);
    int want = all;
    for (int a = 2; a < argc; ++a) want |= strcmp(argv[a], id) == 0;
    if (!want) continue;
    if (!first) printf(", ");
    first = 0;
    fflush(stdout);
    if (w == 1) workload_throughput(scratch, "W1", g_tiny ? 20 : 1000, g_tiny ? 5 : 50, 256, 1 << 20);
    if (w == 2) {
      workload_throughput(scratch, "W2", g_tiny ? 3 : 100, g_tiny ? 2 : 10, (4u << 20) / sizeof(float), 1 << 20);
    }
    if (w == 3) workload_w3(scratch);
    if (w == 4) workload_w4(scratch);
    fflush(stdout);
  }
  if (all) {
    printf(", ");
    parallelism();
  }
  printf("}\n");
  return 0;
}
