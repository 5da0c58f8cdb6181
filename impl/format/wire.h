// Minimal protobuf wire-format helpers (proto3, what the event files need).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace smd::io::wire {

enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

inline size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}
inline void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}
inline void PutTag(std::string* out, uint32_t field, WireType wt) { PutVarint(out, (field << 3) | wt); }
inline size_t TagSize(uint32_t field) { return VarintSize(field << 3); }
inline size_t LengthDelimitedSize(uint32_t field, size_t len) {
  return TagSize(field) + VarintSize(len) + len;
}
inline void PutLengthDelimited(std::string* out, uint32_t field, std::string_view bytes) {
  PutTag(out, field, kLengthDelimited);
  PutVarint(out, bytes.size());
  out->append(bytes.data(), bytes.size());
}
inline void PutFixed64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}
inline void PutDouble(std::string* out, double d) {
  uint64_t v;
  std::memcpy(&v, &d, 8);
  PutFixed64(out, v);
}

// Writes into memory the caller sized exactly (see the *Size functions above).
struct Cursor {
  char* p;
  void Byte(uint8_t b) { *p++ = static_cast<char>(b); }
  void Varint(uint64_t v) {
    while (v >= 0x80) {
      *p++ = static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    *p++ = static_cast<char>(v);
  }
  void Tag(uint32_t field, WireType wt) { Varint((field << 3) | wt); }
  void Bytes(const void* data, size_t n) {
    if (n) std::memcpy(p, data, n);
    p += n;
  }
  void LengthDelimited(uint32_t field, std::string_view b) {
    Tag(field, kLengthDelimited);
    Varint(b.size());
    Bytes(b.data(), b.size());
  }
  void Fixed64(uint64_t v) {
    for (int i = 0; i < 8; ++i) *p++ = static_cast<char>(v >> (8 * i));
  }
};

// A bounds-checked reader over one message's bytes.
class Reader {
 public:
  explicit Reader(std::string_view data) : p_(data.data()), end_(data.data() + data.size()) {}
  bool done() const { return p_ >= end_; }
  bool ReadVarint(uint64_t* v) {
    uint64_t result = 0;
    for (int shift = 0; shift < 64 && p_ < end_; shift += 7) {
      uint8_t b = static_cast<uint8_t>(*p_++);
      result |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        *v = result;
        return true;
      }
    }
    return false;
  }
  // Reads a field key; false at malformed input.
  bool ReadTag(uint32_t* field, WireType* wt) {
    uint64_t key;
    if (!ReadVarint(&key)) return false;
    *field = static_cast<uint32_t>(key >> 3);
    *wt = static_cast<WireType>(key & 7);
    return *field != 0 && key <= 0xffffffffu;
  }
  bool ReadFixed64(uint64_t* v) {
    if (end_ - p_ < 8) return false;
    std::memcpy(v, p_, 8);
    p_ += 8;
    return true;
  }
  bool ReadFixed32(uint32_t* v) {
    if (end_ - p_ < 4) return false;
    std::memcpy(v, p_, 4);
    p_ += 4;
    return true;
  }
  bool ReadBytes(std::string_view* out) {
    uint64_t len;
    if (!ReadVarint(&len)) return false;
    if (len > static_cast<uint64_t>(end_ - p_)) return false;
    *out = std::string_view(p_, static_cast<size_t>(len));
    p_ += len;
    return true;
  }
  bool Skip(WireType wt) {
    uint64_t u64;
    uint32_t u32;
    std::string_view sv;
    switch (wt) {
      case kVarint: return ReadVarint(&u64);
      case kFixed64: return ReadFixed64(&u64);
      case kLengthDelimited: return ReadBytes(&sv);
      case kFixed32: return ReadFixed32(&u32);
      default: return false;  // groups and invalid types
    }
  }

 private:
  const char* p_;
  const char* end_;
};

}  // namespace smd::io::wire
