#include "npy.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace smdtool {
namespace {

const char* Descr(smd_dtype dt) {
  switch (dt) {
    case SMD_DTYPE_FLOAT16: return "<f2";
    case SMD_DTYPE_FLOAT32: return "<f4";
    case SMD_DTYPE_BFLOAT16: return "<f4";  // widened
    case SMD_DTYPE_FLOAT64: return "<f8";
    case SMD_DTYPE_INT8: return "|i1";
    case SMD_DTYPE_INT16: return "<i2";
    case SMD_DTYPE_INT32: return "<i4";
    case SMD_DTYPE_INT64: return "<i8";
    case SMD_DTYPE_UINT8: return "|u1";
    case SMD_DTYPE_UINT16: return "<u2";
    case SMD_DTYPE_UINT32: return "<u4";
    case SMD_DTYPE_UINT64: return "<u8";
    case SMD_DTYPE_BOOL: return "|b1";
    case SMD_DTYPE_COMPLEX64: return "<c8";
    case SMD_DTYPE_COMPLEX128: return "<c16";
    default: return nullptr;
  }
}

// UTF-8 to code points; false if not UTF-8.
bool Utf8ToUtf32(const char* s, size_t n, std::vector<uint32_t>* out) {
  const unsigned char* u = reinterpret_cast<const unsigned char*>(s);
  out->clear();
  for (size_t i = 0; i < n;) {
    const unsigned char c = u[i];
    const int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + static_cast<size_t>(len) > n) return false;
    uint32_t cp = len == 1 ? c : c & (0x7fu >> len);
    for (int k = 1; k < len; ++k) {
      if ((u[i + static_cast<size_t>(k)] >> 6) != 2) return false;
      cp = (cp << 6) | (u[i + static_cast<size_t>(k)] & 0x3fu);
    }
    static const uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    out->push_back(cp);
    i += static_cast<size_t>(len);
  }
  return true;
}

void PutLE32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}

}  // namespace

bool WriteNpy(const smd_value* value, const std::string& path, std::string* note,
              std::string* error) {
  const smd_dtype dt = smd_value_dtype(value);
  const size_t ndim = smd_value_ndim(value);
  const int64_t* dims = smd_value_shape(value);
  const size_t count = smd_value_count(value);

  std::string descr;
  std::string body;  // the data, when it is not written straight from the value
  const void* data = smd_value_data(value);
  size_t nbytes = smd_value_nbytes(value);
  if (dt == SMD_DTYPE_STRING) {
    std::vector<std::vector<uint32_t>> cps(count);
    bool utf8 = true;
    size_t max_cp = 1, max_bytes = 1;
    std::vector<std::pair<const char*, size_t>> strs(count);
    for (size_t i = 0; i < count; ++i) {
      const char* s = nullptr;
      size_t len = 0;
      smd_error* e = smd_value_string(value, i, &s, &len);
      if (e != nullptr) {
        *error = std::string("cannot read string ") + std::to_string(i) + ": " + smd_error_message(e);
        smd_error_free(e);
        return false;
      }
      strs[i] = {s, len};
      max_bytes = std::max(max_bytes, len);
      if (utf8 && !Utf8ToUtf32(s, len, &cps[i])) utf8 = false;
      if (utf8) max_cp = std::max(max_cp, cps[i].size());
    }
    if (utf8) {
      descr = "<U" + std::to_string(max_cp);
      body.reserve(count * max_cp * 4);
      for (size_t i = 0; i < count; ++i) {
        for (size_t k = 0; k < max_cp; ++k) PutLE32(&body, k < cps[i].size() ? cps[i][k] : 0);
      }
    } else {
      descr = "|S" + std::to_string(max_bytes);
      body.reserve(count * max_bytes);
      for (size_t i = 0; i < count; ++i) {
        body.append(strs[i].first, strs[i].second);
        body.append(max_bytes - strs[i].second, '\0');
      }
      *note = "a string is not UTF-8: written as bytes (dtype " + descr + ")";
    }
    data = body.data();
    nbytes = body.size();
  } else if (dt == SMD_DTYPE_BFLOAT16) {
    descr = Descr(dt);
    body.resize(count * 4);
    const unsigned char* src = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < count; ++i) {
      const unsigned char b[4] = {0, 0, src[2 * i], src[2 * i + 1]};
      std::memcpy(&body[4 * i], b, 4);
    }
    data = body.data();
    nbytes = body.size();
    *note = "numpy has no bfloat16: written as float32 (every bfloat16 value is exactly a float32)";
  } else {
    const char* d = Descr(dt);
    if (d == nullptr) {
      *error = "values of data type " + std::to_string(static_cast<int>(dt)) + " have no .npy form";
      return false;
    }
    descr = d;
  }

  std::string shape = "(";
  for (size_t i = 0; i < ndim; ++i) {
    if (i) shape += ", ";
    shape += std::to_string(dims[i]);
  }
  if (ndim == 1) shape += ",";
  shape += ")";
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Magic, version, header length; the header padded with spaces and ended by '\n' so that the
  // data starts at a multiple of 64 bytes.
  size_t prefix = 10;
  int major = 1;
  if (header.size() + 1 + 10 > 65535 + 10) {
    prefix = 12;
    major = 2;
  }
  const size_t total = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(total - prefix - header.size() - 1, ' ');
  header += '\n';
  std::string head = "\x93NUMPY";
  head.push_back(static_cast<char>(major));
  head.push_back('\0');
  const size_t hl = header.size();
  head.push_back(static_cast<char>(hl & 0xff));
  head.push_back(static_cast<char>((hl >> 8) & 0xff));
  if (major == 2) {
    head.push_back(static_cast<char>((hl >> 16) & 0xff));
    head.push_back(static_cast<char>((hl >> 24) & 0xff));
  }
  head += header;

  const bool to_stdout = path == "-";
  FILE* f = to_stdout ? stdout : std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    *error = "cannot write '" + path + "': " + std::strerror(errno);
    return false;
  }
  bool ok = std::fwrite(head.data(), 1, head.size(), f) == head.size();
  if (ok && nbytes > 0) ok = std::fwrite(data, 1, nbytes, f) == nbytes;
  const int e1 = errno;
  ok = (to_stdout ? std::fflush(f) == 0 : std::fclose(f) == 0) && ok;
  if (!ok) {
    *error = "cannot write '" + path + "': " + std::strerror(errno ? errno : e1);
    if (!to_stdout) std::remove(path.c_str());
    return false;
  }
  return true;
}

}  // namespace smdtool
