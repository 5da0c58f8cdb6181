/* python.i: smd's SWIG interface for CPython: the Python conversions behind smd_typemaps.i's
 * hooks, then Python's own typemaps, callbacks and helpers, then the shared declarations of
 * smd_core.i. Build with: swig -python -threads (every call into smd releases the GIL; the
 * typemaps below run after the call, with the GIL held again). */
%module(package="smd") smdc

%include <stdint.i>

%{
#include <Python.h>
#include "smd/smd.h"

/* Turns an error into the smd.exceptions class of its code (smd.exceptions._raise_from_code),
 * and frees it. */
static void smd_py_raise(smd_error *err) {
  const char *msg = smd_error_message(err);
  PyObject *text = PyUnicode_DecodeUTF8(msg, (Py_ssize_t)strlen(msg), "replace");
  PyObject *mod = text ? PyImport_ImportModule("smd.exceptions") : NULL;
  if (mod) {
    PyObject *r = PyObject_CallMethod(mod, "_raise_from_code", "iO", (int)smd_error_code(err), text);
    Py_XDECREF(r);
    Py_DECREF(mod);
  }
  Py_XDECREF(text);
  if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, msg);
  smd_error_free(err);
}

/* Raises smd's SMD_E_INVALID_ARGUMENT exception (SMDebugValueError) with `msg`. */
static void smd_py_raise_invalid(const char *msg) {
  PyObject *text = PyUnicode_FromString(msg);
  PyObject *mod = text ? PyImport_ImportModule("smd.exceptions") : NULL;
  if (mod) {
    PyObject *r = PyObject_CallMethod(mod, "_raise_from_code", "iO", 2, text);
    Py_XDECREF(r);
    Py_DECREF(mod);
  }
  Py_XDECREF(text);
  if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, msg);
}

/* The UTF-8 of a str passed to smd as a C string (borrowed from the str), or NULL with an
 * exception set. A NUL character would end the C string there, silently naming another tensor,
 * worker or folder: refused. `what` names the argument in the message. */
static const char *smd_py_utf8_no_nul(PyObject *s, const char *what) {
  Py_ssize_t n = 0;
  const char *u = PyUnicode_AsUTF8AndSize(s, &n);
  if (!u) return NULL;
  if ((size_t)n != strlen(u)) {
    char msg[200];
    snprintf(msg, sizeof msg, "%s contains a NUL character, which names and paths cannot hold", what);
    smd_py_raise_invalid(msg);
    return NULL;
  }
  return u;
}

static PyObject *smd_py_int64_list(const int64_t *xs, size_t n) {
  PyObject *list = PyList_New((Py_ssize_t)n);
  if (!list) return NULL;
  for (size_t i = 0; i < n; ++i) {
    PyObject *x = PyLong_FromLongLong((long long)xs[i]);
    if (!x) { Py_DECREF(list); return NULL; }
    PyList_SET_ITEM(list, (Py_ssize_t)i, x);
  }
  return list;
}

static PyObject *smd_py_int64_tuple(const int64_t *xs, size_t n) {
  PyObject *t = PyTuple_New((Py_ssize_t)n);
  if (!t) return NULL;
  for (size_t i = 0; i < n; ++i) {
    PyObject *x = PyLong_FromLongLong((long long)xs[i]);
    if (!x) { Py_DECREF(t); return NULL; }
    PyTuple_SET_ITEM(t, (Py_ssize_t)i, x);
  }
  return t;
}

static PyObject *smd_py_str_list(const smd_strarray *a) {
  PyObject *list = PyList_New((Py_ssize_t)a->count);
  if (!list) return NULL;
  for (size_t i = 0; i < a->count; ++i) {
    const char *s = a->strings[i];
    PyObject *x = PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "surrogateescape");
    if (!x) { Py_DECREF(list); return NULL; }
    PyList_SET_ITEM(list, (Py_ssize_t)i, x);
  }
  return list;
}

/* A list of owning smd_value proxies; each value taken is set to NULL in vs (the rest, after a
 * failure, are freed by the caller). */
static PyObject *smd_py_value_list(smd_value **vs, size_t n) {
  PyObject *list = PyList_New((Py_ssize_t)n);
  if (!list) return NULL;
  for (size_t i = 0; i < n; ++i) {
    PyObject *x = SWIG_NewPointerObj(SWIG_as_voidptr(vs[i]), SWIGTYPE_p_smd_value, SWIG_POINTER_OWN);
    if (!x) { Py_DECREF(list); return NULL; }
    vs[i] = NULL; /* now owned by the proxy */
    PyList_SET_ITEM(list, (Py_ssize_t)i, x);
  }
  return list;
}

static PyObject *smd_py_mode_list(const smd_mode *xs, size_t n) {
  PyObject *list = PyList_New((Py_ssize_t)n);
  if (!list) return NULL;
  for (size_t i = 0; i < n; ++i) {
    PyObject *x = PyLong_FromLong((long)xs[i]);
    if (!x) { Py_DECREF(list); return NULL; }
    PyList_SET_ITEM(list, (Py_ssize_t)i, x);
  }
  return list;
}

/* The shapes of n steps in compressed form (step i: dims[offs[i] .. offs[i + 1])): a list of
 * tuples. */
static PyObject *smd_py_shape_list(const size_t *offs, const int64_t *dims, size_t n) {
  PyObject *list = PyList_New((Py_ssize_t)n);
  if (!list) return NULL;
  for (size_t i = 0; i < n; ++i) {
    PyObject *t = smd_py_int64_tuple(dims + offs[i], offs[i + 1] - offs[i]);
    if (!t) { Py_DECREF(list); return NULL; }
    PyList_SET_ITEM(list, (Py_ssize_t)i, t);
  }
  return list;
}

/* An input array of int64: any sequence of int. */
static int smd_py_int64s_in(PyObject *in, int64_t *small, size_t cap, int64_t **heap, const int64_t **out,
                            size_t *n_out) {
  PyObject *seq = PySequence_Fast(in, "steps must be a sequence of int");
  if (!seq) return 0;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  int64_t *buf = small;
  if ((size_t)n > cap) {
    buf = *heap = (int64_t *)malloc(sizeof(int64_t) * (size_t)n);
    if (!buf) { Py_DECREF(seq); PyErr_NoMemory(); return 0; }
  }
  for (Py_ssize_t i = 0; i < n; ++i) {
    long long v = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));
    if (v == -1 && PyErr_Occurred()) { Py_DECREF(seq); return 0; }
    buf[i] = (int64_t)v;
  }
  Py_DECREF(seq);
  *out = buf;
  *n_out = (size_t)n;
  return 1;
}

/* An input array of names: a sequence of str, each borrowed from its str (which seq keeps alive). */
typedef struct {
  PyObject *seq;
  char **items;
  size_t n;
} smd_py_strs;

static int smd_py_strs_in(PyObject *in, smd_py_strs *s, const char *param, const char *elem) {
  char msg[200];
  snprintf(msg, sizeof msg, "%s must be a sequence of str", param);
  s->seq = PySequence_Fast(in, msg);
  if (!s->seq) return 0;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(s->seq);
  s->items = (char **)calloc((size_t)(n > 0 ? n : 1), sizeof(char *));
  if (!s->items) { PyErr_NoMemory(); return 0; }
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject *item = PySequence_Fast_GET_ITEM(s->seq, i);
    if (!PyUnicode_Check(item)) { PyErr_SetString(PyExc_TypeError, msg); return 0; }
    s->items[i] = (char *)smd_py_utf8_no_nul(item, elem);
    if (!s->items[i]) return 0;
  }
  s->n = (size_t)n;
  return 1;
}

static void smd_py_strs_free(smd_py_strs *s) {
  free(s->items);
  Py_CLEAR(s->seq);
  s->items = NULL;
  s->n = 0;
}

/* The conversions smd_typemaps.i calls (see there). */
#define SMD_LANG_INT64S(xs, n) smd_py_int64_list(xs, n)
#define SMD_LANG_DIMS(xs, n) smd_py_int64_tuple(xs, n)
#define SMD_LANG_MODES(xs, n) smd_py_mode_list(xs, n)
#define SMD_LANG_VALUES(vs, n) smd_py_value_list(vs, n)
#define SMD_LANG_STRS(arr) smd_py_str_list(arr)
#define SMD_LANG_STR(s) PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "surrogateescape")
#define SMD_LANG_BYTES(s, n) PyBytes_FromStringAndSize(s, (Py_ssize_t)(n))
#define SMD_LANG_INT64S_IN(in, small, cap, heap, out, n) smd_py_int64s_in(in, small, cap, heap, out, n)
typedef smd_py_strs smd_lang_strs;
#define SMD_LANG_STRS_INIT {NULL, NULL, 0}
#define SMD_LANG_STRS_IN(in, strs, param, null_msg, elem) smd_py_strs_in(in, strs, param, elem)
#define SMD_LANG_STRS_FREE(strs) smd_py_strs_free(strs)
#define SMD_PY_SCALAR_BOOL(v) PyBool_FromLong(v)
#define SMD_PY_SCALAR_INT64(v) PyLong_FromLongLong((long long)(v))
#define SMD_PY_SCALAR_DOUBLE(v) PyFloat_FromDouble(v)
#define SMD_PY_SCALAR_ENUM(v) PyLong_FromLong((long)(v))
%}

/* The hooks of smd_typemaps.i: results are appended to the return value (SWIG_Python_AppendOutput;
 * the C function's smd_error * is None on success): one result is returned as it is, several as a
 * list; a group of two results (steps and values, names and values, steps and shapes) is one
 * tuple, but a dtype and its dimensions are two results. No holders: outputs take no argument. */
%define SMD_OUT_NUMINPUTS 0 %enddef
%define SMD_OUT_HOLDER(K) %enddef
%define SMD_OUT_TYPES_HANDLE(SIG) %enddef
%define SMD_OUT_TYPES_SCALAR(SIG, KIND) %enddef
%define SMD_FAIL SWIG_fail %enddef
%define SMD_OUT_RETURN(OBJ)
  { PyObject *o_ = (OBJ); if (!o_) SWIG_fail; $result = SWIG_Python_AppendOutput($result, o_); }
%enddef
%define SMD_OUT_RETURN2(A, B)
  {
    PyObject *a_ = (A);
    PyObject *b_ = a_ ? (B) : NULL;
    if (!b_) { Py_XDECREF(a_); SWIG_fail; }
    $result = SWIG_Python_AppendOutput($result, Py_BuildValue("(NN)", a_, b_));
  }
%enddef
%define SMD_OUT_RETURN_NULL { Py_INCREF(Py_None); $result = SWIG_Python_AppendOutput($result, Py_None); } %enddef
%define SMD_OUT_RETURN_HANDLE(P, DESC) SMD_OUT_RETURN(SWIG_NewPointerObj(SWIG_as_voidptr(P), DESC, SWIG_POINTER_OWN)) %enddef
%define SMD_OUT_RETURN_SCALAR(KIND, V) SMD_OUT_RETURN(SMD_PY_SCALAR_##KIND(V)) %enddef
/* dtype, dims: two results (dims a tuple). */
%define SMD_OUT_RETURN_DTYPE_DIMS(DT, XS, N)
  SMD_OUT_RETURN(PyLong_FromLong((long)(DT)))
  SMD_OUT_RETURN(smd_py_int64_tuple(XS, N))
%enddef
/* (steps, shapes): a list of int and a list of tuples. */
%define SMD_OUT_RETURN_STEP_SHAPES(XS, OFFS, DIMS, N)
  SMD_OUT_RETURN2(smd_py_int64_list(XS, N), smd_py_shape_list(OFFS, DIMS, N))
%enddef
%include "smd_typemaps.i"

/* smd_error * results: None on success, an exception otherwise. */
%typemap(out) smd_error * {
  if ($1) { smd_py_raise($1); SWIG_fail; }
  $result = SWIG_Py_Void();
}

/* C strings in: a str (or None for NULL), UTF-8, refused if it holds a NUL character. A str
 * holding the surrogates that stand for bytes that are not UTF-8 (how names read from files are
 * decoded: "surrogateescape") gives those bytes back, so that a worker or tensor name handed out
 * can be handed back. */
%typemap(in) const char * (PyObject *encoded = NULL) {
  if ($input == Py_None) {
    $1 = NULL;
  } else if (PyUnicode_Check($input)) {
    $1 = ($1_ltype)smd_py_utf8_no_nul($input, "$1_name");
    if (!$1 && PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) {
      PyErr_Clear();
      encoded = PyUnicode_AsEncodedString($input, "utf-8", "surrogateescape");
      if (!encoded) SWIG_fail;
      if ((size_t)PyBytes_GET_SIZE(encoded) != strlen(PyBytes_AS_STRING(encoded))) {
        smd_py_raise_invalid("$1_name contains a NUL character, which names and paths cannot hold");
        SWIG_fail;
      }
      $1 = ($1_ltype)PyBytes_AS_STRING(encoded);
    }
    if (!$1) SWIG_fail;
  } else {
    PyErr_Format(PyExc_TypeError, "$1_name must be a str, not %s", Py_TYPE($input)->tp_name);
    SWIG_fail;
  }
}
%typemap(freearg) const char * { Py_XDECREF(encoded$argnum); }  /* else borrowed from the str */
%typemap(typecheck, precedence=SWIG_TYPECHECK_STRING) const char * {
  $1 = $input == Py_None || PyUnicode_Check($input);
}

/* Tensor data: any object with the buffer protocol, C-contiguous (smd.Hook makes numpy arrays
 * contiguous first); the buffer is held, not copied, until smd has copied what it saves. */
%typemap(in) (const void *data, size_t nbytes) (Py_buffer view, int have_view = 0) {
  if (PyObject_GetBuffer($input, &view, PyBUF_C_CONTIGUOUS) != 0) SWIG_fail;
  have_view = 1;
  $1 = view.buf;
  $2 = (size_t)view.len;
}
%typemap(freearg) (const void *data, size_t nbytes) { if (have_view$argnum) PyBuffer_Release(&view$argnum); }

/* The address of a value's elements (0 for strings), for the zero-copy numpy view built in
 * smd/_values.py; the proxy that owns the value must outlive the view. */
%inline %{
static unsigned long long smd_py_value_data_address(const smd_value *value) {
  return (unsigned long long)(uintptr_t)smd_value_data(value);
}
%}
%nothread smd_py_value_shape;
%inline %{
static PyObject *smd_py_value_shape(const smd_value *value) {
  return smd_py_int64_tuple(smd_value_shape(value), smd_value_ndim(value));
}
%}

/* Python rules. The payload is a tuple (invoke, required) of Python callables, kept alive by the
 * Python Rule object that owns the smd_rule. The callables never raise: they return 0 (invoke:
 * (0, condition_met)) or (code, message), which the trampolines hand to smd as the callback's
 * error. The trampolines run on the thread that called smd_rule_invoke (which released the GIL)
 * and take the GIL for the Python call. */
%{
static int smd_py_rule_result(smd_rule_context *ctx, PyObject *r, bool *met) {
  int rc = 0;
  if (!r) {
    PyErr_Print();
    return smd_rule_context_fail_with(ctx, SMD_E_INTERNAL, "a Python rule callback raised");
  }
  long code = 0;
  PyObject *second = NULL;
  if (PyTuple_Check(r) && PyTuple_GET_SIZE(r) == 2) {
    code = PyLong_AsLong(PyTuple_GET_ITEM(r, 0));
    second = PyTuple_GET_ITEM(r, 1);
  } else {
    code = PyLong_AsLong(r);
  }
  if (PyErr_Occurred()) {
    PyErr_Clear();
    rc = smd_rule_context_fail_with(ctx, SMD_E_INTERNAL, "a Python rule callback returned a bad result");
  } else if (code != 0) {
    const char *msg = second && PyUnicode_Check(second) ? PyUnicode_AsUTF8(second) : NULL;
    if (!msg) { PyErr_Clear(); msg = "a Python rule callback failed"; }
    rc = smd_rule_context_fail_with(ctx, (smd_code)code, msg);
  } else if (met) {
    *met = second && PyObject_IsTrue(second) == 1;
  }
  Py_DECREF(r);
  return rc;
}

static int smd_py_rule_invoke_tramp(smd_rule_context *ctx, int64_t step, bool *met, void *payload) {
  PyGILState_STATE g = PyGILState_Ensure();
  PyObject *pctx = SWIG_NewPointerObj(SWIG_as_voidptr(ctx), SWIGTYPE_p_smd_rule_context, 0);
  PyObject *r = pctx ? PyObject_CallFunction(PyTuple_GET_ITEM((PyObject *)payload, 0), "OL", pctx,
                                             (long long)step) : NULL;
  int rc = smd_py_rule_result(ctx, r, met);
  Py_XDECREF(pctx);
  PyGILState_Release(g);
  return rc;
}

static int smd_py_rule_required_tramp(smd_rule_context *ctx, int64_t step, void *payload) {
  PyGILState_STATE g = PyGILState_Ensure();
  PyObject *pctx = SWIG_NewPointerObj(SWIG_as_voidptr(ctx), SWIGTYPE_p_smd_rule_context, 0);
  PyObject *r = pctx ? PyObject_CallFunction(PyTuple_GET_ITEM((PyObject *)payload, 1), "OL", pctx,
                                             (long long)step) : NULL;
  int rc = smd_py_rule_result(ctx, r, NULL);
  Py_XDECREF(pctx);
  PyGILState_Release(g);
  return rc;
}
%}

%typemap(in) PyObject *callbacks {
  if (!PyTuple_Check($input) || PyTuple_GET_SIZE($input) != 2 ||
      !PyCallable_Check(PyTuple_GET_ITEM($input, 0))) {
    PyErr_SetString(PyExc_TypeError, "callbacks must be a tuple (invoke, required or None)");
    SWIG_fail;
  }
  $1 = $input;
}
%nothread smd_py_rule_create;
%inline %{
/* smd_rule_create for Python callbacks (a tuple (invoke, required)) on one base trial. The tuple
 * must outlive the rule. */
static smd_error *smd_py_rule_create(const char *name, smd_trial *base, PyObject *callbacks,
                                     smd_rule **out) {
  return smd_rule_create(name, base, NULL, 0, smd_py_rule_invoke_tramp,
                         PyTuple_GET_ITEM(callbacks, 1) == Py_None ? NULL : smd_py_rule_required_tramp,
                         callbacks, out);
}
%}


/* ---------------------------------------------------------------------------------------------
 * Additions for the Python layer (smd/rules, smd/hook.py, smd/_values.py). Each is a small C
 * wrapper with a Python-shaped signature over a public C function that smd_core.i leaves
 * unbound (pointer arrays, callbacks, DLPack).
 * ------------------------------------------------------------------------------------------- */
%{
/* Raises the smd.exceptions class of `code` with `msg` (errors found by the wrappers below). */
static void smd_py_raise_code(smd_code code, const char *msg) {
  PyObject *text = PyUnicode_FromString(msg);
  PyObject *mod = text ? PyImport_ImportModule("smd.exceptions") : NULL;
  if (mod) {
    PyObject *r = PyObject_CallMethod(mod, "_raise_from_code", "iO", (int)code, text);
    Py_XDECREF(r);
    Py_DECREF(mod);
  }
  Py_XDECREF(text);
  if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, msg);
}

/* A sequence of Trial proxies -> a malloc'ed array of borrowed smd_trial pointers. */
static int smd_py_trial_array(PyObject *seq_in, smd_trial ***out, size_t *n_out) {
  *out = NULL; *n_out = 0;
  if (seq_in == Py_None) return 0;
  PyObject *seq = PySequence_Fast(seq_in, "other trials must be a sequence of smd_trial");
  if (!seq) return -1;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  smd_trial **ts = (smd_trial **)calloc((size_t)(n > 0 ? n : 1), sizeof(smd_trial *));
  if (!ts) { Py_DECREF(seq); PyErr_NoMemory(); return -1; }
  for (Py_ssize_t i = 0; i < n; ++i) {
    void *p = NULL;
    if (!SWIG_IsOK(SWIG_ConvertPtr(PySequence_Fast_GET_ITEM(seq, i), &p, SWIGTYPE_p_smd_trial, 0)) || !p) {
      free(ts); Py_DECREF(seq);
      PyErr_SetString(PyExc_TypeError, "other trials must be a sequence of smd_trial");
      return -1;
    }
    ts[i] = (smd_trial *)p;
  }
  Py_DECREF(seq);
  *out = ts; *n_out = (size_t)n;
  return 0;
}
%}

%nothread smd_py_rule_create_multi;
%inline %{
/* smd_rule_create for Python callbacks over a base trial and other trials (a sequence of
 * smd_trial proxies or None). Returns the owning smd_rule proxy. */
static PyObject *smd_py_rule_create_multi(const char *name, smd_trial *base, PyObject *others,
                                          PyObject *callbacks) {
  smd_trial **ts = NULL; size_t n = 0;
  smd_rule *rule = NULL;
  if (smd_py_trial_array(others, &ts, &n) != 0) return NULL;
  smd_error *e = smd_rule_create(name, base, ts, n, smd_py_rule_invoke_tramp,
                                 PyTuple_GET_ITEM(callbacks, 1) == Py_None ? NULL : smd_py_rule_required_tramp,
                                 callbacks, &rule);
  free(ts);
  if (e) { smd_py_raise(e); return NULL; }
  return SWIG_NewPointerObj(SWIG_as_voidptr(rule), SWIGTYPE_p_smd_rule, SWIG_POINTER_OWN);
}
%}

%typemap(in) PyObject *params {
  if (!PyDict_Check($input)) { PyErr_SetString(PyExc_TypeError, "params must be a dict str -> str"); SWIG_fail; }
  $1 = $input;
}

/* Built-in rules: parameters come as a dict str -> str (converted by smd/rules/builtin.py).
 * Runs with the GIL held (it reads Python objects); creating a rule does no long work. */
%nothread smd_py_rule_create_builtin;
%inline %{
static PyObject *smd_py_rule_create_builtin(const char *name, smd_trial *base, PyObject *others,
                                            PyObject *params) {
  smd_trial **ts = NULL; size_t n = 0;
  smd_rule *rule = NULL;
  if (smd_py_trial_array(others, &ts, &n) != 0) return NULL;
  Py_ssize_t np_ = PyDict_Size(params);
  const char **keys = (const char **)calloc((size_t)(np_ > 0 ? np_ : 1), sizeof(char *));
  const char **vals = (const char **)calloc((size_t)(np_ > 0 ? np_ : 1), sizeof(char *));
  PyObject *result = NULL;
  if (!keys || !vals) {
    PyErr_NoMemory();
  } else {
    Py_ssize_t pos = 0, i = 0;
    PyObject *k, *v;
    int ok = 1;
    while (ok && PyDict_Next(params, &pos, &k, &v)) {
      keys[i] = PyUnicode_Check(k) ? smd_py_utf8_no_nul(k, "a rule parameter name") : NULL;
      vals[i] = keys[i] && PyUnicode_Check(v) ? smd_py_utf8_no_nul(v, "a rule parameter value") : NULL;
      if (!keys[i] || !vals[i]) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "rule parameters must be a dict str -> str");
        ok = 0;
      }
      ++i;
    }
    if (ok) {
      smd_error *e = smd_rule_create_builtin(name, base, ts, n, keys, vals, (size_t)np_, &rule);
      if (e) smd_py_raise(e);
      else result = SWIG_NewPointerObj(SWIG_as_voidptr(rule), SWIGTYPE_p_smd_rule, SWIG_POINTER_OWN);
    }
  }
  free(keys); free(vals); free(ts);
  return result;
}
%}

%nothread smd_py_rule_builtin_params;
%inline %{
/* (names, defaults, help) of a built-in rule's parameters, three lists of str in documentation
 * order (a default is "" when the parameter has none); None for an unknown rule. */
static PyObject *smd_py_rule_builtin_params(const char *name) {
  smd_strarray a = {0};
  smd_error *e = smd_rule_builtin_params(name, &a);
  if (e) { smd_error_free(e); Py_RETURN_NONE; }
  PyObject *names = smd_py_str_list(&a);
  PyObject *defaults = names ? PyList_New((Py_ssize_t)a.count) : NULL;
  PyObject *helps = defaults ? PyList_New((Py_ssize_t)a.count) : NULL;
  PyObject *r = NULL;
  if (helps) {
    size_t i = 0;
    for (; i < a.count; ++i) {
      const char *d = smd_rule_builtin_param_default(name, a.strings[i]);
      const char *h = smd_rule_builtin_param_help(name, a.strings[i]);
      PyObject *dp = PyUnicode_DecodeUTF8(d ? d : "", (Py_ssize_t)strlen(d ? d : ""), "replace");
      PyObject *hp = dp ? PyUnicode_DecodeUTF8(h ? h : "", (Py_ssize_t)strlen(h ? h : ""), "replace") : NULL;
      if (!hp) { Py_XDECREF(dp); break; }
      PyList_SET_ITEM(defaults, (Py_ssize_t)i, dp);
      PyList_SET_ITEM(helps, (Py_ssize_t)i, hp);
    }
    if (i == a.count) r = Py_BuildValue("(OOO)", names, defaults, helps);
  }
  Py_XDECREF(names); Py_XDECREF(defaults); Py_XDECREF(helps);
  smd_strarray_free(&a);
  return r;
}
%}

%{
static PyObject *smd_py_str(const char *s) {
  return PyUnicode_DecodeUTF8(s ? s : "", (Py_ssize_t)strlen(s ? s : ""), "replace");
}
static PyObject *smd_py_finding_tuple(const smd_rule_finding *f) {
  return Py_BuildValue("(NLNnNN)", smd_py_str(smd_rule_finding_rule(f)),
                       (long long)smd_rule_finding_step(f), smd_py_str(smd_rule_finding_tensor(f)),
                       (Py_ssize_t)smd_rule_finding_trial(f), smd_py_str(smd_rule_finding_message(f)),
                       smd_py_str(smd_rule_finding_line(f)));
}
%}
%nothread smd_py_rule_findings;
%inline %{
/* The findings collected in a rule: a list of (rule, step, tensor, trial, message, line). */
static PyObject *smd_py_rule_findings(const smd_rule *rule) {
  size_t n = smd_rule_findings_count(rule);
  PyObject *list = PyList_New((Py_ssize_t)n);
  if (!list) return NULL;
  for (size_t i = 0; i < n; ++i) {
    PyObject *t = smd_py_finding_tuple(smd_rule_findings_at(rule, i));
    if (!t) { Py_DECREF(list); return NULL; }
    PyList_SET_ITEM(list, (Py_ssize_t)i, t);
  }
  return list;
}
%}

%{
/* The finding callback: payload is a Python callable taking (rule, step, tensor, trial,
 * message, line); it runs with the GIL taken. Returning False, or raising (the exception is
 * printed), cancels the invocation (SMD_E_CANCELLED). */
static int smd_py_finding_tramp(const smd_rule *rule, const smd_rule_finding *f, void *payload) {
  (void)rule;
  PyGILState_STATE g = PyGILState_Ensure();
  int rc = 0;
  PyObject *t = smd_py_finding_tuple(f);
  PyObject *r = t ? PyObject_CallObject((PyObject *)payload, t) : NULL;
  if (!r) { PyErr_Print(); rc = 1; }
  else if (r == Py_False) rc = 1; /* failed; the Python layer kept the exception */
  Py_XDECREF(r);
  Py_XDECREF(t);
  PyGILState_Release(g);
  return rc;
}
%}
%typemap(in) PyObject *callback {
  if ($input != Py_None && !PyCallable_Check($input)) {
    PyErr_SetString(PyExc_TypeError, "callback must be callable or None"); SWIG_fail;
  }
  $1 = $input;
}
%inline %{
/* The callable must outlive the invocations (smd/rules keeps it with the options). */
static smd_error *smd_py_invoke_options_set_finding_callback(smd_rule_invoke_options *options,
                                                             PyObject *callback) {
  return smd_rule_invoke_options_set_finding_callback(
      options, callback == Py_None ? NULL : smd_py_finding_tramp, callback == Py_None ? NULL : callback);
}
%}

/* The progress callback: payload is a Python callable taking (step, outcome) (outcome: an
 * smd_rule_outcome value); it runs with the GIL taken. Returning False, or raising (printed),
 * cancels the invocation (SMD_E_CANCELLED). */
%{
static int smd_py_progress_tramp(const smd_rule *rule, int64_t step, smd_rule_outcome outcome, void *payload) {
  (void)rule;
  PyGILState_STATE g = PyGILState_Ensure();
  int rc = 0;
  PyObject *r = PyObject_CallFunction((PyObject *)payload, "Li", (long long)step, (int)outcome);
  if (!r) { PyErr_Print(); rc = 1; }
  else if (r == Py_False) rc = 1;
  Py_XDECREF(r);
  PyGILState_Release(g);
  return rc;
}
%}
%inline %{
/* The callable must outlive the invocations (smd/rules keeps it while invoking). */
static smd_error *smd_py_invoke_options_set_progress_callback(smd_rule_invoke_options *options,
                                                              PyObject *callback) {
  return smd_rule_invoke_options_set_progress_callback(
      options, callback == Py_None ? NULL : smd_py_progress_tramp, callback == Py_None ? NULL : callback);
}
%}

/* Strings: a sequence of bytes (smd/hook.py encodes str to UTF-8). */
%nothread smd_py_hook_save_strings;
%inline %{
static PyObject *smd_py_hook_save_strings(smd_hook *hook, const char *name, PyObject *items,
                                          const char *const *collections, size_t n_collections) {
  PyObject *seq = PySequence_Fast(items, "strings must be a sequence of bytes");
  if (!seq) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  const char **ps = (const char **)calloc((size_t)(n > 0 ? n : 1), sizeof(char *));
  size_t *lens = (size_t *)calloc((size_t)(n > 0 ? n : 1), sizeof(size_t));
  PyObject *result = NULL;
  int ok = 1;
  if (!ps || !lens) { PyErr_NoMemory(); ok = 0; }
  for (Py_ssize_t i = 0; ok && i < n; ++i) {
    PyObject *b = PySequence_Fast_GET_ITEM(seq, i);
    if (!PyBytes_Check(b)) { PyErr_SetString(PyExc_TypeError, "strings must be a sequence of bytes"); ok = 0; break; }
    ps[i] = PyBytes_AS_STRING(b);
    lens[i] = (size_t)PyBytes_GET_SIZE(b);
  }
  if (ok) {
    smd_error *e;
    /* seq holds the bytes objects while the GIL is released. */
    Py_BEGIN_ALLOW_THREADS
    e = smd_hook_save_strings(hook, name, ps, lens, (size_t)n, collections, n_collections);
    Py_END_ALLOW_THREADS
    if (e) smd_py_raise(e);
    else result = SWIG_Py_Void();
  }
  free(ps); free(lens);
  Py_DECREF(seq);
  return result;
}
%}

/* A typed scalar: the element's bytes (a buffer-protocol object, e.g. a 1-element numpy array),
 * and its timestamp (0: now). */
%inline %{
static smd_error *smd_py_hook_save_scalar_typed(smd_hook *hook, const char *name, smd_dtype dtype,
                                                const void *data, size_t nbytes, double timestamp) {
  return smd_hook_save_scalar_timestamped(hook, name, dtype, data, nbytes, timestamp);
}
%}

/* DLPack export of a value, without a copy. versioned != 0: a "dltensor_versioned" capsule
 * (DLPack >= 1.0, read-only flag set); otherwise a "dltensor" capsule (DLPack < 1.0, which
 * cannot say read-only). The capsule owns the export until a consumer takes it (renaming it
 * "used_dltensor[_versioned]" and calling the deleter itself). */
%{
static void smd_py_capsule_versioned_dtor(PyObject *cap) {
  if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
    DLManagedTensorVersioned *m = (DLManagedTensorVersioned *)PyCapsule_GetPointer(cap, "dltensor_versioned");
    if (m && m->deleter) m->deleter(m);
  } else {
    PyErr_Clear();
  }
}
static void smd_py_legacy_deleter(DLManagedTensor *self) {
  DLManagedTensorVersioned *m = (DLManagedTensorVersioned *)self->manager_ctx;
  if (m && m->deleter) m->deleter(m);
  free(self);
}
static void smd_py_capsule_legacy_dtor(PyObject *cap) {
  if (PyCapsule_IsValid(cap, "dltensor")) {
    DLManagedTensor *m = (DLManagedTensor *)PyCapsule_GetPointer(cap, "dltensor");
    if (m && m->deleter) m->deleter(m);
  } else {
    PyErr_Clear();
  }
}
%}
%nothread smd_py_value_dlpack;
%inline %{
static PyObject *smd_py_value_dlpack(const smd_value *value, int versioned) {
  DLManagedTensorVersioned *m = NULL;
  smd_error *e = smd_value_to_dlpack(value, &m);
  if (e) { smd_py_raise(e); return NULL; }
  if (versioned) {
    PyObject *cap = PyCapsule_New(m, "dltensor_versioned", smd_py_capsule_versioned_dtor);
    if (!cap) m->deleter(m);
    return cap;
  }
  DLManagedTensor *legacy = (DLManagedTensor *)calloc(1, sizeof(DLManagedTensor));
  if (!legacy) { m->deleter(m); return PyErr_NoMemory(); }
  legacy->dl_tensor = m->dl_tensor;
  legacy->manager_ctx = m;
  legacy->deleter = smd_py_legacy_deleter;
  PyObject *cap = PyCapsule_New(legacy, "dltensor", smd_py_capsule_legacy_dtor);
  if (!cap) smd_py_legacy_deleter(legacy);
  return cap;
}
%}

/* ValueBuffer: a read-only buffer-protocol view of one numeric smd value. It owns a reference to
 * the value's proxy, so an array made from it (np.asarray) keeps smd's buffer alive after its
 * tensor and trial are gone; numpy builds the array from the buffer protocol (format, shape)
 * without copying. Attributes: `value` (the smd_value proxy), `bfloat16` (True for bfloat16
 * values, exported as "<H" and viewed as ml_dtypes.bfloat16 in Python). */
%{
#include <structmember.h>
typedef struct {
  PyObject_HEAD
  PyObject *proxy;        /* the owning smd_value proxy */
  const smd_value *value; /* borrowed from proxy */
  Py_ssize_t *shape;
  int ndim;
  char bfloat16;
  const char *format;
} smd_py_value_buffer;

static PyTypeObject *smd_py_value_buffer_type = NULL;

static const char *smd_py_format(smd_dtype d) {
  switch (d) {
    case SMD_DTYPE_FLOAT32: return "<f";
    case SMD_DTYPE_FLOAT64: return "<d";
    case SMD_DTYPE_INT32: return "<i";
    case SMD_DTYPE_UINT8: return "B";
    case SMD_DTYPE_INT16: return "<h";
    case SMD_DTYPE_INT8: return "b";
    case SMD_DTYPE_COMPLEX64: return "<Zf";
    case SMD_DTYPE_INT64: return "<q";
    case SMD_DTYPE_BOOL: return "?";
    case SMD_DTYPE_BFLOAT16: return "<H";
    case SMD_DTYPE_UINT16: return "<H";
    case SMD_DTYPE_COMPLEX128: return "<Zd";
    case SMD_DTYPE_FLOAT16: return "<e";
    case SMD_DTYPE_UINT32: return "<I";
    case SMD_DTYPE_UINT64: return "<Q";
    default: return NULL;
  }
}

static int smd_py_vb_getbuffer(PyObject *self_, Py_buffer *view, int flags) {
  smd_py_value_buffer *self = (smd_py_value_buffer *)self_;
  if (flags & PyBUF_WRITABLE) {
    PyErr_SetString(PyExc_BufferError, "smd values are read-only");
    view->obj = NULL;
    return -1;
  }
  size_t item = smd_dtype_size(smd_value_dtype(self->value));
  view->buf = (void *)smd_value_data(self->value);
  view->obj = self_;
  Py_INCREF(self_);
  view->len = (Py_ssize_t)(item * smd_value_count(self->value));
  view->readonly = 1;
  view->itemsize = (Py_ssize_t)item;
  view->format = (flags & PyBUF_FORMAT) ? (char *)self->format : NULL;
  view->ndim = self->ndim;
  view->shape = (flags & PyBUF_ND) ? self->shape : NULL;
  view->strides = NULL;
  view->suboffsets = NULL;
  view->internal = NULL;
  return 0;
}

static void smd_py_vb_dealloc(PyObject *self_) {
  smd_py_value_buffer *self = (smd_py_value_buffer *)self_;
  PyTypeObject *tp = Py_TYPE(self_);
  Py_XDECREF(self->proxy);
  free(self->shape);
  tp->tp_free(self_);
  Py_DECREF(tp);
}

static PyMemberDef smd_py_vb_members[] = {
  {(char *)"value", T_OBJECT, offsetof(smd_py_value_buffer, proxy), READONLY, (char *)"the smd_value proxy"},
  {(char *)"bfloat16", T_BOOL, offsetof(smd_py_value_buffer, bfloat16), READONLY, (char *)"a bfloat16 value"},
  {NULL, 0, 0, 0, NULL}
};

static PyType_Slot smd_py_vb_slots[] = {
  {Py_tp_dealloc, (void *)smd_py_vb_dealloc},
  {Py_tp_members, (void *)smd_py_vb_members},
  {Py_tp_doc, (void *)"A read-only buffer-protocol view of one numeric smd value (made by smd's reads)."},
  {Py_bf_getbuffer, (void *)smd_py_vb_getbuffer},
  {0, NULL}
};

static PyType_Spec smd_py_vb_spec = {
  "smd.smdc.ValueBuffer", sizeof(smd_py_value_buffer), 0, Py_TPFLAGS_DEFAULT, smd_py_vb_slots
};

/* A ValueBuffer over `proxy` (an owning smd_value proxy whose value is v), or a new reference to
 * proxy itself when the value is a string or has no elements (converted the slow way). */
static PyObject *smd_py_buffer_or_proxy(PyObject *proxy, const smd_value *v) {
  const char *format = smd_py_format(smd_value_dtype(v));
  if (!format || smd_value_count(v) == 0 || !smd_py_value_buffer_type) { Py_INCREF(proxy); return proxy; }
  smd_py_value_buffer *b = PyObject_New(smd_py_value_buffer, smd_py_value_buffer_type);
  if (!b) return NULL;
  b->proxy = NULL;
  b->shape = NULL;
  size_t nd = smd_value_ndim(v);
  b->shape = (Py_ssize_t *)malloc(sizeof(Py_ssize_t) * (nd > 0 ? nd : 1));
  if (!b->shape) { Py_DECREF(b); return PyErr_NoMemory(); }
  const int64_t *dims = smd_value_shape(v);
  for (size_t i = 0; i < nd; ++i) b->shape[i] = (Py_ssize_t)dims[i];
  b->ndim = (int)nd;
  b->format = format;
  b->bfloat16 = smd_value_dtype(v) == SMD_DTYPE_BFLOAT16;
  b->value = v;
  Py_INCREF(proxy);
  b->proxy = proxy;
  return (PyObject *)b;
}
%}

%init %{
  smd_py_value_buffer_type = (PyTypeObject *)PyType_FromSpec(&smd_py_vb_spec);
  if (smd_py_value_buffer_type) {
    Py_INCREF(smd_py_value_buffer_type);
    PyModule_AddObject(m, "ValueBuffer", (PyObject *)smd_py_value_buffer_type);
  }
%}

%typemap(in) PyObject *value_proxy { $1 = $input; }
%nothread smd_py_value_buffer_of;
%inline %{
/* The ValueBuffer of an smd_value proxy (or the proxy itself for strings and empty values). */
static PyObject *smd_py_value_buffer_of(PyObject *value_proxy) {
  void *p = NULL;
  if (!SWIG_IsOK(SWIG_ConvertPtr(value_proxy, &p, SWIGTYPE_p_smd_value, 0)) || !p) {
    PyErr_SetString(PyExc_TypeError, "expected an smd_value");
    return NULL;
  }
  return smd_py_buffer_or_proxy(value_proxy, (const smd_value *)p);
}
%}

/* The fast path of Tensor.value(): one call that reads the value (GIL released) and returns its
 * ValueBuffer (or the smd_value proxy for strings and empty values). */
%nothread smd_py_tensor_value_fast;
%inline %{
static PyObject *smd_py_tensor_value_fast(smd_tensor *tensor, int64_t step, int mode, const char *worker) {
  smd_value *v = NULL;
  smd_error *e;
  Py_BEGIN_ALLOW_THREADS
  e = smd_tensor_value(tensor, step, (smd_mode)mode, worker, &v);
  Py_END_ALLOW_THREADS
  if (e) { smd_py_raise(e); return NULL; }
  PyObject *proxy = SWIG_NewPointerObj(SWIG_as_voidptr(v), SWIGTYPE_p_smd_value, SWIG_POINTER_OWN);
  if (!proxy) { smd_value_free(v); return NULL; }
  PyObject *r = smd_py_buffer_or_proxy(proxy, v);
  Py_DECREF(proxy);
  return r;
}
%}


/* Reductions the caller computed (smd_hook_save_reductions): a sequence of (name, abs, value)
 * tuples; the names are borrowed from the str objects, which the sequence keeps alive. (Java
 * binds it with parallel arrays instead.) */
%typemap(in) (const smd_reduction_value *values, size_t n_values)
    (PyObject *seq = NULL, smd_reduction_value *vals = NULL) {
  seq = PySequence_Fast($input, "values must be a sequence of (name, abs, value) tuples");
  if (!seq) SWIG_fail;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  vals = (smd_reduction_value *)calloc((size_t)(n > 0 ? n : 1), sizeof(smd_reduction_value));
  if (!vals) { PyErr_NoMemory(); SWIG_fail; }
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
    if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 3 ||
        !PyUnicode_Check(PyTuple_GET_ITEM(item, 0))) {
      PyErr_SetString(PyExc_TypeError, "values must be a sequence of (name, abs, value) tuples");
      SWIG_fail;
    }
    vals[i].reduction = PyUnicode_AsUTF8(PyTuple_GET_ITEM(item, 0));
    if (!vals[i].reduction) SWIG_fail;
    int abs = PyObject_IsTrue(PyTuple_GET_ITEM(item, 1));
    if (abs < 0) SWIG_fail;
    vals[i].abs = abs != 0;
    vals[i].value = PyFloat_AsDouble(PyTuple_GET_ITEM(item, 2));
    if (vals[i].value == -1.0 && PyErr_Occurred()) SWIG_fail;
  }
  $1 = vals;
  $2 = (size_t)n;
}
%typemap(freearg) (const smd_reduction_value *values, size_t n_values) {
  free(vals$argnum);
  Py_XDECREF(seq$argnum);
}

/* A histogram the caller computed (smd_hook_save_reductions): None, or (min, max, sum,
 * sum_squares, counts) with counts a C-contiguous buffer of 8-byte unsigned integers (numpy
 * uint64), borrowed for the call. */
%typemap(in) const smd_histogram *histogram (smd_histogram h, Py_buffer view, int have_view = 0) {
  if ($input == Py_None) {
    $1 = NULL;
  } else {
    if (!PyTuple_Check($input) || PyTuple_GET_SIZE($input) != 5) {
      PyErr_SetString(PyExc_TypeError,
                      "histogram must be None or a (min, max, sum, sum_squares, counts) tuple");
      SWIG_fail;
    }
    double *stats[4] = {&h.min, &h.max, &h.sum, &h.sum_squares};
    for (int k = 0; k < 4; ++k) {
      *stats[k] = PyFloat_AsDouble(PyTuple_GET_ITEM($input, k));
      if (*stats[k] == -1.0 && PyErr_Occurred()) SWIG_fail;
    }
    if (PyObject_GetBuffer(PyTuple_GET_ITEM($input, 4), &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) SWIG_fail;
    have_view = 1;
    const char *f = view.format ? view.format : "B";
    if (*f == '<' || *f == '=' || *f == '@') ++f;
    if (view.itemsize != 8 || (strcmp(f, "Q") != 0 && strcmp(f, "L") != 0)) {
      PyErr_SetString(PyExc_TypeError, "the histogram's counts must be 8-byte unsigned integers (numpy uint64)");
      SWIG_fail;
    }
    h.counts = (const uint64_t *)view.buf;
    h.n_counts = (size_t)(view.len / 8);
    $1 = &h;
  }
}
%typemap(freearg) const smd_histogram *histogram { if (have_view$argnum) PyBuffer_Release(&view$argnum); }

/* smd_histogram_bucket_edges as a list of floats. */
%rename(smd_histogram_bucket_edges) smd_py_histogram_bucket_edges;
%nothread smd_py_histogram_bucket_edges;
%inline %{
static PyObject *smd_py_histogram_bucket_edges(void) {
  size_t n = 0;
  const double *edges = smd_histogram_bucket_edges(&n);
  PyObject *list = PyList_New((Py_ssize_t)n);
  for (size_t i = 0; list && i < n; ++i) {
    PyObject *x = PyFloat_FromDouble(edges[i]);
    if (!x) { Py_DECREF(list); return NULL; }
    PyList_SET_ITEM(list, (Py_ssize_t)i, x);
  }
  return list;
}
%}

/* DLPack capsules from any producer's __dlpack__() ("dltensor_versioned" or legacy "dltensor"),
 * consumed (renamed "used_...") in every outcome once they are recognized.
 *   smd_py_hook_save_dlpack_capsule: saved as smd_hook_save_dlpack (copied before the call
 *     returns), then deleted.
 *   smd_py_hook_adopt_dlpack_capsule: given to smd_hook_save_dlpack_managed (no copy: the writer
 *     deletes it when written); when it is deleted, byte 0 of `released` (a writable buffer the
 *     caller keeps alive until then) is set to 1, so a pool of staging buffers knows when its
 *     buffer is free again. */
%{
typedef struct {
  DLManagedTensorVersioned outer;
  DLManagedTensorVersioned *inner_v; /* one of the two */
  DLManagedTensor *inner_legacy;
  unsigned char *released;
} smd_py_adopted;

static void smd_py_adopted_delete(DLManagedTensorVersioned *self) {
  smd_py_adopted *a = (smd_py_adopted *)self->manager_ctx;
  if (a->inner_v && a->inner_v->deleter) a->inner_v->deleter(a->inner_v);
  if (a->inner_legacy && a->inner_legacy->deleter) a->inner_legacy->deleter(a->inner_legacy);
  if (a->released) __atomic_store_n(a->released, (unsigned char)1, __ATOMIC_RELEASE);
  free(a);
}

/* Takes the managed tensor out of a capsule (renaming it so that its destructor leaves the
 * tensor alone). Exactly one of *v, *legacy is set on success. */
static int smd_py_take_capsule(PyObject *cap, DLManagedTensorVersioned **v, DLManagedTensor **legacy) {
  *v = NULL; *legacy = NULL;
  if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
    *v = (DLManagedTensorVersioned *)PyCapsule_GetPointer(cap, "dltensor_versioned");
    if (!*v || PyCapsule_SetName(cap, "used_dltensor_versioned") != 0) return -1;
    return 0;
  }
  if (PyCapsule_IsValid(cap, "dltensor")) {
    *legacy = (DLManagedTensor *)PyCapsule_GetPointer(cap, "dltensor");
    if (!*legacy || PyCapsule_SetName(cap, "used_dltensor") != 0) return -1;
    return 0;
  }
  PyErr_SetString(PyExc_TypeError, "expected an unused DLPack capsule (\"dltensor_versioned\" or \"dltensor\")");
  return -1;
}
%}
%typemap(in) PyObject *capsule { $1 = $input; }
%typemap(in) PyObject *released { $1 = $input; }
%nothread smd_py_hook_save_dlpack_capsule;
%inline %{
static PyObject *smd_py_hook_save_dlpack_capsule(smd_hook *hook, const char *name, PyObject *capsule,
                                                 const char *const *collections, size_t n_collections) {
  DLManagedTensorVersioned *v;
  DLManagedTensor *legacy;
  if (smd_py_take_capsule(capsule, &v, &legacy) != 0) return NULL;
  const DLTensor *t = v ? &v->dl_tensor : &legacy->dl_tensor;
  smd_error *e;
  Py_BEGIN_ALLOW_THREADS
  e = smd_hook_save_dlpack(hook, name, t, collections, n_collections);
  Py_END_ALLOW_THREADS
  if (v && v->deleter) v->deleter(v);
  if (legacy && legacy->deleter) legacy->deleter(legacy);
  if (e) { smd_py_raise(e); return NULL; }
  return SWIG_Py_Void();
}
%}
%nothread smd_py_hook_adopt_dlpack_capsule;
%inline %{
static PyObject *smd_py_hook_adopt_dlpack_capsule(smd_hook *hook, const char *name, PyObject *capsule,
                                                  PyObject *released, const char *const *collections,
                                                  size_t n_collections) {
  Py_buffer flag;
  if (PyObject_GetBuffer(released, &flag, PyBUF_WRITABLE) != 0) return NULL;
  if (flag.len < 1) {
    PyBuffer_Release(&flag);
    PyErr_SetString(PyExc_ValueError, "released must be a writable buffer of at least one byte");
    return NULL;
  }
  unsigned char *byte = (unsigned char *)flag.buf; /* the caller keeps it alive until it is set */
  PyBuffer_Release(&flag);
  DLManagedTensorVersioned *v;
  DLManagedTensor *legacy;
  if (smd_py_take_capsule(capsule, &v, &legacy) != 0) return NULL;
  smd_py_adopted *a = (smd_py_adopted *)calloc(1, sizeof *a);
  if (!a) {
    if (v && v->deleter) v->deleter(v);
    if (legacy && legacy->deleter) legacy->deleter(legacy);
    return PyErr_NoMemory();
  }
  a->inner_v = v;
  a->inner_legacy = legacy;
  a->released = byte;
  a->outer.version.major = DLPACK_MAJOR_VERSION;
  a->outer.version.minor = DLPACK_MINOR_VERSION;
  a->outer.manager_ctx = a;
  a->outer.deleter = smd_py_adopted_delete;
  a->outer.dl_tensor = v ? v->dl_tensor : legacy->dl_tensor;
  *byte = 0;
  smd_error *e;
  Py_BEGIN_ALLOW_THREADS
  e = smd_hook_save_dlpack_managed(hook, name, &a->outer, collections, n_collections); /* deletes it in every case */
  Py_END_ALLOW_THREADS
  if (e) { smd_py_raise(e); return NULL; }
  return SWIG_Py_Void();
}
%}

%include "smd_core.i"
