// Memory mapped from the system for large buffers, given back to it whole when unmapped: malloc
// keeps large freed blocks in its heaps once its mapping threshold has grown (it grows with the
// blocks freed), so buffers that come and go by the megabyte stay resident there.
#pragma once

#include <sys/mman.h>

#include <cstddef>

namespace smd {

// `bytes` of zeroed memory (only the pages written take memory), or nullptr.
inline char* MapPages(size_t bytes) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : static_cast<char*>(p);
}

// Gives back what MapPages(bytes) returned; nullptr does nothing.
inline void UnmapPages(char* p, size_t bytes) {
  if (p != nullptr) ::munmap(p, bytes);
}

}  // namespace smd
