// Copies large tensors into the hook's buffers without dragging the destination through the
// caches: the training thread never reads it again, and the writer reads it once, later.
#pragma once

#include <cstddef>

namespace smd {

// memcpy semantics (no overlap). Uses non-temporal stores for large copies when the CPU has AVX2.
void CopyForHandOff(void* dst, const void* src, size_t n);

}  // namespace smd
