/* smd/smd.h: the whole public C API of smd.
 *
 * smd reads and writes SageMaker Debugger (smdebug) trials: a training program saves tensors,
 * reductions and scalars step by step through a hook; an analyst opens the folder as a trial.
 *
 * Conventions (they hold for every function, so a binding author can rely on them):
 *  - Functions are smd_<module>_<verb>. Handles are opaque structs passed by pointer.
 *  - Every call that can fail returns smd_error*: NULL means success; otherwise the caller owns
 *    the error and frees it with smd_error_free(). The result of a call comes through its last
 *    parameter(s), named out or *_out, and is only written on success.
 *  - Objects returned through **out are owned by the caller and freed with their _free
 *    function. Every _free function accepts NULL and returns nothing.
 *  - Pointers returned directly (const char *, const int64_t *) are borrowed; the doc comment
 *    says which object they live as long as.
 *  - A child object stays valid when its parent is freed first (a tensor outlives its trial).
 *  - Input strings are NUL-terminated UTF-8, borrowed for the duration of the call only.
 *  - Steps and dimensions are int64_t, byte and element counts size_t, flags bool, modes smd_mode.
 *  - Arguments come in one order: the handle, then step, mode, worker, then the rest, then the
 *    outputs (e.g. smd_tensor_value(tensor, step, mode, worker, &value)).
 *  - Arrays come back in one way: numbers and handles as a caller-owned array plus a size_t
 *    count, `T **x_out, size_t *n_out` (numbers freed with smd_free(), values with
 *    smd_value_array_free(); the array may be NULL when the count is 0); strings as an owned
 *    smd_strarray freed with smd_strarray_free(). Several arrays of one result are parallel
 *    and share that one count (a tensor's steps and values); strings beside them come as an
 *    smd_strarray of the same count. Arrays a handle owns are borrowed: numbers as a pointer
 *    with a count getter (a value's shape), objects through a count and an index accessor
 *    (a rule's findings: smd_rule_findings_count, smd_rule_findings_at).
 *  - Static facts (names of codes, dtypes, modes, built-in rules and their parameters) are
 *    static strings, NULL for what does not exist.
 *  - Queries take a const handle; functions that change a handle say so in their name (_set_,
 *    _add_, _create, _close, ...). Setters of objects and options return smd_error *.
 *  - A NULL where a handle or other pointer is required fails with SMD_E_INVALID_ARGUMENT naming
 *    the parameter; the doc comment says which pointers may be NULL, and what NULL means there.
 *    Functions that cannot fail (getters, counts) return NULL, 0 or false for a NULL handle,
 *    unless their comment names another value (e.g. -1 for a step).
 *  - Out of memory is reported as SMD_E_OUT_OF_MEMORY, never as success: when even the error
 *    cannot be allocated, a static error is returned, which smd_error_free() ignores.
 *  - Callbacks take a void *payload last and return int; non-zero stops the operation, which
 *    then fails with SMD_E_CANCELLED. Callbacks must not unwind (throw or longjmp) into smd.
 *  - Thread safety is stated per type in its header; errors are per-call values.
 *  - smd_version() reports the library version; compare with SMD_VERSION_* of smd/version.h.
 */
#ifndef SMD_SMD_H
#define SMD_SMD_H

#include "smd/export.h"
#include "smd/version.h"
#include "smd/common.h"
#include "smd/storage.h"
#include "smd/dlpack.h"
#include "smd/hook.h"
#include "smd/trial.h"
#include "smd/tensor.h"
#include "smd/rules.h"
#include "smd/tensorboard.h"

#endif /* SMD_SMD_H */
