/* A tiny test harness for the C API tests (C99, no dependencies beyond libc and POSIX). Each test
 * program receives a scratch folder as argv[1], runs its TEST functions and prints
 * "N passed, M failed". */
#ifndef SMD_CAPI_TEST_H
#define SMD_CAPI_TEST_H

#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "smd/smd.h"

static int capi_failures = 0;

static int capi_msg_has(const char *msg, const char *needle) {
  return needle == NULL || strstr(msg, needle) != NULL;
}
static const char *capi_or_empty(const char *s) { return s ? s : ""; }
static int capi_current_failed = 0;
static char capi_scratch[4096];

#define CHECK(cond)                                                           \
  do {                                                                        \
    if (!(cond)) {                                                            \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      capi_current_failed = 1;                                                \
    }                                                                         \
  } while (0)

/* Expects success; prints the error otherwise and frees it. */
#define CHECK_OK(expr)                                                                       \
  do {                                                                                       \
    smd_error *e_ = (expr);                                                                  \
    if (e_ != NULL) {                                                                        \
      fprintf(stderr, "%s:%d: %s failed: %s: %s\n", __FILE__, __LINE__, #expr,              \
              smd_code_name(smd_error_code(e_)), smd_error_message(e_));                     \
      smd_error_free(e_);                                                                    \
      capi_current_failed = 1;                                                               \
    }                                                                                        \
  } while (0)

/* Expects an error with `code` whose message contains `needle` (NULL: any message). */
#define CHECK_ERR(expr, code, needle)                                                         \
  do {                                                                                        \
    smd_error *e_ = (expr);                                                                   \
    if (e_ == NULL) {                                                                         \
      fprintf(stderr, "%s:%d: %s succeeded, expected %s\n", __FILE__, __LINE__, #expr, #code); \
      capi_current_failed = 1;                                                                \
    } else {                                                                                  \
      if (smd_error_code(e_) != (code)) {                                                     \
        fprintf(stderr, "%s:%d: %s gave %s (%s), expected %s\n", __FILE__, __LINE__, #expr,   \
                smd_code_name(smd_error_code(e_)), smd_error_message(e_), #code);             \
        capi_current_failed = 1;                                                              \
      } else if (!capi_msg_has(smd_error_message(e_), (needle))) {                            \
        fprintf(stderr, "%s:%d: message \"%s\" lacks \"%s\"\n", __FILE__, __LINE__,           \
                smd_error_message(e_), capi_or_empty(needle));                                \
        capi_current_failed = 1;                                                              \
      }                                                                                       \
      smd_error_free(e_);                                                                     \
    }                                                                                         \
  } while (0)

typedef void (*capi_test_fn)(void);
struct capi_test {
  const char *name;
  capi_test_fn fn;
};

/* A fresh folder path under the scratch folder (not created). */
static const char *scratch_path(const char *name) {
  static char buf[8][4096];
  static int next = 0;
  char *p = buf[next++ % 8];
  snprintf(p, 4096, "%s/%s", capi_scratch, name);
  return p;
}

static void rm_rf(const char *path) {
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
  if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", path);
}

__attribute__((unused)) static int file_exists(const char *dir, const char *rel) {
  char p[8192];
  struct stat st;
  snprintf(p, sizeof p, "%s/%s", dir, rel);
  return stat(p, &st) == 0;
}

__attribute__((unused)) static long file_size(const char *dir, const char *rel) {
  char p[8192];
  struct stat st;
  snprintf(p, sizeof p, "%s/%s", dir, rel);
  return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

/* Reads a whole file into a malloc'd NUL-terminated buffer (NULL if missing). */
__attribute__((unused)) static char *read_file(const char *dir, const char *rel) {
  char p[8192];
  snprintf(p, sizeof p, "%s/%s", dir, rel);
  FILE *f = fopen(p, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  if (fread(buf, 1, (size_t)n, f) != (size_t)n) n = 0;
  buf[n] = '\0';
  fclose(f);
  return buf;
}

static int capi_run(int argc, char **argv, const struct capi_test *tests, size_t n) {
  const char *base = argc > 1 ? argv[1] : "/tmp/smd-capi-test";
  snprintf(capi_scratch, sizeof capi_scratch, "%s", base);
  rm_rf(capi_scratch);
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s'", capi_scratch);
  if (system(cmd) != 0) return 2;
  int passed = 0;
  for (size_t i = 0; i < n; ++i) {
    capi_current_failed = 0;
    tests[i].fn();
    if (capi_current_failed) {
      fprintf(stderr, "FAIL %s\n", tests[i].name);
      ++capi_failures;
    } else {
      printf("ok   %s\n", tests[i].name);
      ++passed;
    }
  }
  printf("%d passed, %d failed\n", passed, capi_failures);
  return capi_failures ? 1 : 0;
}

#define TEST_ENTRY(fn) {#fn, fn}

#endif /* SMD_CAPI_TEST_H */
