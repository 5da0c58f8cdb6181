/* Bad input to the hook: every case gets a specific code and a message naming what was wrong, no
 * crash, and nothing already accepted is lost. */
#include "capi_test.h"

static smd_hook *every_step_hook(const char *dir) {
  smd_hook_options *opts = NULL;
  smd_save_config *sc = NULL;
  smd_hook *hook = NULL;
  CHECK_OK(smd_hook_options_create(&opts));
  CHECK_OK(smd_save_config_create(&sc));
  CHECK_OK(smd_save_config_set(sc, SMD_MODE_ALL, 1, 0, -1, NULL, 0));
  CHECK_OK(smd_hook_options_set_save_config(opts, sc));
  CHECK_OK(smd_hook_options_set_save_all(opts, true));
  CHECK_OK(smd_hook_create(dir, opts, &hook));
  smd_save_config_free(sc);
  smd_hook_options_free(opts);
  return hook;
}

static void test_null_handles_and_pointers(void) {
  smd_hook *hook = NULL;
  smd_hook_options *opts = NULL;
  smd_save_config *sc = NULL;
  smd_reduction_config *rc = NULL;
  float v = 1;
  CHECK_ERR(smd_hook_create(NULL, NULL, &hook), SMD_E_INVALID_ARGUMENT, "out_dir");
  CHECK_ERR(smd_hook_create(scratch_path("nullout"), NULL, NULL), SMD_E_INVALID_ARGUMENT, "out");
  CHECK_ERR(smd_hook_create("", NULL, &hook), SMD_E_INVALID_ARGUMENT, "out_dir");
  CHECK_ERR(smd_hook_options_create(NULL), SMD_E_INVALID_ARGUMENT, NULL);
  CHECK_ERR(smd_hook_options_set_save_all(NULL, true), SMD_E_INVALID_ARGUMENT, "options");
  CHECK_ERR(smd_hook_options_set_worker(NULL, "w"), SMD_E_INVALID_ARGUMENT, "options");
  CHECK_ERR(smd_save_config_create(NULL), SMD_E_INVALID_ARGUMENT, NULL);
  CHECK_ERR(smd_save_config_set(NULL, SMD_MODE_ALL, 1, 0, -1, NULL, 0), SMD_E_INVALID_ARGUMENT, "config");
  CHECK_ERR(smd_reduction_config_parse(NULL, &rc), SMD_E_INVALID_ARGUMENT, "reductions");
  CHECK_ERR(smd_reduction_config_add(NULL, "min"), SMD_E_INVALID_ARGUMENT, "config");
  CHECK_ERR(smd_hook_begin_step(NULL), SMD_E_INVALID_ARGUMENT, "hook");
  CHECK_ERR(smd_hook_set_mode(NULL, SMD_MODE_TRAIN), SMD_E_INVALID_ARGUMENT, "hook");
  CHECK_ERR(smd_hook_close(NULL), SMD_E_INVALID_ARGUMENT, "hook");
  CHECK_ERR(smd_hook_flush(NULL), SMD_E_INVALID_ARGUMENT, "hook");
  CHECK_ERR(smd_hook_save_tensor(NULL, "x", SMD_DTYPE_FLOAT32, NULL, 0, &v, 4, NULL, 0),
            SMD_E_INVALID_ARGUMENT, "hook");
  CHECK_ERR(smd_hook_save_scalar(NULL, "x", 1), SMD_E_INVALID_ARGUMENT, "hook");
  CHECK_ERR(smd_hook_get_collection(NULL, "x", NULL), SMD_E_INVALID_ARGUMENT, "hook");
  CHECK(smd_hook_global_step(NULL) == -1);
  CHECK(!smd_hook_is_due(NULL, "x"));
  CHECK(!smd_hook_any_due(NULL));

  hook = every_step_hook(scratch_path("nulls"));
  CHECK_OK(smd_hook_begin_step(hook));
  CHECK_ERR(smd_hook_save_tensor(hook, NULL, SMD_DTYPE_FLOAT32, NULL, 0, &v, 4, NULL, 0),
            SMD_E_INVALID_ARGUMENT, "name");
  CHECK_ERR(smd_hook_save_tensor(hook, "x", SMD_DTYPE_FLOAT32, NULL, 0, NULL, 4, NULL, 0),
            SMD_E_INVALID_ARGUMENT, "data");
  CHECK_ERR(smd_hook_save_tensor(hook, "x", SMD_DTYPE_FLOAT32, NULL, 2, &v, 4, NULL, 0),
            SMD_E_INVALID_ARGUMENT, "shape");
  CHECK_ERR(smd_hook_save_tensor(hook, "x", SMD_DTYPE_FLOAT32, NULL, 0, &v, 4, NULL, 1),
            SMD_E_INVALID_ARGUMENT, "collections");
  const char *colls[] = {"ok", NULL};
  CHECK_ERR(smd_hook_save_tensor(hook, "x", SMD_DTYPE_FLOAT32, NULL, 0, &v, 4, colls, 2),
            SMD_E_INVALID_ARGUMENT, "collection name 1");
  CHECK_ERR(smd_hook_save_scalar(hook, NULL, 1), SMD_E_INVALID_ARGUMENT, "name");
  CHECK_ERR(smd_hook_get_collection(hook, NULL, NULL), SMD_E_INVALID_ARGUMENT, "name");
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);
  (void)opts;
  (void)sc;
}

static void test_size_and_dtype_mismatch(void) {
  const char *dir = scratch_path("sizes");
  smd_hook *hook = every_step_hook(dir);
  CHECK_OK(smd_hook_begin_step(hook));
  float data[6] = {0};
  int64_t shape[2] = {2, 3};
  CHECK_ERR(smd_hook_save_tensor(hook, "w", SMD_DTYPE_FLOAT32, shape, 2, data, 20, NULL, 0),
            SMD_E_INVALID_ARGUMENT, "20 bytes given but a float32 tensor of shape [2,3] holds 6 x 4 bytes");
  CHECK_ERR(smd_hook_save_tensor(hook, "w", SMD_DTYPE_FLOAT64, shape, 2, data, sizeof data, NULL, 0),
            SMD_E_INVALID_ARGUMENT, "float64");
  CHECK_ERR(smd_hook_save_tensor(hook, "w", (smd_dtype)42, shape, 2, data, sizeof data, NULL, 0),
            SMD_E_INVALID_ARGUMENT, "unknown dtype 42");
  CHECK_ERR(smd_hook_save_tensor(hook, "w", SMD_DTYPE_STRING, shape, 2, data, sizeof data, NULL, 0),
            SMD_E_INVALID_ARGUMENT, "string");
  int64_t neg[2] = {2, -3};
  CHECK_ERR(smd_hook_save_tensor(hook, "w", SMD_DTYPE_FLOAT32, neg, 2, data, sizeof data, NULL, 0),
            SMD_E_INVALID_ARGUMENT, "negative");
  int64_t huge[3] = {INT64_MAX, INT64_MAX, 4};
  CHECK_ERR(smd_hook_save_tensor(hook, "w", SMD_DTYPE_FLOAT32, huge, 3, data, sizeof data, NULL, 0),
            SMD_E_INVALID_ARGUMENT, "too large");
  CHECK_ERR(smd_hook_save_tensor(hook, "bad\xff", SMD_DTYPE_FLOAT32, shape, 2, data, sizeof data, NULL, 0),
            SMD_E_INVALID_ARGUMENT, "UTF-8");
  CHECK_ERR(smd_hook_save_tensor(hook, "", SMD_DTYPE_FLOAT32, shape, 2, data, sizeof data, NULL, 0),
            SMD_E_INVALID_ARGUMENT, "empty");
  /* the hook still works after all that */
  CHECK_OK(smd_hook_save_tensor(hook, "w", SMD_DTYPE_FLOAT32, shape, 2, data, sizeof data, NULL, 0));
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);
  char *idx = read_file(dir, "index/000000000/000000000000_worker_0.json");
  CHECK(idx != NULL && strstr(idx, "\"tensorname\": \"w\"") != NULL);
  free(idx);
}

static void test_bad_regex_and_reduction(void) {
  smd_hook_options *opts = NULL;
  CHECK_OK(smd_hook_options_create(&opts));
  CHECK_ERR(smd_hook_options_add_include_regex(opts, "a(b"), SMD_E_INVALID_ARGUMENT, "invalid regex 'a(b'");
  CHECK_ERR(smd_hook_options_add_include_regex(opts, "[z-a]"), SMD_E_INVALID_ARGUMENT, "[z-a]");
  CHECK_OK(smd_hook_options_add_include_regex(opts, "^(?!gradient).*weight")); /* look-ahead is fine */
  CHECK_OK(smd_hook_options_add_include_regex(opts, "(?<!auc)$"));              /* and look-behind */
  smd_hook_options_free(opts);
  smd_reduction_config *rc = NULL;
  CHECK_ERR(smd_reduction_config_parse("min,mode", &rc), SMD_E_INVALID_ARGUMENT, "'mode'");
  CHECK_ERR(smd_reduction_config_parse("abs_", &rc), SMD_E_INVALID_ARGUMENT, "abs_");
  CHECK(rc == NULL);
}

static void test_bad_json_configs(void) {
  smd_hook *hook = NULL;
  const char *malformed = "{\"LocalPath\": \"/tmp/x\", \"HookParameters\": {";
  CHECK_ERR(smd_hook_create_from_json(malformed, strlen(malformed), NULL, &hook), SMD_E_INVALID_ARGUMENT,
            "malformed JSON");
  const char *wrong_type = "{\"LocalPath\": \"/tmp/x\", \"HookParameters\": {\"save_interval\": \"often\"}}";
  CHECK_ERR(smd_hook_create_from_json(wrong_type, strlen(wrong_type), NULL, &hook), SMD_E_INVALID_ARGUMENT,
            "save_interval");
  const char *bad_bool = "{\"HookParameters\": {\"save_all\": \"yes\"}}";
  CHECK_ERR(smd_hook_create_from_json(bad_bool, strlen(bad_bool), NULL, &hook), SMD_E_INVALID_ARGUMENT,
            "save_all");
  const char *no_name = "{\"CollectionConfigurations\": [{\"CollectionParameters\": {}}]}";
  CHECK_ERR(smd_hook_create_from_json(no_name, strlen(no_name), NULL, &hook), SMD_E_INVALID_ARGUMENT,
            "CollectionName");
  const char *top_array = "[1, 2]";
  CHECK_ERR(smd_hook_create_from_json(top_array, strlen(top_array), NULL, &hook), SMD_E_INVALID_ARGUMENT,
            NULL);
  char json[1024];
  snprintf(json, sizeof json,
           "{\"LocalPath\": \"%s\", \"HookParameters\": {\"reductions\": \"min,avg\"}}",
           scratch_path("json_red"));
  CHECK_ERR(smd_hook_create_from_json(json, strlen(json), NULL, &hook), SMD_E_INVALID_ARGUMENT, "avg");
  snprintf(json, sizeof json,
           "{\"LocalPath\": \"%s\", \"CollectionConfigurations\": [{\"CollectionName\": \"mine\"}]}",
           scratch_path("json_coll"));
  CHECK_ERR(smd_hook_create_from_json(json, strlen(json), NULL, &hook), SMD_E_INVALID_ARGUMENT,
            "'mine'");
  snprintf(json, sizeof json,
           "{\"LocalPath\": \"%s\", \"HookParameters\": {\"include_regex\": \"ok, (bad\"}}",
           scratch_path("json_regex"));
  CHECK_ERR(smd_hook_create_from_json(json, strlen(json), NULL, &hook), SMD_E_INVALID_ARGUMENT, "(bad");
  snprintf(json, sizeof json, "{\"LocalPath\": \"%s\", \"HookParameters\": {\"save_interval\": 0}}",
           scratch_path("json_zero"));
  CHECK_ERR(smd_hook_create_from_json(json, strlen(json), NULL, &hook), SMD_E_INVALID_ARGUMENT,
            "save_interval");
  CHECK_ERR(smd_hook_create_from_json_file(scratch_path("no-such-config.json"), NULL, &hook),
            SMD_E_NOT_FOUND, "no-such-config.json");
  CHECK(hook == NULL);
}

static void test_finished_out_dir_is_refused(void) {
  const char *dir = scratch_path("finished");
  smd_hook *hook = every_step_hook(dir);
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);
  hook = NULL;
  CHECK_ERR(smd_hook_create(dir, NULL, &hook), SMD_E_ALREADY_EXISTS, "training_job_end.ts");
  CHECK(hook == NULL);
  /* an existing folder without the marker is accepted (smdebug does the same) */
  const char *dir2 = scratch_path("existing");
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s/other'", dir2);
  CHECK(system(cmd) == 0);
  CHECK_OK(smd_hook_create(dir2, NULL, &hook));
  smd_hook_free(hook);
}

static void test_unwritable_out_dir(void) {
  /* A folder whose parent is a regular file cannot be created, even by root. */
  const char *file = scratch_path("plainfile");
  FILE *f = fopen(file, "w");
  CHECK(f != NULL);
  if (f) fclose(f);
  char dir[8192];
  snprintf(dir, sizeof dir, "%s/sub", file);
  smd_hook *hook = NULL;
  CHECK_ERR(smd_hook_create(dir, NULL, &hook), SMD_E_IO, "plainfile");
  CHECK_ERR(smd_hook_create(file, NULL, &hook), SMD_E_IO, "plainfile");
  CHECK(hook == NULL);
  CHECK_ERR(smd_hook_create("/proc/smd-cannot-be-here", NULL, &hook), SMD_E_NOT_FOUND, "/proc");
}

static void test_names_that_escape_out_dir(void) {
  smd_hook_options *opts = NULL;
  CHECK_OK(smd_hook_options_create(&opts));
  CHECK_ERR(smd_hook_options_set_worker(opts, ".."), SMD_E_INVALID_ARGUMENT, "outside");
  CHECK_ERR(smd_hook_options_set_worker(opts, "../evil"), SMD_E_INVALID_ARGUMENT, "separator");
  CHECK_ERR(smd_hook_options_set_worker(opts, "a/b"), SMD_E_INVALID_ARGUMENT, "separator");
  CHECK_ERR(smd_hook_options_set_worker(opts, ""), SMD_E_INVALID_ARGUMENT, "empty");
  CHECK_ERR(smd_hook_options_set_worker(opts, "_job"), SMD_E_INVALID_ARGUMENT, "device");
  CHECK_ERR(smd_hook_options_set_num_workers(opts, 0), SMD_E_INVALID_ARGUMENT, "num_workers");
  CHECK_ERR(smd_hook_options_set_include_workers(opts, (smd_include_workers)5), SMD_E_INVALID_ARGUMENT, NULL);
  CHECK_ERR(smd_hook_options_set_memory_budget(opts, 0), SMD_E_INVALID_ARGUMENT, "budget");
  smd_hook_options_free(opts);
  /* worker from the environment is checked too */
  setenv("OMPI_COMM_WORLD_RANK", "3", 1);
  smd_hook *hook = NULL;
  CHECK_OK(smd_hook_create(scratch_path("envrank"), NULL, &hook));
  CHECK(strcmp(smd_hook_worker(hook), "worker_3") == 0);
  smd_hook_free(hook);
  unsetenv("OMPI_COMM_WORLD_RANK");
  /* tensor names never become paths: '/' and '..' are just characters of the tag */
  const char *dir = scratch_path("tensor_names");
  hook = every_step_hook(dir);
  float v = 1;
  CHECK_OK(smd_hook_begin_step(hook));
  CHECK_OK(smd_hook_save_tensor(hook, "../../etc/passwd", SMD_DTYPE_FLOAT32, NULL, 0, &v, 4, NULL, 0));
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);
  char *idx = read_file(dir, "index/000000000/000000000000_worker_0.json");
  CHECK(idx != NULL && strstr(idx, "\"tensorname\": \"../../etc/passwd\"") != NULL);
  free(idx);
}

static void test_writer_failure_is_reported_and_earlier_steps_survive(void) {
  const char *dir = scratch_path("failing");
  smd_hook *hook = every_step_hook(dir);
  float v = 1;
  CHECK_OK(smd_hook_begin_step(hook));
  CHECK_OK(smd_hook_save_tensor(hook, "x", SMD_DTYPE_FLOAT32, NULL, 0, &v, 4, NULL, 0));
  CHECK_OK(smd_hook_begin_step(hook));
  CHECK_OK(smd_hook_flush(hook));
  /* step 0 is complete; now make the events folder impossible to create for step 1 */
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "rm -rf '%s/events' && touch '%s/events'", dir, dir);
  CHECK(system(cmd) == 0);
  CHECK_OK(smd_hook_save_tensor(hook, "x", SMD_DTYPE_FLOAT32, NULL, 0, &v, 4, NULL, 0));
  smd_error *err = smd_hook_flush(hook);
  CHECK(err != NULL && smd_error_code(err) == SMD_E_IO);
  if (err) CHECK(strstr(smd_error_message(err), "step 1") != NULL);
  smd_error_free(err);
  /* the failure is sticky: later saves and close report it */
  CHECK_ERR(smd_hook_save_tensor(hook, "x", SMD_DTYPE_FLOAT32, NULL, 0, &v, 4, NULL, 0), SMD_E_IO, NULL);
  CHECK_ERR(smd_hook_close(hook), SMD_E_IO, "events");
  smd_hook_free(hook);
  CHECK(file_exists(dir, "index/000000000/000000000000_worker_0.json"));
  CHECK(!file_exists(dir, "index/000000000/000000000001_worker_0.json"));
}

static void test_two_writers_one_folder(void) {
  const char *dir = scratch_path("claimed");
  smd_hook *a = every_step_hook(dir);
  smd_hook *b = every_step_hook(dir);
  float v = 1;
  CHECK_OK(smd_hook_begin_step(a));
  CHECK_OK(smd_hook_save_tensor(a, "x", SMD_DTYPE_FLOAT32, NULL, 0, &v, 4, NULL, 0));
  CHECK_OK(smd_hook_flush(a));
  CHECK_OK(smd_hook_begin_step(b));
  CHECK_OK(smd_hook_save_tensor(b, "x", SMD_DTYPE_FLOAT32, NULL, 0, &v, 4, NULL, 0));
  smd_error_free(smd_hook_begin_step(b)); /* may already report the claim error, or not yet */
  CHECK_ERR(smd_hook_close(b), SMD_E_ALREADY_EXISTS, "claim.smd");
  CHECK_OK(smd_hook_close(a));
  smd_hook_free(a);
  smd_hook_free(b);
}

int main(int argc, char **argv) {
  static const struct capi_test tests[] = {
      TEST_ENTRY(test_null_handles_and_pointers),
      TEST_ENTRY(test_size_and_dtype_mismatch),
      TEST_ENTRY(test_bad_regex_and_reduction),
      TEST_ENTRY(test_bad_json_configs),
      TEST_ENTRY(test_finished_out_dir_is_refused),
      TEST_ENTRY(test_unwritable_out_dir),
      TEST_ENTRY(test_names_that_escape_out_dir),
      TEST_ENTRY(test_writer_failure_is_reported_and_earlier_steps_survive),
      TEST_ENTRY(test_two_writers_one_folder),
  };
  return capi_run(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
