/* java.i: smd's SWIG interface for Java (JNI): the Java conversions and holder types behind
 * smd_typemaps.i's hooks, Java's own typemaps, then the shared declarations of smd_core.i, then
 * TensorBoard and the Java-specific entry points. Build with: swig -java -package ai.smd
 * (bindings/java/native).
 *
 * Everything SWIG generates is package-private: the public API is the hand-written classes of
 * ai.smd (bindings/java/src/main/java/ai/smd), which own the proxies made here.
 * Conventions of the generated layer:
 *   - a returned smd_error * becomes a thrown ai.smd.SmdException (or its subclass for the code),
 *     made by SmdException.fromNative(code, utf8 message bytes), after the converted arguments
 *     are freed; the method returns void;
 *   - out-parameters become one-element holder arrays passed in from Java (long[] for a handle,
 *     boolean[] / long[] / double[] / int[] for scalars, String[][] for string arrays, long[][]
 *     for number arrays), filled on success;
 *   - strings cross as real UTF-8 both ways (not JNI's modified UTF-8), so names with characters
 *     outside the BMP or embedded NULs survive;
 *   - tensor data goes in through a direct ByteBuffer (its address, no copy) or a primitive array
 *     (pinned with Get/ReleasePrimitiveArrayCritical around the save, no copy by the binding).
 */
%module(jniclassname="SmdNativeJNI") SmdNative

%include <stdint.i>
%include <enumtypeunsafe.swg>
%javaconst(1);

/* Keep the generated layer inside the package. */
%pragma(java) moduleclassmodifiers="final class"
%pragma(java) jniclassclassmodifiers="final class"
%typemap(javaclassmodifiers) SWIGTYPE, SWIGTYPE *, SWIGTYPE &, SWIGTYPE [] "final class"
%typemap(javaclassmodifiers) enum SWIGTYPE "final class"
/* No finalizers: the public classes free their proxies (close() or a Cleaner). */
%typemap(javafinalize) SWIGTYPE ""
/* The proxy's pointer constructor and getCPtr are used by the public classes of the package. */
SWIG_JAVABODY_PROXY(, , SWIGTYPE)
SWIG_JAVABODY_TYPEWRAPPER(, , , SWIGTYPE)

%{
#include <jni.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "smd/smd.h"
#include "smd/tensorboard.h"

static JavaVM *smd_java_vm;
static jclass smd_java_exc_class;        /* ai.smd.SmdException */
static jmethodID smd_java_exc_from_native; /* static SmdException fromNative(int, byte[]) */
static jclass smd_java_string_class;
static jclass smd_java_bridge_class;     /* ai.smd.RuleBridge */
static jmethodID smd_java_bridge_invoke;   /* int invoke(long ctx, long step) */
static jmethodID smd_java_bridge_required; /* int required(long ctx, long step) */
static jmethodID smd_java_cb_finding;      /* ai.smd.InvokeCallbacks: int finding(long rule, long finding) */
static jmethodID smd_java_cb_progress;     /* int progress(long rule, long step, int outcome) */

/* Looked up once when the library is loaded, with the class loader of the class that loaded it,
 * so that callbacks on any thread find the package's classes. */
JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM *vm, void *reserved) {
  (void)reserved;
  JNIEnv *env = NULL;
  if ((*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_1_8) != JNI_OK) return JNI_ERR;
  smd_java_vm = vm;
  jclass c = (*env)->FindClass(env, "ai/smd/SmdException");
  if (!c) return JNI_ERR;
  smd_java_exc_class = (jclass)(*env)->NewGlobalRef(env, c);
  smd_java_exc_from_native = (*env)->GetStaticMethodID(env, c, "fromNative", "(I[B)Lai/smd/SmdException;");
  if (!smd_java_exc_from_native) return JNI_ERR;
  c = (*env)->FindClass(env, "java/lang/String");
  if (!c) return JNI_ERR;
  smd_java_string_class = (jclass)(*env)->NewGlobalRef(env, c);
  c = (*env)->FindClass(env, "ai/smd/RuleBridge");
  if (!c) return JNI_ERR;
  smd_java_bridge_class = (jclass)(*env)->NewGlobalRef(env, c);
  smd_java_bridge_invoke = (*env)->GetMethodID(env, c, "invoke", "(JJ)I");
  smd_java_bridge_required = (*env)->GetMethodID(env, c, "required", "(JJ)I");
  if (!smd_java_bridge_invoke || !smd_java_bridge_required) return JNI_ERR;
  c = (*env)->FindClass(env, "ai/smd/InvokeCallbacks");
  if (!c) return JNI_ERR;
  smd_java_cb_finding = (*env)->GetMethodID(env, c, "finding", "(JJ)I");
  smd_java_cb_progress = (*env)->GetMethodID(env, c, "progress", "(JJI)I");
  if (!smd_java_cb_finding || !smd_java_cb_progress) return JNI_ERR;
  return JNI_VERSION_1_8;
}

static jbyteArray smd_java_bytes(JNIEnv *jenv, const char *s, size_t n) {
  jbyteArray a = (*jenv)->NewByteArray(jenv, (jsize)n);
  if (a && n) (*jenv)->SetByteArrayRegion(jenv, a, 0, (jsize)n, (const jbyte *)s);
  return a;
}

/* Throws the SmdException of err's code and frees err. */
static void smd_java_throw(JNIEnv *jenv, smd_error *err) {
  const char *msg = smd_error_message(err);
  jbyteArray bytes = smd_java_bytes(jenv, msg, strlen(msg));
  if (bytes) {
    jobject ex = (*jenv)->CallStaticObjectMethod(jenv, smd_java_exc_class, smd_java_exc_from_native,
                                                 (jint)smd_error_code(err), bytes);
    if (ex && !(*jenv)->ExceptionCheck(jenv)) (*jenv)->Throw(jenv, (jthrowable)ex);
  }
  smd_error_free(err);
}

static void smd_java_throw_npe(JNIEnv *jenv, const char *what) {
  jclass c = (*jenv)->FindClass(jenv, "java/lang/NullPointerException");
  if (c) (*jenv)->ThrowNew(jenv, c, what);
}

static void smd_java_throw_iae(JNIEnv *jenv, const char *what) {
  jclass c = (*jenv)->FindClass(jenv, "java/lang/IllegalArgumentException");
  if (c) (*jenv)->ThrowNew(jenv, c, what);
}

static void smd_java_throw_oom(JNIEnv *jenv, const char *what) {
  jclass c = (*jenv)->FindClass(jenv, "java/lang/OutOfMemoryError");
  if (c) (*jenv)->ThrowNew(jenv, c, what);
}

/* UTF-8 (possibly invalid) to a Java String: invalid bytes become U+FFFD. */
static jstring smd_java_string_n(JNIEnv *jenv, const char *s, size_t n) {
  jchar stackbuf[256];
  jchar *out = n <= 256 ? stackbuf : (jchar *)malloc(n * sizeof(jchar));
  if (!out) return NULL;
  size_t k = 0;
  const unsigned char *p = (const unsigned char *)s, *end = p + n;
  while (p < end) {
    unsigned c = *p;
    unsigned cp = 0xFFFD;
    int len = 1;
    if (c < 0x80) { cp = c; }
    else if ((c & 0xE0) == 0xC0 && end - p >= 2 && (p[1] & 0xC0) == 0x80) {
      unsigned v = ((c & 0x1F) << 6) | (p[1] & 0x3F);
      if (v >= 0x80) { cp = v; len = 2; }
    } else if ((c & 0xF0) == 0xE0 && end - p >= 3 && (p[1] & 0xC0) == 0x80 && (p[2] & 0xC0) == 0x80) {
      unsigned v = ((c & 0x0F) << 12) | ((p[1] & 0x3F) << 6) | (p[2] & 0x3F);
      if (v >= 0x800 && (v < 0xD800 || v > 0xDFFF)) { cp = v; len = 3; }
    } else if ((c & 0xF8) == 0xF0 && end - p >= 4 && (p[1] & 0xC0) == 0x80 && (p[2] & 0xC0) == 0x80 &&
               (p[3] & 0xC0) == 0x80) {
      unsigned v = ((c & 0x07) << 18) | ((p[1] & 0x3F) << 12) | ((p[2] & 0x3F) << 6) | (p[3] & 0x3F);
      if (v >= 0x10000 && v <= 0x10FFFF) { cp = v; len = 4; }
    }
    p += len;
    if (cp >= 0x10000) {
      cp -= 0x10000;
      out[k++] = (jchar)(0xD800 + (cp >> 10));
      out[k++] = (jchar)(0xDC00 + (cp & 0x3FF));
    } else {
      out[k++] = (jchar)cp;
    }
  }
  jstring r = (*jenv)->NewString(jenv, out, (jsize)k);
  if (out != stackbuf) free(out);
  return r;
}

static jstring smd_java_string(JNIEnv *jenv, const char *s) {
  return s ? smd_java_string_n(jenv, s, strlen(s)) : NULL;
}

/* A Java String as real UTF-8 (unpaired surrogates become U+FFFD), NUL-terminated, in buf if it
 * fits (cap bytes), else malloc'd; its length in *len (if len is not NULL). Returns NULL on
 * failure: out of memory, or a NUL character when `what` is not NULL (in a name or path it would
 * end the C string and silently name another tensor, worker or folder: an
 * IllegalArgumentException naming `what` is then pending). *heap says whether to free it. */
static char *smd_java_utf8_n(JNIEnv *jenv, jstring js, char *buf, size_t cap, int *heap, const char *what,
                             size_t *len) {
  jsize n = (*jenv)->GetStringLength(jenv, js);
  jchar cbuf[128];
  const jchar *chars;
  jchar *cheap = NULL;
  if (n <= 128) {
    (*jenv)->GetStringRegion(jenv, js, 0, n, cbuf);
    chars = cbuf;
  } else {
    cheap = (jchar *)malloc((size_t)n * sizeof(jchar));
    if (!cheap) return NULL;
    (*jenv)->GetStringRegion(jenv, js, 0, n, cheap);
    chars = cheap;
  }
  size_t need = (size_t)n * 3 + 1;
  char *out = buf;
  *heap = 0;
  if (need > cap) {
    out = (char *)malloc(need);
    if (!out) { free(cheap); return NULL; }
    *heap = 1;
  }
  size_t k = 0;
  for (jsize i = 0; i < n; ++i) {
    unsigned c = chars[i];
    if (c >= 0xD800 && c <= 0xDBFF && i + 1 < n && chars[i + 1] >= 0xDC00 && chars[i + 1] <= 0xDFFF) {
      unsigned cp = 0x10000 + ((c - 0xD800) << 10) + (chars[i + 1] - 0xDC00);
      ++i;
      out[k++] = (char)(0xF0 | (cp >> 18));
      out[k++] = (char)(0x80 | ((cp >> 12) & 0x3F));
      out[k++] = (char)(0x80 | ((cp >> 6) & 0x3F));
      out[k++] = (char)(0x80 | (cp & 0x3F));
      continue;
    }
    if (c >= 0xD800 && c <= 0xDFFF) c = 0xFFFD;
    if (c == 0 && what) {
      char msg[200];
      snprintf(msg, sizeof msg, "%s contains a NUL character, which names and paths cannot hold", what);
      free(cheap);
      if (*heap) free(out);
      *heap = 0;
      smd_java_throw_iae(jenv, msg);
      return NULL;
    }
    if (c < 0x80) {
      out[k++] = (char)c;
    } else if (c < 0x800) {
      out[k++] = (char)(0xC0 | (c >> 6));
      out[k++] = (char)(0x80 | (c & 0x3F));
    } else {
      out[k++] = (char)(0xE0 | (c >> 12));
      out[k++] = (char)(0x80 | ((c >> 6) & 0x3F));
      out[k++] = (char)(0x80 | (c & 0x3F));
    }
  }
  out[k] = 0;
  if (len) *len = k;
  free(cheap);
  return out;
}

static char *smd_java_utf8(JNIEnv *jenv, jstring js, char *buf, size_t cap, int *heap, const char *what) {
  return smd_java_utf8_n(jenv, js, buf, cap, heap, what, NULL);
}

static jobjectArray smd_java_string_array(JNIEnv *jenv, char *const *strings, size_t n) {
  jobjectArray a = (*jenv)->NewObjectArray(jenv, (jsize)n, smd_java_string_class, NULL);
  if (!a) return NULL;
  for (size_t i = 0; i < n; ++i) {
    jstring s = smd_java_string(jenv, strings[i]);
    if (!s) return NULL;
    (*jenv)->SetObjectArrayElement(jenv, a, (jsize)i, s);
    (*jenv)->DeleteLocalRef(jenv, s);
  }
  return a;
}

static jlongArray smd_java_long_array(JNIEnv *jenv, const int64_t *xs, size_t n) {
  jlongArray a = (*jenv)->NewLongArray(jenv, (jsize)n);
  if (a && n) (*jenv)->SetLongArrayRegion(jenv, a, 0, (jsize)n, (const jlong *)xs);
  return a;
}

static jlongArray smd_java_size_array(JNIEnv *jenv, const size_t *xs, size_t n) {
  jlongArray a = (*jenv)->NewLongArray(jenv, (jsize)n);
  for (size_t i = 0; a && i < n; ++i) { jlong v = (jlong)xs[i]; (*jenv)->SetLongArrayRegion(jenv, a, (jsize)i, 1, &v); }
  return a;
}

static jintArray smd_java_mode_array(JNIEnv *jenv, const smd_mode *xs, size_t n) {
  jintArray a = (*jenv)->NewIntArray(jenv, (jsize)n);
  for (size_t i = 0; a && i < n; ++i) { jint v = (jint)xs[i]; (*jenv)->SetIntArrayRegion(jenv, a, (jsize)i, 1, &v); }
  return a;
}

/* Owned smd_value pointers, for Java to wrap in owning proxies; each vs[i] is set to NULL. */
static jlongArray smd_java_value_array(JNIEnv *jenv, smd_value **vs, size_t n) {
  jlongArray a = (*jenv)->NewLongArray(jenv, (jsize)n);
  for (size_t i = 0; a && i < n; ++i) {
    jlong p = (jlong)(intptr_t)vs[i];
    (*jenv)->SetLongArrayRegion(jenv, a, (jsize)i, 1, &p);
    vs[i] = NULL; /* now Java's */
  }
  return a;
}

/* Checks that a holder array exists and has room for k results. */
static int smd_java_holder_ok(JNIEnv *jenv, jarray a, int k) {
  if (k == 1) {
    if (!a) { smd_java_throw_npe(jenv, "output holder array is null"); return 0; }
    if ((*jenv)->GetArrayLength(jenv, a) < 1) { smd_java_throw_iae(jenv, "output holder array is empty"); return 0; }
    return 1;
  }
  if (!a || (*jenv)->GetArrayLength(jenv, a) < k) {
    char msg[64];
    snprintf(msg, sizeof msg, "holder must have %d elements", k);
    smd_java_throw_iae(jenv, msg);
    return 0;
  }
  return 1;
}

/* Puts obj into holder[i]. */
static void smd_java_hold(JNIEnv *jenv, jobjectArray holder, jsize i, jobject obj) {
  (*jenv)->SetObjectArrayElement(jenv, holder, i, obj);
  (*jenv)->DeleteLocalRef(jenv, obj);
}

/* An input array of int64: a long[] (null: none), copied. */
static int smd_java_int64s_in(JNIEnv *jenv, jlongArray in, int64_t *small, size_t cap, int64_t **heap,
                              const int64_t **out, size_t *n_out) {
  *out = NULL;
  *n_out = 0;
  if (!in) return 1;
  jsize n = (*jenv)->GetArrayLength(jenv, in);
  int64_t *buf = small;
  if ((size_t)n > cap) {
    buf = *heap = (int64_t *)malloc(sizeof(int64_t) * (size_t)n);
    if (!buf) { smd_java_throw_iae(jenv, "out of memory"); return 0; }
  }
  (*jenv)->GetLongArrayRegion(jenv, in, 0, n, (jlong *)buf);
  *out = buf;
  *n_out = (size_t)n;
  return 1;
}

/* Input arrays of strings: a String[] (null: none). */
typedef struct smd_java_strs {
  char **items;
  size_t *lens;
  size_t n;
} smd_java_strs;

/* The strings of a String[] as UTF-8. `name` names an element in the message refusing a NUL
 * character (names); NULL: NULs are kept (string tensor elements, whose lengths are in lens). */
static int smd_java_strs_get(JNIEnv *jenv, jobjectArray a, smd_java_strs *out, const char *what,
                             const char *name) {
  out->items = NULL;
  out->lens = NULL;
  out->n = 0;
  if (!a) return 1;
  jsize n = (*jenv)->GetArrayLength(jenv, a);
  if (n == 0) return 1;
  out->items = (char **)calloc((size_t)n, sizeof(char *));
  out->lens = (size_t *)calloc((size_t)n, sizeof(size_t));
  if (!out->items || !out->lens) { smd_java_throw_iae(jenv, "out of memory"); return 0; }
  out->n = (size_t)n;
  for (jsize i = 0; i < n; ++i) {
    jstring s = (jstring)(*jenv)->GetObjectArrayElement(jenv, a, i);
    if (!s) { smd_java_throw_npe(jenv, what); return 0; }
    int heap = 0;
    out->items[i] = smd_java_utf8_n(jenv, s, NULL, 0, &heap, name, &out->lens[i]);
    (*jenv)->DeleteLocalRef(jenv, s);
    if (!out->items[i]) { if (!(*jenv)->ExceptionCheck(jenv)) smd_java_throw_iae(jenv, "out of memory"); return 0; }
  }
  return 1;
}

static void smd_java_strs_free(smd_java_strs *s) {
  for (size_t i = 0; s->items && i < s->n; ++i) free(s->items[i]);
  free(s->items);
  free(s->lens);
  s->items = NULL;
  s->lens = NULL;
  s->n = 0;
}

/* The conversions smd_typemaps.i calls (see there); jenv is the wrapper's. */
#define SMD_LANG_INT64S(xs, n) smd_java_long_array(jenv, xs, n)
#define SMD_LANG_DIMS(xs, n) smd_java_long_array(jenv, xs, n)
#define SMD_LANG_MODES(xs, n) smd_java_mode_array(jenv, xs, n)
#define SMD_LANG_VALUES(vs, n) smd_java_value_array(jenv, vs, n)
#define SMD_LANG_STRS(arr) smd_java_string_array(jenv, (arr)->strings, (arr)->count)
#define SMD_LANG_STR(s) smd_java_string(jenv, s)
#define SMD_LANG_BYTES(s, n) smd_java_bytes(jenv, s, n)
#define SMD_LANG_INT64S_IN(in, small, cap, heap, out, n) smd_java_int64s_in(jenv, in, small, cap, heap, out, n)
typedef smd_java_strs smd_lang_strs;
#define SMD_LANG_STRS_INIT {NULL, NULL, 0}
#define SMD_LANG_STRS_IN(in, strs, param, null_msg, elem) smd_java_strs_get(jenv, in, strs, null_msg, elem)
#define SMD_LANG_STRS_FREE(strs) smd_java_strs_free(strs)
/* Scalars into a one-element primitive holder. */
#define SMD_JAVA_SET_SCALAR(env, h, SETTER, JTYPE, v) \
  do { JTYPE v_ = (JTYPE)(v); (*(env))->SETTER(env, h, 0, 1, &v_); } while (0)
#define SMD_JAVA_SET_BOOL(env, h, v) SMD_JAVA_SET_SCALAR(env, h, SetBooleanArrayRegion, jboolean, v)
#define SMD_JAVA_SET_INT64(env, h, v) SMD_JAVA_SET_SCALAR(env, h, SetLongArrayRegion, jlong, v)
#define SMD_JAVA_SET_DOUBLE(env, h, v) SMD_JAVA_SET_SCALAR(env, h, SetDoubleArrayRegion, jdouble, v)
#define SMD_JAVA_SET_ENUM(env, h, v) SMD_JAVA_SET_SCALAR(env, h, SetIntArrayRegion, jint, v)
%}

/* ---- JNIEnv for the helpers below. */
%typemap(in, numinputs=0) JNIEnv *jenv_ "$1 = jenv;"

/* ---- Errors: void methods that throw. Every return before the end of a wrapper (an error from
 * smd, or an argument refused) first runs $cleanup, the freearg code of every argument, as Python's
 * SWIG_fail does: the temporaries all start empty, so arguments not converted yet free nothing. */
%typemap(jni) smd_error * "void"
%typemap(jtype) smd_error * "void"
%typemap(jstype) smd_error * "void"
%typemap(javaout, throws="SmdException") smd_error * { $jnicall; }
%typemap(out, throws="SmdException") smd_error * %{
  if ($1) { smd_java_throw(jenv, $1); $cleanup return $null; }
%}

/* ---- Strings in and out as real UTF-8. */
%typemap(in) const char * (char buf[256], int heap = 0) %{
  $1 = NULL;
  if ($input) {
    $1 = smd_java_utf8(jenv, $input, buf, sizeof buf, &heap, "$1_name");
    if (!$1) {
      if (!(*jenv)->ExceptionCheck(jenv)) smd_java_throw_iae(jenv, "cannot convert a string");
      $cleanup return $null;
    }
  }
%}
%typemap(freearg) const char * %{ if (heap$argnum) free($1); %}
%typemap(out) const char * %{ $result = smd_java_string(jenv, $1); %}

/* ---- Hot-path names: a NUL-terminated UTF-8 byte[] made (and cached) by the Java caller, copied
 * to the stack (no string conversion per call). */
%typemap(jni) const char *name_utf8 "jbyteArray"
%typemap(jtype) const char *name_utf8 "byte[]"
%typemap(jstype) const char *name_utf8 "byte[]"
%typemap(javain) const char *name_utf8 "$javainput"
%typemap(in) const char *name_utf8 (char buf[256], char *heap = NULL) %{
  $1 = NULL;
  if ($input) {
    jsize n = (*jenv)->GetArrayLength(jenv, $input);
    if (n < 1) { smd_java_throw_iae(jenv, "name bytes must end with a NUL"); $cleanup return $null; }
    char *p = buf;
    if ((size_t)n > sizeof buf) {
      heap = (char *)malloc((size_t)n);
      if (!heap) { smd_java_throw_iae(jenv, "out of memory"); $cleanup return $null; }
      p = heap;
    }
    (*jenv)->GetByteArrayRegion(jenv, $input, 0, n, (jbyte *)p);
    p[n - 1] = 0;
    $1 = p;
  }
%}
%typemap(freearg) const char *name_utf8 %{ free(heap$argnum); %}

/* ---- The outputs and input arrays of smd_typemaps.i. An output is a holder array passed in from
 * Java and filled on success: long[1] for a handle, boolean[1] / long[1] / double[1] / int[1] for a
 * scalar, String[1][] for a string array, long[1][] for a number array, long[k][] or Object[k] for a
 * group of k results (steps and values, names and values, dtype and dimensions, steps, offsets and
 * dimensions). A holder without room throws (NullPointerException or IllegalArgumentException). */
%define SMD_JAVA_HOLDER(SIG, JNI, JTYPE)
%typemap(jni) SIG "JNI"
%typemap(jtype) SIG "JTYPE"
%typemap(jstype) SIG "JTYPE"
%typemap(javain) SIG "$javainput"
%enddef
%define SMD_JAVA_HOLDER_BOOL(SIG) SMD_JAVA_HOLDER(SIG, jbooleanArray, boolean[]) %enddef
%define SMD_JAVA_HOLDER_INT64(SIG) SMD_JAVA_HOLDER(SIG, jlongArray, long[]) %enddef
%define SMD_JAVA_HOLDER_DOUBLE(SIG) SMD_JAVA_HOLDER(SIG, jdoubleArray, double[]) %enddef
%define SMD_JAVA_HOLDER_ENUM(SIG) SMD_JAVA_HOLDER(SIG, jintArray, int[]) %enddef

%define SMD_OUT_NUMINPUTS 1 %enddef
%define SMD_OUT_HOLDER(K) if (!smd_java_holder_ok(jenv, $input, K)) { $cleanup return $null; } %enddef
%define SMD_OUT_TYPES_HANDLE(SIG) SMD_JAVA_HOLDER(SIG, jlongArray, long[]) %enddef
%define SMD_OUT_TYPES_SCALAR(SIG, KIND) SMD_JAVA_HOLDER_##KIND(SIG) %enddef
%define SMD_FAIL { $cleanup return $null; } %enddef
%define SMD_OUT_RETURN(OBJ) { jobject o_ = (jobject)(OBJ); if (o_) smd_java_hold(jenv, $input, 0, o_); } %enddef
%define SMD_OUT_RETURN2(A, B)
  {
    jobject a_ = (jobject)(A);
    jobject b_ = a_ ? (jobject)(B) : NULL;
    if (b_) { smd_java_hold(jenv, $input, 0, a_); smd_java_hold(jenv, $input, 1, b_); }
  }
%enddef
%define SMD_OUT_RETURN_NULL (*jenv)->SetObjectArrayElement(jenv, $input, 0, NULL); %enddef
%define SMD_OUT_RETURN_HANDLE(P, DESC)
  { jlong p_ = (jlong)(intptr_t)(P); (*jenv)->SetLongArrayRegion(jenv, $input, 0, 1, &p_); }
%enddef
%define SMD_OUT_RETURN_SCALAR(KIND, V) SMD_JAVA_SET_##KIND(jenv, $input, V); %enddef
/* long[2][]: {dtype}, dims. */
%define SMD_OUT_RETURN_DTYPE_DIMS(DT, XS, N)
  { int64_t d_ = (int64_t)(DT); SMD_OUT_RETURN2(smd_java_long_array(jenv, &d_, 1), smd_java_long_array(jenv, XS, N)) }
%enddef
/* long[3][]: steps, offsets (n + 1), dims. */
%define SMD_OUT_RETURN_STEP_SHAPES(XS, OFFS, DIMS, N)
  {
    jobject s_ = smd_java_long_array(jenv, XS, N);
    jobject o_ = s_ ? smd_java_size_array(jenv, OFFS, N + 1) : NULL;
    jobject d_ = o_ ? smd_java_long_array(jenv, DIMS, OFFS[N]) : NULL;
    if (d_) { smd_java_hold(jenv, $input, 0, s_); smd_java_hold(jenv, $input, 1, o_); smd_java_hold(jenv, $input, 2, d_); }
  }
%enddef

/* The holders of the array shapes (declared before smd_typemaps.i, whose %apply copies them). */
SMD_JAVA_HOLDER(smd_strarray *out, jobjectArray, String[][])
SMD_JAVA_HOLDER(char **out, jobjectArray, String[])
SMD_JAVA_HOLDER((int64_t **steps_out, size_t *n_out), jobjectArray, long[][])
SMD_JAVA_HOLDER((int64_t **save_steps_out, size_t *n_out), jobjectArray, long[][])
SMD_JAVA_HOLDER((int64_t **dims_out, size_t *ndim_out), jobjectArray, long[][])
SMD_JAVA_HOLDER((smd_mode **modes_out, size_t *n_out), jobjectArray, int[][])
SMD_JAVA_HOLDER((smd_dtype *dtype_out, int64_t **dims_out, size_t *ndim_out), jobjectArray, long[][])
SMD_JAVA_HOLDER((smd_value ***values_out, size_t *n_out), jobjectArray, long[][])
SMD_JAVA_HOLDER((int64_t **steps_out, smd_value ***values_out, size_t *n_out), jobjectArray, long[][])
SMD_JAVA_HOLDER((smd_strarray *names_out, smd_value ***values_out, size_t *n_out), jobjectArray, Object[])
SMD_JAVA_HOLDER((int64_t **steps_out, size_t **offsets_out, int64_t **dims_out, size_t *n_out), jobjectArray, long[][])
SMD_JAVA_HOLDER((const char **out, size_t *len_out), jobjectArray, byte[][])
/* Inputs: long[] (null: none), String[] (null: none). */
SMD_JAVA_HOLDER((const int64_t *steps, size_t n), jlongArray, long[])
SMD_JAVA_HOLDER((const char *const *collections, size_t n_collections), jobjectArray, String[])
%include "smd_typemaps.i"
/* Java-only scalar outputs: TensorBoard's, and the global reference of a callback below. */
SMD_OUT_SCALAR(bool, written_out, BOOL)
SMD_OUT_SCALAR(int64_t, out_payload, INT64)

/* Tensor data through the plain C signature: a direct ByteBuffer, from 0 to its capacity. */
%typemap(jni) (const void *data, size_t nbytes) "jobject"
%typemap(jtype) (const void *data, size_t nbytes) "java.nio.ByteBuffer"
%typemap(jstype) (const void *data, size_t nbytes) "java.nio.ByteBuffer"
%typemap(javain) (const void *data, size_t nbytes) "$javainput"
%typemap(in) (const void *data, size_t nbytes) %{
  $1 = NULL; $2 = 0;
  if ($input) {
    $1 = (*jenv)->GetDirectBufferAddress(jenv, $input);
    if (!$1) { smd_java_throw_iae(jenv, "tensor data must be a direct ByteBuffer"); $cleanup return $null; }
    $2 = (size_t)(*jenv)->GetDirectBufferCapacity(jenv, $input);
  }
%}

/* jarray parameters of the helpers above: any primitive array, typed by the Java callers. */
%typemap(jni) jarray "jarray"
%typemap(jtype) jarray "Object"
%typemap(jstype) jarray "Object"
%typemap(javain) jarray "$javainput"
%typemap(in) jarray "$1 = $input;"

%ignore smd_rule_create_builtin; /* smd_java_rule_create_builtin */

/* uint64_t results (smd_hook_collections_version) as a long holding the same 64 bits, not
 * SWIG's BigInteger: Java has no unsigned type, and these are compared for equality only. */
%typemap(jni) uint64_t "jlong"
%typemap(jtype) uint64_t "long"
%typemap(jstype) uint64_t "long"
%typemap(out) uint64_t %{ $result = (jlong)$1; %}
%typemap(javaout) uint64_t { return $jnicall; }

/* Reductions the caller computed: smd_hook_due_reductions as (String[1][], boolean[1],
 * boolean[1]); smd_hook_save_reductions through smd_java_save_reductions (parallel arrays, and the
 * histogram as its four statistics and its counts, or nulls). */
%ignore smd_hook_save_reductions;


%include "smd_core.i"

/* TensorBoard export (not in smd_core.i: Python does not bind it). */
%include "smd/tensorboard.h"

/* ---- Java-specific entry points. */
%inline %{
/* save_tensor from a direct ByteBuffer's [offset, offset + length) bytes, no copy by the binding. */
static smd_error *smd_java_save_buffer(JNIEnv *jenv_, smd_hook *hook, const char *name_utf8, int dtype,
                                       const int64_t *shape, size_t ndim, jobject buffer,
                                       int64_t offset, int64_t length,
                                       const char *const *collections, size_t n_collections) {
  JNIEnv *jenv = jenv_;
  if (!buffer) return smd_java_throw_npe(jenv, "tensor data buffer is null"), (smd_error *)NULL;
  char *base = (char *)(*jenv)->GetDirectBufferAddress(jenv, buffer);
  if (!base) return smd_java_throw_iae(jenv, "tensor data must be a direct ByteBuffer"), (smd_error *)NULL;
  int64_t cap = (int64_t)(*jenv)->GetDirectBufferCapacity(jenv, buffer);
  if (offset < 0 || length < 0 || offset > cap || length > cap - offset)
    return smd_java_throw_iae(jenv, "offset/length outside the buffer"), (smd_error *)NULL;
  return smd_hook_save_tensor(hook, name_utf8, (smd_dtype)dtype, shape, ndim, base + offset, (size_t)length,
                              collections, n_collections);
}

/* save_tensor from a primitive Java array (float[], double[], long[], int[], short[], byte[],
 * boolean[]). A save that may be due is given a copy of the array: the save can wait for the
 * writer (a full memory budget, a slow S3), and while an array is pinned (a JNI critical region)
 * the JVM cannot collect garbage, which would stall every other thread of the program meanwhile.
 * One that is not due (it returns at once) reads the pinned array. */
static smd_error *smd_java_save_array(JNIEnv *jenv_, smd_hook *hook, const char *name_utf8, int dtype,
                                      const int64_t *shape, size_t ndim, jarray array, int elem_size,
                                      const char *const *collections, size_t n_collections) {
  JNIEnv *jenv = jenv_;
  if (!array) return smd_java_throw_npe(jenv, "tensor data array is null"), (smd_error *)NULL;
  jsize n = (*jenv)->GetArrayLength(jenv, array);
  const size_t nbytes = (size_t)n * (size_t)elem_size;
  const bool may_be_due = n_collections > 0 || (hook && name_utf8 && smd_hook_is_due(hook, name_utf8));
  void *copy = NULL;
  if (may_be_due) {
    copy = malloc(nbytes > 0 ? nbytes : 1);
    if (!copy) return smd_java_throw_oom(jenv, "cannot copy the tensor data"), (smd_error *)NULL;
  }
  void *p = (*jenv)->GetPrimitiveArrayCritical(jenv, array, NULL);
  if (!p) {
    free(copy);
    return (smd_error *)NULL; /* OutOfMemoryError pending */
  }
  smd_error *err = NULL;
  if (copy) {
    memcpy(copy, p, nbytes);
    (*jenv)->ReleasePrimitiveArrayCritical(jenv, array, p, JNI_ABORT);
    err = smd_hook_save_tensor(hook, name_utf8, (smd_dtype)dtype, shape, ndim, copy, nbytes,
                               collections, n_collections);
    free(copy);
  } else {
    err = smd_hook_save_tensor(hook, name_utf8, (smd_dtype)dtype, shape, ndim, p, nbytes,
                               collections, n_collections);
    (*jenv)->ReleasePrimitiveArrayCritical(jenv, array, p, JNI_ABORT);
  }
  return err;
}

/* save_reductions: names[i] (without abs_), abs[i], values[i]; the arrays have one length.
 * hist_stats (min, max, sum, sum_squares: a double[4]) and hist_counts (a long[] of the unsigned
 * counts), both null when no histogram is given. */
static smd_error *smd_java_save_reductions(JNIEnv *jenv_, smd_hook *hook, const char *name, int dtype,
                                           const int64_t *shape, size_t ndim, jobjectArray names,
                                           jbooleanArray abs, jdoubleArray values, jarray hist_stats,
                                           jarray hist_counts,
                                           const char *const *collections, size_t n_collections) {
  JNIEnv *jenv = jenv_;
  if (!names || !abs || !values) return smd_java_throw_npe(jenv, "reductions, abs and values must not be null"), (smd_error *)NULL;
  jsize n = (*jenv)->GetArrayLength(jenv, names);
  if ((*jenv)->GetArrayLength(jenv, abs) != n || (*jenv)->GetArrayLength(jenv, values) != n)
    return smd_java_throw_iae(jenv, "reductions, abs and values must have the same length"), (smd_error *)NULL;
  if ((hist_stats == NULL) != (hist_counts == NULL) ||
      (hist_stats && (*jenv)->GetArrayLength(jenv, hist_stats) != 4))
    return smd_java_throw_iae(jenv, "a histogram needs its four statistics and its counts"), (smd_error *)NULL;
  smd_histogram hist;
  memset(&hist, 0, sizeof hist);
  jlong *counts = NULL;
  if (hist_stats) {
    jdouble st[4];
    (*jenv)->GetDoubleArrayRegion(jenv, (jdoubleArray)hist_stats, 0, 4, st);
    if ((*jenv)->ExceptionCheck(jenv)) return NULL;
    hist.min = st[0];
    hist.max = st[1];
    hist.sum = st[2];
    hist.sum_squares = st[3];
    hist.n_counts = (size_t)(*jenv)->GetArrayLength(jenv, hist_counts);
    counts = (*jenv)->GetLongArrayElements(jenv, (jlongArray)hist_counts, NULL);
    if (!counts) return NULL; /* OutOfMemoryError pending */
    hist.counts = (const uint64_t *)counts;
  }
  smd_java_strs strs = {NULL, NULL, 0};
  if (!smd_java_strs_get(jenv, names, &strs, "a reduction name is null", "a reduction name")) {
    if (counts) (*jenv)->ReleaseLongArrayElements(jenv, (jlongArray)hist_counts, counts, JNI_ABORT);
    smd_java_strs_free(&strs);
    return NULL;
  }
  smd_reduction_value *vals = (smd_reduction_value *)calloc((size_t)(n > 0 ? n : 1), sizeof *vals);
  jboolean *a = vals ? (*jenv)->GetBooleanArrayElements(jenv, abs, NULL) : NULL;
  jdouble *v = a ? (*jenv)->GetDoubleArrayElements(jenv, values, NULL) : NULL;
  smd_error *err = NULL;
  if (!v) {
    if (!(*jenv)->ExceptionCheck(jenv)) smd_java_throw_iae(jenv, "out of memory");
  } else {
    for (jsize i = 0; i < n; ++i) {
      vals[i].reduction = strs.items[i];
      vals[i].abs = a[i] != 0;
      vals[i].value = v[i];
    }
    err = smd_hook_save_reductions(hook, name, (smd_dtype)dtype, shape, ndim, vals, (size_t)n,
                                   hist_stats ? &hist : NULL, collections, n_collections);
  }
  if (counts) (*jenv)->ReleaseLongArrayElements(jenv, (jlongArray)hist_counts, counts, JNI_ABORT);
  if (v) (*jenv)->ReleaseDoubleArrayElements(jenv, values, v, JNI_ABORT);
  if (a) (*jenv)->ReleaseBooleanArrayElements(jenv, abs, a, JNI_ABORT);
  free(vals);
  smd_java_strs_free(&strs);
  return err;
}

/* smd_histogram_bucket_edges: their number, and a copy into a double[] of that length. */
static int64_t smd_java_histogram_bucket_count(void) {
  size_t n = 0;
  smd_histogram_bucket_edges(&n);
  return (int64_t)n;
}
static void smd_java_histogram_bucket_edges(JNIEnv *jenv_, jarray out) {
  JNIEnv *jenv = jenv_;
  size_t n = 0;
  const double *edges = smd_histogram_bucket_edges(&n);
  if (!out) { smd_java_throw_npe(jenv, "out is null"); return; }
  if ((size_t)(*jenv)->GetArrayLength(jenv, out) != n) { smd_java_throw_iae(jenv, "out must hold every edge"); return; }
  (*jenv)->SetDoubleArrayRegion(jenv, (jdoubleArray)out, 0, (jsize)n, edges);
}

/* save_scalar keeping a type (smd_hook_save_scalar_typed) from a long or a double's bits. */
static smd_error *smd_java_save_scalar_long(smd_hook *hook, const char *name, int64_t value) {
  return smd_hook_save_scalar_typed(hook, name, SMD_DTYPE_INT64, &value, sizeof value);
}
static smd_error *smd_java_save_scalar_bool(smd_hook *hook, const char *name, bool value) {
  unsigned char b = value ? 1 : 0;
  return smd_hook_save_scalar_typed(hook, name, SMD_DTYPE_BOOL, &b, 1);
}
/* save_scalar of a double with the record's wall time (smd_hook_save_scalar_timestamped). */
static smd_error *smd_java_save_scalar_timestamped(smd_hook *hook, const char *name, double value,
                                                   double timestamp) {
  return smd_hook_save_scalar_timestamped(hook, name, SMD_DTYPE_FLOAT64, &value, sizeof value, timestamp);
}

/* save_strings: Java strings as UTF-8. */
static smd_error *smd_java_save_strings(JNIEnv *jenv_, smd_hook *hook, const char *name, jobjectArray strings,
                                        const char *const *collections, size_t n_collections) {
  JNIEnv *jenv = jenv_;
  if (!strings) return smd_java_throw_npe(jenv, "strings is null"), (smd_error *)NULL;
  smd_java_strs s;
  /* Elements are data: a NUL in one is kept (lengths given), not refused. */
  if (!smd_java_strs_get(jenv, strings, &s, "a string is null", NULL)) { smd_java_strs_free(&s); return NULL; }
  smd_error *err = smd_hook_save_strings(hook, name, (const char *const *)s.items, s.lens, s.n, collections, n_collections);
  smd_java_strs_free(&s);
  return err;
}

/* A read-only view is made in Java; this is the value's memory as a direct ByteBuffer (null for
 * strings). Valid while the value lives. */
static jobject smd_java_value_buffer(JNIEnv *jenv_, const smd_value *value) {
  JNIEnv *jenv = jenv_;
  if (!value) return smd_java_throw_npe(jenv, "value is null"), (jobject)NULL;
  const void *data = smd_value_data(value);
  size_t n = smd_value_nbytes(value);
  if (!data) return NULL;
  return (*jenv)->NewDirectByteBuffer(jenv, (void *)data, (jlong)n);
}

/* Another reference to a value, as a raw pointer, for a buffer that must outlive the Value. */
static int64_t smd_java_value_ref(const smd_value *value) {
  return value ? (int64_t)(intptr_t)smd_value_ref(value) : 0;
}

static jlongArray smd_java_value_shape(JNIEnv *jenv_, const smd_value *value) {
  return smd_java_long_array(jenv_, smd_value_shape(value), smd_value_ndim(value));
}

%}
%{
/* Custom rules: the payload is a global reference to an ai.smd.RuleBridge, released by
 * smd_java_rule_release when the Java Rule is freed (after smd_rule_free). */
static int smd_java_rule_call(smd_rule_context *ctx, int64_t step, void *payload, jmethodID m, bool *met) {
  JNIEnv *env = NULL;
  int attached = 0;
  if ((*smd_java_vm)->GetEnv(smd_java_vm, (void **)&env, JNI_VERSION_1_8) != JNI_OK) {
    if ((*smd_java_vm)->AttachCurrentThread(smd_java_vm, (void **)&env, NULL) != JNI_OK)
      return smd_rule_context_fail_with(ctx, SMD_E_INTERNAL, "cannot attach the rule's thread to the JVM");
    attached = 1;
  }
  jint r = (*env)->CallIntMethod(env, (jobject)payload, m, (jlong)(intptr_t)ctx, (jlong)step);
  int rc = 0;
  if ((*env)->ExceptionCheck(env)) {
    (*env)->ExceptionClear(env);
    rc = smd_rule_context_fail_with(ctx, SMD_E_INTERNAL, "a Java rule callback threw");
  } else if (r < 0) {
    rc = 1; /* the bridge handed its error to smd_rule_context_fail_with already */
  } else if (met) {
    *met = r == 1;
  }
  if (attached) (*smd_java_vm)->DetachCurrentThread(smd_java_vm);
  return rc;
}
static int smd_java_rule_invoke_tramp(smd_rule_context *ctx, int64_t step, bool *met, void *payload) {
  return smd_java_rule_call(ctx, step, payload, smd_java_bridge_invoke, met);
}
static int smd_java_rule_required_tramp(smd_rule_context *ctx, int64_t step, void *payload) {
  return smd_java_rule_call(ctx, step, payload, smd_java_bridge_required, NULL);
}

/* Invoke-option callbacks: the payload is a global reference to an ai.smd.InvokeCallbacks, whose
 * methods never throw (they record what a listener threw and answer 1: cancel). */
static JNIEnv *smd_java_env(int *attached) {
  JNIEnv *env = NULL;
  *attached = 0;
  if ((*smd_java_vm)->GetEnv(smd_java_vm, (void **)&env, JNI_VERSION_1_8) == JNI_OK) return env;
  if ((*smd_java_vm)->AttachCurrentThread(smd_java_vm, (void **)&env, NULL) != JNI_OK) return NULL;
  *attached = 1;
  return env;
}
static int smd_java_finding_tramp(const smd_rule *rule, const smd_rule_finding *finding, void *payload) {
  int attached;
  JNIEnv *env = smd_java_env(&attached);
  if (!env) return 1;
  jint r = (*env)->CallIntMethod(env, (jobject)payload, smd_java_cb_finding, (jlong)(intptr_t)rule,
                                 (jlong)(intptr_t)finding);
  if ((*env)->ExceptionCheck(env)) { (*env)->ExceptionClear(env); r = 1; }
  if (attached) (*smd_java_vm)->DetachCurrentThread(smd_java_vm);
  return (int)r;
}
static int smd_java_progress_tramp(const smd_rule *rule, int64_t step, smd_rule_outcome outcome, void *payload) {
  int attached;
  JNIEnv *env = smd_java_env(&attached);
  if (!env) return 1;
  jint r = (*env)->CallIntMethod(env, (jobject)payload, smd_java_cb_progress, (jlong)(intptr_t)rule, (jlong)step,
                                 (jint)outcome);
  if ((*env)->ExceptionCheck(env)) { (*env)->ExceptionClear(env); r = 1; }
  if (attached) (*smd_java_vm)->DetachCurrentThread(smd_java_vm);
  return (int)r;
}

%}
%inline %{
/* Creates a custom rule whose callbacks call bridge (an ai.smd.RuleBridge); *payload_out gets
 * the global reference to release with smd_java_rule_release after smd_rule_free. */
static smd_error *smd_java_rule_create(JNIEnv *jenv_, const char *name, smd_trial *base, jlongArray others,
                                       jobject bridge, bool with_required, smd_rule **out, int64_t *out_payload) {
  JNIEnv *jenv = jenv_;
  if (!bridge) return smd_java_throw_npe(jenv, "rule is null"), (smd_error *)NULL;
  size_t n_others = others ? (size_t)(*jenv)->GetArrayLength(jenv, others) : 0;
  smd_trial **ts = NULL;
  if (n_others) {
    ts = (smd_trial **)calloc(n_others, sizeof *ts);
    if (!ts) return smd_java_throw_iae(jenv, "out of memory"), (smd_error *)NULL;
    for (size_t i = 0; i < n_others; ++i) {
      jlong p;
      (*jenv)->GetLongArrayRegion(jenv, others, (jsize)i, 1, &p);
      ts[i] = (smd_trial *)(intptr_t)p;
    }
  }
  jobject ref = (*jenv)->NewGlobalRef(jenv, bridge);
  if (!ref) { free(ts); return (smd_error *)NULL; } /* OutOfMemoryError pending */
  smd_error *err = smd_rule_create(name, base, ts, n_others, smd_java_rule_invoke_tramp,
                                   with_required ? smd_java_rule_required_tramp : NULL, ref, out);
  free(ts);
  if (err) { (*jenv)->DeleteGlobalRef(jenv, ref); return err; }
  *out_payload = (int64_t)(intptr_t)ref;
  return NULL;
}

/* Sets both callbacks of the options to call `callbacks` (an ai.smd.InvokeCallbacks); *out_payload
 * gets the new global reference (release it with smd_java_rule_release once the options are
 * freed or their callbacks replaced). */
static smd_error *smd_java_invoke_options_set_callbacks(JNIEnv *jenv_, smd_rule_invoke_options *options,
                                                        jobject callbacks, int64_t *out_payload) {
  JNIEnv *jenv = jenv_;
  if (!callbacks) return smd_java_throw_npe(jenv, "callbacks is null"), (smd_error *)NULL;
  jobject ref = (*jenv)->NewGlobalRef(jenv, callbacks);
  if (!ref) return (smd_error *)NULL; /* OutOfMemoryError pending */
  smd_error *err = smd_rule_invoke_options_set_finding_callback(options, smd_java_finding_tramp, ref);
  if (!err) err = smd_rule_invoke_options_set_progress_callback(options, smd_java_progress_tramp, ref);
  if (err) {
    smd_error_free(smd_rule_invoke_options_set_finding_callback(options, NULL, NULL));
    smd_error_free(smd_rule_invoke_options_set_progress_callback(options, NULL, NULL));
    (*jenv)->DeleteGlobalRef(jenv, ref);
    return err;
  }
  *out_payload = (int64_t)(intptr_t)ref;
  return NULL;
}

static void smd_java_rule_release(JNIEnv *jenv_, int64_t payload) {
  if (payload) (*jenv_)->DeleteGlobalRef(jenv_, (jobject)(intptr_t)payload);
}

/* Built-in rules: other trials as pointers, parameters as parallel String arrays. */
static smd_error *smd_java_rule_create_builtin(JNIEnv *jenv_, const char *name, smd_trial *base,
                                               jlongArray others, jobjectArray keys, jobjectArray values,
                                               smd_rule **out) {
  JNIEnv *jenv = jenv_;
  smd_java_strs k = {NULL, NULL, 0}, v = {NULL, NULL, 0};
  if (!smd_java_strs_get(jenv, keys, &k, "a parameter name is null", "a rule parameter name") ||
      !smd_java_strs_get(jenv, values, &v, "a parameter value is null", "a rule parameter value")) {
    smd_java_strs_free(&k); smd_java_strs_free(&v);
    return NULL;
  }
  if (k.n != v.n) {
    smd_java_strs_free(&k); smd_java_strs_free(&v);
    return smd_java_throw_iae(jenv, "parameter names and values differ in number"), (smd_error *)NULL;
  }
  size_t n_others = others ? (size_t)(*jenv)->GetArrayLength(jenv, others) : 0;
  smd_trial **ts = n_others ? (smd_trial **)calloc(n_others, sizeof *ts) : NULL;
  for (size_t i = 0; i < n_others && ts; ++i) {
    jlong p;
    (*jenv)->GetLongArrayRegion(jenv, others, (jsize)i, 1, &p);
    ts[i] = (smd_trial *)(intptr_t)p;
  }
  smd_error *err = smd_rule_create_builtin(name, base, ts, n_others, (const char *const *)k.items,
                                           (const char *const *)v.items, k.n, out);
  free(ts);
  smd_java_strs_free(&k); smd_java_strs_free(&v);
  return err;
}

/* Several rules over one trial. */
static smd_error *smd_java_rule_invoke_many(JNIEnv *jenv_, jlongArray rules, int64_t start_step, int64_t end_step,
                                            bool raise_eval_cond, const smd_rule_invoke_options *options) {
  JNIEnv *jenv = jenv_;
  if (!rules) return smd_java_throw_npe(jenv, "rules is null"), (smd_error *)NULL;
  size_t n = (size_t)(*jenv)->GetArrayLength(jenv, rules);
  smd_rule **rs = (smd_rule **)calloc(n ? n : 1, sizeof *rs);
  if (!rs) return smd_java_throw_iae(jenv, "out of memory"), (smd_error *)NULL;
  for (size_t i = 0; i < n; ++i) {
    jlong p;
    (*jenv)->GetLongArrayRegion(jenv, rules, (jsize)i, 1, &p);
    rs[i] = (smd_rule *)(intptr_t)p;
  }
  smd_error *err = smd_rule_invoke_many(rs, n, start_step, end_step, raise_eval_cond, options);
  free(rs);
  return err;
}

/* The context's trial (borrowed from the rule). */
static smd_trial *smd_java_rule_context_trial(const smd_rule_context *ctx, size_t index) {
  return smd_rule_context_trial(ctx, index);
}
static int smd_java_rule_context_fail_with(smd_rule_context *ctx, int code, const char *message) {
  return smd_rule_context_fail_with(ctx, (smd_code)code, message);
}
static const smd_rule_finding *smd_java_rule_finding_at(const smd_rule *rule, size_t i) {
  return smd_rule_findings_at(rule, i);
}

/* TensorBoard histogram of a primitive array or a direct buffer. */
static smd_error *smd_java_tb_histogram_array(JNIEnv *jenv_, smd_tensorboard_writer *w, int64_t step, int mode,
                                              double wall_time, const char *tag, int dtype, jarray array,
                                              int elem_size, bool *written_out) {
  JNIEnv *jenv = jenv_;
  if (!array) return smd_java_throw_npe(jenv, "histogram data is null"), (smd_error *)NULL;
  jsize n = (*jenv)->GetArrayLength(jenv, array);
  size_t nbytes = (size_t)n * (size_t)elem_size;
  /* A copy: the call may open or write files (on S3, requests), which must not happen inside a
   * critical region (it holds off the garbage collector of every thread). */
  void *copy = malloc(nbytes ? nbytes : 1);
  if (!copy) return smd_java_throw_oom(jenv, "histogram data copy"), (smd_error *)NULL;
  void *p = (*jenv)->GetPrimitiveArrayCritical(jenv, array, NULL);
  if (!p) {
    free(copy);
    return NULL;
  }
  memcpy(copy, p, nbytes);
  (*jenv)->ReleasePrimitiveArrayCritical(jenv, array, p, JNI_ABORT);
  smd_error *err = smd_tensorboard_writer_add_histogram(w, step, (smd_mode)mode, wall_time, tag, (smd_dtype)dtype,
                                                        copy, nbytes, written_out);
  free(copy);
  return err;
}
%}

