/* smd/hook.h: saving tensors, reductions and scalars from a training program.
 *
 * A hook writes one smdebug trial: out_dir/events, index and collections files that the real
 * smdebug and smd both read. The training loop calls smd_hook_begin_step() at each step boundary
 * and offers tensors with smd_hook_save_tensor(); the hook decides from its collections and save
 * configurations whether anything is due, copies what is, and a writer thread encodes and writes
 * it. smd_hook_close() drains everything, writes the collections file and training_job_end.ts,
 * and returns the first error met anywhere on the way.
 *
 * Threading: every smd_hook_* and smd_collection_* function may be called from any thread, and
 * calls on one hook are serialized internally; saves take effect for the step and mode current
 * when they start. smd_save_config, smd_reduction_config and smd_hook_options objects are plain
 * values: one thread at a time each.
 */
#ifndef SMD_HOOK_H
#define SMD_HOOK_H

#include "smd/common.h"
#include "smd/storage.h"
#include "smd/dlpack.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Save configuration: when to save, per mode (smdebug's SaveConfig / SaveConfigMode).
 *
 * A mode is either unset or has all four settings: save_interval (default 500), start_step
 * (default 0), end_step (exclusive; a negative value means "no end", the default) and
 * save_steps (default none). A step s (the mode step) is saved if it is one of save_steps, or if
 * start_step <= s < end_step and s % save_interval == 0.
 * An unset mode takes the hook's setting for that mode (for a collection) or the defaults (for
 * the hook).
 * ------------------------------------------------------------------------------------------- */
typedef struct smd_save_config smd_save_config;

/* A configuration with every mode unset. */
SMD_API SMD_MUST_USE smd_error *smd_save_config_create(smd_save_config **out) SMD_NOEXCEPT;
SMD_API SMD_MUST_USE smd_error *smd_save_config_clone(const smd_save_config *config,
                                                      smd_save_config **out) SMD_NOEXCEPT;
SMD_API void smd_save_config_free(smd_save_config *config) SMD_NOEXCEPT;

/* Sets mode `mode` (or SMD_MODE_ALL for all four). save_steps may be NULL when
 * n_save_steps is 0; it is copied.
 * Errors: SMD_E_INVALID_ARGUMENT for an unknown mode or save_interval < 1. */
SMD_API SMD_MUST_USE smd_error *smd_save_config_set(smd_save_config *config, smd_mode mode,
                                                    int64_t save_interval, int64_t start_step,
                                                    int64_t end_step, const int64_t *save_steps,
                                                    size_t n_save_steps) SMD_NOEXCEPT;
/* Sets only save_interval for a mode (the mode's other settings keep their value, or their
 * default if the mode was unset). Errors: as smd_save_config_set. */
SMD_API SMD_MUST_USE smd_error *smd_save_config_set_interval(smd_save_config *config, smd_mode mode,
                                                             int64_t save_interval) SMD_NOEXCEPT;
/* Makes a mode (or SMD_MODE_ALL) unset again. Errors: SMD_E_INVALID_ARGUMENT (unknown mode). */
SMD_API SMD_MUST_USE smd_error *smd_save_config_unset(smd_save_config *config,
                                                      smd_mode mode) SMD_NOEXCEPT;
/* Whether `mode_step` of `mode` is saved by this configuration; an unset mode answers with the
 * defaults. Errors: SMD_E_INVALID_ARGUMENT for an unknown mode. */
SMD_API SMD_MUST_USE smd_error *smd_save_config_should_save(const smd_save_config *config,
                                                            int64_t mode_step, smd_mode mode,
                                                            bool *out) SMD_NOEXCEPT;
/* The settings of one mode: *is_set_out tells whether the mode is set; an unset mode gives the
 * defaults (save_interval 500, start_step 0, end_step -1, no save_steps). *end_step_out is
 * negative for "no end". The save steps come back in a new array the caller frees with smd_free()
 * (NULL when there are none), *n_out of them. Nothing is written on an error.
 * Errors: SMD_E_INVALID_ARGUMENT for a NULL pointer or a mode other than SMD_MODE_TRAIN ...
 * SMD_MODE_GLOBAL (SMD_MODE_ALL included). */
SMD_API SMD_MUST_USE smd_error *smd_save_config_settings(const smd_save_config *config, smd_mode mode,
                                                         bool *is_set_out, int64_t *save_interval_out,
                                                         int64_t *start_step_out, int64_t *end_step_out,
                                                         int64_t **save_steps_out,
                                                         size_t *n_out) SMD_NOEXCEPT;

/* ---------------------------------------------------------------------------------------------
 * Reduction configuration: what to save of a tensor (smdebug's ReductionConfig).
 *
 * Reduction names: min, max, mean, std, variance, sum, prod, median, l1, l2, each also with an
 * abs_ prefix (computed on absolute values); l1/l2 are also accepted as l1_norm, l2_norm,
 * abs_l1_norm, abs_l2_norm. Norms are vector norms over all elements, std and variance are
 * population ones (ddof 0).
 * ------------------------------------------------------------------------------------------- */
typedef struct smd_reduction_config smd_reduction_config;

/* An empty configuration: no reductions, save_raw_tensor false, save_shape false. */
SMD_API SMD_MUST_USE smd_error *smd_reduction_config_create(smd_reduction_config **out) SMD_NOEXCEPT;
/* Parses a comma-separated list as SageMaker passes it ("min,abs_mean,l2_norm"); whitespace
 * around items is ignored. save_raw_tensor and save_shape are false.
 * Errors: SMD_E_INVALID_ARGUMENT naming the unknown reduction. */
SMD_API SMD_MUST_USE smd_error *smd_reduction_config_parse(const char *reductions,
                                                           smd_reduction_config **out) SMD_NOEXCEPT;
SMD_API SMD_MUST_USE smd_error *smd_reduction_config_clone(const smd_reduction_config *config,
                                                           smd_reduction_config **out) SMD_NOEXCEPT;
SMD_API void smd_reduction_config_free(smd_reduction_config *config) SMD_NOEXCEPT;
/* Adds one reduction by name (see above); adding one twice has no further effect.
 * Errors: SMD_E_INVALID_ARGUMENT naming the unknown reduction. */
SMD_API SMD_MUST_USE smd_error *smd_reduction_config_add(smd_reduction_config *config,
                                                         const char *name) SMD_NOEXCEPT;
SMD_API SMD_MUST_USE smd_error *smd_reduction_config_set_save_raw_tensor(smd_reduction_config *config,
                                                                         bool save) SMD_NOEXCEPT;
SMD_API SMD_MUST_USE smd_error *smd_reduction_config_set_save_shape(smd_reduction_config *config,
                                                                    bool save) SMD_NOEXCEPT;
/* smdebug's serialized form ("min,l2_norm,abs_mean"), as in the collections file. The string is
 * the caller's, freed with smd_free(). */
SMD_API SMD_MUST_USE smd_error *smd_reduction_config_to_string(const smd_reduction_config *config,
                                                               char **out) SMD_NOEXCEPT;

/* ---------------------------------------------------------------------------------------------
 * Hook options.
 * ------------------------------------------------------------------------------------------- */
typedef struct smd_hook_options smd_hook_options;

typedef enum smd_include_workers {
  SMD_INCLUDE_WORKERS_ONE = 0, /* only the chief worker (worker_0) writes tensors (default) */
  SMD_INCLUDE_WORKERS_ALL = 1  /* every worker writes its own files */
} smd_include_workers;

/* Options with every default: save every 500 steps, raw tensors, no reductions, the losses
 * collection always saved, worker and worker count from the launcher's environment. */
SMD_API SMD_MUST_USE smd_error *smd_hook_options_create(smd_hook_options **out) SMD_NOEXCEPT;
SMD_API void smd_hook_options_free(smd_hook_options *options) SMD_NOEXCEPT;

/* The hook-wide SaveConfig (copied). */
SMD_API SMD_MUST_USE smd_error *smd_hook_options_set_save_config(smd_hook_options *options,
                                                                 const smd_save_config *config) SMD_NOEXCEPT;
/* The hook-wide ReductionConfig (copied). Collections without their own use it; note that a
 * configuration without save_raw_tensor means raw tensors are not saved for them. NULL goes back
 * to none (the default: raw tensors, no reductions). */
SMD_API SMD_MUST_USE smd_error *smd_hook_options_set_reduction_config(smd_hook_options *options,
                                                                      const smd_reduction_config *config) SMD_NOEXCEPT;
/* Appends a regex (Python `re` syntax, search semantics) to the "default" collection, which is
 * then saved. Errors: SMD_E_INVALID_ARGUMENT for an invalid regex, with the reason. */
SMD_API SMD_MUST_USE smd_error *smd_hook_options_add_include_regex(smd_hook_options *options,
                                                                   const char *regex) SMD_NOEXCEPT;
/* Saves the named collection (in addition to the always-saved "losses"). The collection need not
 * exist yet. "all" saves every collection, as in smdebug (the "all" collection itself matches
 * every tensor only with save_all). Errors: SMD_E_INVALID_ARGUMENT for an empty or invalid UTF-8
 * name. */
SMD_API SMD_MUST_USE smd_error *smd_hook_options_add_include_collection(smd_hook_options *options,
                                                                        const char *name) SMD_NOEXCEPT;
/* Saves every tensor offered, and every collection. */
SMD_API SMD_MUST_USE smd_error *smd_hook_options_set_save_all(smd_hook_options *options,
                                                              bool save_all) SMD_NOEXCEPT;
SMD_API SMD_MUST_USE smd_error *smd_hook_options_set_include_workers(smd_hook_options *options,
                                                                     smd_include_workers which) SMD_NOEXCEPT;
/* This process's worker name (default: worker_<rank> from OMPI_COMM_WORLD_RANK, RANK or
 * HOROVOD_RANK, else worker_0). Errors: SMD_E_INVALID_ARGUMENT for names that cannot be file
 * name parts: empty, invalid UTF-8, longer than 221 bytes (its longest file name,
 * "<step>_<worker>.tfevents.tmp", must fit in 255 bytes), '/', '\\', control characters, "." or "..",
 * a leading '_' or "__". */
SMD_API SMD_MUST_USE smd_error *smd_hook_options_set_worker(smd_hook_options *options,
                                                            const char *worker) SMD_NOEXCEPT;
/* The number of workers (default: OMPI_COMM_WORLD_SIZE, WORLD_SIZE or HOROVOD_SIZE, else 1).
 * Errors: SMD_E_INVALID_ARGUMENT if < 1. */
SMD_API SMD_MUST_USE smd_error *smd_hook_options_set_num_workers(smd_hook_options *options,
                                                                 int64_t num_workers) SMD_NOEXCEPT;
/* Dry run: decide and count everything, write nothing (not even out_dir). */
SMD_API SMD_MUST_USE smd_error *smd_hook_options_set_dry_run(smd_hook_options *options,
                                                             bool dry_run) SMD_NOEXCEPT;
/* Write the real CRC32C of each record's payload instead of smdebug's constant (smdebug's own
 * reader then refuses the files; smd reads both). Default false. */
SMD_API SMD_MUST_USE smd_error *smd_hook_options_set_real_payload_crc(smd_hook_options *options,
                                                                      bool real) SMD_NOEXCEPT;
/* TensorFlow tensor names: keep ":<digits>" in reduction tags
 * ("smdebug/reductions/min/dense/kernel:0", attached by readers to the tensor "dense/kernel:0"),
 * as smdebug's TensorFlow hooks write them. Default false: the index is dropped
 * ("smdebug/reductions/min/dense/kernel"), as smdebug's other hooks write them. */
SMD_API SMD_MUST_USE smd_error *smd_hook_options_set_keep_colon_index(smd_hook_options *options,
                                                                      bool keep) SMD_NOEXCEPT;
/* Reproducible output: stamp every record with wall time base + global step instead of the
 * clock. 0 (the default) uses the clock. */
SMD_API SMD_MUST_USE smd_error *smd_hook_options_set_wall_time_base(smd_hook_options *options,
                                                                    double base) SMD_NOEXCEPT;
/* Bytes of tensor data the hook may hold in memory waiting to be written (default 256 MiB), with
 * what each queued step holds besides (record headers, index file, bookkeeping: about 1 KiB for
 * a step of tiny tensors) and, on S3, the event files held for upload. When it is full, saving
 * waits for the writer; nothing is ever dropped. A tensor larger than the whole budget is
 * accepted when nothing else is pending. Scalars (a few bytes each, held by the hook until their
 * step ends) are outside the budget. Errors: SMD_E_INVALID_ARGUMENT for 0. */
SMD_API SMD_MUST_USE smd_error *smd_hook_options_set_memory_budget(smd_hook_options *options,
                                                                   size_t bytes) SMD_NOEXCEPT;
/* The most steps the writer may fall behind: ending a step (smd_hook_begin_step,
 * smd_hook_close) waits while more ended steps than this are still being written. -1 (the
 * default): no bound, only the memory budget holds training back; 0: each step is written before
 * the next begins. A rule watching the job (smd rules --follow --stop-training) then sees
 * training at most this many steps past the step it flags. Errors: SMD_E_INVALID_ARGUMENT below -1. */
SMD_API SMD_MUST_USE smd_error *smd_hook_options_set_max_pending_steps(smd_hook_options *options,
                                                                       int64_t steps) SMD_NOEXCEPT;
/* Whether close writes training_job_end.ts (default: true, or false when TRAINING_JOB_NAME is
 * set, as on SageMaker). */
SMD_API SMD_MUST_USE smd_error *smd_hook_options_set_write_end_marker(smd_hook_options *options,
                                                                      bool write) SMD_NOEXCEPT;
/* Durability (default false, as in smdebug): when true, every event, index and collections file
 * and training_job_end.ts is fsync'ed before its rename to the final name, and its folder (and
 * that folder's parent) after it, so that a step visible in the index survives a power loss or an
 * operating system crash, not only a crash of the process. Costs an fsync per file; see
 * docs/durability.md for what is guaranteed with and without it. */
SMD_API SMD_MUST_USE smd_error *smd_hook_options_set_fsync(smd_hook_options *options,
                                                           bool on) SMD_NOEXCEPT;
/* TensorBoard export (see smd/tensorboard.h for the files): scalar summaries of the values of
 * scalar collections (losses, metrics, feature_importance, average_shap, sm_metrics) that have
 * one element and of every smd_hook_save_scalar, and histograms of saved tensors that belong to a
 * collection with save_histogram (not the scalar ones; bool and empty tensors excluded), tagged
 * "<collection>/<tensor>" with the first such collection by name. Written by the hook's writer
 * thread, completed with each step; failures surface like any write error. Nothing is exported in
 * a dry run or by a worker that writes no tensors. Default off. Turning it on without a folder
 * exports into <out_dir>/tensorboard. */
SMD_API SMD_MUST_USE smd_error *smd_hook_options_set_export_tensorboard(smd_hook_options *options,
                                                                       bool on) SMD_NOEXCEPT;
/* The TensorBoard log folder (copied; "~" is $HOME). Setting it turns the export on even
 * without smd_hook_options_set_export_tensorboard, as smdebug does; NULL or "" unsets it.
 * An s3://bucket/prefix folder is written with the hook's storage options (below).
 * Errors: SMD_E_INVALID_ARGUMENT (NULL options). */
SMD_API SMD_MUST_USE smd_error *smd_hook_options_set_tensorboard_dir(smd_hook_options *options,
                                                                    const char *dir) SMD_NOEXCEPT;
/* How the hook reaches an s3://bucket/prefix out_dir and TensorBoard folder (smd/storage.h):
 * the settings are copied; NULL goes back to none set (the AWS configuration chain). Local paths
 * ignore them. Errors: SMD_E_INVALID_ARGUMENT (NULL options). */
SMD_API SMD_MUST_USE smd_error *smd_hook_options_set_storage(smd_hook_options *options,
                                                             const smd_storage_options *storage) SMD_NOEXCEPT;

/* ---------------------------------------------------------------------------------------------
 * Hook.
 * ------------------------------------------------------------------------------------------- */
typedef struct smd_hook smd_hook;

/* Creates a hook writing into out_dir (a local folder, created if missing, or s3://bucket/prefix:
 * each file becomes an object when it is complete). options may be NULL (all defaults); it is
 * copied.
 * Errors: SMD_E_INVALID_ARGUMENT (NULL or empty out_dir, an out_dir beginning or ending with
 * whitespace (a trial strips its path, as smdebug's create_trial does, and would read another
 * folder), bad worker name, a malformed s3:// URI or bucket name, no such bucket), SMD_E_ALREADY_EXISTS (out_dir already holds training_job_end.ts:
 * a finished run), SMD_E_IO (out_dir cannot be created or written, an S3 endpoint that cannot be
 * reached), SMD_E_AUTH (S3 credentials missing or refused), SMD_E_HTTP (another S3 error). */
SMD_API SMD_MUST_USE smd_error *smd_hook_create(const char *out_dir, const smd_hook_options *options,
                                                smd_hook **out) SMD_NOEXCEPT;

/* Creates a hook from smdebug's JSON hook configuration file (the file SageMaker writes):
 * LocalPath, HookParameters (save_interval, save_steps, start_step, end_step and their train./
 * eval./predict./global. forms, reductions, save_raw_tensor, save_shape, save_all, include_regex,
 * include_workers, dry_run, export_tensorboard, tensorboard_dir, ...) and
 * CollectionConfigurations. Under SageMaker (TRAINING_JOB_NAME set) export_tensorboard and
 * tensorboard_dir are ignored and TensorBoard export goes to the "LocalPath" of
 * $TENSORBOARD_CONFIG_FILE_PATH (default /opt/ml/input/config/tensorboardoutputconfig.json) if
 * that file exists. json_path NULL means
 * $SMDEBUG_CONFIG_FILE_PATH, else /opt/ml/input/config/debughookconfig.json. options (may be NULL)
 * supplies what the JSON cannot say (worker, wall time base, memory budget); what the JSON sets
 * wins. The file must be a regular file of at most 16 MiB (a folder, FIFO or device is refused,
 * never waited on). Errors: SMD_E_NOT_FOUND (no such file), SMD_E_INVALID_ARGUMENT (not a regular
 * file, too large, malformed JSON, a string holding \u0000 (a NUL, which no name or path can
 * hold), or a bad value, naming the key), and those of smd_hook_create. */
SMD_API SMD_MUST_USE smd_error *smd_hook_create_from_json_file(const char *json_path,
                                                               const smd_hook_options *options,
                                                               smd_hook **out) SMD_NOEXCEPT;
/* The same from JSON text in memory (len bytes, need not be NUL-terminated). */
SMD_API SMD_MUST_USE smd_error *smd_hook_create_from_json(const char *json, size_t len,
                                                          const smd_hook_options *options,
                                                          smd_hook **out) SMD_NOEXCEPT;

/* Closes the hook if it is still open (errors are dropped: call smd_hook_close to see them) and
 * frees it. Collections obtained from the hook stay valid objects but refuse further changes. */
SMD_API void smd_hook_free(smd_hook *hook) SMD_NOEXCEPT;

/* Drains everything queued, closes the current step's files, writes the collections file and
 * (unless disabled) training_job_end.ts. Returns the first error met anywhere since the hook was
 * created, or NULL. Calling it again returns NULL and does nothing. A single-worker hook that
 * lost the claim on out_dir to another process (SMD_E_ALREADY_EXISTS) writes no
 * training_job_end.ts: that would end the other process's live run. */
SMD_API SMD_MUST_USE smd_error *smd_hook_close(smd_hook *hook) SMD_NOEXCEPT;

/* Waits until everything queued so far is written to the current step's (still open) file.
 * Returns the first error met so far, if any. */
SMD_API SMD_MUST_USE smd_error *smd_hook_flush(smd_hook *hook) SMD_NOEXCEPT;

/* Sets the current mode. A mode used for the first time starts at mode step -1, so its first
 * smd_hook_begin_step makes it 0; a mode used before continues its count.
 * Errors: SMD_E_INVALID_ARGUMENT (unknown mode), SMD_E_INVALID_STATE (closed). */
SMD_API SMD_MUST_USE smd_error *smd_hook_set_mode(smd_hook *hook, smd_mode mode) SMD_NOEXCEPT;

/* The step boundary: ends the current step (its files are completed in the background) and
 * advances the global step and the current mode's step by one. The first call starts step 0.
 * Errors: SMD_E_INVALID_STATE (closed), or the first error the writer met. */
SMD_API SMD_MUST_USE smd_error *smd_hook_begin_step(smd_hook *hook) SMD_NOEXCEPT;

/* Ends the current step without beginning another, for a program that must see its last step
 * complete while the hook stays open (an XGBoost callback after training, say): the step's files
 * are completed in the background (smd_hook_flush waits for them) and the collections file is
 * written once anything was saved. Until the next smd_hook_begin_step no step is open: saves are
 * held, as before the first step, and written in the next step (smd_hook_close begins one for
 * them); smd_hook_global_step still gives the ended step. Does nothing when no step is open.
 * Errors: SMD_E_INVALID_STATE (closed), or the first error the writer met. */
SMD_API SMD_MUST_USE smd_error *smd_hook_end_step(smd_hook *hook) SMD_NOEXCEPT;

/* The current global step (-1 before the first smd_hook_begin_step), mode and mode step; for NULL
 * -1, SMD_MODE_GLOBAL and -1. */
SMD_API int64_t smd_hook_global_step(const smd_hook *hook) SMD_NOEXCEPT;
SMD_API smd_mode smd_hook_mode(const smd_hook *hook) SMD_NOEXCEPT;
SMD_API int64_t smd_hook_mode_step(const smd_hook *hook) SMD_NOEXCEPT;
/* This hook's worker name, borrowed for the hook's lifetime; NULL for NULL. */
SMD_API const char *smd_hook_worker(const smd_hook *hook) SMD_NOEXCEPT;

/* Whether a tensor of this name would be saved now (some collection it belongs to is due at the
 * current step). Cheap after the first call for a name; false for NULL arguments. */
SMD_API bool smd_hook_is_due(const smd_hook *hook, const char *name) SMD_NOEXCEPT;
/* Whether any collection at all is due at the current step. Cheapest. false for NULL. */
SMD_API bool smd_hook_any_due(const smd_hook *hook) SMD_NOEXCEPT;

/* Whether a tensor of this name can be saved at all under the hook's collections as they are:
 * whether it can belong to a collection the hook saves (include_collections, or every one with
 * save_all), whatever the step. With `numbered`, the question is asked of every name made of
 * `name` and a decimal index (one or more ASCII digits), as a framework hook numbers a module's
 * outputs "<module>_output_0", "<module>_output_1", ...: false only when none of them can be
 * saved. False means that offering the tensor (without collections named in the call) is useless
 * until smd_hook_collections_version changes; true may be wrong the other way (a regex whose matches smd cannot rule out for every
 * index counts as matching). A framework hook uses it to leave alone the modules and parameters
 * whose tensors nothing wants. False for NULL arguments, a name that is not valid UTF-8, a
 * closed hook and a dry run. */
SMD_API bool smd_hook_may_save(const smd_hook *hook, const char *name, bool numbered) SMD_NOEXCEPT;
/* A number that changes whenever the hook's collections change: a collection created or
 * included, a regex or tensor name added or cleared, a save or reduction configuration set (the
 * answers of smd_hook_may_save hold while it stays the same). 0 for NULL. */
SMD_API uint64_t smd_hook_collections_version(const smd_hook *hook) SMD_NOEXCEPT;

/* Whether a rule asked this training job to stop (smdebug's StopTraining action, done locally):
 * a rule invoked with the stop-training option (smd_rule_invoke_options_set_stop_training, `smd
 * rules --stop-training`) or carrying a stoptraining action writes the signal file
 * stop_training.smd into the trial folder, which is this hook's out_dir. Costs one stat() of a
 * local file: poll it once per step and, when *out is true, finish the step and close the hook.
 * Always false for a dry run. A signal left in out_dir by an earlier, unfinished run is removed
 * when the hook is created. Errors: SMD_E_INVALID_ARGUMENT (NULL), SMD_E_IO. */
SMD_API SMD_MUST_USE smd_error *smd_hook_stop_requested(const smd_hook *hook,
                                                        bool *out) SMD_NOEXCEPT;

/* Offers a tensor for the current step. It belongs to every collection whose regexes or names
 * match it plus the `collections` named here (the name is added to them; unknown ones are
 * created), and it is saved if any of those is due now: its shape if a due collection has
 * save_shape, each reduction of the due collections (min ... l2, abs forms), and the raw value
 * if one has save_raw_tensor. When something is due, the data is copied before the call returns;
 * otherwise the call returns at once. Before the first smd_hook_begin_step the tensor is copied
 * and held, then offered to step 0 when it begins (or when smd_hook_close is called without any
 * step), as smdebug writes such saves in its next step; held tensors count against no budget.
 *  name:  UTF-8; `shape` has `ndim` dimensions (NULL allowed when ndim is 0: a 0-d tensor);
 *  data:  nbytes bytes, C-contiguous row-major little-endian; nbytes must equal the element
 *         count times smd_dtype_size(dtype) (data may be NULL when nbytes is 0).
 * Empty tensors are not written raw (as in smdebug); their reductions are.
 * Errors: SMD_E_INVALID_ARGUMENT (NULL, unknown dtype, SMD_DTYPE_STRING (strings are saved with
 * smd_hook_save_strings), negative dimension,
 * size mismatch, invalid UTF-8 name, empty or invalid UTF-8 collection name), SMD_E_INVALID_STATE (closed), or
 * the first error the writer met (so that a failing disk is noticed at the next save). */
SMD_API SMD_MUST_USE smd_error *smd_hook_save_tensor(smd_hook *hook, const char *name,
                                                     smd_dtype dtype, const int64_t *shape,
                                                     size_t ndim, const void *data, size_t nbytes,
                                                     const char *const *collections,
                                                     size_t n_collections) SMD_NOEXCEPT;

/* The same for a DLPack tensor view, copied before the call returns. The tensor must be on the
 * CPU (SMD_E_UNSUPPORTED otherwise) and compact row-major (strides NULL or matching the shape;
 * SMD_E_UNSUPPORTED otherwise); byte_offset is honored. */
SMD_API SMD_MUST_USE smd_error *smd_hook_save_dlpack(smd_hook *hook, const char *name,
                                                     const DLTensor *tensor,
                                                     const char *const *collections,
                                                     size_t n_collections) SMD_NOEXCEPT;

/* The same for a managed DLPack tensor, whose ownership passes to smd in every case, success or
 * error: smd calls tensor->deleter(tensor) exactly once, when it no longer needs the data (at
 * once if nothing is due). No copy is made. A tensor whose version.major is not 1 is refused
 * (deleted, SMD_E_UNSUPPORTED). */
SMD_API SMD_MUST_USE smd_error *smd_hook_save_dlpack_managed(smd_hook *hook, const char *name,
                                                             DLManagedTensorVersioned *tensor,
                                                             const char *const *collections,
                                                             size_t n_collections) SMD_NOEXCEPT;

/* Saves a 1-D tensor of n strings (smdebug's numpy string arrays: DT_STRING, shape [n], one
 * string_val entry each; smdebug reads it back as a numpy str array). String i is lens[i] bytes
 * at strings[i] (lens NULL: NUL-terminated strings); the bytes are copied when something is due.
 * Only the value (and the shape, with save_shape) is saved: no reductions or TensorBoard
 * summaries of text. An empty array (n = 0) is not written raw, as for other empty tensors.
 * Collections and due-ness as smd_hook_save_tensor.
 * Errors: SMD_E_INVALID_ARGUMENT (NULL hook or name, strings NULL with n > 0, a NULL string),
 * and those of smd_hook_save_tensor. */
SMD_API SMD_MUST_USE smd_error *smd_hook_save_strings(smd_hook *hook, const char *name,
                                                      const char *const *strings,
                                                      const size_t *lens, size_t n,
                                                      const char *const *collections,
                                                      size_t n_collections) SMD_NOEXCEPT;

/* Saves a scalar as the tensor "scalar/<name>" (float64, shape [1]) in the current step,
 * whatever the save configuration says (smdebug's save_scalar of a Python float). A scalar saved
 * before the first smd_hook_begin_step is held and written into step 0, with step 0's mode and
 * mode step (as smdebug writes it into its next step).
 * Errors: as smd_hook_save_tensor. */
SMD_API SMD_MUST_USE smd_error *smd_hook_save_scalar(smd_hook *hook, const char *name,
                                                     double value) SMD_NOEXCEPT;

/* The same keeping the scalar's type, as smdebug does for numpy scalars, Python ints (int64) and
 * bools: `value` points to nbytes = smd_dtype_size(dtype) bytes holding one element of `dtype`
 * (any numeric dtype or SMD_DTYPE_BOOL, one byte 0 or 1). Saved as "scalar/<name>" of that dtype
 * and shape [1]. Errors: SMD_E_INVALID_ARGUMENT (NULL arguments, SMD_DTYPE_STRING or an unknown
 * dtype, nbytes not the dtype's size), and those of smd_hook_save_scalar. */
SMD_API SMD_MUST_USE smd_error *smd_hook_save_scalar_typed(smd_hook *hook, const char *name,
                                                           smd_dtype dtype, const void *value,
                                                           size_t nbytes) SMD_NOEXCEPT;

/* The same with the record's wall time: `timestamp` in seconds since the Unix epoch (smdebug's
 * save_scalar(..., timestamp=)), written as the event's wall_time and the TensorBoard summary's.
 * 0 means "now" (the clock at the call, or smd_hook_options_set_wall_time_base's stamp), as
 * smdebug treats a timestamp of None or 0. Errors: SMD_E_INVALID_ARGUMENT (a timestamp that is
 * not finite), and those of smd_hook_save_scalar_typed. */
SMD_API SMD_MUST_USE smd_error *smd_hook_save_scalar_timestamped(smd_hook *hook, const char *name,
                                                                 smd_dtype dtype, const void *value,
                                                                 size_t nbytes,
                                                                 double timestamp) SMD_NOEXCEPT;

/* What the hook's writer has done so far. Set struct_size to sizeof(smd_hook_stats) before the
 * call; fields are only ever appended, and a caller compiled against an older, shorter struct gets
 * the fields it knows. */
typedef struct smd_hook_stats {
  size_t struct_size;
  uint64_t records;              /* records written to event files */
  uint64_t bytes;                /* bytes of those records */
  uint64_t steps;                /* steps whose files are complete */
  uint64_t budget_waits;         /* saves that waited for the memory budget */
  uint64_t peak_pending_bytes;   /* the most tensor bytes held at once */
  double encoder_cpu_seconds;    /* CPU time of the writer's encoder thread */
  double committer_cpu_seconds;  /* CPU time of the writer's file-writing thread */
} smd_hook_stats;

/* Fills *out (see smd_hook_stats). A hook that writes nothing (dry run, non-chief worker) reports
 * zeros. Errors: SMD_E_INVALID_ARGUMENT (NULL, or struct_size smaller than its first two fields). */
SMD_API SMD_MUST_USE smd_error *smd_hook_writer_stats(const smd_hook *hook, smd_hook_stats *out) SMD_NOEXCEPT;

/* ---------------------------------------------------------------------------------------------
 * Collections: named groups of tensors with their own configuration. Built-in names (smdebug's):
 * all, default, weights, biases, gradients, losses, inputs, outputs, layers, sm_metrics,
 * optimizer_variables, tensorflow_summaries, metrics, hyperparameters, predictions, labels,
 * feature_importance, average_shap, full_shap, trees. weights, biases, gradients and losses come
 * with regexes ("^(?!gradient).*weight", "^(?!gradient).*bias", "^gradient", "[Ll]oss").
 * losses, metrics, feature_importance, average_shap and sm_metrics are scalar collections: they
 * always save the raw value and never reductions.
 * A collection handle is the caller's (free it with smd_collection_free) and keeps what it needs
 * alive; once the hook is closed, changes fail with SMD_E_INVALID_STATE.
 * ------------------------------------------------------------------------------------------- */
typedef struct smd_collection smd_collection;

/* Gets the collection of that name, creating it (empty, save_histogram true) if needed.
 * Errors: SMD_E_INVALID_ARGUMENT (NULL or empty name). */
SMD_API SMD_MUST_USE smd_error *smd_hook_get_collection(smd_hook *hook, const char *name,
                                                        smd_collection **out) SMD_NOEXCEPT;
/* Names of all collections of the hook, in creation order. */
SMD_API SMD_MUST_USE smd_error *smd_hook_collection_names(const smd_hook *hook,
                                                          smd_strarray *out) SMD_NOEXCEPT;
/* Adds a collection to the saved ones (as smd_hook_options_add_include_collection). */
SMD_API SMD_MUST_USE smd_error *smd_hook_include_collection(smd_hook *hook,
                                                            const char *name) SMD_NOEXCEPT;
/* Makes an included collection due for the rest of the current step, whatever its save
 * configuration says: the tensors saved into it until the step ends are written (smdebug's Keras
 * hook writes an epoch's logs at the epoch's end this way). The next smd_hook_begin_step or
 * smd_hook_end_step ends it. A collection the hook does not include stays unsaved.
 * Errors: SMD_E_INVALID_ARGUMENT (NULL arguments), SMD_E_NOT_FOUND (no collection of that name),
 * SMD_E_INVALID_STATE (closed; no step open). */
SMD_API SMD_MUST_USE smd_error *smd_hook_make_due(smd_hook *hook, const char *collection) SMD_NOEXCEPT;
SMD_API void smd_collection_free(smd_collection *collection) SMD_NOEXCEPT;
/* The name, borrowed for the handle's lifetime; NULL for NULL. */
SMD_API const char *smd_collection_name(const smd_collection *collection) SMD_NOEXCEPT;
/* Adds a regex (Python `re` syntax, search semantics). Errors: SMD_E_INVALID_ARGUMENT with the
 * regex error. */
SMD_API SMD_MUST_USE smd_error *smd_collection_add_include_regex(smd_collection *collection,
                                                                 const char *regex) SMD_NOEXCEPT;
/* Takes every include regex out of the collection, its built-in one too (a framework whose names
 * the built-in patterns do not fit starts from none); the tensor names added to it, and those it
 * already holds, stay. Errors: SMD_E_INVALID_ARGUMENT (NULL), SMD_E_INVALID_STATE (closed). */
SMD_API SMD_MUST_USE smd_error *smd_collection_clear_include_regex(smd_collection *collection) SMD_NOEXCEPT;
/* Adds an exact tensor name. */
SMD_API SMD_MUST_USE smd_error *smd_collection_add_tensor_name(smd_collection *collection,
                                                               const char *name) SMD_NOEXCEPT;
/* The collection's own SaveConfig (copied); its unset modes follow the hook. NULL removes it. */
SMD_API SMD_MUST_USE smd_error *smd_collection_set_save_config(smd_collection *collection,
                                                               const smd_save_config *config) SMD_NOEXCEPT;
/* The collection's own ReductionConfig (copied); NULL removes it (the hook's applies). Ignored
 * for scalar collections, which always save raw values only. */
SMD_API SMD_MUST_USE smd_error *smd_collection_set_reduction_config(smd_collection *collection,
                                                                    const smd_reduction_config *config) SMD_NOEXCEPT;
SMD_API SMD_MUST_USE smd_error *smd_collection_set_save_histogram(smd_collection *collection,
                                                                  bool save) SMD_NOEXCEPT;
/* The tensor names the collection holds so far (explicit ones and those matched), sorted. */
SMD_API SMD_MUST_USE smd_error *smd_collection_tensor_names(const smd_collection *collection,
                                                            smd_strarray *out) SMD_NOEXCEPT;

/* Every reduction name the library accepts (in reduction configurations and where a tensor's
 * reduction is asked for), without the optional "abs_" prefix that each also takes: "min", "max",
 * ..., "l1", "l2", "l1_norm", "l2_norm". Free with smd_strarray_free(). */
SMD_API SMD_MUST_USE smd_error *smd_reduction_names(smd_strarray *out) SMD_NOEXCEPT;

/* ---------------------------------------------------------------------------------------------
 * Reductions computed by the caller: a framework that holds a tensor on a GPU computes the
 * reductions there and hands smd only the numbers, instead of copying the tensor to the host.
 * ------------------------------------------------------------------------------------------- */

/* One reduction's value. `reduction` is a name as smd_reduction_config_add takes it, without the
 * abs_ prefix ("min", "mean", "l2", "l2_norm", ...); `abs` says it is over absolute values. */
typedef struct smd_reduction_value {
  const char *reduction;
  bool abs;
  double value;
} smd_reduction_value;

/* A tensor's TensorBoard histogram computed by the caller: counts[i] is the number of elements x
 * (as doubles; complex: the real part) with edges[i] <= x < edges[i + 1] for the edges of
 * smd_histogram_bucket_edges (the last bucket also holds x == its right edge), so n_counts is the
 * number of edges minus one; NaN, infinities and values outside the edges are in no bucket. min,
 * max, sum and sum_squares are over all elements as doubles (NaN in any of them when an element
 * is NaN: min and max are then both NaN). smd trims the buckets as it does for the histograms it
 * computes (docs/tensorboard.md). */
typedef struct smd_histogram {
  double min;
  double max;
  double sum;
  double sum_squares;
  const uint64_t *counts;
  size_t n_counts;
} smd_histogram;

/* The bucket edges of smd's (and smdebug's) TensorBoard histograms, ascending: 0, then +-1e-12
 * times powers of 1.1 below 1e20. *n_out (if not NULL) is their number. A static array: never
 * freed, the same for the life of the process. */
SMD_API const double *smd_histogram_bucket_edges(size_t *n_out) SMD_NOEXCEPT;

/* What smd_hook_save_tensor would write for a tensor of this name now (with no extra
 * collections): *reductions_out the due reductions in the order they are written, each as
 * "[abs_]<name>" with the short names ("min", ..., "l1", "l2"); *value_out whether the tensor's
 * elements themselves are needed (a due collection saves raw tensors, or a TensorBoard scalar
 * summary may be exported for it: then save the tensor with smd_hook_save_tensor);
 * *histogram_out whether a TensorBoard histogram of it may be exported (give it to
 * smd_hook_save_reductions, or save the tensor itself). Nothing due: no reductions and false.
 * Free the names with smd_strarray_free().
 * Errors: SMD_E_INVALID_ARGUMENT (NULL arguments, empty or non-UTF-8 name), SMD_E_INVALID_STATE
 * (closed, or no step open: before the first smd_hook_begin_step or after smd_hook_end_step). */
SMD_API SMD_MUST_USE smd_error *smd_hook_due_reductions(const smd_hook *hook, const char *name,
                                                        smd_strarray *reductions_out,
                                                        bool *value_out,
                                                        bool *histogram_out) SMD_NOEXCEPT;

/* Saves the reductions of a tensor that the caller computed: a tensor `name` of `dtype` and
 * `shape` (ndim dimensions) whose elements smd never sees. Collections, due-ness, tags, record
 * dtypes (numpy's result dtype of each reduction for `dtype`: a float32 tensor's l2 is float32,
 * an int32 tensor's sum int64), index entries and save_shape are exactly those of
 * smd_hook_save_tensor, so the files are byte for byte the same when the values are the ones smd
 * computes (docs/compatibility.md, W1-W4). `values` holds n_values reductions; each due one must
 * be among them (others are ignored). A value is stored in the result dtype as smd stores its own
 * double results: rounded to nearest for floating types, a whole number in range for integer
 * ones, != 0 for bool. As smd_hook_save_tensor, min and max of an empty tensor are not written.
 * `histogram` (NULL: none) is the tensor's TensorBoard histogram, required when one is due (see
 * smd_hook_due_reductions), ignored otherwise; written as the hook writes the ones it computes
 * (none when every count is 0, or for a bool or empty tensor).
 * Errors: SMD_E_INVALID_ARGUMENT (NULL arguments, unknown reduction name, a due reduction without
 * a value, a value that the result dtype cannot hold, a due histogram not given, or given with
 * the wrong number of buckets or more elements in them than the tensor has, SMD_DTYPE_STRING, and
 * the shape and name errors of smd_hook_save_tensor), SMD_E_UNSUPPORTED (a complex tensor's
 * non-abs reduction), SMD_E_INVALID_STATE (the tensor's value is due at this step, see
 * smd_hook_due_reductions: save it with smd_hook_save_tensor instead; closed; no step open), or
 * the first error the writer met. */
SMD_API SMD_MUST_USE smd_error *smd_hook_save_reductions(smd_hook *hook, const char *name,
                                                         smd_dtype dtype, const int64_t *shape,
                                                         size_t ndim,
                                                         const smd_reduction_value *values,
                                                         size_t n_values,
                                                         const smd_histogram *histogram,
                                                         const char *const *collections,
                                                         size_t n_collections) SMD_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif /* SMD_HOOK_H */
