/* smd/trial.h: reading a trial, the output of a finished or still running training job.
 *
 * A trial is a folder written by an smdebug (or smd) hook: collections/, index/ and events/
 * files. smd_trial_open() reads the collections file and the index files, not the event files;
 * values are read one record at a time when asked for (see smd/tensor.h).
 *
 * Live jobs: a trial opened while the job runs sees new steps after a refresh. By default queries
 * that need data the trial does not have yet (an unknown tensor, a step beyond the known ones,
 * the step lists) refresh automatically, like smdebug's "dynamic refresh"; a refresh lists only
 * the index files added since the last one, and on Linux change notification lets a query skip
 * the listing when nothing changed. Once training_job_end.ts is seen and loaded, automatic
 * refreshes stop (smd_trial_refresh() still looks).
 *
 * Steps: a global step counts every step of the job; each mode (TRAIN, EVAL, PREDICT, GLOBAL)
 * also has its own mode step. Functions taking (step, mode) read the step as a step of that mode
 * (a global step for SMD_MODE_GLOBAL).
 *
 * Errors carry the meaning of smdebug's exceptions as codes (smd/common.h): e.g.
 * SMD_E_TENSOR_UNAVAILABLE (TensorUnavailable), SMD_E_STEP_NOT_YET_AVAILABLE, SMD_E_NO_MORE_DATA,
 * SMD_E_MISSING_COLLECTION_FILES, with smdebug's message plus the names involved.
 *
 * Threading: every smd_trial_* function may be called concurrently on one trial from any number
 * of threads (refreshes are serialized internally); a trial's settings are fixed when it opens. smd_trial_options and smd_tensor_filter are
 * plain values: one thread at a time each.
 */
#ifndef SMD_TRIAL_H
#define SMD_TRIAL_H

#include "smd/common.h"
#include "smd/storage.h"
#include "smd/hook.h" /* smd_save_config, which a collection's save configuration comes back as */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct smd_trial smd_trial;
typedef struct smd_tensor smd_tensor; /* see smd/tensor.h */

/* smdebug's StepState (same values): whether the trial has passed a step. */
typedef enum smd_step_state {
  SMD_STEP_UNAVAILABLE = 0,     /* the step was not saved and never will be */
  SMD_STEP_AVAILABLE = 1,       /* every worker wrote it (or the job ended, or later steps completed) */
  SMD_STEP_NOT_YET_AVAILABLE = 2 /* not (completely) written yet; the job may still write it */
} smd_step_state;

/* ---------------------------------------------------------------------------------------------
 * Options for smd_trial_open.
 * ------------------------------------------------------------------------------------------- */
typedef struct smd_trial_options smd_trial_options;

/* Options with every default: all steps, automatic refresh on, no wait for a missing
 * collections file, a 64 MiB value cache. */
SMD_API SMD_MUST_USE smd_error *smd_trial_options_create(smd_trial_options **out) SMD_NOEXCEPT;
SMD_API void smd_trial_options_free(smd_trial_options *options) SMD_NOEXCEPT;
/* smdebug's range_steps: load only global steps begin <= step < end (end is exclusive). -1 means
 * no bound on that side. Errors: SMD_E_INVALID_ARGUMENT (a bound < -1, or end <= begin). */
SMD_API SMD_MUST_USE smd_error *smd_trial_options_set_range_steps(smd_trial_options *options,
                                                                  int64_t begin,
                                                                  int64_t end) SMD_NOEXCEPT;
/* Whether queries refresh the trial by themselves when they need newer data (default true). The
 * setting is fixed for the trial's life; smd_trial_refresh_scope_create() overrides it on one
 * thread for a while. */
SMD_API SMD_MUST_USE smd_error *smd_trial_options_set_auto_refresh(smd_trial_options *options,
                                                                   bool on) SMD_NOEXCEPT;
/* How long smd_trial_open waits for the collections file(s) of a job that has not ended yet
 * (default 0: not at all), and before that for the trial folder of a job that has not started
 * (on S3 for the job's first object under the prefix: a prefix exists only once an object is
 * under it); the whole open waits at most this long. Waits are always bounded. Errors:
 * SMD_E_INVALID_ARGUMENT if < 0. */
SMD_API SMD_MUST_USE smd_error *smd_trial_options_set_collection_wait_ms(smd_trial_options *options,
                                                                         int64_t wait_ms) SMD_NOEXCEPT;
/* Bytes of decoded values and event-file blocks the trial keeps cached (default 64 MiB; 0
 * disables the cache). */
SMD_API SMD_MUST_USE smd_error *smd_trial_options_set_cache_bytes(smd_trial_options *options,
                                                                  size_t bytes) SMD_NOEXCEPT;
/* How the trial reaches an s3://bucket/prefix (smd/storage.h): the settings are copied; NULL
 * goes back to none set (the AWS configuration chain). Local paths ignore them.
 * Errors: SMD_E_INVALID_ARGUMENT (NULL options). */
SMD_API SMD_MUST_USE smd_error *smd_trial_options_set_storage(smd_trial_options *options,
                                                              const smd_storage_options *storage) SMD_NOEXCEPT;

/* ---------------------------------------------------------------------------------------------
 * Opening and refreshing.
 * ------------------------------------------------------------------------------------------- */

/* Opens the trial in folder `path` ("~" expanded, surrounding whitespace ignored) or under
 * s3://bucket/prefix (listed page by page; values read with ranged GETs). options may be
 * NULL (defaults); it is copied. Reads the first collections file (collections and
 * _meta.num_workers) and every index file; index files that cannot be parsed are skipped and
 * reported by smd_trial_warnings(). An index file that cannot be READ (an I/O error, or an S3
 * request that failed all its attempts) is never skipped: it is tried once more, then the open
 * fails with that error naming the file (open again later).
 * Errors: SMD_E_INVALID_ARGUMENT (NULL or empty path), SMD_E_NOT_FOUND (no such folder),
 * SMD_E_MISSING_COLLECTION_FILES (no collections file: the job ended without one, or it has not
 * written one within the collection wait; or the job ended with fewer collection files than
 * _meta.num_workers), SMD_E_CORRUPT (a malformed collections file), SMD_E_IO,
 * SMD_E_AUTH (S3 credentials missing or refused), SMD_E_HTTP (another S3 error); a malformed
 * s3:// URI or bucket name, or no such bucket, is SMD_E_INVALID_ARGUMENT. */
SMD_API SMD_MUST_USE smd_error *smd_trial_open(const char *path, const smd_trial_options *options,
                                               smd_trial **out) SMD_NOEXCEPT;

/* The S3 multipart uploads in progress (created, neither completed nor aborted) under the trial
 * prefix `uri` ("s3://bucket/prefix"): a writer killed while it uploaded a large event file leaves
 * one, whose parts S3 keeps (and bills) until it is aborted. One string per upload, "<key>\t<upload
 * id>\t<initiated>" (the key without s3://bucket/, the time as S3 gives it), in S3's order. With
 * abort_them true each one is aborted (its parts deleted) and the strings list those aborted. Do
 * not abort while a writer of that prefix is still running: its upload in progress would fail.
 * storage may be NULL (the AWS configuration chain). out: free with smd_strarray_free.
 * Errors: SMD_E_INVALID_ARGUMENT (NULL uri or out, not an s3:// URI, a bad S3 setting), SMD_E_AUTH,
 * SMD_E_HTTP, SMD_E_IO (an abort that failed: the others were still tried). */
SMD_API SMD_MUST_USE smd_error *smd_s3_uploads_in_progress(const char *uri,
                                                           const smd_storage_options *storage,
                                                           bool abort_them,
                                                           smd_strarray *out) SMD_NOEXCEPT;

/* Releases the caller's handle. Tensors, values and strings obtained from the trial stay valid
 * (they keep what they need). NULL is allowed. */
SMD_API void smd_trial_free(smd_trial *trial) SMD_NOEXCEPT;

/* The trial folder (after "~" expansion), borrowed for the handle's lifetime; NULL for NULL. */
SMD_API const char *smd_trial_path(const smd_trial *trial) SMD_NOEXCEPT;

/* Loads what was written since the last refresh, whatever the automatic refresh setting.
 * Malformed index files are skipped (everything else is loaded) and the first one met in this
 * refresh is returned as SMD_E_CORRUPT naming the file. An index file that cannot be read, or a
 * listing that fails, is returned as its error (SMD_E_IO, SMD_E_HTTP, ...) after everything else
 * was loaded; that file is read again by every later refresh, and its step stays
 * NOT_YET_AVAILABLE (never skipped) until then. Errors: SMD_E_CORRUPT, SMD_E_IO, SMD_E_HTTP,
 * SMD_E_AUTH. */
SMD_API SMD_MUST_USE smd_error *smd_trial_refresh(smd_trial *trial) SMD_NOEXCEPT;

/* Whether queries of this trial refresh by themselves on the calling thread: the innermost refresh
 * scope of the trial alive on this thread, else the setting it was opened with. false for NULL. */
SMD_API bool smd_trial_auto_refresh(const smd_trial *trial) SMD_NOEXCEPT;

/* A refresh scope: smdebug's no_refresh (on false) and refresh (on true) blocks. While the scope
 * lives, queries of the trial made on the calling thread (through any handle of it, its tensors
 * included) refresh by themselves if `on`, never if not, whatever the trial was opened with. The
 * trial itself does not change and other threads are not affected, so a block in one thread does
 * not stop another thread's refreshes. Scopes nest (the innermost wins); free each on the thread
 * that created it, which ends it (freed on another thread it ends nothing). The scope keeps the
 * trial alive. Errors: SMD_E_INVALID_ARGUMENT (NULL trial). */
typedef struct smd_trial_refresh_scope smd_trial_refresh_scope;
SMD_API SMD_MUST_USE smd_error *smd_trial_refresh_scope_create(const smd_trial *trial, bool on,
                                                               smd_trial_refresh_scope **out) SMD_NOEXCEPT;
SMD_API void smd_trial_refresh_scope_free(smd_trial_refresh_scope *scope) SMD_NOEXCEPT;

/* Messages about the files skipped so far (malformed index files, unusable file names, a
 * collections file without _meta.num_workers or with a malformed save_config), oldest first. */
SMD_API SMD_MUST_USE smd_error *smd_trial_warnings(const smd_trial *trial,
                                                   smd_strarray *out) SMD_NOEXCEPT;

/* Whether training_job_end.ts exists now. Errors: SMD_E_IO. */
SMD_API SMD_MUST_USE smd_error *smd_trial_has_ended(const smd_trial *trial, bool *out) SMD_NOEXCEPT;

/* _meta.num_workers of the collections file (the workers a step needs to be complete); 0 for
 * NULL. */
SMD_API int64_t smd_trial_num_workers(const smd_trial *trial) SMD_NOEXCEPT;

/* Whether the trial has seen the end of the job and loaded every step written before it, so that
 * no step can appear any more (smdebug's trial.loaded_all_steps): set by the first refresh (the
 * one smd_trial_open makes included) that found training_job_end.ts before listing and could read
 * every index file it listed. It checks nothing itself; false for NULL. */
SMD_API bool smd_trial_loaded_all_steps(const smd_trial *trial) SMD_NOEXCEPT;

/* The reader's position, as smdebug's trial.last_complete_step and trial.last_index_token.
 * smd_trial_last_complete_step: the last global step that every worker has written (-1 before
 * any; once the job has ended and a refresh loaded everything, the last step). When more than the
 * incomplete-step window (1000 steps, SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW) are incomplete, it
 * moves forward by half the window, as smdebug's does. -1 for NULL.
 * smd_trial_index_cursor: the index file after which the next refresh lists new ones, relative to
 * the trial ("index/000000000/000000000070_worker_0.json": the last complete step's file of the
 * last worker), or NULL in *out before any step is complete; freed with smd_free(). smdebug's
 * last_index_token is this joined to the trial's path (its key prefix on S3). */
SMD_API int64_t smd_trial_last_complete_step(const smd_trial *trial) SMD_NOEXCEPT;
SMD_API SMD_MUST_USE smd_error *smd_trial_index_cursor(const smd_trial *trial,
                                                       char **out) SMD_NOEXCEPT;

/* ---------------------------------------------------------------------------------------------
 * Steps, modes, workers.
 * ------------------------------------------------------------------------------------------- */

/* The steps of `mode` at which anything was saved, ascending: global steps for SMD_MODE_GLOBAL,
 * mode steps otherwise. Without show_incomplete only complete steps: written by all
 * num_workers workers, or at or before the last complete step, or any step once the job ended.
 * *steps_out is the caller's, freed with smd_free() (NULL when *n_out is 0).
 * Errors: SMD_E_INVALID_ARGUMENT (unknown mode), SMD_E_IO (refreshing). */
SMD_API SMD_MUST_USE smd_error *smd_trial_steps(const smd_trial *trial, smd_mode mode,
                                                bool show_incomplete, int64_t **steps_out,
                                                size_t *n_out) SMD_NOEXCEPT;

/* The modes other than GLOBAL in which steps were saved, in the order TRAIN, EVAL, PREDICT:
 * *n_out modes in *modes_out, the caller's, freed with smd_free() (NULL when *n_out is 0).
 * Does not refresh. */
SMD_API SMD_MUST_USE smd_error *smd_trial_modes(const smd_trial *trial, smd_mode **modes_out,
                                                size_t *n_out) SMD_NOEXCEPT;

/* The mode / mode step of a global step. Errors: SMD_E_NOT_FOUND (the trial knows no such global
 * step, even after a refresh). */
SMD_API SMD_MUST_USE smd_error *smd_trial_mode(const smd_trial *trial, int64_t global_step,
                                               smd_mode *out) SMD_NOEXCEPT;
SMD_API SMD_MUST_USE smd_error *smd_trial_mode_step(const smd_trial *trial, int64_t global_step,
                                                    int64_t *out) SMD_NOEXCEPT;
/* The global step of a mode step; for SMD_MODE_GLOBAL the step itself (as smdebug).
 * Errors: SMD_E_NOT_FOUND, SMD_E_INVALID_ARGUMENT (unknown mode). */
SMD_API SMD_MUST_USE smd_error *smd_trial_global_step(const smd_trial *trial, int64_t mode_step,
                                                      smd_mode mode, int64_t *out) SMD_NOEXCEPT;

/* The worker names, sorted: those of the collection files (a job saving from one worker only has
 * one, whatever num_workers says). */
SMD_API SMD_MUST_USE smd_error *smd_trial_workers(const smd_trial *trial, smd_strarray *out) SMD_NOEXCEPT;

/* smdebug's has_passed_step: AVAILABLE if the step is complete;
 * NOT_YET_AVAILABLE if it is incomplete, or beyond every known step of a running job, or absent
 * while no later step is complete; UNAVAILABLE if it was skipped (a later step is complete) or
 * the job ended without it. Errors: SMD_E_INVALID_ARGUMENT (unknown mode), SMD_E_IO. */
SMD_API SMD_MUST_USE smd_error *smd_trial_has_passed_step(const smd_trial *trial, int64_t step,
                                                          smd_mode mode,
                                                          smd_step_state *out) SMD_NOEXCEPT;

/* Waits until every step in steps[0..n) of `mode` is available, refreshing as the job writes
 * (without fixed sleeps: on Linux it wakes when the trial folder changes). Automatic refresh is
 * on while it waits and restored afterwards. timeout_ms < 0 waits as long as it takes; 0 checks
 * once. steps may be NULL when n is 0. Errors: SMD_E_STEP_UNAVAILABLE (a step was skipped),
 * SMD_E_NO_MORE_DATA (the job ended before the step; the message gives the last step),
 * SMD_E_STEP_NOT_YET_AVAILABLE (timeout), SMD_E_INVALID_ARGUMENT, SMD_E_IO. */
SMD_API SMD_MUST_USE smd_error *smd_trial_wait_for_steps(smd_trial *trial, const int64_t *steps,
                                                         size_t n, smd_mode mode,
                                                         int64_t timeout_ms) SMD_NOEXCEPT;

/* ---------------------------------------------------------------------------------------------
 * Tensor names.
 * ------------------------------------------------------------------------------------------- */
typedef struct smd_tensor_filter smd_tensor_filter;

/* A filter that keeps every tensor of every step and mode. */
SMD_API SMD_MUST_USE smd_error *smd_tensor_filter_create(smd_tensor_filter **out) SMD_NOEXCEPT;
SMD_API void smd_tensor_filter_free(smd_tensor_filter *filter) SMD_NOEXCEPT;
/* Only tensors saved at this step of the filter's mode. */
SMD_API SMD_MUST_USE smd_error *smd_tensor_filter_set_step(smd_tensor_filter *filter,
                                                           int64_t step) SMD_NOEXCEPT;
/* Only tensors saved in this mode (SMD_MODE_GLOBAL, the default, means any mode; with a step,
 * the mode the step is counted in). Errors: SMD_E_INVALID_ARGUMENT (unknown mode). */
SMD_API SMD_MUST_USE smd_error *smd_tensor_filter_set_mode(smd_tensor_filter *filter,
                                                           smd_mode mode) SMD_NOEXCEPT;
/* Only tensors whose name one of the added regexes matches anywhere (Python re.search). The
 * regex is checked when the filter is used. */
SMD_API SMD_MUST_USE smd_error *smd_tensor_filter_add_include_regex(smd_tensor_filter *filter,
                                                                    const char *regex) SMD_NOEXCEPT;
/* Only members of this collection: its tensor_names plus the tensors its include_regex
 * matches. An unknown collection keeps nothing. */
SMD_API SMD_MUST_USE smd_error *smd_tensor_filter_set_collection(smd_tensor_filter *filter,
                                                                 const char *collection) SMD_NOEXCEPT;

/* Names of the tensors that pass the filter (NULL: all), sorted. A mode never seen gives an empty
 * list. Errors: SMD_E_INVALID_ARGUMENT (both regexes and a collection; an invalid regex, naming
 * it), SMD_E_IO (refreshing). */
SMD_API SMD_MUST_USE smd_error *smd_trial_tensor_names(const smd_trial *trial,
                                                       const smd_tensor_filter *filter,
                                                       smd_strarray *out) SMD_NOEXCEPT;

/* Whether the trial has a tensor of this name (refreshing once if it does not). */
SMD_API SMD_MUST_USE smd_error *smd_trial_has_tensor(const smd_trial *trial, const char *name,
                                                     bool *out) SMD_NOEXCEPT;

/* A handle on the named tensor, the caller's, freed with smd_tensor_free(). It keeps the trial's
 * data alive: it stays valid after smd_trial_free(). Reduction records attach to the tensor name
 * of their tag ("smdebug/reductions/abs_mean/fc1" to "fc1").
 * Errors: SMD_E_TENSOR_UNAVAILABLE (no such tensor, even after a refresh). */
SMD_API SMD_MUST_USE smd_error *smd_trial_tensor(const smd_trial *trial, const char *name,
                                                 smd_tensor **out) SMD_NOEXCEPT;

/* ---------------------------------------------------------------------------------------------
 * Collections of the trial (from its collections file; read-only).
 * ------------------------------------------------------------------------------------------- */
typedef struct smd_collection_info smd_collection_info;

/* The collection names, sorted. */
SMD_API SMD_MUST_USE smd_error *smd_trial_collection_names(const smd_trial *trial,
                                                           smd_strarray *out) SMD_NOEXCEPT;
/* One collection, the caller's, freed with smd_collection_info_free(); valid after the trial is
 * freed. Errors: SMD_E_NOT_FOUND (smdebug would return an empty collection). */
SMD_API SMD_MUST_USE smd_error *smd_trial_collection(const smd_trial *trial, const char *name,
                                                     smd_collection_info **out) SMD_NOEXCEPT;
SMD_API void smd_collection_info_free(smd_collection_info *info) SMD_NOEXCEPT;
/* The name, borrowed for the info's lifetime; NULL for NULL. */
SMD_API const char *smd_collection_info_name(const smd_collection_info *info) SMD_NOEXCEPT;
/* include_regex as stored (order and duplicates kept). */
SMD_API SMD_MUST_USE smd_error *smd_collection_info_include_regex(const smd_collection_info *info,
                                                                  smd_strarray *out) SMD_NOEXCEPT;
/* tensor_names as stored. */
SMD_API SMD_MUST_USE smd_error *smd_collection_info_tensor_names(const smd_collection_info *info,
                                                                 smd_strarray *out) SMD_NOEXCEPT;
/* The reduction configuration in smdebug's string form ("min,l2_norm,abs_mean"), borrowed for
 * the info's lifetime; NULL when the collection has none, and for NULL. */
SMD_API const char *smd_collection_info_reductions(const smd_collection_info *info) SMD_NOEXCEPT;
/* save_raw_tensor / save_shape of its reduction configuration (false without one), and
 * save_histogram; false for NULL. */
SMD_API bool smd_collection_info_save_raw_tensor(const smd_collection_info *info) SMD_NOEXCEPT;
SMD_API bool smd_collection_info_save_shape(const smd_collection_info *info) SMD_NOEXCEPT;
SMD_API bool smd_collection_info_save_histogram(const smd_collection_info *info) SMD_NOEXCEPT;
/* The save configuration (smdebug's Collection.save_config), the caller's, freed with
 * smd_save_config_free(); *out is NULL when the collections file gives the collection none (its
 * "save_config" null or missing). A mode the file leaves null or missing is unset there
 * (smd_save_config_settings tells); a mode's missing or null keys take smdebug's defaults, and an
 * end_step of null is "no end" (negative). A malformed save_config (one smdebug's loader refuses;
 * a boolean, a number with a fraction or a save_interval below 1, docs/compatibility.md O8) is
 * ignored: *out is NULL and smd_trial_warnings names the file, the collection and what is wrong.
 * Errors: SMD_E_INVALID_ARGUMENT (NULL info or out). */
SMD_API SMD_MUST_USE smd_error *smd_collection_info_save_config(const smd_collection_info *info,
                                                                smd_save_config **out) SMD_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif /* SMD_TRIAL_H */
