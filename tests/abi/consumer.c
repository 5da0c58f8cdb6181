/* A program that uses smd as an outside project would: built only from what
 * `pkg-config --cflags --libs smd` (or `--static`) says about an installed smd. It opens a trial
 * (the index and collections files: cJSON), filters its tensor names with a regex (PCRE2) and
 * checks the runtime version against the installed smd/version.h.
 *   consumer TRIAL_DIR REGEX EXPECTED_COUNT */
#include <smd/smd.h>
#include <smd/version.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what, smd_error *err) {
  fprintf(stderr, "consumer: %s: %s\n", what, err ? smd_error_message(err) : "failed");
  smd_error_free(err);
  return 1;
}

int main(int argc, char **argv) {
  smd_trial *trial = NULL;
  smd_tensor_filter *filter = NULL;
  smd_strarray names = {NULL, 0};
  smd_error *err;
  size_t expected;
  if (argc != 4) {
    fprintf(stderr, "usage: consumer TRIAL_DIR REGEX EXPECTED_COUNT\n");
    return 2;
  }
  expected = (size_t)strtoul(argv[3], NULL, 10);
  if (strcmp(smd_version_string(), SMD_VERSION_STRING) != 0) {
    fprintf(stderr, "consumer: library %s, headers %s\n", smd_version_string(), SMD_VERSION_STRING);
    return 1;
  }
  if ((err = smd_trial_open(argv[1], NULL, &trial)) != NULL) return fail("open", err);
  if ((err = smd_tensor_filter_create(&filter)) != NULL) return fail("filter", err);
  if ((err = smd_tensor_filter_add_include_regex(filter, argv[2])) != NULL) return fail("regex", err);
  if ((err = smd_trial_tensor_names(trial, filter, &names)) != NULL) return fail("names", err);
  if (names.count != expected) {
    fprintf(stderr, "consumer: %zu tensors match %s, expected %zu\n", names.count, argv[2], expected);
    return 1;
  }
  printf("consumer: smd %s, %zu tensors match %s (first %s)\n", smd_version_string(), names.count,
         argv[2], names.count ? names.strings[0] : "-");
  smd_strarray_free(&names);
  smd_tensor_filter_free(filter);
  smd_trial_free(trial);
  return 0;
}
