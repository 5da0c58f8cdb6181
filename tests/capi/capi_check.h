/* Minimal test harness for the C API tests (C99). Each test file is one program; argv[1] is a
 * scratch folder it may use. SMD_TEST_DATA_DIR is tests/data (fixture trials under trials/). */
#ifndef SMD_CAPI_CHECK_H
#define SMD_CAPI_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "smd/smd.h"

static int capi_failures = 0;
static int capi_checks = 0;

#define CHECK(cond)                                                              \
  do {                                                                           \
    ++capi_checks;                                                               \
    if (!(cond)) {                                                               \
      ++capi_failures;                                                           \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);   \
    }                                                                            \
  } while (0)

/* Expects expr (an smd_error*) to be NULL; prints the error otherwise. */
#define CHECK_OK(expr)                                                                       \
  do {                                                                                       \
    smd_error *capi_e_ = (expr);                                                             \
    ++capi_checks;                                                                           \
    if (capi_e_ != NULL) {                                                                   \
      ++capi_failures;                                                                       \
      fprintf(stderr, "%s:%d: %s failed: %s: %s\n", __FILE__, __LINE__, #expr,               \
              smd_code_name(smd_error_code(capi_e_)), smd_error_message(capi_e_));           \
      smd_error_free(capi_e_);                                                               \
    }                                                                                        \
  } while (0)

/* Expects expr to fail with `code` and a non-empty message. */
#define CHECK_CODE(expr, code)                                                               \
  do {                                                                                       \
    smd_error *capi_e_ = (expr);                                                             \
    ++capi_checks;                                                                           \
    if (smd_error_code(capi_e_) != (code) || smd_error_message(capi_e_)[0] == '\0') {        \
      ++capi_failures;                                                                       \
      fprintf(stderr, "%s:%d: %s: expected %s, got %s (%s)\n", __FILE__, __LINE__, #expr,    \
              smd_code_name(code), smd_code_name(smd_error_code(capi_e_)),                   \
              smd_error_message(capi_e_));                                                   \
    }                                                                                        \
    smd_error_free(capi_e_);                                                                 \
  } while (0)

/* Expects expr to fail with `code` and the message to contain `text`. */
#define CHECK_CODE_MSG(expr, code, text)                                                     \
  do {                                                                                       \
    smd_error *capi_e_ = (expr);                                                             \
    ++capi_checks;                                                                           \
    if (smd_error_code(capi_e_) != (code) || strstr(smd_error_message(capi_e_), (text)) == NULL) { \
      ++capi_failures;                                                                       \
      fprintf(stderr, "%s:%d: %s: expected %s containing \"%s\", got %s (%s)\n", __FILE__,   \
              __LINE__, #expr, smd_code_name(code), (text),                                  \
              smd_code_name(smd_error_code(capi_e_)), smd_error_message(capi_e_));           \
    }                                                                                        \
    smd_error_free(capi_e_);                                                                 \
  } while (0)

#define CHECK_STEPS(ptr, n, ...)                                                   \
  do {                                                                             \
    const int64_t capi_want_[] = {__VA_ARGS__};                                    \
    size_t capi_nw_ = sizeof capi_want_ / sizeof capi_want_[0];                    \
    int capi_same_ = (n) == capi_nw_;                                              \
    for (size_t capi_i_ = 0; capi_same_ && capi_i_ < capi_nw_; ++capi_i_)          \
      capi_same_ = (ptr)[capi_i_] == capi_want_[capi_i_];                          \
    CHECK(capi_same_ && "steps " #__VA_ARGS__);                                    \
  } while (0)

static int capi_finish(const char *name) {
  printf("%s: %d checks, %d failed\n", name, capi_checks, capi_failures);
  return capi_failures ? 1 : 0;
}

/* path of a fixture trial */
static const char *capi_fixture(const char *name) {
  static char buf[4][1024];
  static int k = 0;
  k = (k + 1) % 4;
  snprintf(buf[k], sizeof buf[k], "%s/trials/%s", SMD_TEST_DATA_DIR, name);
  return buf[k];
}

#endif /* SMD_CAPI_CHECK_H */
