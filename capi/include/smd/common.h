/* smd/common.h: errors, data types, modes, string arrays, versions, memory. */
#ifndef SMD_COMMON_H
#define SMD_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "smd/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Errors
 *
 * Every call that can fail returns an smd_error*: NULL on success, otherwise an error object
 * that the caller owns and releases with smd_error_free(). Errors are plain values: there is no
 * thread-local "last error".
 * The codes are stable: new ones are only ever added at the end. The codes from
 * SMD_E_TENSOR_UNAVAILABLE_FOR_STEP to SMD_E_RULE_CONDITION_MET carry the meaning of smdebug's
 * exception classes of the same names.
 * ------------------------------------------------------------------------------------------- */
typedef enum smd_code {
  SMD_OK = 0,
  SMD_E_INTERNAL = 1,          /* a bug or an unexpected failure; the message says what */
  SMD_E_INVALID_ARGUMENT = 2,  /* NULL pointer, bad size, bad name, bad option value, ... */
  SMD_E_NOT_FOUND = 3,         /* a file, folder, collection or object that does not exist */
  SMD_E_IO = 4,                /* reading or writing storage failed (errno text in the message) */
  SMD_E_CORRUPT = 5,           /* data on storage is malformed: bad CRC, truncated record, bad JSON */
  SMD_E_OUT_OF_MEMORY = 6,
  SMD_E_UNSUPPORTED = 7,       /* a valid request smd cannot serve (e.g. a GPU DLPack tensor) */
  SMD_E_INVALID_STATE = 8,     /* the object cannot do this now (e.g. the hook is closed) */
  SMD_E_ALREADY_EXISTS = 9,    /* e.g. out_dir already holds a finished run */
  SMD_E_CANCELLED = 10,        /* a callback returned non-zero */
  SMD_E_TENSOR_UNAVAILABLE_FOR_STEP = 11,
  SMD_E_TENSOR_UNAVAILABLE = 12,
  SMD_E_STEP_UNAVAILABLE = 13,
  SMD_E_STEP_NOT_YET_AVAILABLE = 14,
  SMD_E_NO_MORE_DATA = 15,
  SMD_E_MISSING_COLLECTION_FILES = 16,
  SMD_E_SHAPE_UNAVAILABLE_FOR_STEP = 17,
  SMD_E_INVALID_WORKER = 18,
  SMD_E_RULE_CONDITION_MET = 19, /* smdebug's RuleEvaluationConditionMet */
  SMD_E_HTTP = 20,             /* S3/HTTP failure: status and AWS error code in the message */
  SMD_E_AUTH = 21              /* S3 credentials missing or refused */
} smd_code;

typedef struct smd_error smd_error;

/* The error's code. smd_error_code(NULL) is SMD_OK. */
SMD_API smd_code smd_error_code(const smd_error *err) SMD_NOEXCEPT;
/* The message, UTF-8, borrowed: valid until smd_error_free(err). Never NULL ("" for NULL). */
SMD_API const char *smd_error_message(const smd_error *err) SMD_NOEXCEPT;
/* Releases an error. NULL is allowed. */
SMD_API void smd_error_free(smd_error *err) SMD_NOEXCEPT;
/* A stable name for a code, e.g. "SMD_E_NOT_FOUND" (static); NULL for values this library does not
 * know, as smd_dtype_name and smd_mode_name. */
SMD_API const char *smd_code_name(smd_code code) SMD_NOEXCEPT;

/* ---------------------------------------------------------------------------------------------
 * Data types. The values are TensorFlow's DataType numbers (what the files store), so they never
 * change. DLPack's DLDataType is converted where tensors cross that ABI: smd_hook_save_dlpack
 * (hook.h) and smd_value_to_dlpack (tensor.h).
 * ------------------------------------------------------------------------------------------- */
typedef enum smd_dtype {
  SMD_DTYPE_INVALID = 0,
  SMD_DTYPE_FLOAT32 = 1,
  SMD_DTYPE_FLOAT64 = 2,
  SMD_DTYPE_INT32 = 3,
  SMD_DTYPE_UINT8 = 4,
  SMD_DTYPE_INT16 = 5,
  SMD_DTYPE_INT8 = 6,
  SMD_DTYPE_STRING = 7,       /* a 1-D array of UTF-8 strings (smd_hook_save_strings) */
  SMD_DTYPE_COMPLEX64 = 8,
  SMD_DTYPE_INT64 = 9,
  SMD_DTYPE_BOOL = 10,        /* one byte per element, 0 or 1 */
  SMD_DTYPE_BFLOAT16 = 14,
  SMD_DTYPE_UINT16 = 17,
  SMD_DTYPE_COMPLEX128 = 18,
  SMD_DTYPE_FLOAT16 = 19,
  SMD_DTYPE_UINT32 = 22,
  SMD_DTYPE_UINT64 = 23
} smd_dtype;

/* Bytes per element (0 for SMD_DTYPE_STRING and unknown values). */
SMD_API size_t smd_dtype_size(smd_dtype dtype) SMD_NOEXCEPT;
/* numpy's name ("float32", "bool", "bfloat16", "str"); NULL for unknown values. */
SMD_API const char *smd_dtype_name(smd_dtype dtype) SMD_NOEXCEPT;
/* Parses a numpy-style name. Errors: SMD_E_INVALID_ARGUMENT for an unknown name. */
SMD_API SMD_MUST_USE smd_error *smd_dtype_from_name(const char *name, smd_dtype *out) SMD_NOEXCEPT;

/* ---------------------------------------------------------------------------------------------
 * Modes, with smdebug's enum values.
 * ------------------------------------------------------------------------------------------- */
typedef enum smd_mode {
  SMD_MODE_ALL = 0, /* only for save-configuration setters: the setting applies to every mode */
  SMD_MODE_TRAIN = 1,
  SMD_MODE_EVAL = 2,
  SMD_MODE_PREDICT = 3,
  SMD_MODE_GLOBAL = 4
} smd_mode;

/* "TRAIN", "EVAL", "PREDICT", "GLOBAL"; NULL for other values. */
SMD_API const char *smd_mode_name(smd_mode mode) SMD_NOEXCEPT;
/* Parses a mode name, case-insensitive ("train", "TRAIN"). Errors: SMD_E_INVALID_ARGUMENT. */
SMD_API SMD_MUST_USE smd_error *smd_mode_from_name(const char *name, smd_mode *out) SMD_NOEXCEPT;

/* ---------------------------------------------------------------------------------------------
 * Arrays of strings returned to the caller. The caller owns the array and frees it with
 * smd_strarray_free(), which frees the strings too.
 * ------------------------------------------------------------------------------------------- */
typedef struct smd_strarray {
  char **strings;
  size_t count;
} smd_strarray;

/* Frees the strings and the array they live in, and zeroes *array. NULL is allowed. */
SMD_API void smd_strarray_free(smd_strarray *array) SMD_NOEXCEPT;

/* Frees a buffer that smd allocated and documented as "free with smd_free". NULL is allowed. */
SMD_API void smd_free(void *ptr) SMD_NOEXCEPT;

/* ---------------------------------------------------------------------------------------------
 * Versions. Compare the runtime version with SMD_VERSION_* from smd/version.h to check that the
 * headers and the library match.
 * ------------------------------------------------------------------------------------------- */
/* The loaded library's version; each out-parameter may be NULL. */
SMD_API void smd_version(int32_t *major_out, int32_t *minor_out, int32_t *patch_out) SMD_NOEXCEPT;
SMD_API const char *smd_version_string(void) SMD_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif /* SMD_COMMON_H */
