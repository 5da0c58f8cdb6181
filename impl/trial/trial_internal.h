// What the parts of the Trial implementation (trial*.cc, index_tables.cc) share: tuning constants
// and small helpers. Not for use outside impl/trial.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "impl/core/text.h"
#include "impl/core/environment.h"
#include "impl/format/index_parser.h"
#include "impl/trial/trial.h"

namespace smd::trial {

constexpr std::string_view kReductionPrefix = "smdebug/reductions/";
constexpr size_t kApplyChunk = 64;             // index files applied under one lock
constexpr size_t kParseAhead = 256;            // index files read ahead of parsing and applying
static_assert(kParseAhead >= kApplyChunk, "a chunk's files are read into distinct slots");
constexpr size_t kParallelMinFiles = 48;       // fewer: read on the calling thread
constexpr size_t kParallelMinValues = 32;      // values() reads fewer on the calling thread
constexpr size_t kParallelBlock = 16;          // values() a thread reads at a time
constexpr uint64_t kSmallEventFile = 256 << 10;  // event files read (and cached) whole
constexpr uint64_t kScratchRecordMax = 64 << 10;  // records read into a per-thread buffer
constexpr size_t kRecordHeadBytes = 4096;      // read to learn a large record's dtype and shape
constexpr uint64_t kWholeRecordInfoMax = 64 << 10;  // smaller records are decoded whole for that
constexpr int kWaitSliceMs = 100;              // longest sleep between checks while waiting
constexpr int kTrustedRelistEvery = 10;        // with events: list anyway every N slices

using Clock = std::chrono::steady_clock;

// A reduction record's tag: "smdebug/reductions/[abs_]<reduction>/<tensor>". Only a tag that
// starts with the prefix is one (smdebug also misreads names that merely contain it).
inline bool ParseReductionTag(std::string_view tag, std::string_view* base, std::string_view* red,
                       bool* abs) {
  if (tag.size() <= kReductionPrefix.size() ||
      tag.compare(0, kReductionPrefix.size(), kReductionPrefix) != 0) {
    return false;
  }
  std::string_view rest = tag.substr(kReductionPrefix.size());
  size_t slash = rest.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == rest.size()) return false;
  std::string_view part = rest.substr(0, slash);
  *base = rest.substr(slash + 1);
  if (part.size() > 4 && part.compare(0, 4, "abs_") == 0) {
    *abs = true;
    *red = part.substr(4);
  } else {
    *abs = false;
    *red = part;
  }
  return true;
}

inline std::string ReductionTagOf(std::string_view red, bool abs, std::string_view base) {
  std::string t(kReductionPrefix);
  if (abs) t += "abs_";
  t.append(red.data(), red.size());
  t += '/';
  t.append(base.data(), base.size());
  return t;
}

// smdebug's TF device (de)serialization of worker names in file names.
inline std::string DeserializeWorker(std::string w) {
  for (char& c : w) {
    if (c == '_') c = '/';
    else if (c == '-') c = ':';
  }
  return w;
}
inline std::string SerializeWorker(std::string w) {
  for (char& c : w) {
    if (c == '/') c = '_';
    else if (c == ':') c = '-';
  }
  return w;
}

inline bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

inline std::string_view BaseName(std::string_view p) {
  size_t slash = p.rfind('/');
  return slash == std::string_view::npos ? p : p.substr(slash + 1);
}

// event_file_name must stay inside the trial: relative, no "..", no NUL.
inline bool IsSafeRelativePath(std::string_view p) {
  if (p.empty() || p[0] == '/') return false;
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find('/', start);
    if (end == std::string_view::npos) end = p.size();
    if (p.substr(start, end - start) == "..") return false;
    start = end + 1;
  }
  return p.find('\0') == std::string_view::npos;
}

inline uint64_t HashDims(const int64_t* dims, uint32_t n) {
  uint64_t h = 1469598103934665603ull ^ n;
  for (uint32_t i = 0; i < n; ++i) {
    h ^= static_cast<uint64_t>(dims[i]);
    h *= 1099511628211ull;
    h ^= h >> 31;
  }
  return h;
}

inline int64_t WindowFromEnv() { return env::IncompleteStepWaitWindow().value_or(1000); }

// Sleeps for a short poll slice: 5 ms doubling to kWaitSliceMs, never past the deadline.
inline void ShortPoll(int* slice_ms, std::optional<Clock::time_point> deadline) {
  int ms = *slice_ms;
  if (deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()).count();
    if (left < ms) ms = left > 0 ? static_cast<int>(left) : 0;
  }
  if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  *slice_ms = std::min(*slice_ms * 2, kWaitSliceMs);
}

// Where an index file is read and parsed. A refresh keeps a ring of these (as many as files may
// be parsed ahead) and reuses their buffers: no allocation per file in the steady state, and none
// freed on another thread than the one that allocated it (which made malloc's arena locks the
// bottleneck of opening with helper threads).
struct Trial::ParseSlot {
  std::string text;
  ParsedIndex parsed;  // views into text
};

struct Trial::PendingFile {
  IndexFileName name;
  ParseSlot* slot = nullptr;  // set when it was parsed
  Status status;
  bool gone = false;  // vanished between listing and reading
  bool unread = false;  // the read failed (I/O, S3): to be read again, never skipped
};

}  // namespace smd::trial
