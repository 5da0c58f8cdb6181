/* The hook through the C API: configuration objects, steps and modes, what gets written where. */
#include <math.h>

#include "capi_test.h"

static smd_hook *make_hook(const char *dir, smd_hook_options *opts) {
  smd_hook *hook = NULL;
  CHECK_OK(smd_hook_create(dir, opts, &hook));
  return hook;
}

static smd_hook_options *options_every_step(void) {
  smd_hook_options *opts = NULL;
  smd_save_config *sc = NULL;
  CHECK_OK(smd_hook_options_create(&opts));
  CHECK_OK(smd_save_config_create(&sc));
  CHECK_OK(smd_save_config_set(sc, SMD_MODE_ALL, 1, 0, -1, NULL, 0));
  CHECK_OK(smd_hook_options_set_save_config(opts, sc));
  smd_save_config_free(sc);
  CHECK_OK(smd_hook_options_set_wall_time_base(opts, 1700000000.0));
  return opts;
}

static void test_version(void) {
  int32_t ma = -1, mi = -1, pa = -1;
  smd_version(&ma, &mi, &pa);
  smd_version(NULL, NULL, NULL); /* each out-parameter may be NULL */
  CHECK(ma == SMD_VERSION_MAJOR && mi == SMD_VERSION_MINOR && pa == SMD_VERSION_PATCH);
  CHECK(strcmp(smd_version_string(), SMD_VERSION_STRING) == 0);
  CHECK(SMD_VERSION_CHECK(0, 0, 1));
}

static void test_free_functions_accept_null(void) {
  smd_error_free(NULL);
  smd_save_config_free(NULL);
  smd_reduction_config_free(NULL);
  smd_hook_options_free(NULL);
  smd_hook_free(NULL);
  smd_collection_free(NULL);
  smd_strarray_free(NULL);
  smd_free(NULL);
  CHECK(smd_error_code(NULL) == SMD_OK);
  CHECK(strcmp(smd_error_message(NULL), "") == 0);
}

static void test_dtypes_and_modes(void) {
  smd_dtype t;
  CHECK(smd_dtype_size(SMD_DTYPE_BFLOAT16) == 2);
  CHECK(smd_dtype_size(SMD_DTYPE_COMPLEX128) == 16);
  CHECK(strcmp(smd_dtype_name(SMD_DTYPE_UINT32), "uint32") == 0);
  CHECK(smd_dtype_name((smd_dtype)99) == NULL);
  CHECK_OK(smd_dtype_from_name("float16", &t));
  CHECK(t == SMD_DTYPE_FLOAT16);
  CHECK_ERR(smd_dtype_from_name("float128", &t), SMD_E_INVALID_ARGUMENT, "float128");
  smd_mode m;
  CHECK_OK(smd_mode_from_name("eval", &m));
  CHECK(m == SMD_MODE_EVAL);
  CHECK(strcmp(smd_mode_name(SMD_MODE_PREDICT), "PREDICT") == 0);
  /* the three name functions answer NULL alike for a value they do not know */
  CHECK(smd_mode_name((smd_mode)99) == NULL);
  CHECK(strcmp(smd_code_name(SMD_E_AUTH), "SMD_E_AUTH") == 0);
  CHECK(smd_code_name((smd_code)99) == NULL);
  CHECK_ERR(smd_mode_from_name("test", &m), SMD_E_INVALID_ARGUMENT, "test");
}

static void test_save_config_rules(void) {
  smd_save_config *sc = NULL;
  bool yes = false;
  CHECK_OK(smd_save_config_create(&sc));
  /* unset mode: defaults (every 500 from 0) */
  CHECK_OK(smd_save_config_should_save(sc, 500, SMD_MODE_TRAIN, &yes));
  CHECK(yes);
  CHECK_OK(smd_save_config_should_save(sc, 499, SMD_MODE_TRAIN, &yes));
  CHECK(!yes);
  /* interval 100 from 150: 200, 300 (the modulo is on the absolute step) */
  CHECK_OK(smd_save_config_set(sc, SMD_MODE_TRAIN, 100, 150, -1, NULL, 0));
  CHECK_OK(smd_save_config_should_save(sc, 100, SMD_MODE_TRAIN, &yes));
  CHECK(!yes);
  CHECK_OK(smd_save_config_should_save(sc, 200, SMD_MODE_TRAIN, &yes));
  CHECK(yes);
  /* end_step exclusive; save_steps a union not limited by start/end */
  int64_t steps[] = {3, 7};
  CHECK_OK(smd_save_config_set(sc, SMD_MODE_EVAL, 100, 0, 200, steps, 2));
  CHECK_OK(smd_save_config_should_save(sc, 200, SMD_MODE_EVAL, &yes));
  CHECK(!yes);
  CHECK_OK(smd_save_config_should_save(sc, 100, SMD_MODE_EVAL, &yes));
  CHECK(yes);
  CHECK_OK(smd_save_config_should_save(sc, 7, SMD_MODE_EVAL, &yes));
  CHECK(yes);
  CHECK_OK(smd_save_config_set(sc, SMD_MODE_PREDICT, 1, 0, 0, steps, 1));
  CHECK_OK(smd_save_config_should_save(sc, 0, SMD_MODE_PREDICT, &yes));
  CHECK(!yes); /* end_step 0 disables everything but save_steps */
  CHECK_OK(smd_save_config_should_save(sc, 3, SMD_MODE_PREDICT, &yes));
  CHECK(yes);
  CHECK_ERR(smd_save_config_set(sc, SMD_MODE_TRAIN, 0, 0, -1, NULL, 0), SMD_E_INVALID_ARGUMENT,
            "save_interval");
  CHECK_ERR(smd_save_config_set(sc, (smd_mode)9, 1, 0, -1, NULL, 0), SMD_E_INVALID_ARGUMENT, "mode");
  CHECK_OK(smd_save_config_unset(sc, SMD_MODE_TRAIN));
  CHECK_OK(smd_save_config_should_save(sc, 200, SMD_MODE_TRAIN, &yes));
  CHECK(!yes);
  smd_save_config *copy = NULL;
  CHECK_OK(smd_save_config_clone(sc, &copy));
  CHECK_OK(smd_save_config_should_save(copy, 7, SMD_MODE_EVAL, &yes));
  CHECK(yes);
  smd_save_config_free(copy);
  smd_save_config_free(sc);
}

static void test_reduction_config_strings(void) {
  smd_reduction_config *rc = NULL;
  char *s = NULL;
  CHECK_OK(smd_reduction_config_parse(" abs_l2_norm, min ,mean,l1,abs_max, median,l2", &rc));
  CHECK_OK(smd_reduction_config_to_string(rc, &s));
  CHECK(s != NULL && strcmp(s, "min,mean,median,l1_norm,l2_norm,abs_max,abs_l2_norm") == 0);
  smd_free(s);
  CHECK_ERR(smd_reduction_config_add(rc, "l3"), SMD_E_INVALID_ARGUMENT, "l3");
  smd_reduction_config_free(rc);
  rc = NULL;
  CHECK_ERR(smd_reduction_config_parse("min,avg", &rc), SMD_E_INVALID_ARGUMENT, "avg");
  CHECK(rc == NULL);
  /* every name smd_reduction_names lists is accepted, plain and with abs_ */
  smd_strarray names = {NULL, 0};
  CHECK_ERR(smd_reduction_names(NULL), SMD_E_INVALID_ARGUMENT, "out");
  CHECK_OK(smd_reduction_names(&names));
  CHECK(names.count == 12);
  CHECK(strcmp(names.strings[0], "min") == 0 && strcmp(names.strings[7], "median") == 0);
  CHECK(strcmp(names.strings[11], "l2_norm") == 0);
  CHECK_OK(smd_reduction_config_create(&rc));
  for (size_t i = 0; i < names.count; ++i) {
    char abs_name[64];
    snprintf(abs_name, sizeof abs_name, "abs_%s", names.strings[i]);
    CHECK_OK(smd_reduction_config_add(rc, names.strings[i]));
    CHECK_OK(smd_reduction_config_add(rc, abs_name));
  }
  smd_reduction_config_free(rc);
  smd_strarray_free(&names);
}

static void test_steps_and_modes(void) {
  const char *dir = scratch_path("steps");
  smd_hook *hook = make_hook(dir, NULL);
  CHECK(smd_hook_global_step(hook) == -1);
  CHECK(smd_hook_mode(hook) == SMD_MODE_GLOBAL);
  CHECK_OK(smd_hook_set_mode(hook, SMD_MODE_TRAIN));
  for (int i = 0; i < 4; ++i) CHECK_OK(smd_hook_begin_step(hook));
  CHECK(smd_hook_global_step(hook) == 3 && smd_hook_mode_step(hook) == 3);
  CHECK_OK(smd_hook_set_mode(hook, SMD_MODE_EVAL));
  CHECK(smd_hook_mode_step(hook) == -1);
  CHECK_OK(smd_hook_begin_step(hook));
  CHECK_OK(smd_hook_begin_step(hook));
  CHECK(smd_hook_global_step(hook) == 5 && smd_hook_mode_step(hook) == 1);
  CHECK_OK(smd_hook_set_mode(hook, SMD_MODE_TRAIN)); /* re-entered: continues its count */
  CHECK_OK(smd_hook_begin_step(hook));
  CHECK(smd_hook_global_step(hook) == 6 && smd_hook_mode_step(hook) == 4);
  CHECK_ERR(smd_hook_set_mode(hook, (smd_mode)7), SMD_E_INVALID_ARGUMENT, "mode");
  CHECK(strcmp(smd_hook_worker(hook), "worker_0") == 0);
  CHECK_OK(smd_hook_close(hook));
  CHECK_OK(smd_hook_close(hook)); /* closing twice is harmless */
  CHECK_ERR(smd_hook_begin_step(hook), SMD_E_INVALID_STATE, "closed");
  smd_hook_free(hook);
}

static void test_what_is_written(void) {
  const char *dir = scratch_path("written");
  smd_hook_options *opts = options_every_step();
  CHECK_OK(smd_hook_options_add_include_collection(opts, "weights"));
  smd_hook *hook = make_hook(dir, opts);
  smd_hook_options_free(opts);
  float w[6] = {1, 2, 3, 4, 5, 6};
  int64_t shape[2] = {2, 3};
  CHECK_OK(smd_hook_set_mode(hook, SMD_MODE_TRAIN));
  for (int step = 0; step < 3; ++step) {
    CHECK_OK(smd_hook_begin_step(hook));
    CHECK(smd_hook_any_due(hook));
    CHECK(smd_hook_is_due(hook, "fc.weight"));
    CHECK(!smd_hook_is_due(hook, "act/relu")); /* matches no saved collection */
    /* asking about an empty name does not make it a name a save accepts (it did: only a name's
     * first save checks it, and asking had remembered it) */
    CHECK(!smd_hook_is_due(hook, ""));
    CHECK_ERR(smd_hook_save_tensor(hook, "", SMD_DTYPE_FLOAT32, shape, 2, w, sizeof w, NULL, 0),
              SMD_E_INVALID_ARGUMENT, "tensor name is empty");
    CHECK_OK(smd_hook_save_tensor(hook, "fc.weight", SMD_DTYPE_FLOAT32, shape, 2, w, sizeof w, NULL, 0));
    CHECK_OK(smd_hook_save_tensor(hook, "act/relu", SMD_DTYPE_FLOAT32, shape, 2, w, sizeof w, NULL, 0));
    double loss = 1.0 / (step + 1);
    CHECK_OK(smd_hook_save_tensor(hook, "loss", SMD_DTYPE_FLOAT64, NULL, 0, &loss, sizeof loss, NULL, 0));
    CHECK_OK(smd_hook_save_scalar(hook, "acc", 0.5 * step));
  }
  CHECK_OK(smd_hook_flush(hook));
  /* step 2 is still open: its files are not visible yet, step 1's are */
  CHECK(file_exists(dir, "index/000000000/000000000001_worker_0.json"));
  CHECK(!file_exists(dir, "index/000000000/000000000002_worker_0.json"));
  CHECK(file_exists(dir, "collections/000000000/worker_0_collections.json"));
  CHECK(file_exists(dir, "claim.smd"));
  CHECK_OK(smd_hook_close(hook));
  smd_hook_stats st;
  memset(&st, 0, sizeof st);
  st.struct_size = sizeof st;
  CHECK_OK(smd_hook_writer_stats(hook, &st));
  CHECK(st.steps == 3);
  CHECK(st.records == 9); /* fc.weight, loss, scalar/acc at each step */
  CHECK(st.bytes > 3 * (6 * 4 + 8 + 8));
  CHECK(st.budget_waits == 0);
  st.struct_size = 0;
  CHECK_ERR(smd_hook_writer_stats(hook, &st), SMD_E_INVALID_ARGUMENT, "struct_size");
  smd_hook_free(hook);
  CHECK(file_exists(dir, "events/000000000002/000000000002_worker_0.tfevents"));
  CHECK(file_exists(dir, "training_job_end.ts") && file_size(dir, "training_job_end.ts") == 0);
  CHECK(!file_exists(dir, "claim.smd"));
  CHECK(!file_exists(dir, "events/000000000002/000000000002_worker_0.tfevents.tmp"));
  char *idx = read_file(dir, "index/000000000/000000000001_worker_0.json");
  CHECK(idx != NULL);
  if (idx) {
    CHECK(strstr(idx, "{\"meta\": {\"mode\": \"TRAIN\", \"mode_step\": 1, \"event_file_name\": "
                      "\"events/000000000001/000000000001_worker_0.tfevents\"}") == idx);
    CHECK(strstr(idx, "\"tensorname\": \"fc.weight\"") != NULL);
    CHECK(strstr(idx, "\"tensorname\": \"loss\"") != NULL);
    CHECK(strstr(idx, "act/relu") == NULL);
    /* the scalar comes last, in its own step */
    CHECK(strstr(idx, "\"tensorname\": \"scalar/acc\"") > strstr(idx, "\"tensorname\": \"loss\""));
    free(idx);
  }
  char *colls = read_file(dir, "collections/000000000/worker_0_collections.json");
  CHECK(colls != NULL);
  if (colls) {
    CHECK(strstr(colls, "\"weights\": {\"name\": \"weights\", \"include_regex\": [\"^(?!gradient).*weight\"], "
                        "\"tensor_names\": [\"fc.weight\"]") != NULL);
    CHECK(strstr(colls, "\"_meta\": {\"num_workers\": 1}}") != NULL);
    free(colls);
  }
}

static void test_reproducible_output(void) {
  /* Same inputs and wall time base: byte-identical event files. */
  const char *dirs[2] = {scratch_path("repro_a"), scratch_path("repro_b")};
  for (int r = 0; r < 2; ++r) {
    smd_hook_options *opts = options_every_step();
    CHECK_OK(smd_hook_options_set_save_all(opts, true));
    smd_hook *hook = make_hook(dirs[r], opts);
    smd_hook_options_free(opts);
    int32_t v[4] = {1, -2, 3, -4};
    int64_t shape[1] = {4};
    CHECK_OK(smd_hook_begin_step(hook));
    CHECK_OK(smd_hook_save_tensor(hook, "x", SMD_DTYPE_INT32, shape, 1, v, sizeof v, NULL, 0));
    CHECK_OK(smd_hook_close(hook));
    smd_hook_free(hook);
  }
  char *a = read_file(dirs[0], "events/000000000000/000000000000_worker_0.tfevents");
  char *b = read_file(dirs[1], "events/000000000000/000000000000_worker_0.tfevents");
  long n = file_size(dirs[0], "events/000000000000/000000000000_worker_0.tfevents");
  CHECK(a && b && n > 16 && n == file_size(dirs[1], "events/000000000000/000000000000_worker_0.tfevents"));
  if (a && b) CHECK(memcmp(a, b, (size_t)n) == 0);
  /* smdebug's constant payload footer by default */
  if (a && n > 4) CHECK(memcmp(a + n - 4, "\xb3\xc0\x2d\x06", 4) == 0);
  free(a);
  free(b);
}

static void test_real_crc_option(void) {
  const char *dir = scratch_path("realcrc");
  smd_hook_options *opts = options_every_step();
  CHECK_OK(smd_hook_options_set_save_all(opts, true));
  CHECK_OK(smd_hook_options_set_real_payload_crc(opts, true));
  smd_hook *hook = make_hook(dir, opts);
  smd_hook_options_free(opts);
  float v = 1.5f;
  CHECK_OK(smd_hook_begin_step(hook));
  CHECK_OK(smd_hook_save_tensor(hook, "x", SMD_DTYPE_FLOAT32, NULL, 0, &v, sizeof v, NULL, 0));
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);
  char *a = read_file(dir, "events/000000000000/000000000000_worker_0.tfevents");
  long n = file_size(dir, "events/000000000000/000000000000_worker_0.tfevents");
  CHECK(a != NULL && n > 4);
  if (a && n > 4) CHECK(memcmp(a + n - 4, "\xb3\xc0\x2d\x06", 4) != 0);
  free(a);
}

/* The fsync option changes when files become durable, not what they hold: the same bytes. */
static void test_fsync_option(void) {
  const char *names[] = {"events/000000000000/000000000000_worker_0.tfevents",
                         "events/000000000001/000000000001_worker_0.tfevents",
                         "index/000000000/000000000001_worker_0.json",
                         "collections/000000000/worker_0_collections.json", "training_job_end.ts"};
  char dirs[2][1024];
  for (int durable = 0; durable < 2; ++durable) {
    snprintf(dirs[durable], sizeof dirs[durable], "%s", scratch_path(durable ? "fsync_on" : "fsync_off"));
    smd_hook_options *opts = options_every_step();
    CHECK_OK(smd_hook_options_set_save_all(opts, true));
    CHECK_OK(smd_hook_options_set_wall_time_base(opts, 1000));
    CHECK_OK(smd_hook_options_set_fsync(opts, durable != 0));
    smd_hook *hook = make_hook(dirs[durable], opts);
    smd_hook_options_free(opts);
    float v[64];
    for (int i = 0; i < 64; ++i) v[i] = (float)i;
    int64_t shape[1] = {64};
    for (int step = 0; step < 2; ++step) {
      CHECK_OK(smd_hook_begin_step(hook));
      CHECK_OK(smd_hook_save_tensor(hook, "w", SMD_DTYPE_FLOAT32, shape, 1, v, sizeof v, NULL, 0));
    }
    CHECK_OK(smd_hook_close(hook));
    smd_hook_free(hook);
  }
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
    long n0 = file_size(dirs[0], names[i]), n1 = file_size(dirs[1], names[i]);
    CHECK(n0 >= 0 && n0 == n1);
    char *a = read_file(dirs[0], names[i]);
    char *b = read_file(dirs[1], names[i]);
    CHECK(a != NULL && b != NULL);
    if (a && b && n0 == n1 && n0 > 0) CHECK(memcmp(a, b, (size_t)n0) == 0);
    free(a);
    free(b);
  }
  smd_error *e = smd_hook_options_set_fsync(NULL, true);
  CHECK(e != NULL && smd_error_code(e) == SMD_E_INVALID_ARGUMENT);
  smd_error_free(e);
}

static void test_dry_run_writes_nothing(void) {
  const char *dir = scratch_path("dry");
  smd_hook_options *opts = options_every_step();
  CHECK_OK(smd_hook_options_set_dry_run(opts, true));
  CHECK_OK(smd_hook_options_set_save_all(opts, true));
  smd_hook *hook = make_hook(dir, opts);
  smd_hook_options_free(opts);
  float v = 1;
  CHECK_OK(smd_hook_begin_step(hook));
  CHECK_OK(smd_hook_save_tensor(hook, "x", SMD_DTYPE_FLOAT32, NULL, 0, &v, sizeof v, NULL, 0));
  CHECK_OK(smd_hook_save_scalar(hook, "s", 1));
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);
  struct stat st;
  CHECK(stat(dir, &st) != 0); /* not even the folder */
}

static void test_include_workers(void) {
  /* worker_1 of 2 under include_workers=one writes nothing, not even the end marker: the chief,
   * which writes the data, ends the job (when worker_1 closed first, readers stopped early) */
  const char *dir = scratch_path("workers_one");
  smd_hook_options *opts = options_every_step();
  CHECK_OK(smd_hook_options_set_save_all(opts, true));
  CHECK_OK(smd_hook_options_set_worker(opts, "worker_1"));
  CHECK_OK(smd_hook_options_set_num_workers(opts, 2));
  smd_hook *hook = make_hook(dir, opts);
  float v = 1;
  CHECK_OK(smd_hook_begin_step(hook));
  CHECK(!smd_hook_is_due(hook, "x"));
  CHECK_OK(smd_hook_save_tensor(hook, "x", SMD_DTYPE_FLOAT32, NULL, 0, &v, sizeof v, NULL, 0));
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);
  CHECK(!file_exists(dir, "events") && !file_exists(dir, "index") && !file_exists(dir, "collections"));
  CHECK(!file_exists(dir, "training_job_end.ts"));
  CHECK_OK(smd_hook_options_set_worker(opts, "worker_0"));
  hook = make_hook(dir, opts);
  CHECK_OK(smd_hook_begin_step(hook));
  CHECK_OK(smd_hook_save_tensor(hook, "x", SMD_DTYPE_FLOAT32, NULL, 0, &v, sizeof v, NULL, 0));
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);
  CHECK(file_exists(dir, "index/000000000/000000000000_worker_0.json"));
  CHECK(file_exists(dir, "training_job_end.ts"));
  /* with include_workers=all each writes its own files and the collections file says 2 */
  const char *dir2 = scratch_path("workers_all");
  CHECK_OK(smd_hook_options_set_include_workers(opts, SMD_INCLUDE_WORKERS_ALL));
  CHECK_OK(smd_hook_options_set_write_end_marker(opts, false));
  for (int w = 0; w < 2; ++w) {
    CHECK_OK(smd_hook_options_set_worker(opts, w == 0 ? "worker_0" : "worker_1"));
    hook = make_hook(dir2, opts);
    CHECK_OK(smd_hook_begin_step(hook));
    CHECK_OK(smd_hook_save_tensor(hook, "x", SMD_DTYPE_FLOAT32, NULL, 0, &v, sizeof v, NULL, 0));
    CHECK_OK(smd_hook_close(hook));
    smd_hook_free(hook);
  }
  CHECK(file_exists(dir2, "index/000000000/000000000000_worker_0.json"));
  CHECK(file_exists(dir2, "index/000000000/000000000000_worker_1.json"));
  CHECK(!file_exists(dir2, "training_job_end.ts"));
  CHECK(file_exists(dir2, "workers_ended/worker_0") && file_exists(dir2, "workers_ended/worker_1"));
  char *c = read_file(dir2, "collections/000000000/worker_1_collections.json");
  CHECK(c != NULL && strstr(c, "\"num_workers\": 2") != NULL);
  free(c);
  /* every worker writes: the last one to close ends the job (the first one's close ended it
   * while the other still wrote, and readers stopped there) */
  const char *dir3 = scratch_path("workers_all_end");
  CHECK_OK(smd_hook_options_set_write_end_marker(opts, true));
  smd_hook *hooks[2];
  for (int w = 0; w < 2; ++w) {
    CHECK_OK(smd_hook_options_set_worker(opts, w == 0 ? "worker_0" : "worker_1"));
    hooks[w] = make_hook(dir3, opts);
    CHECK_OK(smd_hook_begin_step(hooks[w]));
    CHECK_OK(smd_hook_save_tensor(hooks[w], "x", SMD_DTYPE_FLOAT32, NULL, 0, &v, sizeof v, NULL, 0));
  }
  CHECK_OK(smd_hook_close(hooks[1]));
  CHECK(!file_exists(dir3, "training_job_end.ts"));
  CHECK(file_exists(dir3, "workers_ended/worker_1"));
  CHECK_OK(smd_hook_begin_step(hooks[0])); /* worker_0 goes on after worker_1 ended */
  CHECK_OK(smd_hook_save_tensor(hooks[0], "x", SMD_DTYPE_FLOAT32, NULL, 0, &v, sizeof v, NULL, 0));
  CHECK_OK(smd_hook_close(hooks[0]));
  CHECK(file_exists(dir3, "training_job_end.ts"));
  CHECK(!file_exists(dir3, "workers_ended/worker_0") && !file_exists(dir3, "workers_ended/worker_1"));
  CHECK(file_exists(dir3, "index/000000000/000000000001_worker_0.json"));
  for (int w = 0; w < 2; ++w) smd_hook_free(hooks[w]);
  smd_hook_options_free(opts);
}

static void test_collections_api(void) {
  const char *dir = scratch_path("collections");
  smd_hook_options *opts = options_every_step();
  smd_hook *hook = make_hook(dir, opts);
  smd_hook_options_free(opts);
  smd_collection *c = NULL;
  CHECK_OK(smd_hook_get_collection(hook, "acts", &c));
  CHECK(strcmp(smd_collection_name(c), "acts") == 0);
  CHECK_OK(smd_collection_add_include_regex(c, "^act/"));
  CHECK_ERR(smd_collection_add_include_regex(c, "(unclosed"), SMD_E_INVALID_ARGUMENT, "(unclosed");
  smd_reduction_config *rc = NULL;
  CHECK_OK(smd_reduction_config_parse("max,abs_mean", &rc));
  CHECK_OK(smd_collection_set_reduction_config(c, rc));
  smd_reduction_config_free(rc);
  CHECK_OK(smd_hook_include_collection(hook, "acts"));
  CHECK_OK(smd_hook_begin_step(hook));
  CHECK(smd_hook_is_due(hook, "act/relu"));
  float v[3] = {-1, 0, 2};
  int64_t shape[1] = {3};
  CHECK_OK(smd_hook_save_tensor(hook, "act/relu", SMD_DTYPE_FLOAT32, shape, 1, v, sizeof v, NULL, 0));
  /* explicit collections: the name joins them, and they are saved */
  const char *colls[] = {"custom"};
  CHECK_OK(smd_hook_save_tensor(hook, "my/thing", SMD_DTYPE_FLOAT32, shape, 1, v, sizeof v, colls, 1));
  smd_strarray names = {0};
  CHECK_OK(smd_collection_tensor_names(c, &names));
  CHECK(names.count == 1 && strcmp(names.strings[0], "act/relu") == 0);
  smd_strarray_free(&names);
  CHECK(names.strings == NULL && names.count == 0);
  CHECK_OK(smd_hook_collection_names(hook, &names));
  CHECK(names.count == 8); /* all default weights biases gradients losses acts custom */
  smd_strarray_free(&names);
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook); /* the collection handle outlives the hook */
  CHECK_ERR(smd_collection_add_include_regex(c, "x"), SMD_E_INVALID_STATE, "closed");
  smd_collection_free(c);
  char *idx = read_file(dir, "index/000000000/000000000000_worker_0.json");
  CHECK(idx != NULL);
  if (idx) {
    CHECK(strstr(idx, "\"smdebug/reductions/max/act/relu\"") != NULL);
    CHECK(strstr(idx, "\"smdebug/reductions/abs_mean/act/relu\"") != NULL);
    CHECK(strstr(idx, "\"tensorname\": \"act/relu\"") == NULL); /* no raw: config lacks it */
    CHECK(strstr(idx, "\"tensorname\": \"my/thing\"") != NULL);
    free(idx);
  }
}

static void test_may_save(void) {
  const char *dir = scratch_path("may_save");
  smd_hook_options *opts = options_every_step();
  smd_hook *hook = make_hook(dir, opts);
  /* by default only losses is saved: of a model's module tensors, the loss module's alone */
  CHECK(smd_hook_may_save(hook, "CrossEntropyLoss_output_", true));
  CHECK(!smd_hook_may_save(hook, "layer1.0.conv1_output_", true));
  CHECK(!smd_hook_may_save(hook, "layer1.0.conv1_input_", true));
  CHECK(!smd_hook_may_save(hook, "gradient/Net_fc.weight", false));
  CHECK(smd_hook_may_save(hook, "loss", false));
  CHECK(smd_hook_may_save(hook, "loss", true)); /* "loss0" is a loss too */
  uint64_t v0 = smd_hook_collections_version(hook);
  CHECK(v0 != 0 && smd_hook_collections_version(hook) == v0); /* queries change nothing */
  CHECK_OK(smd_hook_include_collection(hook, "gradients"));
  uint64_t v1 = smd_hook_collections_version(hook);
  CHECK(v1 != v0);
  CHECK(smd_hook_may_save(hook, "gradient/Net_fc.weight", false));
  CHECK(!smd_hook_may_save(hook, "layer1.0.conv1_output_", true));
  /* a tensor name in a collection: numbered when only digits follow the prefix */
  smd_collection *c = NULL;
  CHECK_OK(smd_hook_get_collection(hook, "acts", &c));
  CHECK_OK(smd_collection_add_tensor_name(c, "relu_output_3"));
  CHECK(smd_hook_collections_version(hook) != v1);
  CHECK(!smd_hook_may_save(hook, "relu_output_", true)); /* acts is not saved (yet) */
  CHECK_OK(smd_hook_include_collection(hook, "acts"));
  CHECK(smd_hook_may_save(hook, "relu_output_", true));
  CHECK(smd_hook_may_save(hook, "relu_output_3", false));
  CHECK(!smd_hook_may_save(hook, "relu_", true));          /* "output_3" is not an index */
  CHECK(!smd_hook_may_save(hook, "relu_output_3", true));  /* the index is the whole "3" */
  CHECK(!smd_hook_may_save(hook, "relu_output_", false));
  /* a regex that matches module outputs */
  CHECK_OK(smd_collection_add_include_regex(c, "^layer1\\.0\\..*_output_"));
  CHECK(smd_hook_may_save(hook, "layer1.0.conv1_output_", true));
  CHECK(!smd_hook_may_save(hook, "layer2.0.conv1_output_", true));
  /* a regex whose search gives up counts as a match: saving the tensor reports the error */
  CHECK_OK(smd_collection_add_include_regex(c, "(x+x+)+y|a$"));
  CHECK(smd_hook_may_save(hook, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", false));
  smd_collection_free(c);
  /* what the hook cannot save */
  CHECK(!smd_hook_may_save(hook, "\xff", false));
  CHECK(!smd_hook_may_save(hook, NULL, false));
  CHECK(!smd_hook_may_save(NULL, "loss", false));
  CHECK(smd_hook_collections_version(NULL) == 0);
  CHECK_OK(smd_hook_close(hook));
  CHECK(!smd_hook_may_save(hook, "loss", false));
  smd_hook_free(hook);
  /* save_all: every name; a dry run: none */
  CHECK_OK(smd_hook_options_set_save_all(opts, true));
  hook = make_hook(scratch_path("may_save_all"), opts);
  CHECK(smd_hook_may_save(hook, "layer1.0.conv1_output_", true));
  CHECK(smd_hook_may_save(hook, "anything", false));
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);
  CHECK_OK(smd_hook_options_set_dry_run(opts, true));
  hook = make_hook(scratch_path("may_save_dry"), opts);
  CHECK(!smd_hook_may_save(hook, "anything", false));
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);
  smd_hook_options_free(opts);
}

static void test_small_memory_budget_waits_not_drops(void) {
  const char *dir = scratch_path("budget");
  smd_hook_options *opts = options_every_step();
  CHECK_OK(smd_hook_options_set_save_all(opts, true));
  CHECK_OK(smd_hook_options_set_memory_budget(opts, 100000));
  smd_hook *hook = make_hook(dir, opts);
  smd_hook_options_free(opts);
  size_t n = 250000; /* each tensor alone is bigger than the budget */
  float *big = calloc(n, sizeof(float));
  int64_t shape[1] = {(int64_t)n};
  CHECK_OK(smd_hook_begin_step(hook));
  for (int i = 0; i < 20; ++i) {
    char name[32];
    snprintf(name, sizeof name, "t%02d", i);
    big[0] = (float)i;
    CHECK_OK(smd_hook_save_tensor(hook, name, SMD_DTYPE_FLOAT32, shape, 1, big, n * sizeof(float), NULL, 0));
  }
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);
  free(big);
  long sz = file_size(dir, "events/000000000000/000000000000_worker_0.tfevents");
  CHECK(sz > (long)(20 * n * sizeof(float)));
  char *idx = read_file(dir, "index/000000000/000000000000_worker_0.json");
  CHECK(idx != NULL && strstr(idx, "\"t00\"") && strstr(idx, "\"t19\""));
  free(idx);
}

/* Scalars the hook holds until their step ends are outside the budget: a tensor as large as the
 * whole budget saved after a scalar (or after thousands of them) is granted, not waited for
 * forever; before the first step too. */
static void test_scalars_do_not_hold_the_memory_budget(void) {
  const char *dir = scratch_path("budget_scalars");
  smd_hook_options *opts = options_every_step();
  CHECK_OK(smd_hook_options_set_save_all(opts, true));
  CHECK_OK(smd_hook_options_set_memory_budget(opts, 1 << 16));
  smd_hook *hook = make_hook(dir, opts);
  smd_hook_options_free(opts);
  size_t n = (1 << 16) / sizeof(float);
  float *big = calloc(n, sizeof(float));
  int64_t shape[1] = {(int64_t)n};
  CHECK_OK(smd_hook_save_scalar(hook, "before", 1.0));
  CHECK_OK(smd_hook_save_tensor(hook, "held", SMD_DTYPE_FLOAT32, shape, 1, big, n * sizeof(float), NULL, 0));
  CHECK_OK(smd_hook_begin_step(hook));
  for (int i = 0; i < 10000; ++i) CHECK_OK(smd_hook_save_scalar(hook, "s", (double)i));
  CHECK_OK(smd_hook_save_tensor(hook, "big", SMD_DTYPE_FLOAT32, shape, 1, big, n * sizeof(float), NULL, 0));
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);
  free(big);
  char *idx = read_file(dir, "index/000000000/000000000000_worker_0.json");
  CHECK(idx != NULL && strstr(idx, "\"big\"") && strstr(idx, "\"scalar/s\"") && strstr(idx, "\"held\"") &&
        strstr(idx, "\"scalar/before\""));
  free(idx);
}

/* A size no block can hold (over 2^63 bytes) is out of memory, not an endless loop. */
static void test_a_size_no_block_can_hold_is_out_of_memory(void) {
  const char *dir = scratch_path("huge_size");
  smd_hook_options *opts = options_every_step();
  CHECK_OK(smd_hook_options_set_save_all(opts, true));
  smd_hook *hook = make_hook(dir, opts);
  smd_hook_options_free(opts);
  int64_t n = ((int64_t)1 << 60) + 1;
  double one = 1.0;
  CHECK_OK(smd_hook_begin_step(hook));
  CHECK_ERR(smd_hook_save_tensor(hook, "x", SMD_DTYPE_FLOAT64, &n, 1, &one, (size_t)n * 8, NULL, 0),
            SMD_E_OUT_OF_MEMORY, "memory");
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);
}

static void test_from_json(void) {
  char json[2048];
  const char *dir = scratch_path("fromjson");
  snprintf(json, sizeof json,
           "{\"LocalPath\": \"%s\", \"HookParameters\": {\"save_interval\": \"2\", "
           "\"eval.save_interval\": 1, \"reductions\": \"max\", \"save_raw_tensor\": true}, "
           "\"CollectionConfigurations\": [{\"CollectionName\": \"weights\"}, "
           "{\"CollectionName\": \"acts\", \"CollectionParameters\": {\"include_regex\": \"^act\", "
           "\"train.save_interval\": \"3\"}}]}",
           dir);
  smd_hook *hook = NULL;
  CHECK_OK(smd_hook_create_from_json(json, strlen(json), NULL, &hook));
  CHECK_OK(smd_hook_set_mode(hook, SMD_MODE_TRAIN));
  CHECK_OK(smd_hook_begin_step(hook)); /* TRAIN 0: both due */
  CHECK(smd_hook_is_due(hook, "fc.weight") && smd_hook_is_due(hook, "act1"));
  CHECK_OK(smd_hook_begin_step(hook)); /* TRAIN 1: neither */
  CHECK(!smd_hook_is_due(hook, "fc.weight") && !smd_hook_is_due(hook, "act1"));
  CHECK_OK(smd_hook_begin_step(hook)); /* TRAIN 2: weights (every 2), not acts (every 3) */
  CHECK(smd_hook_is_due(hook, "fc.weight") && !smd_hook_is_due(hook, "act1"));
  CHECK_OK(smd_hook_begin_step(hook)); /* TRAIN 3: acts */
  CHECK(!smd_hook_is_due(hook, "fc.weight") && smd_hook_is_due(hook, "act1"));
  CHECK_OK(smd_hook_set_mode(hook, SMD_MODE_EVAL));
  CHECK_OK(smd_hook_begin_step(hook));
  CHECK_OK(smd_hook_begin_step(hook)); /* EVAL 1: eval.save_interval 1 applies to both */
  CHECK(smd_hook_is_due(hook, "fc.weight") && smd_hook_is_due(hook, "act1"));
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);
  char *c = read_file(dir, "collections/000000000/worker_0_collections.json");
  CHECK(c != NULL && strstr(c, "\"reduction_config\": {\"save_raw_tensor\": true, \"reductions\": \"max\"") != NULL);
  free(c);
}

static void test_from_json_file_found_through_the_environment(void) {
  const char *dir = scratch_path("fromenv");
  const char *cfg = scratch_path("debughookconfig.json");
  FILE *f = fopen(cfg, "w");
  CHECK(f != NULL);
  if (f == NULL) return;
  fprintf(f, "{\"LocalPath\": \"%s\", \"HookParameters\": {\"save_all\": \"true\", "
             "\"save_interval\": \"1\", \"dry_run\": \"false\"}}", dir);
  fclose(f);
  setenv("SMDEBUG_CONFIG_FILE_PATH", cfg, 1);
  smd_hook *hook = NULL;
  CHECK_OK(smd_hook_create_from_json_file(NULL, NULL, &hook));
  unsetenv("SMDEBUG_CONFIG_FILE_PATH");
  if (hook == NULL) return;
  float v = 1;
  CHECK_OK(smd_hook_begin_step(hook));
  CHECK(smd_hook_is_due(hook, "anything"));
  CHECK_OK(smd_hook_save_tensor(hook, "anything", SMD_DTYPE_FLOAT32, NULL, 0, &v, sizeof v, NULL, 0));
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);
  CHECK(file_exists(dir, "index/000000000/000000000000_worker_0.json"));
  /* without the variable, the SageMaker default path is used (absent here) */
  hook = NULL;
  CHECK_ERR(smd_hook_create_from_json_file(NULL, NULL, &hook), SMD_E_NOT_FOUND,
            "/opt/ml/input/config/debughookconfig.json");
}
static smd_value *read_value(smd_trial *trial, const char *name, int64_t step) {
  smd_tensor *t = NULL;
  smd_value *v = NULL;
  CHECK_OK(smd_trial_tensor(trial, name, &t));
  if (t != NULL) CHECK_OK(smd_tensor_value(t, step, SMD_MODE_GLOBAL, NULL, &v));
  smd_tensor_free(t);
  return v;
}

/* What smdebug's hook can write and 0.1 could not: string arrays and typed scalars, read back
 * with their type. */
static void test_strings_and_typed_scalars(void) {
  const char *dir = scratch_path("strings");
  smd_hook_options *opts = options_every_step();
  smd_reduction_config *rc = NULL; /* reductions asked for: none of text is made */
  CHECK_OK(smd_reduction_config_parse("mean,max", &rc));
  CHECK_OK(smd_reduction_config_set_save_raw_tensor(rc, true));
  CHECK_OK(smd_hook_options_set_reduction_config(opts, rc));
  smd_reduction_config_free(rc);
  smd_hook *hook = make_hook(dir, opts);
  smd_hook_options_free(opts);
  const char *labels[3] = {"cat", "", "\xce\xb2" "eta"};
  const char *with_nul[1] = {"a\0b"};
  const size_t with_nul_len[1] = {3};
  const char *none[1] = {NULL};
  const char *in_c[1] = {"labels"};
  CHECK_OK(smd_hook_begin_step(hook));
  CHECK_OK(smd_hook_save_strings(hook, "labels", labels, NULL, 3, in_c, 1));
  CHECK_OK(smd_hook_save_strings(hook, "raw_bytes", with_nul, with_nul_len, 1, in_c, 1));
  CHECK_OK(smd_hook_save_strings(hook, "no_labels", NULL, NULL, 0, in_c, 1));
  CHECK_ERR(smd_hook_save_strings(hook, "bad", none, NULL, 1, in_c, 1), SMD_E_INVALID_ARGUMENT,
            "string 0 of tensor 'bad' is NULL");
  CHECK_ERR(smd_hook_save_strings(hook, "bad", NULL, NULL, 2, in_c, 1), SMD_E_INVALID_ARGUMENT, "strings");
  CHECK_ERR(smd_hook_save_strings(NULL, "bad", labels, NULL, 1, NULL, 0), SMD_E_INVALID_ARGUMENT, "hook");
  int64_t shape[1] = {3};
  CHECK_ERR(smd_hook_save_tensor(hook, "s", SMD_DTYPE_STRING, shape, 1, labels, 3, NULL, 0),
            SMD_E_INVALID_ARGUMENT, "smd_hook_save_strings");

  int64_t i64 = -7;
  float f32 = 0.25f;
  uint8_t yes = 1, two = 2;
  uint16_t u16 = 65535;
  CHECK_OK(smd_hook_save_scalar_typed(hook, "count", SMD_DTYPE_INT64, &i64, sizeof i64));
  CHECK_OK(smd_hook_save_scalar_typed(hook, "lr32", SMD_DTYPE_FLOAT32, &f32, sizeof f32));
  CHECK_OK(smd_hook_save_scalar_typed(hook, "done", SMD_DTYPE_BOOL, &yes, 1));
  CHECK_OK(smd_hook_save_scalar_typed(hook, "u16", SMD_DTYPE_UINT16, &u16, sizeof u16));
  CHECK_ERR(smd_hook_save_scalar_typed(hook, "b", SMD_DTYPE_BOOL, &two, 1), SMD_E_INVALID_ARGUMENT, "0 or 1");
  CHECK_ERR(smd_hook_save_scalar_typed(hook, "x", SMD_DTYPE_INT64, &i64, 4), SMD_E_INVALID_ARGUMENT,
            "4 bytes given but a int64 holds 8");
  CHECK_ERR(smd_hook_save_scalar_typed(hook, "x", SMD_DTYPE_STRING, labels, 8), SMD_E_INVALID_ARGUMENT,
            "not a numeric dtype");
  CHECK_ERR(smd_hook_save_scalar_typed(hook, "x", SMD_DTYPE_INT64, NULL, 8), SMD_E_INVALID_ARGUMENT, "value");
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);

  smd_trial *trial = NULL;
  CHECK_OK(smd_trial_open(dir, NULL, &trial));
  if (trial == NULL) return;
  smd_value *v = read_value(trial, "labels", 0);
  if (v != NULL) {
    const char *s = NULL;
    size_t len = 0;
    CHECK(smd_value_dtype(v) == SMD_DTYPE_STRING);
    CHECK(smd_value_ndim(v) == 1 && smd_value_shape(v)[0] == 3 && smd_value_count(v) == 3);
    CHECK_OK(smd_value_string(v, 0, &s, &len));
    CHECK(len == 3 && strcmp(s, "cat") == 0);
    CHECK_OK(smd_value_string(v, 1, &s, &len));
    CHECK(len == 0 && strcmp(s, "") == 0);
    CHECK_OK(smd_value_string(v, 2, &s, &len));
    CHECK(len == 5 && strcmp(s, "\xce\xb2" "eta") == 0);
  }
  smd_value_free(v);
  smd_tensor *lt = NULL;
  CHECK_OK(smd_trial_tensor(trial, "labels", &lt));
  if (lt != NULL) {
    smd_strarray reds = {NULL, 0};
    CHECK_OK(smd_tensor_reduction_names(lt, 0, SMD_MODE_GLOBAL, NULL, &reds));
    CHECK(reds.count == 0);
    smd_strarray_free(&reds);
    smd_error *e = smd_tensor_reduction_value(lt, 0, SMD_MODE_GLOBAL, NULL, "mean", &v);
    CHECK(e != NULL); /* not saved, and not computable from text */
    smd_error_free(e);
  }
  smd_tensor_free(lt);
  v = read_value(trial, "raw_bytes", 0);
  if (v != NULL) {
    const char *s = NULL;
    size_t len = 0;
    CHECK_OK(smd_value_string(v, 0, &s, &len));
    CHECK(len == 3 && memcmp(s, "a\0b", 3) == 0);
  }
  smd_value_free(v);
  bool has = true;
  CHECK_OK(smd_trial_has_tensor(trial, "no_labels", &has));
  CHECK(!has); /* empty: not written raw */

  struct {
    const char *name;
    smd_dtype dtype;
    double value;
  } scalars[] = {{"scalar/count", SMD_DTYPE_INT64, -7},
                 {"scalar/lr32", SMD_DTYPE_FLOAT32, 0.25},
                 {"scalar/done", SMD_DTYPE_BOOL, 1},
                 {"scalar/u16", SMD_DTYPE_UINT16, 65535}};
  for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; ++i) {
    v = read_value(trial, scalars[i].name, 0);
    if (v == NULL) continue;
    double d = 0;
    CHECK(smd_value_dtype(v) == scalars[i].dtype);
    CHECK(smd_value_ndim(v) == 1 && smd_value_shape(v)[0] == 1);
    CHECK_OK(smd_value_double_at(v, 0, &d));
    CHECK(d == scalars[i].value);
    smd_value_free(v);
  }
  smd_trial_free(trial);
}

/* Whether the little-endian bytes of Event.wall_time == `t` (field 1, fixed64: tag 0x09) occur in
 * the event file `rel` of `dir`. */
static bool event_file_has_wall_time(const char *dir, const char *rel, double t) {
  char p[8192];
  snprintf(p, sizeof p, "%s/%s", dir, rel);
  FILE *f = fopen(p, "rb");
  if (f == NULL) return false;
  unsigned char buf[1 << 16];
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  unsigned char want[9] = {0x09};
  memcpy(want + 1, &t, 8); /* the test machines are little-endian, as the format */
  for (size_t i = 0; i + 9 <= n; ++i) {
    if (memcmp(buf + i, want, 9) == 0) return true;
  }
  return false;
}

/* Saves before the first step are held and written into step 0 with its mode and mode step, as
 * smdebug writes them in its next step (measured with smdebug 1.0.34: a save_scalar and a
 * save_tensor before the first step land in step 0, TRAIN, mode step 0). A hook closed without
 * any step writes them as step 0 too. A scalar's timestamp is its record's wall time. */
static void test_saves_before_the_first_step(void) {
  const char *dir = scratch_path("prestep");
  smd_hook_options *opts = options_every_step(); /* wall time base 1700000000 */
  CHECK_OK(smd_hook_options_add_include_collection(opts, "weights"));
  smd_hook *hook = make_hook(dir, opts);
  float w[6] = {1, 2, 3, 4, 5, 6};
  int64_t shape[2] = {2, 3};
  const char *labels[2] = {"cat", "dog"};
  const char *in_c[1] = {"custom"};
  int32_t seven = 7;
  CHECK_OK(smd_hook_save_tensor(hook, "fc.weight", SMD_DTYPE_FLOAT32, shape, 2, w, sizeof w, NULL, 0));
  w[0] = 100; /* the held save copied the data */
  CHECK_OK(smd_hook_save_strings(hook, "labels", labels, NULL, 2, in_c, 1));
  CHECK_OK(smd_hook_save_scalar(hook, "lr", 0.5));
  CHECK_OK(smd_hook_save_scalar_timestamped(hook, "seven", SMD_DTYPE_INT32, &seven, sizeof seven, 1234.5));
  CHECK_ERR(smd_hook_save_scalar_timestamped(hook, "x", SMD_DTYPE_INT32, &seven, sizeof seven, NAN),
            SMD_E_INVALID_ARGUMENT, "timestamp");
  CHECK_ERR(smd_hook_save_scalar_timestamped(hook, "x", SMD_DTYPE_INT32, &seven, sizeof seven, INFINITY),
            SMD_E_INVALID_ARGUMENT, "timestamp");
  CHECK(smd_hook_global_step(hook) == -1);
  CHECK(!file_exists(dir, "index")); /* nothing written before a step */
  CHECK_OK(smd_hook_set_mode(hook, SMD_MODE_TRAIN));
  CHECK_OK(smd_hook_begin_step(hook));
  CHECK_OK(smd_hook_save_scalar_timestamped(hook, "at", SMD_DTYPE_INT32, &seven, sizeof seven, 99.25));
  CHECK_OK(smd_hook_begin_step(hook));
  CHECK_OK(smd_hook_save_scalar(hook, "in_step_1", 1.0)); /* so that step 1 has an index file */
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);
  const char *ev0 = "events/000000000000/000000000000_worker_0.tfevents";
  CHECK(event_file_has_wall_time(dir, ev0, 1234.5));
  CHECK(event_file_has_wall_time(dir, ev0, 99.25));
  CHECK(event_file_has_wall_time(dir, ev0, 1700000000.0)); /* the others: the base + step 0 */
  smd_trial *trial = NULL;
  CHECK_OK(smd_trial_open(dir, NULL, &trial));
  if (trial != NULL) {
    smd_mode m = SMD_MODE_GLOBAL;
    int64_t ms = -1;
    CHECK_OK(smd_trial_mode(trial, 0, &m));
    CHECK_OK(smd_trial_mode_step(trial, 0, &ms));
    CHECK(m == SMD_MODE_TRAIN && ms == 0);
    smd_value *v = read_value(trial, "fc.weight", 0);
    double d = 0;
    if (v != NULL) CHECK_OK(smd_value_double_at(v, 0, &d));
    CHECK(d == 1);
    smd_value_free(v);
    v = read_value(trial, "scalar/seven", 0);
    if (v != NULL) CHECK(smd_value_dtype(v) == SMD_DTYPE_INT32);
    smd_value_free(v);
    v = read_value(trial, "labels", 0);
    CHECK(v != NULL && smd_value_dtype(v) == SMD_DTYPE_STRING);
    smd_value_free(v);
    v = read_value(trial, "scalar/lr", 0);
    CHECK(v != NULL);
    smd_value_free(v);
    smd_trial_free(trial);
  }
  char *idx = read_file(dir, "index/000000000/000000000001_worker_0.json");
  CHECK(idx != NULL && strstr(idx, "scalar/in_step_1") != NULL);
  CHECK(idx != NULL && strstr(idx, "scalar/lr") == NULL); /* written once, in step 0 */
  free(idx);

  /* Closed without any step: step 0 holds the saves. */
  const char *dir2 = scratch_path("prestep_close");
  hook = make_hook(dir2, opts);
  smd_hook_options_free(opts);
  CHECK_OK(smd_hook_save_scalar(hook, "lr", 0.5));
  CHECK_OK(smd_hook_save_tensor(hook, "fc.weight", SMD_DTYPE_FLOAT32, shape, 2, w, sizeof w, NULL, 0));
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);
  idx = read_file(dir2, "index/000000000/000000000000_worker_0.json");
  CHECK(idx != NULL && strstr(idx, "scalar/lr") != NULL && strstr(idx, "fc.weight") != NULL);
  free(idx);
  CHECK(file_exists(dir2, "training_job_end.ts"));
}

/* smd_hook_end_step: the step's files are complete (a trial sees the step) while the hook stays
 * open; saves made after it are held for the next step, which smd_hook_begin_step or
 * smd_hook_close begins. */
static void test_end_step(void) {
  const char *dir = scratch_path("endstep");
  smd_hook_options *opts = options_every_step();
  CHECK_OK(smd_hook_options_add_include_collection(opts, "weights"));
  smd_hook *hook = make_hook(dir, opts);
  smd_hook_options_free(opts);
  float w[2] = {1, 2};
  int64_t shape[1] = {2};
  CHECK_OK(smd_hook_end_step(hook)); /* no step open yet: nothing to do */
  CHECK(smd_hook_global_step(hook) == -1);
  CHECK_OK(smd_hook_set_mode(hook, SMD_MODE_TRAIN));
  CHECK_OK(smd_hook_begin_step(hook));
  CHECK_OK(smd_hook_save_tensor(hook, "fc.weight", SMD_DTYPE_FLOAT32, shape, 1, w, sizeof w, NULL, 0));
  CHECK_OK(smd_hook_begin_step(hook));
  w[0] = 10;
  CHECK_OK(smd_hook_save_tensor(hook, "fc.weight", SMD_DTYPE_FLOAT32, shape, 1, w, sizeof w, NULL, 0));
  CHECK(smd_hook_is_due(hook, "fc.weight") && smd_hook_any_due(hook));
  CHECK_OK(smd_hook_end_step(hook));
  CHECK_OK(smd_hook_end_step(hook)); /* again: nothing to do */
  CHECK_OK(smd_hook_flush(hook));
  CHECK(smd_hook_global_step(hook) == 1 && smd_hook_mode_step(hook) == 1);
  CHECK(!smd_hook_is_due(hook, "fc.weight") && !smd_hook_any_due(hook));
  smd_strarray due = {0};
  bool value = false, hist = false;
  CHECK_ERR(smd_hook_due_reductions(hook, "fc.weight", &due, &value, &hist), SMD_E_INVALID_STATE,
            "step 1 was ended");
  CHECK(file_exists(dir, "index/000000000/000000000001_worker_0.json"));
  CHECK(file_exists(dir, "collections/000000000/worker_0_collections.json"));
  CHECK(!file_exists(dir, "training_job_end.ts"));
  smd_trial *trial = NULL;
  CHECK_OK(smd_trial_open(dir, NULL, &trial));
  if (trial != NULL) {
    smd_step_state state = SMD_STEP_UNAVAILABLE;
    CHECK_OK(smd_trial_has_passed_step(trial, 1, SMD_MODE_GLOBAL, &state));
    CHECK(state == SMD_STEP_AVAILABLE);
    smd_value *v = read_value(trial, "fc.weight", 1);
    double d = 0;
    if (v != NULL) CHECK_OK(smd_value_double_at(v, 0, &d));
    CHECK(d == 10);
    smd_value_free(v);
    smd_trial_free(trial);
  }
  /* Held for the next step, which smd_hook_begin_step begins. */
  CHECK_OK(smd_hook_save_scalar(hook, "between", 2.5));
  CHECK_OK(smd_hook_begin_step(hook));
  CHECK(smd_hook_global_step(hook) == 2 && smd_hook_is_due(hook, "fc.weight"));
  CHECK_OK(smd_hook_end_step(hook));
  /* Held for the step smd_hook_close begins, in the mode set meanwhile. */
  w[0] = 100;
  CHECK_OK(smd_hook_save_tensor(hook, "fc.weight", SMD_DTYPE_FLOAT32, shape, 1, w, sizeof w, NULL, 0));
  w[0] = -1; /* the held save copied the data */
  CHECK_OK(smd_hook_set_mode(hook, SMD_MODE_EVAL));
  CHECK_OK(smd_hook_close(hook));
  CHECK_ERR(smd_hook_end_step(hook), SMD_E_INVALID_STATE, "closed");
  smd_hook_free(hook);
  CHECK(file_exists(dir, "training_job_end.ts"));
  trial = NULL;
  CHECK_OK(smd_trial_open(dir, NULL, &trial));
  if (trial != NULL) {
    int64_t *steps = NULL;
    size_t n = 0;
    CHECK_OK(smd_trial_steps(trial, SMD_MODE_GLOBAL, false, &steps, &n));
    CHECK(n == 4 && steps != NULL && steps[0] == 0 && steps[3] == 3);
    smd_free(steps);
    smd_mode m = SMD_MODE_GLOBAL;
    int64_t ms = -1;
    CHECK_OK(smd_trial_mode(trial, 3, &m));
    CHECK_OK(smd_trial_mode_step(trial, 3, &ms));
    CHECK(m == SMD_MODE_EVAL && ms == 0);
    smd_value *v = read_value(trial, "scalar/between", 2);
    double d = 0;
    if (v != NULL) CHECK_OK(smd_value_double_at(v, 0, &d));
    CHECK(d == 2.5);
    smd_value_free(v);
    v = read_value(trial, "fc.weight", 3);
    d = 0;
    if (v != NULL) CHECK_OK(smd_value_double_at(v, 0, &d));
    CHECK(d == 100);
    smd_value_free(v);
    smd_trial_free(trial);
  }
  CHECK_ERR(smd_hook_end_step(NULL), SMD_E_INVALID_ARGUMENT, "NULL");
}

/* smd_hook_make_due: an included collection is saved for the rest of the current step whatever
 * its save configuration says (smdebug's force save of an epoch's logs); the next step, or
 * smd_hook_end_step, ends it; other collections are unaffected. */
static void test_make_due(void) {
  const char *dir = scratch_path("makedue");
  smd_hook_options *opts = NULL;
  CHECK_OK(smd_hook_options_create(&opts));
  smd_save_config *sc = NULL;
  CHECK_OK(smd_save_config_create(&sc));
  CHECK_OK(smd_save_config_set(sc, SMD_MODE_ALL, 100, 0, -1, NULL, 0));
  CHECK_OK(smd_hook_options_set_save_config(opts, sc));
  smd_save_config_free(sc);
  CHECK_OK(smd_hook_options_add_include_collection(opts, "metrics"));
  CHECK_OK(smd_hook_options_add_include_collection(opts, "weights"));
  smd_hook *hook = make_hook(dir, opts);
  smd_hook_options_free(opts);
  smd_collection *metrics = NULL;
  CHECK_OK(smd_hook_get_collection(hook, "metrics", &metrics));
  CHECK_OK(smd_collection_add_tensor_name(metrics, "accuracy"));
  smd_collection_free(metrics);
  CHECK_ERR(smd_hook_make_due(hook, "metrics"), SMD_E_INVALID_STATE, "no step has begun");
  double acc = 0.5;
  float w = 1;
  int64_t one[1] = {1};
  CHECK_OK(smd_hook_begin_step(hook)); /* step 0: due */
  CHECK_OK(smd_hook_begin_step(hook)); /* step 1: not due */
  CHECK(!smd_hook_is_due(hook, "accuracy") && !smd_hook_any_due(hook));
  CHECK_ERR(smd_hook_make_due(hook, "no_such_collection"), SMD_E_NOT_FOUND, "no_such_collection");
  CHECK_OK(smd_hook_make_due(hook, "metrics"));
  CHECK(smd_hook_is_due(hook, "accuracy") && smd_hook_any_due(hook));
  CHECK(!smd_hook_is_due(hook, "fc.weight"));
  CHECK_OK(smd_hook_save_tensor(hook, "accuracy", SMD_DTYPE_FLOAT64, one, 1, &acc, sizeof acc, NULL, 0));
  CHECK_OK(smd_hook_save_tensor(hook, "fc.weight", SMD_DTYPE_FLOAT32, one, 1, &w, sizeof w, NULL, 0));
  CHECK_OK(smd_hook_begin_step(hook)); /* step 2: not due, and no longer made due */
  CHECK(!smd_hook_is_due(hook, "accuracy"));
  acc = 0.75;
  CHECK_OK(smd_hook_save_tensor(hook, "accuracy", SMD_DTYPE_FLOAT64, one, 1, &acc, sizeof acc, NULL, 0));
  CHECK_OK(smd_hook_make_due(hook, "metrics"));
  CHECK_OK(smd_hook_end_step(hook));
  CHECK(!smd_hook_is_due(hook, "accuracy"));
  CHECK_ERR(smd_hook_make_due(hook, "metrics"), SMD_E_INVALID_STATE, "step 2 was ended");
  CHECK_OK(smd_hook_close(hook));
  CHECK_ERR(smd_hook_make_due(hook, "metrics"), SMD_E_INVALID_STATE, "closed");
  CHECK_ERR(smd_hook_make_due(hook, NULL), SMD_E_INVALID_ARGUMENT, "NULL");
  CHECK_ERR(smd_hook_make_due(NULL, "metrics"), SMD_E_INVALID_ARGUMENT, "NULL");
  smd_hook_free(hook);
  smd_trial *trial = NULL;
  CHECK_OK(smd_trial_open(dir, NULL, &trial));
  if (trial != NULL) {
    int64_t *steps = NULL;
    size_t n = 0;
    CHECK_OK(smd_trial_steps(trial, SMD_MODE_GLOBAL, false, &steps, &n));
    CHECK(n == 1 && steps != NULL && steps[0] == 1);
    smd_free(steps);
    smd_value *v = read_value(trial, "accuracy", 1);
    double d = 0;
    if (v != NULL) CHECK_OK(smd_value_double_at(v, 0, &d));
    CHECK(d == 0.5);
    smd_value_free(v);
    smd_trial_free(trial);
  }
}

/* smd_collection_clear_include_regex: the built-in pattern goes too; names added stay. */
static void test_clear_include_regex(void) {
  const char *dir = scratch_path("clearregex");
  smd_hook_options *opts = options_every_step();
  CHECK_OK(smd_hook_options_add_include_collection(opts, "weights"));
  smd_hook *hook = make_hook(dir, opts);
  smd_hook_options_free(opts);
  smd_collection *w = NULL;
  CHECK_OK(smd_hook_get_collection(hook, "weights", &w));
  CHECK_OK(smd_hook_begin_step(hook));
  CHECK(smd_hook_is_due(hook, "fc.weight")); /* the built-in ^(?!gradient).*weight */
  CHECK_OK(smd_collection_add_tensor_name(w, "kernel"));
  CHECK_OK(smd_collection_add_include_regex(w, "^mine"));
  CHECK_OK(smd_collection_clear_include_regex(w));
  CHECK(!smd_hook_is_due(hook, "conv.weight") && !smd_hook_is_due(hook, "mine.x"));
  CHECK(smd_hook_is_due(hook, "kernel"));
  CHECK_OK(smd_collection_add_include_regex(w, "^mine"));
  CHECK(smd_hook_is_due(hook, "mine.x") && !smd_hook_is_due(hook, "conv.weight"));
  CHECK_OK(smd_hook_close(hook));
  CHECK_ERR(smd_collection_clear_include_regex(w), SMD_E_INVALID_STATE, "closed");
  CHECK_ERR(smd_collection_clear_include_regex(NULL), SMD_E_INVALID_ARGUMENT, "NULL");
  smd_collection_free(w);
  smd_hook_free(hook);
}

/* Including "all" includes every collection (smdebug's hook does so); the "all" collection itself
 * matches every tensor only with save_all. */
static void test_including_all_includes_every_collection(void) {
  smd_hook_options *opts = options_every_step();
  CHECK_OK(smd_hook_options_add_include_collection(opts, "all"));
  smd_hook *hook = make_hook(scratch_path("include_all"), opts);
  smd_hook_options_free(opts);
  CHECK_OK(smd_hook_begin_step(hook));
  CHECK(smd_hook_is_due(hook, "fc.weight") && smd_hook_is_due(hook, "fc.bias"));
  CHECK(smd_hook_is_due(hook, "gradient/fc.weight"));
  CHECK(!smd_hook_is_due(hook, "other")); /* no collection takes it */
  smd_collection *c = NULL;
  CHECK_OK(smd_hook_get_collection(hook, "acts", &c)); /* a collection made later is included too */
  CHECK_OK(smd_collection_add_include_regex(c, "^act/"));
  CHECK(smd_hook_is_due(hook, "act/relu"));
  smd_collection_free(c);
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);
}

/* max_pending_steps: 0 writes each step before the next begins (its index file is there when
 * smd_hook_begin_step returns); below -1 is refused. */
static void test_max_pending_steps(void) {
  smd_hook_options *opts = options_every_step();
  CHECK_ERR(smd_hook_options_set_max_pending_steps(opts, -2), SMD_E_INVALID_ARGUMENT, "max_pending_steps");
  CHECK_OK(smd_hook_options_set_max_pending_steps(opts, -1));
  CHECK_OK(smd_hook_options_set_max_pending_steps(opts, 0));
  CHECK_OK(smd_hook_options_set_save_all(opts, true));
  const char *dir = scratch_path("pending");
  smd_hook *hook = make_hook(dir, opts);
  smd_hook_options_free(opts);
  float v = 1.0f;
  int64_t shape[1] = {1};
  for (int s = 0; s < 5; ++s) {
    CHECK_OK(smd_hook_begin_step(hook));
    if (s > 0) {
      char rel[96];
      snprintf(rel, sizeof rel, "index/000000000/%012d_worker_0.json", s - 1);
      char *idx = read_file(dir, rel);
      CHECK(idx != NULL); /* the previous step is already written */
      free(idx);
    }
    CHECK_OK(smd_hook_save_tensor(hook, "loss", SMD_DTYPE_FLOAT32, shape, 1, &v, sizeof v, NULL, 0));
  }
  CHECK_OK(smd_hook_close(hook));
  smd_hook_free(hook);
}

/* Reduction tags drop ":<digits>" of the tensor name by default (smdebug's PyTorch, MXNet and
 * XGBoost hooks) and keep it with keep_colon_index (smdebug's TensorFlow hooks), so that a reader
 * attaches the reductions of "dense/kernel:0" to that tensor. */
static void test_keep_colon_index_option(void) {
  for (int keep = 0; keep <= 1; ++keep) {
    const char *dir = scratch_path(keep ? "colon_kept" : "colon_dropped");
    smd_hook_options *opts = options_every_step();
    smd_reduction_config *rc = NULL;
    CHECK_OK(smd_reduction_config_parse("max", &rc));
    CHECK_OK(smd_hook_options_set_reduction_config(opts, rc));
    smd_reduction_config_free(rc);
    CHECK_OK(smd_hook_options_add_include_regex(opts, "^dense/"));
    if (keep) CHECK_OK(smd_hook_options_set_keep_colon_index(opts, true));
    CHECK_ERR(smd_hook_options_set_keep_colon_index(NULL, true), SMD_E_INVALID_ARGUMENT, "options");
    smd_hook *hook = make_hook(dir, opts);
    smd_hook_options_free(opts);
    float v[2] = {-1, 2};
    int64_t shape[1] = {2};
    CHECK_OK(smd_hook_begin_step(hook));
    CHECK_OK(smd_hook_save_tensor(hook, "dense/kernel:0", SMD_DTYPE_FLOAT32, shape, 1, v, sizeof v, NULL, 0));
    CHECK_OK(smd_hook_close(hook));
    smd_hook_free(hook);
    char *idx = read_file(dir, "index/000000000/000000000000_worker_0.json");
    CHECK(idx != NULL);
    if (idx) {
      if (keep) {
        CHECK(strstr(idx, "\"smdebug/reductions/max/dense/kernel:0\"") != NULL);
      } else {
        CHECK(strstr(idx, "\"smdebug/reductions/max/dense/kernel\"") != NULL);
        CHECK(strstr(idx, "kernel:0") == NULL);
      }
      free(idx);
    }
  }
}

int main(int argc, char **argv) {
  static const struct capi_test tests[] = {
      TEST_ENTRY(test_version),
      TEST_ENTRY(test_free_functions_accept_null),
      TEST_ENTRY(test_dtypes_and_modes),
      TEST_ENTRY(test_save_config_rules),
      TEST_ENTRY(test_reduction_config_strings),
      TEST_ENTRY(test_steps_and_modes),
      TEST_ENTRY(test_what_is_written),
      TEST_ENTRY(test_reproducible_output),
      TEST_ENTRY(test_real_crc_option),
      TEST_ENTRY(test_fsync_option),
      TEST_ENTRY(test_dry_run_writes_nothing),
      TEST_ENTRY(test_include_workers),
      TEST_ENTRY(test_collections_api),
      TEST_ENTRY(test_may_save),
      TEST_ENTRY(test_keep_colon_index_option),
      TEST_ENTRY(test_small_memory_budget_waits_not_drops),
      TEST_ENTRY(test_scalars_do_not_hold_the_memory_budget),
      TEST_ENTRY(test_a_size_no_block_can_hold_is_out_of_memory),
      TEST_ENTRY(test_from_json),
      TEST_ENTRY(test_from_json_file_found_through_the_environment),
      TEST_ENTRY(test_strings_and_typed_scalars),
      TEST_ENTRY(test_max_pending_steps),
      TEST_ENTRY(test_saves_before_the_first_step),
      TEST_ENTRY(test_end_step),
      TEST_ENTRY(test_make_due),
      TEST_ENTRY(test_clear_include_regex),
      TEST_ENTRY(test_including_all_includes_every_collection),
  };
  return capi_run(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
