/* smd/tensorboard.h: writing TensorBoard logs (scalars and histograms) the way smdebug exports
 * them.
 *
 * A hook exports by itself when asked to (smd_hook_options_set_export_tensorboard and
 * smd_hook_options_set_tensorboard_dir in smd/hook.h). This writer is for everything else, e.g.
 * converting an existing trial (smd export-tensorboard).
 *
 * Layout (docs/tensorboard.md): <dir>/<MODE>/<step:012d>_<pid>_<hostname>.tfevents, MODE one of
 * TRAIN, EVAL, PREDICT, GLOBAL (each folder is one TensorBoard run), one file per (mode, step).
 * Each file starts with a file_version record ("brain.Event:2"); every record carries real masked
 * CRC32C checksums. Files are written under their final name, appended whole records at a time,
 * so TensorBoard can read them while they grow.
 *
 * Tags are sanitized as smdebug does: every character other than a letter, a digit, '_', '-',
 * '/' or '.' becomes '_', and leading '/' are removed.
 *
 * Threading: one thread at a time per writer.
 */
#ifndef SMD_TENSORBOARD_H
#define SMD_TENSORBOARD_H

#include "smd/common.h"
#include "smd/storage.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct smd_tensorboard_writer smd_tensorboard_writer;

/* Creates a writer of the log folder `dir` (created with its parents when the first file is), or
 * of s3://bucket/prefix (reached with `storage`, smd/storage.h, copied; NULL: the AWS
 * configuration chain; each event file becomes an object when the writer is closed).
 * Nothing is written until the first record. *out is the caller's, freed with
 * smd_tensorboard_writer_free().
 * Errors: SMD_E_INVALID_ARGUMENT (NULL or empty dir). */
SMD_API SMD_MUST_USE smd_error *smd_tensorboard_writer_create(const char *dir,
                                                              const smd_storage_options *storage,
                                                              smd_tensorboard_writer **out) SMD_NOEXCEPT;

/* Closes the writer if it is still open (errors are dropped: call smd_tensorboard_writer_close
 * to see them) and frees it. NULL is allowed. */
SMD_API void smd_tensorboard_writer_free(smd_tensorboard_writer *writer) SMD_NOEXCEPT;

/* Writes a scalar summary (Summary.Value.simple_value, stored as float32) tagged with the
 * sanitized `tag` into the file of (step, mode); `step` is the Event step TensorBoard plots
 * against. wall_time is seconds since the epoch; 0 means now.
 * Each mode has one open file: writing at a step other than the mode's current one completes
 * that file first, so write each mode's steps in ascending order (TensorBoard reads a folder's
 * files in name order).
 * Errors: SMD_E_INVALID_ARGUMENT (NULL writer or tag, a negative step, an unknown mode, a tag that
 * sanitizes to nothing), SMD_E_IO (the file cannot be created or written, naming it; the writer then keeps
 * failing), SMD_E_INVALID_STATE (closed). */
SMD_API SMD_MUST_USE smd_error *smd_tensorboard_writer_add_scalar(smd_tensorboard_writer *writer,
                                                                  int64_t step, smd_mode mode,
                                                                  double wall_time, const char *tag,
                                                                  double value) SMD_NOEXCEPT;

/* Writes a histogram summary (Summary.Value.histo) of the `nbytes / smd_dtype_size(dtype)`
 * elements at `data` (C-contiguous, little-endian), as smdebug computes it: the values as
 * float64 (complex: the real part) counted over TensorFlow's default bucket edges
 * (0, ±1e-12 * 1.1^k below 1e20), trimmed to the non-empty range plus one empty bucket on the left;
 * min, max, num, sum and sum_squares over all elements. Values that fall in no bucket (NaN,
 * infinities, beyond ±1e20) are not counted; when none falls in a bucket nothing is written and
 * *written_out (if not NULL) is false, else true. Empty tensors are refused (nothing to show).
 * Mode, step, wall time and files as smd_tensorboard_writer_add_scalar.
 * Errors: SMD_E_INVALID_ARGUMENT (NULL arguments, an unknown dtype, SMD_DTYPE_STRING or
 * SMD_DTYPE_BOOL, nbytes not a positive multiple of the element size), and those of
 * smd_tensorboard_writer_add_scalar. */
SMD_API SMD_MUST_USE smd_error *smd_tensorboard_writer_add_histogram(smd_tensorboard_writer *writer,
                                                                     int64_t step, smd_mode mode,
                                                                     double wall_time, const char *tag,
                                                                     smd_dtype dtype, const void *data,
                                                                     size_t nbytes,
                                                                     bool *written_out) SMD_NOEXCEPT;

/* Writes out everything buffered so far, keeping the files open.
 * Errors: SMD_E_IO (the writer's first error), SMD_E_INVALID_STATE (closed). */
SMD_API SMD_MUST_USE smd_error *smd_tensorboard_writer_flush(smd_tensorboard_writer *writer) SMD_NOEXCEPT;

/* Completes and closes every file. Returns the first error met since the writer was created, or
 * NULL; calling it again returns NULL and does nothing. Later writes fail with
 * SMD_E_INVALID_STATE. */
SMD_API SMD_MUST_USE smd_error *smd_tensorboard_writer_close(smd_tensorboard_writer *writer) SMD_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif /* SMD_TENSORBOARD_H */
