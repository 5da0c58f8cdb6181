/* Names and paths given by callers, and the hook configuration file: what smd refuses, with an
 * error naming the problem, instead of hanging, cutting a name short or writing what cannot be
 * read back. */
#include "capi_test.h" /* first: it sets _POSIX_C_SOURCE */

#include <fcntl.h>
#include <sys/types.h>

static smd_hook *create_hook_with_worker(const char *dir, const char *worker) {
  smd_hook_options *o = NULL;
  smd_hook *hook = NULL;
  CHECK_OK(smd_hook_options_create(&o));
  CHECK_OK(smd_hook_options_set_worker(o, worker));
  CHECK_OK(smd_hook_create(dir, o, &hook));
  smd_hook_options_free(o);
  return hook;
}

/* SMDEBUG_CONFIG_FILE_PATH naming a folder, a FIFO (no writer: opening it for reading used to
 * wait forever), an endless device or a huge file. */
static void test_config_file_must_be_a_small_regular_file(void) {
  smd_hook *hook = NULL;
  const char *folder = scratch_path("config-folder");
  CHECK(mkdir(folder, 0755) == 0);
  CHECK_ERR(smd_hook_create_from_json_file(folder, NULL, &hook), SMD_E_INVALID_ARGUMENT, "is a folder");
  setenv("SMDEBUG_CONFIG_FILE_PATH", folder, 1);
  CHECK_ERR(smd_hook_create_from_json_file(NULL, NULL, &hook), SMD_E_INVALID_ARGUMENT, folder);
  unsetenv("SMDEBUG_CONFIG_FILE_PATH");

  const char *fifo = scratch_path("config-fifo");
  CHECK(mkfifo(fifo, 0600) == 0);
  CHECK_ERR(smd_hook_create_from_json_file(fifo, NULL, &hook), SMD_E_INVALID_ARGUMENT, "is a FIFO");

  CHECK_ERR(smd_hook_create_from_json_file("/dev/zero", NULL, &hook), SMD_E_INVALID_ARGUMENT,
            "'/dev/zero' is a device");

  const char *big = scratch_path("config-big.json");
  int fd = open(big, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0);
  if (fd >= 0) {
    CHECK(ftruncate(fd, (off_t)(16 << 20) + 1) == 0); /* sparse: no disk used */
    close(fd);
  }
  CHECK_ERR(smd_hook_create_from_json_file(big, NULL, &hook), SMD_E_INVALID_ARGUMENT,
            "larger than 16777216 bytes");
  CHECK(hook == NULL);

  CHECK_ERR(smd_hook_create_from_json_file(scratch_path("absent.json"), NULL, &hook), SMD_E_NOT_FOUND,
            "absent.json");
}

/* cJSON ends a string at a \u0000 escape: LocalPath "<dir>\u0000x" would have written into <dir>,
 * and two collection names differing after the NUL would have been one. */
static void test_json_nul_escape_refused(void) {
  const char *dir = scratch_path("json-nul");
  char json[1024];
  smd_hook *hook = NULL;
  snprintf(json, sizeof json, "{\"LocalPath\": \"%s\\u0000x\"}", dir);
  CHECK_ERR(smd_hook_create_from_json(json, strlen(json), NULL, &hook), SMD_E_INVALID_ARGUMENT,
            "\\u0000");
  CHECK(hook == NULL);
  CHECK(!file_exists(dir, ""));
  snprintf(json, sizeof json,
           "{\"LocalPath\": \"%s\", \"CollectionConfigurations\": [{\"CollectionName\": \"a\\u0000b\", "
           "\"CollectionParameters\": {\"include_regex\": \"x\"}}]}",
           dir);
  CHECK_ERR(smd_hook_create_from_json(json, strlen(json), NULL, &hook), SMD_E_INVALID_ARGUMENT,
            "NUL");
  CHECK(!file_exists(dir, ""));
  /* An escaped backslash before "u0000" is text, not a NUL. */
  snprintf(json, sizeof json, "{\"LocalPath\": \"%s\", \"S3OutputPath\": \"s3://b/a\\\\u0000\"}", dir);
  CHECK_OK(smd_hook_create_from_json(json, strlen(json), NULL, &hook));
  if (hook != NULL) CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);
}

/* The worker name goes into file names ("<step>_<worker>.tfevents"): one too long for a file
 * name is refused when given, not at the first write. */
static void test_worker_name_length(void) {
  char name[10001];
  memset(name, 'w', sizeof name - 1);
  name[sizeof name - 1] = '\0';
  smd_hook_options *o = NULL;
  CHECK_OK(smd_hook_options_create(&o));
  CHECK_ERR(smd_hook_options_set_worker(o, name), SMD_E_INVALID_ARGUMENT, "at most 221");
  name[222] = '\0';
  CHECK_ERR(smd_hook_options_set_worker(o, name), SMD_E_INVALID_ARGUMENT, "222 bytes long");
  smd_hook_options_free(o);

  /* 221 bytes: every file the hook writes can be made. */
  name[221] = '\0';
  const char *dir = scratch_path("long-worker");
  smd_hook *hook = create_hook_with_worker(dir, name);
  if (hook == NULL) return;
  float v = 1;
  CHECK_OK(smd_hook_begin_step(hook));
  CHECK_OK(smd_hook_save_tensor(hook, "losses/x", SMD_DTYPE_FLOAT32, NULL, 0, &v, sizeof v, NULL, 0));
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);
  char rel[512];
  snprintf(rel, sizeof rel, "events/000000000000/000000000000_%s.tfevents", name);
  CHECK(file_exists(dir, rel));
  snprintf(rel, sizeof rel, "collections/000000000/%s_collections.json", name);
  CHECK(file_exists(dir, rel));
}

/* smdebug's create_trial (and smd's trial) strip the path: a hook writing into " <dir>" could
 * not be read back by the name it was given. */
static void test_out_dir_with_surrounding_whitespace_refused(void) {
  char path[4200];
  smd_hook *hook = NULL;
  snprintf(path, sizeof path, " %s", scratch_path("spaced"));
  CHECK_ERR(smd_hook_create(path, NULL, &hook), SMD_E_INVALID_ARGUMENT, "whitespace");
  snprintf(path, sizeof path, "%s ", scratch_path("spaced"));
  CHECK_ERR(smd_hook_create(path, NULL, &hook), SMD_E_INVALID_ARGUMENT, "whitespace");
  snprintf(path, sizeof path, "%s\n", scratch_path("spaced"));
  CHECK_ERR(smd_hook_create(path, NULL, &hook), SMD_E_INVALID_ARGUMENT, "whitespace");
  CHECK(hook == NULL);
  /* Inner spaces are part of the name. */
  CHECK_OK(smd_hook_create(scratch_path("in ner"), NULL, &hook));
  if (hook != NULL) CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);
}

/* Names are UTF-8 (smdebug's files are JSON text): invalid bytes are refused where a collection
 * name enters, not replaced later. */
static void test_invalid_utf8_collection_names_refused(void) {
  smd_hook_options *o = NULL;
  CHECK_OK(smd_hook_options_create(&o));
  CHECK_ERR(smd_hook_options_add_include_collection(o, "bad\xff"), SMD_E_INVALID_ARGUMENT, "UTF-8");
  smd_hook_options_free(o);

  const char *dir = scratch_path("utf8-names");
  smd_hook *hook = NULL;
  CHECK_OK(smd_hook_create(dir, NULL, &hook));
  if (hook == NULL) return;
  float v = 1;
  const char *colls[] = {"ok", "bad\xc3("};
  CHECK_OK(smd_hook_begin_step(hook));
  CHECK_ERR(smd_hook_save_tensor(hook, "t", SMD_DTYPE_FLOAT32, NULL, 0, &v, sizeof v, colls, 2),
            SMD_E_INVALID_ARGUMENT, "collection name 1 of tensor 't' is not valid UTF-8");
  CHECK_ERR(smd_hook_include_collection(hook, "\xed\xa0\x80"), SMD_E_INVALID_ARGUMENT, "UTF-8");
  smd_collection *c = NULL;
  CHECK_ERR(smd_hook_get_collection(hook, "\xff", &c), SMD_E_INVALID_ARGUMENT, "UTF-8");
  smd_strarray names = {0};
  CHECK_OK(smd_hook_collection_names(hook, &names));
  for (size_t i = 0; i < names.count; ++i) CHECK(strncmp(names.strings[i], "bad", 3) != 0);
  smd_strarray_free(&names);
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);
}

int main(int argc, char **argv) {
  static const struct capi_test tests[] = {
      TEST_ENTRY(test_config_file_must_be_a_small_regular_file),
      TEST_ENTRY(test_json_nul_escape_refused),
      TEST_ENTRY(test_worker_name_length),
      TEST_ENTRY(test_out_dir_with_surrounding_whitespace_refused),
      TEST_ENTRY(test_invalid_utf8_collection_names_refused),
  };
  return capi_run(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
