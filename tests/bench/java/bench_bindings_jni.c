/* The C side of BenchBindings.java: the same smd calls as the Java binding makes, in C loops, so
 * that the Java figures have a C baseline from the same process. Returns 0 or the smd_code of
 * the first error. */
#include <jni.h>
#include <stdio.h>

#include "smd/smd.h"

static jlong code_of(smd_error *err) {
  jlong c = (jlong)smd_error_code(err);
  smd_error_free(err);
  return c;
}

JNIEXPORT jlong JNICALL Java_ai_smd_BenchBindings_cSaveNotDue(JNIEnv *env, jclass cls, jlong hook, jobject buf, jlong n) {
  (void)cls;
  const int64_t shape[2] = {64, 64};
  const void *data = (*env)->GetDirectBufferAddress(env, buf);
  for (jlong i = 0; i < n; ++i) {
    smd_error *err = smd_hook_save_tensor((smd_hook *)(intptr_t)hook, "layer1/weight", SMD_DTYPE_FLOAT32, shape, 2,
                                          data, 64 * 64 * sizeof(float), NULL, 0);
    if (err) return code_of(err);
  }
  return 0;
}

JNIEXPORT jlong JNICALL Java_ai_smd_BenchBindings_cSaveBig(JNIEnv *env, jclass cls, jlong hook, jobject buf, jint first, jint n) {
  (void)cls;
  const int64_t shape[2] = {1024, 1024};
  const void *data = (*env)->GetDirectBufferAddress(env, buf);
  char name[32];
  for (jint i = first; i < first + n; ++i) {
    snprintf(name, sizeof name, "c%d", (int)i);
    smd_error *err = smd_hook_save_tensor((smd_hook *)(intptr_t)hook, name, SMD_DTYPE_FLOAT32, shape, 2, data,
                                          (size_t)4 << 20, NULL, 0);
    if (err) return code_of(err);
  }
  return 0;
}

JNIEXPORT jlong JNICALL Java_ai_smd_BenchBindings_cRead(JNIEnv *env, jclass cls, jlong tensor, jlong steps, jlong rounds) {
  (void)env;
  (void)cls;
  volatile float sink = 0;
  for (jlong r = 0; r < rounds; ++r) {
    for (jlong s = 0; s < steps; ++s) {
      smd_value *v = NULL;
      smd_error *err = smd_tensor_value((const smd_tensor *)(intptr_t)tensor, s, SMD_MODE_GLOBAL, NULL, &v);
      if (err) return code_of(err);
      sink += *(const float *)smd_value_data(v);
      smd_value_free(v);
    }
  }
  (void)sink;
  return 0;
}
