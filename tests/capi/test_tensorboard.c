/* TensorBoard export through the C API: the hook options, the JSON keys, and the writer of
 * smd/tensorboard.h (files, errors, lifecycle). The content of the files is checked by the C++
 * tests and, with the real tensorboard package, by tests/interop/test_tensorboard.py. */
#include <dirent.h>
#include <math.h>

#include "capi_test.h"

/* "<pid>_<hostname>": the part of TensorBoard file names after the step. */
static const char *process_tag(void) {
  static char buf[512];
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  snprintf(buf, sizeof buf, "%ld_%s", (long)getpid(), host);
  return buf;
}

static const char *tb_file(const char *mode, long step) {
  static char buf[4][1024];
  static int next = 0;
  char *p = buf[next++ % 4];
  snprintf(p, 1024, "%s/%012ld_%s.tfevents", mode, step, process_tag());
  return p;
}

/* Number of entries (not . or ..) of a folder; -1 if it does not exist. */
static int count_entries(const char *dir) {
  DIR *d = opendir(dir);
  if (d == NULL) return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) ++n;
  }
  closedir(d);
  return n;
}

static smd_hook_options *every_step(void) {
  smd_hook_options *opts = NULL;
  smd_save_config *sc = NULL;
  CHECK_OK(smd_hook_options_create(&opts));
  CHECK_OK(smd_save_config_create(&sc));
  CHECK_OK(smd_save_config_set(sc, SMD_MODE_ALL, 1, 0, -1, NULL, 0));
  CHECK_OK(smd_hook_options_set_save_config(opts, sc));
  smd_save_config_free(sc);
  CHECK_OK(smd_hook_options_set_worker(opts, "worker_0"));
  CHECK_OK(smd_hook_options_set_num_workers(opts, 1));
  return opts;
}

/* Two TRAIN steps and one EVAL step saving a loss and a weight, plus a save_scalar. */
static void run_small_job(smd_hook *hook) {
  const float loss = 0.5f, w[4] = {1, 2, -3, 0};
  const int64_t one = 1, four = 4;
  CHECK_OK(smd_hook_set_mode(hook, SMD_MODE_TRAIN));
  for (int s = 0; s < 2; ++s) {
    CHECK_OK(smd_hook_begin_step(hook));
    CHECK_OK(smd_hook_save_tensor(hook, "loss", SMD_DTYPE_FLOAT32, &one, 1, &loss, 4, NULL, 0));
    CHECK_OK(smd_hook_save_tensor(hook, "fc.weight", SMD_DTYPE_FLOAT32, &four, 1, w, 16, NULL, 0));
    CHECK_OK(smd_hook_save_scalar(hook, "lr", 0.1));
  }
  CHECK_OK(smd_hook_set_mode(hook, SMD_MODE_EVAL));
  CHECK_OK(smd_hook_begin_step(hook));
  CHECK_OK(smd_hook_save_tensor(hook, "loss", SMD_DTYPE_FLOAT32, &one, 1, &loss, 4, NULL, 0));
}

static void test_option_setters(void) {
  smd_hook_options *opts = NULL;
  CHECK_OK(smd_hook_options_create(&opts));
  CHECK_ERR(smd_hook_options_set_export_tensorboard(NULL, true), SMD_E_INVALID_ARGUMENT, "options");
  CHECK_ERR(smd_hook_options_set_tensorboard_dir(NULL, "/x"), SMD_E_INVALID_ARGUMENT, "options");
  CHECK_OK(smd_hook_options_set_tensorboard_dir(opts, "s3://bucket/tb"));
  {
    /* one storage-options object, copied by every options object that takes it */
    smd_storage_options *st = NULL;
    smd_trial_options *topts = NULL;
    CHECK_ERR(smd_storage_options_create(NULL), SMD_E_INVALID_ARGUMENT, "out");
    CHECK_OK(smd_storage_options_create(&st));
    CHECK_ERR(smd_storage_options_set_s3_endpoint(st, "ftp://x"), SMD_E_INVALID_ARGUMENT, "ftp://x");
    CHECK_ERR(smd_storage_options_set_s3_addressing_style(st, "sideways"), SMD_E_INVALID_ARGUMENT, "sideways");
    CHECK_ERR(smd_storage_options_set_s3_credentials(st, "AKID", NULL, NULL), SMD_E_INVALID_ARGUMENT, "secret");
    CHECK_ERR(smd_storage_options_set_s3_credentials(st, NULL, NULL, "tok"), SMD_E_INVALID_ARGUMENT, "token");
    CHECK_ERR(smd_storage_options_set_s3_region(NULL, "x"), SMD_E_INVALID_ARGUMENT, "options");
    CHECK_ERR(smd_storage_options_set_s3_retries(st, -1, 0, 0), SMD_E_INVALID_ARGUMENT, ">= 0");
    CHECK_ERR(smd_storage_options_set_s3_retries(st, 0, 0, -5), SMD_E_INVALID_ARGUMENT, ">= 0");
    CHECK_ERR(smd_storage_options_set_s3_retries(NULL, 1, 1, 1), SMD_E_INVALID_ARGUMENT, "options");
    CHECK_OK(smd_storage_options_set_s3_endpoint(st, "http://127.0.0.1:9"));
    CHECK_OK(smd_storage_options_set_s3_addressing_style(st, "virtual"));
    CHECK_OK(smd_storage_options_set_s3_credentials(st, NULL, NULL, NULL));
    CHECK_OK(smd_storage_options_set_s3_retries(st, 3, 10, 1000));
    CHECK_ERR(smd_hook_options_set_storage(NULL, st), SMD_E_INVALID_ARGUMENT, "options");
    CHECK_OK(smd_hook_options_set_storage(opts, st));
    CHECK_OK(smd_hook_options_set_storage(opts, NULL));
    CHECK_OK(smd_trial_options_create(&topts));
    CHECK_ERR(smd_trial_options_set_storage(NULL, st), SMD_E_INVALID_ARGUMENT, "options");
    CHECK_OK(smd_trial_options_set_storage(topts, st));
    smd_storage_options_free(st); /* copied: the options keep their own */
    smd_storage_options_free(NULL);
    smd_trial_options_free(topts);
  }
  CHECK_OK(smd_hook_options_set_export_tensorboard(opts, true));
  CHECK_OK(smd_hook_options_set_export_tensorboard(opts, false));
  /* A folder, then NULL: unset again, so this hook exports nothing. */
  CHECK_OK(smd_hook_options_set_tensorboard_dir(opts, scratch_path("unset_tb")));
  CHECK_OK(smd_hook_options_set_tensorboard_dir(opts, NULL));
  smd_hook_options_free(opts);
  opts = every_step();
  CHECK_OK(smd_hook_options_set_tensorboard_dir(opts, scratch_path("unset_tb")));
  CHECK_OK(smd_hook_options_set_tensorboard_dir(opts, ""));
  smd_hook *hook = NULL;
  const char *dir = scratch_path("setters_out");
  CHECK_OK(smd_hook_create(dir, opts, &hook));
  run_small_job(hook);
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);
  smd_hook_options_free(opts);
  CHECK(count_entries(scratch_path("unset_tb")) == -1);
  CHECK(!file_exists(dir, "tensorboard"));
}

static void test_export_into_out_dir(void) {
  smd_hook_options *opts = every_step();
  CHECK_OK(smd_hook_options_set_export_tensorboard(opts, true));
  smd_hook *hook = NULL;
  const char *dir = scratch_path("export_out");
  CHECK_OK(smd_hook_create(dir, opts, &hook));
  run_small_job(hook);
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);
  smd_hook_options_free(opts);
  char tb[4096];
  snprintf(tb, sizeof tb, "%s/tensorboard", dir);
  CHECK(count_entries(tb) == 2); /* TRAIN, EVAL */
  CHECK(file_size(tb, tb_file("TRAIN", 0)) > 0);
  CHECK(file_size(tb, tb_file("TRAIN", 1)) > 0);
  CHECK(file_size(tb, tb_file("EVAL", 2)) > 0);
  /* The smdebug trial itself is unchanged. */
  CHECK(file_exists(dir, "events/000000000000/000000000000_worker_0.tfevents"));
  CHECK(file_exists(dir, "training_job_end.ts"));
}

static void test_tensorboard_dir_alone_enables(void) {
  smd_hook_options *opts = every_step();
  const char *tb = scratch_path("elsewhere/tb");
  CHECK_OK(smd_hook_options_set_tensorboard_dir(opts, tb));
  smd_hook *hook = NULL;
  const char *dir = scratch_path("alone_out");
  CHECK_OK(smd_hook_create(dir, opts, &hook));
  run_small_job(hook);
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);
  smd_hook_options_free(opts);
  CHECK(file_size(tb, tb_file("TRAIN", 0)) > 0);
  CHECK(file_size(tb, tb_file("EVAL", 2)) > 0);
  CHECK(!file_exists(dir, "tensorboard"));
}

static void test_flush_writes_the_open_step(void) {
  smd_hook_options *opts = every_step();
  const char *tb = scratch_path("flush_tb");
  CHECK_OK(smd_hook_options_set_tensorboard_dir(opts, tb));
  smd_hook *hook = NULL;
  CHECK_OK(smd_hook_create(scratch_path("flush_out"), opts, &hook));
  const float loss = 0.5f;
  const int64_t one = 1;
  CHECK_OK(smd_hook_set_mode(hook, SMD_MODE_TRAIN));
  CHECK_OK(smd_hook_begin_step(hook));
  CHECK_OK(smd_hook_save_tensor(hook, "loss", SMD_DTYPE_FLOAT32, &one, 1, &loss, 4, NULL, 0));
  CHECK(file_size(tb, tb_file("TRAIN", 0)) <= 0);
  CHECK_OK(smd_hook_flush(hook)); /* the step is still open; its TensorBoard records are written */
  long size = file_size(tb, tb_file("TRAIN", 0));
  CHECK(size > 0);
  CHECK_OK(smd_hook_save_tensor(hook, "loss", SMD_DTYPE_FLOAT32, &one, 1, &loss, 4, NULL, 0));
  CHECK_OK(smd_hook_close(hook));
  CHECK(file_size(tb, tb_file("TRAIN", 0)) > size);
  smd_hook_free(hook);
  smd_hook_options_free(opts);
}

static void test_dry_run_exports_nothing(void) {
  smd_hook_options *opts = every_step();
  const char *tb = scratch_path("dry_tb");
  CHECK_OK(smd_hook_options_set_tensorboard_dir(opts, tb));
  CHECK_OK(smd_hook_options_set_dry_run(opts, true));
  smd_hook *hook = NULL;
  CHECK_OK(smd_hook_create(scratch_path("dry_out"), opts, &hook));
  run_small_job(hook);
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);
  smd_hook_options_free(opts);
  CHECK(count_entries(tb) == -1);
}

static void test_json_keys(void) {
  char json[8192];
  const char *dir = scratch_path("json_out");
  const char *tb = scratch_path("json_tb");
  unsetenv("TRAINING_JOB_NAME");
  snprintf(json, sizeof json,
           "{\"LocalPath\": \"%s\", \"HookParameters\": {\"save_interval\": \"1\", "
           "\"export_tensorboard\": \"false\", \"tensorboard_dir\": \"%s\"}}",
           dir, tb);
  smd_hook_options *opts = every_step();
  smd_hook *hook = NULL;
  CHECK_OK(smd_hook_create_from_json(json, strlen(json), opts, &hook));
  run_small_job(hook);
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);
  /* export_tensorboard false with a folder: exported anyway, as smdebug. */
  CHECK(file_size(tb, tb_file("TRAIN", 1)) > 0);

  const char *dir2 = scratch_path("json_out2");
  snprintf(json, sizeof json,
           "{\"LocalPath\": \"%s\", \"HookParameters\": {\"save_interval\": 1, "
           "\"export_tensorboard\": true}}",
           dir2);
  CHECK_OK(smd_hook_create_from_json(json, strlen(json), opts, &hook));
  run_small_job(hook);
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);
  char tb2[4096];
  snprintf(tb2, sizeof tb2, "%s/tensorboard", dir2);
  CHECK(file_size(tb2, tb_file("EVAL", 2)) > 0);
  snprintf(json, sizeof json, "{\"LocalPath\": \"%s\", \"HookParameters\": {\"export_tensorboard\": 3}}",
           scratch_path("json_out3"));
  CHECK_ERR(smd_hook_create_from_json(json, strlen(json), opts, &hook), SMD_E_INVALID_ARGUMENT,
            "export_tensorboard");
  smd_hook_options_free(opts);
}

static void test_write_errors_surface(void) {
  /* The log folder cannot be created: a file stands in its way. */
  const char *blocker = scratch_path("blocker");
  FILE *f = fopen(blocker, "w");
  CHECK(f != NULL);
  if (f) fclose(f);
  char tb[4096];
  snprintf(tb, sizeof tb, "%s/tb", blocker);
  smd_hook_options *opts = every_step();
  CHECK_OK(smd_hook_options_set_tensorboard_dir(opts, tb));
  smd_hook *hook = NULL;
  CHECK_OK(smd_hook_create(scratch_path("blocked_out"), opts, &hook));
  CHECK_OK(smd_hook_begin_step(hook));
  CHECK_OK(smd_hook_save_scalar(hook, "x", 1.0));
  /* Step 0 is written in the background: this call may already report the failure. */
  smd_error *e = smd_hook_begin_step(hook);
  CHECK(e == NULL || (smd_error_code(e) == SMD_E_IO && strstr(smd_error_message(e), "blocker") != NULL));
  smd_error_free(e);
  CHECK_ERR(smd_hook_close(hook), SMD_E_IO, "blocker"); /* sticky: close returns it (again) */
  smd_hook_free(hook);
  smd_hook_options_free(opts);
}

static void test_writer_files_and_steps(void) {
  const char *dir = scratch_path("writer_tb");
  smd_tensorboard_writer *w = NULL;
  CHECK_OK(smd_tensorboard_writer_create(dir, NULL, &w));
  CHECK(count_entries(dir) == -1); /* nothing until the first record */
  const double v[5] = {0.5, -1, 2, NAN, 1e30};
  bool written = false;
  CHECK_OK(smd_tensorboard_writer_add_scalar(w, 0, SMD_MODE_TRAIN, 1700000000.0, "loss", 1.5));
  CHECK_OK(smd_tensorboard_writer_add_histogram(w, 0, SMD_MODE_TRAIN, 0, "weights/fc.w", SMD_DTYPE_FLOAT64,
                                                v, sizeof v, &written));
  CHECK(written);
  CHECK_OK(smd_tensorboard_writer_add_scalar(w, 7, SMD_MODE_PREDICT, 0, "loss", 2.5));
  CHECK_OK(smd_tensorboard_writer_flush(w));
  long before = file_size(dir, tb_file("TRAIN", 0));
  CHECK(before > 0);
  /* Step 1 of TRAIN completes the step-0 file and starts another. */
  CHECK_OK(smd_tensorboard_writer_add_scalar(w, 1, SMD_MODE_TRAIN, 0, "loss", 1.25));
  CHECK(file_size(dir, tb_file("TRAIN", 0)) == before);
  /* Nothing within the buckets: no histogram, no file. */
  const float nan_only[2] = {NAN, NAN};
  written = true;
  CHECK_OK(smd_tensorboard_writer_add_histogram(w, 3, SMD_MODE_EVAL, 0, "h", SMD_DTYPE_FLOAT32, nan_only,
                                                sizeof nan_only, &written));
  CHECK(!written);
  CHECK_OK(smd_tensorboard_writer_close(w));
  CHECK_OK(smd_tensorboard_writer_close(w)); /* again: nothing */
  CHECK(file_size(dir, tb_file("TRAIN", 1)) > 0);
  CHECK(file_size(dir, tb_file("PREDICT", 7)) > 0);
  CHECK(count_entries(dir) == 2); /* TRAIN, PREDICT: no EVAL */
  CHECK_ERR(smd_tensorboard_writer_add_scalar(w, 2, SMD_MODE_TRAIN, 0, "loss", 1), SMD_E_INVALID_STATE,
            "closed");
  CHECK_ERR(smd_tensorboard_writer_flush(w), SMD_E_INVALID_STATE, "closed");
  smd_tensorboard_writer_free(w);
  smd_tensorboard_writer_free(NULL);
}

static void test_writer_argument_errors(void) {
  smd_tensorboard_writer *w = NULL;
  CHECK_ERR(smd_tensorboard_writer_create(NULL, NULL, &w), SMD_E_INVALID_ARGUMENT, "dir");
  CHECK_ERR(smd_tensorboard_writer_create("", NULL, &w), SMD_E_INVALID_ARGUMENT, "dir");
  /* An S3 folder is opened with the first record: a bad bucket name fails there, naming it. */
  CHECK_OK(smd_tensorboard_writer_create("s3://b/p", NULL, &w));
  CHECK_ERR(smd_tensorboard_writer_add_scalar(w, 0, SMD_MODE_TRAIN, 0, "t", 1), SMD_E_INVALID_ARGUMENT,
            "s3://b/p");
  smd_tensorboard_writer_free(w);
  w = NULL;
  {
    /* the writer reaches S3 with the storage options it was given (here: nothing listens) */
    smd_storage_options *st = NULL;
    CHECK_OK(smd_storage_options_create(&st));
    CHECK_OK(smd_storage_options_set_s3_endpoint(st, "http://127.0.0.1:9"));
    CHECK_OK(smd_storage_options_set_s3_credentials(st, "AKIDEXAMPLE", "not-a-real-secret", NULL));
    CHECK_OK(smd_storage_options_set_s3_retries(st, 1, 1, 1000));
    CHECK_OK(smd_tensorboard_writer_create("s3://bucket/tb", st, &w));
    smd_storage_options_free(st);
    smd_error *e = smd_tensorboard_writer_add_scalar(w, 0, SMD_MODE_TRAIN, 0, "t", 1);
    if (e == NULL) e = smd_tensorboard_writer_close(w);
    CHECK(e != NULL && smd_error_code(e) == SMD_E_IO); /* cannot reach the endpoint */
    CHECK(e != NULL && strstr(smd_error_message(e), "127.0.0.1:9") != NULL);
    smd_error_free(e);
    smd_tensorboard_writer_free(w);
    w = NULL;
  }
  CHECK_ERR(smd_tensorboard_writer_create("/x", NULL, NULL), SMD_E_INVALID_ARGUMENT, "out");
  CHECK_OK(smd_tensorboard_writer_create(scratch_path("args_tb"), NULL, &w));
  const float x[3] = {1, 2, 3};
  const unsigned char b[2] = {1, 0};
  CHECK_ERR(smd_tensorboard_writer_add_scalar(NULL, 0, SMD_MODE_TRAIN, 0, "t", 1), SMD_E_INVALID_ARGUMENT,
            "writer");
  CHECK_ERR(smd_tensorboard_writer_add_scalar(w, 0, SMD_MODE_TRAIN, 0, NULL, 1), SMD_E_INVALID_ARGUMENT,
            "tag");
  CHECK_ERR(smd_tensorboard_writer_add_scalar(w, 0, (smd_mode)9, 0, "t", 1), SMD_E_INVALID_ARGUMENT,
            "mode");
  /* Files are named by the zero-padded step: -1 would sort before -2. */
  CHECK_ERR(smd_tensorboard_writer_add_scalar(w, -1, SMD_MODE_TRAIN, 0, "t", 1), SMD_E_INVALID_ARGUMENT,
            "step -1 is negative");
  CHECK_ERR(smd_tensorboard_writer_add_histogram(w, -2, SMD_MODE_TRAIN, 0, "t", SMD_DTYPE_FLOAT32, x,
                                                 sizeof x, NULL),
            SMD_E_INVALID_ARGUMENT, "step -2 is negative");
  CHECK_ERR(smd_tensorboard_writer_add_scalar(w, 0, SMD_MODE_TRAIN, -1, "t", 1), SMD_E_INVALID_ARGUMENT,
            "wall time");
  CHECK_ERR(smd_tensorboard_writer_add_scalar(w, 0, SMD_MODE_TRAIN, 0, "///", 1), SMD_E_INVALID_ARGUMENT,
            "sanitized");
  CHECK_ERR(smd_tensorboard_writer_add_histogram(w, 0, SMD_MODE_TRAIN, 0, "t", SMD_DTYPE_BOOL, b, 2, NULL),
            SMD_E_INVALID_ARGUMENT, "bool");
  CHECK_ERR(smd_tensorboard_writer_add_histogram(w, 0, SMD_MODE_TRAIN, 0, "t", SMD_DTYPE_STRING, x, 4, NULL),
            SMD_E_INVALID_ARGUMENT, "dtype");
  CHECK_ERR(smd_tensorboard_writer_add_histogram(w, 0, SMD_MODE_TRAIN, 0, "t", SMD_DTYPE_FLOAT32, x, 6, NULL),
            SMD_E_INVALID_ARGUMENT, "nbytes");
  CHECK_ERR(smd_tensorboard_writer_add_histogram(w, 0, SMD_MODE_TRAIN, 0, "t", SMD_DTYPE_FLOAT32, x, 0, NULL),
            SMD_E_INVALID_ARGUMENT, "nbytes");
  CHECK_ERR(smd_tensorboard_writer_add_histogram(w, 0, SMD_MODE_TRAIN, 0, "t", SMD_DTYPE_FLOAT32, NULL, 4,
                                                 NULL),
            SMD_E_INVALID_ARGUMENT, "data");
  CHECK_OK(smd_tensorboard_writer_add_histogram(w, 0, SMD_MODE_TRAIN, 0, "t", SMD_DTYPE_FLOAT32, x,
                                                sizeof x, NULL));
  CHECK_OK(smd_tensorboard_writer_close(w));
  smd_tensorboard_writer_free(w);
}

static void test_writer_io_error_is_sticky(void) {
  const char *blocker = scratch_path("blocker2");
  FILE *f = fopen(blocker, "w");
  if (f) fclose(f);
  char tb[4096];
  snprintf(tb, sizeof tb, "%s/tb", blocker);
  smd_tensorboard_writer *w = NULL;
  CHECK_OK(smd_tensorboard_writer_create(tb, NULL, &w));
  CHECK_ERR(smd_tensorboard_writer_add_scalar(w, 0, SMD_MODE_TRAIN, 0, "t", 1), SMD_E_IO, "blocker2");
  CHECK_ERR(smd_tensorboard_writer_add_scalar(w, 5, SMD_MODE_EVAL, 0, "t", 1), SMD_E_IO, "blocker2");
  CHECK_ERR(smd_tensorboard_writer_close(w), SMD_E_IO, "blocker2");
  smd_tensorboard_writer_free(w);
}

int main(int argc, char **argv) {
  static const struct capi_test tests[] = {
      TEST_ENTRY(test_option_setters),
      TEST_ENTRY(test_export_into_out_dir),
      TEST_ENTRY(test_tensorboard_dir_alone_enables),
      TEST_ENTRY(test_flush_writes_the_open_step),
      TEST_ENTRY(test_dry_run_exports_nothing),
      TEST_ENTRY(test_json_keys),
      TEST_ENTRY(test_write_errors_surface),
      TEST_ENTRY(test_writer_files_and_steps),
      TEST_ENTRY(test_writer_argument_errors),
      TEST_ENTRY(test_writer_io_error_is_sticky),
  };
  return capi_run(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
