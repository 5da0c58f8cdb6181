/* smd/tensor.h: the tensors of a trial and their values.
 *
 * An smd_tensor is one named tensor of a trial (smd_trial_tensor). Its per-step functions take a
 * step, the mode that step is counted in (SMD_MODE_GLOBAL: a global step) and a worker name, or
 * NULL for the lexicographically first worker that saved the tensor at that step. They resolve
 * the step as smdebug does (a mode step through the trial's step maps), refreshing the trial if
 * the step is not known, and fail with smdebug's meanings:
 *   SMD_E_TENSOR_UNAVAILABLE_FOR_STEP  the step exists but this tensor (or this part of it) was
 *                                      not saved there, or its event file is missing;
 *   SMD_E_STEP_UNAVAILABLE             the step was not saved at all, or the job ended before
 *                                      it (smdebug's reads say StepUnavailable there too; its
 *                                      NoMoreData comes from smd_trial_wait_for_steps only);
 *   SMD_E_STEP_NOT_YET_AVAILABLE       the job is running and has not written the step yet;
 *   SMD_E_INVALID_WORKER               the named worker did not save the tensor at that step;
 *   SMD_E_INVALID_ARGUMENT             NULL pointers, an unknown mode;
 *   SMD_E_CORRUPT / SMD_E_IO           the event file is damaged or unreadable (the message names
 *                                      the file and offset).
 *
 * An smd_value is an immutable, reference-counted array: dtype, shape and C-contiguous
 * little-endian data (one byte 0/1 per bool; strings: a 1-D array of UTF-8 strings). A value
 * outlives the tensor and trial it came from; it can be exported to DLPack without a copy.
 *
 * Threading: smd_tensor and smd_value are immutable handles; any function here may be called
 * concurrently from any thread, on the same handles too.
 */
#ifndef SMD_TENSOR_H
#define SMD_TENSOR_H

#include "smd/common.h"
#include "smd/dlpack.h"
#include "smd/trial.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct smd_value smd_value;

/* ---------------------------------------------------------------------------------------------
 * Tensors.
 * ------------------------------------------------------------------------------------------- */

/* Releases a tensor handle. Values obtained from it stay valid. NULL is allowed. */
SMD_API void smd_tensor_free(smd_tensor *tensor) SMD_NOEXCEPT;

/* The tensor's name, borrowed for the handle's lifetime; NULL for NULL. */
SMD_API const char *smd_tensor_name(const smd_tensor *tensor) SMD_NOEXCEPT;

/* The tensor's original name (smdebug's Tensor.original_name): the "originalname" of the last
 * shape entry loaded for it (smdebug's TensorFlow hooks write the variable's own name there, such
 * as "dense/kernel:0"; the name itself when the entry has none), or NULL in *out when no shape was
 * saved for it (save_shape); freed with smd_free(). It follows what refreshes have loaded; it
 * refreshes nothing itself. Errors: SMD_E_INVALID_ARGUMENT (NULL). */
SMD_API SMD_MUST_USE smd_error *smd_tensor_original_name(const smd_tensor *tensor,
                                                         char **out) SMD_NOEXCEPT;

/* The steps of `mode` at which anything of this tensor was saved (value, shape or reductions),
 * ascending: global steps for SMD_MODE_GLOBAL, mode steps otherwise. Without show_incomplete, only
 * the complete steps of the trial (see smd_trial_steps). *steps_out is freed with smd_free(). */
SMD_API SMD_MUST_USE smd_error *smd_tensor_steps(const smd_tensor *tensor, smd_mode mode,
                                                 bool show_incomplete, int64_t **steps_out,
                                                 size_t *n_out) SMD_NOEXCEPT;

/* The value saved at a step. *out is the caller's (smd_value_free). Errors: see above;
 * SMD_E_TENSOR_UNAVAILABLE_FOR_STEP when only reductions and/or a shape were saved there (the
 * message then says whether reductions exist). */
SMD_API SMD_MUST_USE smd_error *smd_tensor_value(const smd_tensor *tensor, int64_t step,
                                                 smd_mode mode, const char *worker,
                                                 smd_value **out) SMD_NOEXCEPT;

/* Every value of the complete steps of `mode` (smdebug's values()): parallel arrays of n steps
 * (freed with smd_free) and n values (freed with smd_value_array_free). Fails on the first step
 * that fails. */
SMD_API SMD_MUST_USE smd_error *smd_tensor_values(const smd_tensor *tensor, smd_mode mode,
                                                  const char *worker, int64_t **steps_out,
                                                  smd_value ***values_out,
                                                  size_t *n_out) SMD_NOEXCEPT;

/* Frees n values and the array holding them. NULL is allowed. */
SMD_API void smd_value_array_free(smd_value **values, size_t n) SMD_NOEXCEPT;

/* The shape at a step: the saved shape (save_shape) if there is one, else the value's shape.
 * *dims_out (freed with smd_free; never NULL on success, even for 0 dimensions) holds *ndim_out
 * dimensions. Errors: SMD_E_SHAPE_UNAVAILABLE_FOR_STEP (neither was saved), and those of
 * smd_tensor_value. */
SMD_API SMD_MUST_USE smd_error *smd_tensor_shape(const smd_tensor *tensor, int64_t step,
                                                 smd_mode mode, const char *worker,
                                                 int64_t **dims_out, size_t *ndim_out) SMD_NOEXCEPT;

/* The dtype and shape of the value saved at a step, without reading the value: only the first
 * bytes of its record are read (length CRC checked), and nothing is decoded into memory or cached
 * (small records, and values already cached, are decoded whole). The cheap way to describe a
 * tensor of any size. *dims_out (freed with smd_free; never NULL on success) holds *ndim_out
 * dimensions. Errors: those of smd_tensor_value, e.g. SMD_E_TENSOR_UNAVAILABLE_FOR_STEP when only
 * reductions or a shape were saved there. */
SMD_API SMD_MUST_USE smd_error *smd_tensor_value_info(const smd_tensor *tensor, int64_t step,
                                                      smd_mode mode, const char *worker,
                                                      smd_dtype *dtype_out, int64_t **dims_out,
                                                      size_t *ndim_out) SMD_NOEXCEPT;

/* The shapes of every complete step of `mode`, in compressed form: step i has shape
 * dims[offsets[i] .. offsets[i+1]). steps (n entries), offsets (n + 1 entries) and dims are each
 * freed with smd_free(). */
SMD_API SMD_MUST_USE smd_error *smd_tensor_shapes(const smd_tensor *tensor, smd_mode mode,
                                                  const char *worker, int64_t **steps_out,
                                                  size_t **offsets_out, int64_t **dims_out,
                                                  size_t *n_out) SMD_NOEXCEPT;

/* A reduction at a step, as a 1-element array of shape [1]. `reduction` is "min", "max", "mean",
 * "std", "variance", "sum", "prod", "l1", "l2" (also "l1_norm", "l2_norm"), each optionally with
 * an "abs_" prefix (absolute values), or any other name a writer saved. The saved reduction is
 * returned if there is one; otherwise it is computed from the saved raw value (norms are vector
 * norms over all elements, std/variance population ones; "median" also works here).
 * Errors: SMD_E_INVALID_ARGUMENT (a name that was not saved and is not computable),
 * SMD_E_TENSOR_UNAVAILABLE_FOR_STEP (neither the reduction nor the raw value was saved), and
 * those of smd_tensor_value. */
SMD_API SMD_MUST_USE smd_error *smd_tensor_reduction_value(const smd_tensor *tensor, int64_t step,
                                                           smd_mode mode, const char *worker,
                                                           const char *reduction,
                                                           smd_value **out) SMD_NOEXCEPT;

/* The names of the reductions saved at a step ("abs_mean", "l2", ...), sorted. */
SMD_API SMD_MUST_USE smd_error *smd_tensor_reduction_names(const smd_tensor *tensor, int64_t step,
                                                           smd_mode mode, const char *worker,
                                                           smd_strarray *out) SMD_NOEXCEPT;

/* The reductions saved at a step (smdebug's reduction_values()): names_out as
 * smd_tensor_reduction_names and, in the same order, *n_out values (freed with
 * smd_value_array_free; *n_out equals names_out->count). */
SMD_API SMD_MUST_USE smd_error *smd_tensor_reduction_values(const smd_tensor *tensor, int64_t step,
                                                            smd_mode mode, const char *worker,
                                                            smd_strarray *names_out,
                                                            smd_value ***values_out,
                                                            size_t *n_out) SMD_NOEXCEPT;

/* The workers that saved anything of this tensor at a step, sorted.
 * Errors: SMD_E_TENSOR_UNAVAILABLE_FOR_STEP (the tensor has nothing at that step). */
SMD_API SMD_MUST_USE smd_error *smd_tensor_workers(const smd_tensor *tensor, int64_t step,
                                                   smd_mode mode, smd_strarray *out) SMD_NOEXCEPT;

/* The complete steps of `mode` up to and including `step`, the last n of them (n = 0: all).
 * *steps_out is freed with smd_free(). */
SMD_API SMD_MUST_USE smd_error *smd_tensor_prev_steps(const smd_tensor *tensor, int64_t step,
                                                      smd_mode mode, size_t n, int64_t **steps_out,
                                                      size_t *n_out) SMD_NOEXCEPT;

/* ---------------------------------------------------------------------------------------------
 * Values.
 * ------------------------------------------------------------------------------------------- */

/* Drops the caller's reference. NULL is allowed. */
SMD_API void smd_value_free(smd_value *value) SMD_NOEXCEPT;
/* Another reference to the same immutable value, freed with smd_value_free; NULL for NULL (and
 * when out of memory). */
SMD_API smd_value *smd_value_ref(const smd_value *value) SMD_NOEXCEPT;

/* Getters that cannot fail (NULL gives SMD_DTYPE_INVALID / 0 / NULL). */
SMD_API smd_dtype smd_value_dtype(const smd_value *value) SMD_NOEXCEPT;
SMD_API size_t smd_value_ndim(const smd_value *value) SMD_NOEXCEPT;
/* ndim dimensions, borrowed for the value's lifetime (NULL when ndim is 0). */
SMD_API const int64_t *smd_value_shape(const smd_value *value) SMD_NOEXCEPT;
/* Number of elements (the product of the shape). */
SMD_API size_t smd_value_count(const smd_value *value) SMD_NOEXCEPT;
/* Bytes of smd_value_data(): count * smd_dtype_size(dtype); 0 for strings. */
SMD_API size_t smd_value_nbytes(const smd_value *value) SMD_NOEXCEPT;
/* The elements, C-contiguous, little-endian, 64-byte aligned, borrowed for the value's lifetime;
 * NULL for string values. */
SMD_API const void *smd_value_data(const smd_value *value) SMD_NOEXCEPT;

/* String values: element i as bytes (normally UTF-8; NUL-terminated, and *len_out, if not NULL,
 * gets the length, which may include NUL bytes), borrowed for the value's lifetime.
 * Errors: SMD_E_INVALID_ARGUMENT (not a string value, or i out of range). */
SMD_API SMD_MUST_USE smd_error *smd_value_string(const smd_value *value, size_t i,
                                                 const char **out, size_t *len_out) SMD_NOEXCEPT;

/* Element i converted to a double (bool: 0/1; float16 and bfloat16 widened; 64-bit integers
 * rounded to nearest). Errors: SMD_E_INVALID_ARGUMENT (i out of range), SMD_E_UNSUPPORTED
 * (strings and complex values). */
SMD_API SMD_MUST_USE smd_error *smd_value_double_at(const smd_value *value, size_t i,
                                                    double *out) SMD_NOEXCEPT;

/* Exports the value as a DLPack tensor without copying: CPU device, compact row-major (strides
 * NULL), version 1.x, flag DLPACK_FLAG_BITMASK_READ_ONLY set. The consumer owns *out and calls
 * (*out)->deleter(*out) exactly once; the data stays valid until then, even if the value, its
 * tensor and its trial were all freed. Errors: SMD_E_UNSUPPORTED (string values). */
SMD_API SMD_MUST_USE smd_error *smd_value_to_dlpack(const smd_value *value,
                                                    DLManagedTensorVersioned **out) SMD_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif /* SMD_TENSOR_H */
