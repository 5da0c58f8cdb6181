/* The smd side of the reader benchmark (tests/bench/bench_reader.py drives it next to the real
 * smdebug). Each mode prints one JSON object of seconds (lists: one entry per repetition) on
 * stdout. The OS page cache is warm; every repetition opens a fresh trial, so no value is cached.
 *
 *   bench_reader open PATH REPS                 R1: smd_trial_open + smd_trial_steps
 *   bench_reader series PATH TENSOR REPS        R2/R3: every step of one tensor, with
 *                                               smd_tensor_value in a loop and smd_tensor_values
 *   bench_reader bound ROOT LIST REPS THREADS   the floor under R1/R2/R3: for each line "PATH
 *                                               OFFSET LENGTH" of LIST, openat (PATH relative
 *                                               to folder ROOT, as smd opens) + pread + close
 *   bench_reader refresh PATH REPS MAKE_TRIAL FIRST TENSORS
 *                                               R4: smd_trial_refresh after MAKE_TRIAL appends 10
 *                                               steps (FIRST, FIRST+10, ...); also a refresh
 *                                               that finds nothing new
 *   bench_reader memory PATH                    resident memory growth of smd_trial_open and the
 *                                               number of (tensor, step, worker) entries
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "smd/smd.h"

extern char **environ;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_now(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
         (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

static void die(smd_error *e, const char *what) {
  if (e == NULL) return;
  fprintf(stderr, "bench_reader: %s: %s: %s\n", what, smd_code_name(smd_error_code(e)),
          smd_error_message(e));
  exit(1);
}

static void print_list(const char *key, const double *v, int n, int last) {
  printf("\"%s\": [", key);
  for (int i = 0; i < n; ++i) printf("%s%.9f", i ? ", " : "", v[i]);
  printf("]%s", last ? "" : ", ");
}

static smd_trial *open_trial(const char *path) {
  smd_trial *t = NULL;
  die(smd_trial_open(path, NULL, &t), "open");
  return t;
}

static int mode_open(const char *path, int reps) {
  double *wall = calloc((size_t)reps, sizeof *wall), *cpu = calloc((size_t)reps, sizeof *cpu);
  size_t nsteps = 0;
  for (int r = 0; r < reps; ++r) {
    int64_t *steps = NULL;
    double c0 = cpu_now(), t0 = now();
    smd_trial *t = open_trial(path);
    die(smd_trial_steps(t, SMD_MODE_GLOBAL, false, &steps, &nsteps), "steps");
    wall[r] = now() - t0;
    cpu[r] = cpu_now() - c0;
    smd_free(steps);
    smd_trial_free(t);
  }
  printf("{");
  print_list("wall", wall, reps, 0);
  print_list("cpu", cpu, reps, 0);
  printf("\"steps\": %zu}\n", nsteps);
  free(wall);
  free(cpu);
  return 0;
}

static int mode_series(const char *path, const char *tensor, int reps) {
  double *loop = calloc((size_t)reps, sizeof *loop), *bulk = calloc((size_t)reps, sizeof *bulk);
  size_t count = 0, bytes = 0;
  for (int r = 0; r < 2 * reps; ++r) {
    smd_trial *t = open_trial(path);
    smd_tensor *x = NULL;
    int64_t *steps = NULL;
    size_t n = 0;
    double t0;
    die(smd_trial_tensor(t, tensor, &x), "tensor");
    if (r % 2 == 0) {
      die(smd_tensor_steps(x, SMD_MODE_GLOBAL, false, &steps, &n), "tensor steps");
      bytes = 0;
      t0 = now();
      for (size_t i = 0; i < n; ++i) {
        smd_value *v = NULL;
        die(smd_tensor_value(x, steps[i], SMD_MODE_GLOBAL, NULL, &v), "value");
        bytes += smd_value_nbytes(v);
        smd_value_free(v);
      }
      loop[r / 2] = now() - t0;
    } else {
      smd_value **values = NULL;
      t0 = now();
      die(smd_tensor_values(x, SMD_MODE_GLOBAL, NULL, &steps, &values, &n), "values");
      bulk[r / 2] = now() - t0;
      smd_value_array_free(values, n);
    }
    count = n;
    smd_free(steps);
    smd_tensor_free(x);
    smd_trial_free(t);
  }
  printf("{");
  print_list("value_loop", loop, reps, 0);
  print_list("values", bulk, reps, 0);
  printf("\"count\": %zu, \"bytes\": %zu}\n", count, bytes);
  free(loop);
  free(bulk);
  return 0;
}

struct range {
  char *path;
  long long offset, length;
};
struct bound_job {
  int root;
  const struct range *ranges;
  size_t begin, end;
  char *buf;
};

static void *bound_worker(void *arg) {
  struct bound_job *j = arg;
  for (size_t i = j->begin; i < j->end; ++i) {
    int fd = openat(j->root, j->ranges[i].path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || pread(fd, j->buf, (size_t)j->ranges[i].length, j->ranges[i].offset) !=
                      (ssize_t)j->ranges[i].length) {
      perror(j->ranges[i].path);
      exit(1);
    }
    close(fd);
  }
  return NULL;
}

static int mode_bound(const char *root, const char *list, int reps, int threads) {
  FILE *f = fopen(list, "r");
  int root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  struct range *ranges = NULL;
  size_t n = 0, cap = 0;
  long long max_len = 0;
  char path[4096];
  struct range rg;
  double *wall = calloc((size_t)reps, sizeof *wall);
  if (f == NULL || root_fd < 0) {
    perror(f == NULL ? list : root);
    return 1;
  }
  while (fscanf(f, "%4095s %lld %lld", path, &rg.offset, &rg.length) == 3) {
    if (n == cap) ranges = realloc(ranges, (cap = cap ? 2 * cap : 1024) * sizeof *ranges);
    rg.path = strdup(path);
    ranges[n++] = rg;
    if (rg.length > max_len) max_len = rg.length;
  }
  fclose(f);
  for (int r = 0; r < reps; ++r) {
    pthread_t tid[16];
    struct bound_job jobs[16];
    int k = threads < 1 ? 1 : threads > 16 ? 16 : threads;
    double t0 = now();
    for (int i = 0; i < k; ++i) {
      jobs[i].root = root_fd;
      jobs[i].ranges = ranges;
      jobs[i].begin = n * (size_t)i / (size_t)k;
      jobs[i].end = n * (size_t)(i + 1) / (size_t)k;
      jobs[i].buf = malloc((size_t)max_len + 1);
      if (i > 0) pthread_create(&tid[i], NULL, bound_worker, &jobs[i]);
    }
    bound_worker(&jobs[0]);
    for (int i = 1; i < k; ++i) pthread_join(tid[i], NULL);
    wall[r] = now() - t0;
    for (int i = 0; i < k; ++i) free(jobs[i].buf);
  }
  printf("{");
  print_list("wall", wall, reps, 0);
  printf("\"count\": %zu}\n", n);
  for (size_t i = 0; i < n; ++i) free(ranges[i].path);
  free(ranges);
  free(wall);
  close(root_fd);
  return 0;
}

static void run_make_trial(const char *make_trial, const char *path, int first, const char *tensors) {
  char first_s[32];
  pid_t pid;
  int status;
  char *argv[] = {(char *)make_trial, (char *)path, "10", (char *)tensors, "--first-step", first_s,
                  "--running", NULL};
  snprintf(first_s, sizeof first_s, "%d", first);
  if (posix_spawn(&pid, make_trial, NULL, NULL, argv, environ) != 0 || waitpid(pid, &status, 0) < 0 ||
      !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "bench_reader: %s failed\n", make_trial);
    exit(1);
  }
}

static int mode_refresh(const char *path, int reps, const char *make_trial, int first,
                        const char *tensors) {
  double *fresh = calloc((size_t)reps, sizeof *fresh), *idle = calloc((size_t)reps, sizeof *idle);
  smd_trial *t = open_trial(path);
  int64_t *steps = NULL;
  size_t n0 = 0, n1 = 0;
  die(smd_trial_steps(t, SMD_MODE_GLOBAL, true, &steps, &n0), "steps");
  smd_free(steps);
  for (int r = 0; r < reps; ++r) {
    double t0;
    run_make_trial(make_trial, path, first + 10 * r, tensors);
    t0 = now();
    die(smd_trial_refresh(t), "refresh");
    fresh[r] = now() - t0;
    t0 = now();
    die(smd_trial_refresh(t), "refresh");
    idle[r] = now() - t0;
  }
  die(smd_trial_steps(t, SMD_MODE_GLOBAL, true, &steps, &n1), "steps");
  smd_free(steps);
  smd_trial_free(t);
  if (n1 != n0 + 10 * (size_t)reps) {
    fprintf(stderr, "bench_reader: refresh saw %zu new steps, expected %d\n", n1 - n0, 10 * reps);
    return 1;
  }
  printf("{");
  print_list("refresh_10_new", fresh, reps, 0);
  print_list("refresh_nothing_new", idle, reps, 0);
  printf("\"steps_before\": %zu}\n", n0);
  free(fresh);
  free(idle);
  return 0;
}

static long rss_kib(void) {
  long pages = 0, resident = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f == NULL) return -1;
  if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = -1;
  fclose(f);
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static int mode_memory(const char *path) {
  smd_strarray names = {NULL, 0}, workers = {NULL, 0};
  double entries = 0, t0;
  long before, after;
  smd_trial *t;
  before = rss_kib();
  t0 = now();
  t = open_trial(path);
  t0 = now() - t0;
  after = rss_kib();
  die(smd_trial_tensor_names(t, NULL, &names), "tensor names");
  for (size_t i = 0; i < names.count; ++i) {
    smd_tensor *x = NULL;
    int64_t *steps = NULL;
    size_t n = 0;
    die(smd_trial_tensor(t, names.strings[i], &x), "tensor");
    die(smd_tensor_steps(x, SMD_MODE_GLOBAL, true, &steps, &n), "steps");
    for (size_t k = 0; k < n; ++k) {
      die(smd_tensor_workers(x, steps[k], SMD_MODE_GLOBAL, &workers), "workers");
      entries += (double)workers.count;
      smd_strarray_free(&workers);
    }
    smd_free(steps);
    smd_tensor_free(x);
  }
  printf("{\"open\": %.6f, \"rss_growth_bytes\": %ld, \"entries\": %.0f, \"tensors\": %zu}\n", t0,
         (after - before) * 1024, entries, names.count);
  smd_strarray_free(&names);
  smd_trial_free(t);
  return 0;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "open") == 0 && argc == 4) return mode_open(argv[2], atoi(argv[3]));
  if (strcmp(mode, "series") == 0 && argc == 5) return mode_series(argv[2], argv[3], atoi(argv[4]));
  if (strcmp(mode, "bound") == 0 && argc == 6) {
    return mode_bound(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]));
  }
  if (strcmp(mode, "refresh") == 0 && argc == 7) {
    return mode_refresh(argv[2], atoi(argv[3]), argv[4], atoi(argv[5]), argv[6]);
  }
  if (strcmp(mode, "memory") == 0 && argc == 3) return mode_memory(argv[2]);
  fprintf(stderr,
          "usage: bench_reader open PATH REPS | series PATH TENSOR REPS | bound ROOT LIST REPS THREADS |\n"
          "       refresh PATH REPS MAKE_TRIAL FIRST TENSORS | memory PATH\n");
  return 2;
}
