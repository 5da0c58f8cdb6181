/* smd_typemaps.i: the typemaps of smd's multi-valued parameters (out-parameters, arrays in and out),
 * written once for every language. %included by python.i and java.i after their hooks (below) and
 * before anything that declares a function taking these parameters.
 *
 * For each parameter shape (named after the parameter names smd.h's conventions fix: out,
 * steps_out, n_out, ...) this file declares the temporaries, how the C outputs are obtained, and how
 * they are freed (freearg), so both languages call smd the same way and free the same things. The
 * conversion to a language's objects is left to hooks that each language file defines, with the
 * same names and parameters, before %including this file.
 *
 * SWIG macros (%define; they may use $input, $result, $null):
 *   SMD_OUT_NUMINPUTS          the "in" typemaps' numinputs for an output: 0 where results are
 *                              returned (Python), 1 where a holder array is passed in (Java)
 *   SMD_OUT_HOLDER(K)          in an output's "in" typemap: checks that the holder (if any) has
 *                              room for K results, else fails
 *   SMD_OUT_RETURN(OBJ)        hands one converted result (a language object; NULL: conversion
 *                              failed, an exception is pending) to the caller
 *   SMD_OUT_RETURN2(A, B)      two results of one parameter group (B is only converted if A was)
 *   SMD_OUT_RETURN_NULL        a NULL string result
 *   SMD_OUT_RETURN_HANDLE(P, DESC)  an owned handle P (DESC: its SWIG type descriptor)
 *   SMD_OUT_RETURN_SCALAR(KIND, V)  a scalar V of KIND BOOL, INT64, DOUBLE or ENUM
 *   SMD_OUT_RETURN_DTYPE_DIMS(DT, XS, N)              a dtype and its N dimensions
 *   SMD_OUT_RETURN_STEP_SHAPES(XS, OFFS, DIMS, N)     N steps and their shapes (compressed form)
 *   SMD_OUT_TYPES_HANDLE(SIG), SMD_OUT_TYPES_SCALAR(SIG, KIND)
 *                              the language's own typemaps for a handle or scalar output (Java's
 *                              jni/jtype/jstype/javain); the array shapes' ones are declared by the
 *                              language file before %including this file
 *   SMD_FAIL                   leaves the wrapper after an input conversion failed
 * C macros (in the language's %{ %} code; each conversion returns a new language object, or NULL
 * with an exception pending):
 *   SMD_LANG_INT64S(xs, n), SMD_LANG_DIMS(xs, n), SMD_LANG_MODES(xs, n)   number arrays
 *   SMD_LANG_VALUES(vs, n)     owning proxies of n values; each vs[i] it takes is set to NULL
 *   SMD_LANG_STRS(arr)         the strings of an smd_strarray *
 *   SMD_LANG_STR(s)            a NUL-terminated string
 *   SMD_LANG_BYTES(s, n)       n bytes
 *   SMD_LANG_INT64S_IN(in, small, cap, heap, out, n)
 *                              an input number array: into small[cap] if it fits, else into a
 *                              malloc'd *heap; *out (may be NULL for none), *n; 0 on failure
 *   smd_lang_strs, SMD_LANG_STRS_INIT, SMD_LANG_STRS_IN(in, strs, param, null_msg, elem),
 *   SMD_LANG_STRS_FREE(strs)   an input string array (strs->items, strs->n) as C strings; param
 *                              names the parameter, null_msg and elem an element (refusing a null
 *                              one, or a NUL character in one); 0 on failure
 */

/* ---- Handles returned through **out: owned by the language's proxy (Java: by the caller of the
 * generated method). One per handle of smd_handles.i (listed here by hand: SWIG reads a file once,
 * and smd_core.i includes smd_handles.i after the languages' typemaps). */
%define SMD_OUT_HANDLE(TYPE)
SMD_OUT_TYPES_HANDLE(TYPE **out)
%typemap(in, numinputs=SMD_OUT_NUMINPUTS) TYPE **out (TYPE *tmp = NULL) {
  SMD_OUT_HOLDER(1)
  $1 = &tmp;
}
%typemap(argout) TYPE **out { SMD_OUT_RETURN_HANDLE(tmp$argnum, $*1_descriptor) }
%enddef
SMD_OUT_HANDLE(smd_storage_options)
SMD_OUT_HANDLE(smd_save_config)
SMD_OUT_HANDLE(smd_reduction_config)
SMD_OUT_HANDLE(smd_hook_options)
SMD_OUT_HANDLE(smd_hook)
SMD_OUT_HANDLE(smd_collection)
SMD_OUT_HANDLE(smd_trial)
SMD_OUT_HANDLE(smd_tensor)
SMD_OUT_HANDLE(smd_trial_options)
SMD_OUT_HANDLE(smd_trial_refresh_scope)
SMD_OUT_HANDLE(smd_tensor_filter)
SMD_OUT_HANDLE(smd_collection_info)
SMD_OUT_HANDLE(smd_rule)
SMD_OUT_HANDLE(smd_rule_invoke_options)
SMD_OUT_HANDLE(smd_value)
SMD_OUT_HANDLE(smd_tensorboard_writer)

/* ---- Scalars returned through a pointer (zeroed first). */
%define SMD_OUT_SCALAR(TYPE, NAME, KIND)
SMD_OUT_TYPES_SCALAR(TYPE *NAME, KIND)
%typemap(in, numinputs=SMD_OUT_NUMINPUTS) TYPE *NAME (TYPE tmp) {
  SMD_OUT_HOLDER(1)
  memset(&tmp, 0, sizeof tmp);
  $1 = &tmp;
}
%typemap(argout) TYPE *NAME { SMD_OUT_RETURN_SCALAR(KIND, tmp$argnum) }
%enddef
SMD_OUT_SCALAR(bool, out, BOOL)
SMD_OUT_SCALAR(bool, value_out, BOOL)
SMD_OUT_SCALAR(bool, histogram_out, BOOL)
SMD_OUT_SCALAR(int64_t, out, INT64)
SMD_OUT_SCALAR(double, out, DOUBLE)
SMD_OUT_SCALAR(smd_mode, out, ENUM)
SMD_OUT_SCALAR(smd_step_state, out, ENUM)
SMD_OUT_SCALAR(smd_dtype, out, ENUM)
/* A mode's save configuration (smd_save_config_settings). */
SMD_OUT_SCALAR(bool, is_set_out, BOOL)
SMD_OUT_SCALAR(int64_t, save_interval_out, INT64)
SMD_OUT_SCALAR(int64_t, start_step_out, INT64)
SMD_OUT_SCALAR(int64_t, end_step_out, INT64)

/* ---- String arrays (freed with smd_strarray_free). */
%typemap(in, numinputs=SMD_OUT_NUMINPUTS) smd_strarray *out (smd_strarray tmp) {
  SMD_OUT_HOLDER(1)
  tmp.strings = NULL; tmp.count = 0; $1 = &tmp;
}
%typemap(argout) smd_strarray *out { SMD_OUT_RETURN(SMD_LANG_STRS(&tmp$argnum)) }
%typemap(freearg) smd_strarray *out { smd_strarray_free(&tmp$argnum); }
%apply smd_strarray *out { smd_strarray *reductions_out };

/* ---- A string the caller frees with smd_free; NULL stays NULL. */
%typemap(in, numinputs=SMD_OUT_NUMINPUTS) char **out (char *tmp = NULL) {
  SMD_OUT_HOLDER(1)
  $1 = &tmp;
}
%typemap(argout) char **out {
  if (tmp$argnum) { SMD_OUT_RETURN(SMD_LANG_STR(tmp$argnum)) } else { SMD_OUT_RETURN_NULL }
}
%typemap(freearg) char **out { smd_free(tmp$argnum); }

/* ---- Number arrays the caller frees with smd_free: steps (SMD_LANG_INT64S), dimensions
 * (SMD_LANG_DIMS), modes. */
%define SMD_OUT_NUMBERS(TYPE, P, N, CONVERT)
%typemap(in, numinputs=SMD_OUT_NUMINPUTS) (TYPE **P, size_t *N) (TYPE *xs = NULL, size_t n = 0) {
  SMD_OUT_HOLDER(1)
  $1 = &xs; $2 = &n;
}
%typemap(argout) (TYPE **P, size_t *N) { SMD_OUT_RETURN(CONVERT(xs$argnum, n$argnum)) }
%typemap(freearg) (TYPE **P, size_t *N) { smd_free(xs$argnum); }
%enddef
SMD_OUT_NUMBERS(int64_t, steps_out, n_out, SMD_LANG_INT64S)
SMD_OUT_NUMBERS(int64_t, dims_out, ndim_out, SMD_LANG_DIMS)
SMD_OUT_NUMBERS(smd_mode, modes_out, n_out, SMD_LANG_MODES)
SMD_OUT_NUMBERS(int64_t, save_steps_out, n_out, SMD_LANG_INT64S)

/* ---- A dtype and dimensions (smd_tensor_value_info). */
%typemap(in, numinputs=SMD_OUT_NUMINPUTS) (smd_dtype *dtype_out, int64_t **dims_out, size_t *ndim_out)
    (smd_dtype dt = SMD_DTYPE_INVALID, int64_t *xs = NULL, size_t n = 0) {
  SMD_OUT_HOLDER(2)
  $1 = &dt; $2 = &xs; $3 = &n;
}
%typemap(argout) (smd_dtype *dtype_out, int64_t **dims_out, size_t *ndim_out) {
  SMD_OUT_RETURN_DTYPE_DIMS(dt$argnum, xs$argnum, n$argnum)
}
%typemap(freearg) (smd_dtype *dtype_out, int64_t **dims_out, size_t *ndim_out) { smd_free(xs$argnum); }

/* ---- Values (freed with smd_value_array_free: those not taken by the conversion). */
%typemap(in, numinputs=SMD_OUT_NUMINPUTS) (smd_value ***values_out, size_t *n_out)
    (smd_value **vs = NULL, size_t n = 0) {
  SMD_OUT_HOLDER(1)
  $1 = &vs; $2 = &n;
}
%typemap(argout) (smd_value ***values_out, size_t *n_out) {
  SMD_OUT_RETURN(SMD_LANG_VALUES(vs$argnum, n$argnum))
}
%typemap(freearg) (smd_value ***values_out, size_t *n_out) { smd_value_array_free(vs$argnum, n$argnum); }

/* ---- Steps and their values. */
%typemap(in, numinputs=SMD_OUT_NUMINPUTS) (int64_t **steps_out, smd_value ***values_out, size_t *n_out)
    (int64_t *xs = NULL, smd_value **vs = NULL, size_t n = 0) {
  SMD_OUT_HOLDER(2)
  $1 = &xs; $2 = &vs; $3 = &n;
}
%typemap(argout) (int64_t **steps_out, smd_value ***values_out, size_t *n_out) {
  SMD_OUT_RETURN2(SMD_LANG_INT64S(xs$argnum, n$argnum), SMD_LANG_VALUES(vs$argnum, n$argnum))
}
%typemap(freearg) (int64_t **steps_out, smd_value ***values_out, size_t *n_out) {
  smd_free(xs$argnum); smd_value_array_free(vs$argnum, n$argnum);
}

/* ---- Reduction names and their values. */
%typemap(in, numinputs=SMD_OUT_NUMINPUTS) (smd_strarray *names_out, smd_value ***values_out, size_t *n_out)
    (smd_strarray names, smd_value **vs = NULL, size_t n = 0) {
  SMD_OUT_HOLDER(2)
  names.strings = NULL; names.count = 0;
  $1 = &names; $2 = &vs; $3 = &n;
}
%typemap(argout) (smd_strarray *names_out, smd_value ***values_out, size_t *n_out) {
  SMD_OUT_RETURN2(SMD_LANG_STRS(&names$argnum), SMD_LANG_VALUES(vs$argnum, n$argnum))
}
%typemap(freearg) (smd_strarray *names_out, smd_value ***values_out, size_t *n_out) {
  smd_strarray_free(&names$argnum); smd_value_array_free(vs$argnum, n$argnum);
}

/* ---- The shapes of every step: step i has dims[offsets[i] .. offsets[i + 1]). */
%typemap(in, numinputs=SMD_OUT_NUMINPUTS) (int64_t **steps_out, size_t **offsets_out, int64_t **dims_out, size_t *n_out)
    (int64_t *xs = NULL, size_t *offs = NULL, int64_t *ds = NULL, size_t n = 0) {
  SMD_OUT_HOLDER(3)
  $1 = &xs; $2 = &offs; $3 = &ds; $4 = &n;
}
%typemap(argout) (int64_t **steps_out, size_t **offsets_out, int64_t **dims_out, size_t *n_out) {
  SMD_OUT_RETURN_STEP_SHAPES(xs$argnum, offs$argnum, ds$argnum, n$argnum)
}
%typemap(freearg) (int64_t **steps_out, size_t **offsets_out, int64_t **dims_out, size_t *n_out) {
  smd_free(xs$argnum); smd_free(offs$argnum); smd_free(ds$argnum);
}

/* ---- String elements of a value: the exact bytes (borrowed from the value: nothing to free). */
%typemap(in, numinputs=SMD_OUT_NUMINPUTS) (const char **out, size_t *len_out) (const char *s = NULL, size_t n = 0) {
  SMD_OUT_HOLDER(1)
  $1 = ($1_ltype)&s; $2 = &n;
}
%typemap(argout) (const char **out, size_t *len_out) { SMD_OUT_RETURN(SMD_LANG_BYTES(s$argnum, n$argnum)) }

/* ---- Input arrays of int64 (copied: small ones on the stack, others into *heap). */
%define SMD_IN_INT64S(P, N)
%typemap(in) (const int64_t *P, size_t N) (int64_t small[16], int64_t *heap = NULL) {
  const int64_t *xs_ = NULL;
  size_t n_ = 0;
  if (!SMD_LANG_INT64S_IN($input, small, 16, &heap, &xs_, &n_)) SMD_FAIL;
  $1 = ($1_ltype)xs_; $2 = n_;
}
%typemap(freearg) (const int64_t *P, size_t N) { free(heap$argnum); }
%enddef
SMD_IN_INT64S(steps, n)
%apply (const int64_t *steps, size_t n) { (const int64_t *save_steps, size_t n_save_steps),
                                         (const int64_t *steps, size_t n_steps),
                                         (const int64_t *shape, size_t ndim) };

/* ---- Input arrays of names, as C strings that must not hold a NUL character. */
%define SMD_IN_STRS(P, N, NULL_MSG, ELEM)
%typemap(in) (const char *const *P, size_t N) (smd_lang_strs strs = SMD_LANG_STRS_INIT) {
  if (!SMD_LANG_STRS_IN($input, &strs, #P, NULL_MSG, ELEM)) { SMD_LANG_STRS_FREE(&strs); SMD_FAIL; }
  $1 = ($1_ltype)strs.items; $2 = strs.n;
}
%typemap(freearg) (const char *const *P, size_t N) { SMD_LANG_STRS_FREE(&strs$argnum); }
%enddef
SMD_IN_STRS(collections, n_collections, "a collection name is null", "a collection name")
