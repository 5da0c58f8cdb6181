/* The writer the crash tests kill: a training loop through the public C ABI that saves
 * CRASH_NUM_TENSORS float32 tensors with recomputable values (crashlib.h) at every step, then
 * closes the hook (collections file, training_job_end.ts).
 *
 *   crash_writer OUT_DIR SEED STEPS [--fsync]
 *
 * It prints "step N" on stdout after each begin_step (flushed), and "closed" after a successful
 * close. On any error it prints the error and what smd_hook_close then returns on stderr, and
 * exits with 1. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crashlib.h"
#include "smd/smd.h"

static smd_hook* g_hook;

/* On an error: prints it, then what closing the hook says (it must report the error too), and
 * exits with 1. */
static void check(smd_error* err, const char* what) {
  if (err == NULL) return;
  fprintf(stderr, "crash_writer: %s: %s: %s\n", what, smd_code_name(smd_error_code(err)),
          smd_error_message(err));
  smd_error_free(err);
  if (g_hook != NULL) {
    smd_error* c = smd_hook_close(g_hook);
    fprintf(stderr, "crash_writer: close: %s: %s\n", c ? smd_code_name(smd_error_code(c)) : "OK",
            c ? smd_error_message(c) : "no error");
    smd_error_free(c);
  }
  exit(1);
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: crash_writer OUT_DIR SEED STEPS [--fsync]\n");
    return 2;
  }
  const char* out_dir = argv[1];
  const uint32_t seed = (uint32_t)strtoul(argv[2], NULL, 10);
  const long steps = strtol(argv[3], NULL, 10);
  bool durable = argc > 4 && strcmp(argv[4], "--fsync") == 0;

  smd_hook_options* opts = NULL;
  check(smd_hook_options_create(&opts), "options");
  smd_save_config* sc = NULL;
  check(smd_save_config_create(&sc), "save config");
  check(smd_save_config_set_interval(sc, SMD_MODE_ALL, 1), "save interval");
  check(smd_hook_options_set_save_config(opts, sc), "set save config");
  smd_save_config_free(sc);
  check(smd_hook_options_add_include_regex(opts, "crash/.*"), "include regex");
  if (durable) check(smd_hook_options_set_fsync(opts, true), "fsync");
  smd_hook* hook = NULL;
  check(smd_hook_create(out_dir, opts, &hook), "create");
  g_hook = hook;
  smd_hook_options_free(opts);
  check(smd_hook_set_mode(hook, SMD_MODE_TRAIN), "mode");

  float* buf = malloc(sizeof(float) * 2 * 41000);
  if (buf == NULL) return 1;
  for (long step = 0; step < steps; ++step) {
    check(smd_hook_begin_step(hook), "begin_step");
    printf("step %ld\n", step);
    fflush(stdout);
    for (int t = 0; t < CRASH_NUM_TENSORS; ++t) {
      int64_t shape[2];
      crash_shape(seed, step, t, shape);
      const uint64_t n = (uint64_t)(shape[0] * shape[1]);
      for (uint64_t i = 0; i < n; ++i) buf[i] = crash_value(seed, step, t, i);
      char name[32];
      crash_name(t, name, sizeof name);
      check(smd_hook_save_tensor(hook, name, SMD_DTYPE_FLOAT32, shape, 2, buf, n * sizeof(float),
                                 NULL, 0),
            name);
    }
  }
  free(buf);
  g_hook = NULL;
  check(smd_hook_close(hook), "close");
  smd_hook_free(hook);
  printf("closed\n");
  fflush(stdout);
  return 0;
}
