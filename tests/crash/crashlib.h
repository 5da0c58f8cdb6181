/* The values the crash tests write: every element is a function of (seed, step, tensor, index),
 * so that a checker recomputes what a killed writer wrote without any record of its own. The
 * same formula is in crashlib.py. */
#ifndef SMD_TESTS_CRASH_CRASHLIB_H
#define SMD_TESTS_CRASH_CRASHLIB_H

#include <stdint.h>
#include <stdio.h>

#define CRASH_NUM_TENSORS 4

/* Tensor t of a step: "crash/t<t>", float32, shape [rows, cols]. */
static inline void crash_shape(uint32_t seed, int64_t step, int t, int64_t shape[2]) {
  uint32_t s = (uint32_t)step;
  switch (t) {
    case 0: shape[0] = 1; shape[1] = 1; break;                                         /* a scalar-like tensor */
    case 1: shape[0] = 1 + (int64_t)((seed * 7u + s * 13u) % 3000u); shape[1] = 1; break;
    case 2: shape[0] = 1 + (int64_t)((seed * 3u + s * 5u) % 700u); shape[1] = 3; break;
    default: shape[0] = 40000 + (int64_t)((seed + s * 17u) % 1000u); shape[1] = 2; break;  /* > 64 KiB */
  }
}

/* Element i: an integer below 65521 divided by 256, minus 100 (exact in float32). */
static inline float crash_value(uint32_t seed, int64_t step, int t, uint64_t i) {
  uint32_t x = seed * 2654435761u + (uint32_t)step * 40503u + (uint32_t)t * 9973u + (uint32_t)i * 31u;
  return (float)(x % 65521u) / 256.0f - 100.0f;
}

static inline void crash_name(int t, char* out, size_t cap) { snprintf(out, cap, "crash/t%d", t); }

#endif
