#include "json.h"

#include <openssl/evp.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace smdtool {

Json Json::Bool(bool b) {
  Json j;
  j.kind_ = Kind::kBool;
  j.b_ = b;
  return j;
}
Json Json::Int(int64_t v) {
  Json j;
  j.kind_ = Kind::kInt;
  j.i_ = v;
  return j;
}
Json Json::Str(std::string s) {
  Json j;
  j.kind_ = Kind::kString;
  j.s_ = std::move(s);
  return j;
}
Json Json::Array() {
  Json j;
  j.kind_ = Kind::kArray;
  return j;
}
Json Json::Object() {
  Json j;
  j.kind_ = Kind::kObject;
  return j;
}

Json& Json::Push(Json v) {
  items_.push_back(std::move(v));
  return items_.back();
}

Json& Json::Set(const std::string& key, Json v) {
  Json& slot = members_[key];
  slot = std::move(v);
  return slot;
}

void AppendJsonString(std::string* out, const std::string& s) {
  out->push_back('"');
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      case '\b': out->append("\\b"); break;
      case '\f': out->append("\\f"); break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out->append(buf);
        } else {
          out->push_back(ch);
        }
    }
  }
  out->push_back('"');
}

namespace {

void Indent(std::string* out, int n) { out->append(static_cast<size_t>(n) * 2, ' '); }

}  // namespace

void Json::Write(std::string* out, int indent) const {
  switch (kind_) {
    case Kind::kNull: out->append("null"); return;
    case Kind::kBool: out->append(b_ ? "true" : "false"); return;
    case Kind::kInt: out->append(std::to_string(i_)); return;
    case Kind::kString: AppendJsonString(out, s_); return;
    case Kind::kArray: {
      if (items_.empty()) {
        out->append("[]");
        return;
      }
      out->append("[\n");
      for (size_t i = 0; i < items_.size(); ++i) {
        Indent(out, indent + 1);
        items_[i].Write(out, indent + 1);
        out->append(i + 1 < items_.size() ? ",\n" : "\n");
      }
      Indent(out, indent);
      out->push_back(']');
      return;
    }
    case Kind::kObject: {
      if (members_.empty()) {
        out->append("{}");
        return;
      }
      out->append("{\n");
      size_t i = 0;
      for (const auto& kv : members_) {
        Indent(out, indent + 1);
        AppendJsonString(out, kv.first);
        out->append(": ");
        kv.second.Write(out, indent + 1);
        out->append(++i < members_.size() ? ",\n" : "\n");
      }
      Indent(out, indent);
      out->push_back('}');
      return;
    }
  }
}

std::string Json::Dump() const {
  std::string out;
  Write(&out, 0);
  out.push_back('\n');
  return out;
}

std::string PythonFloat(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  if (x == 0) return std::signbit(x) ? "-0.0" : "0.0";
  // The shortest digits that read back to x, as d.ddd e X.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  std::string out;
  if (sci[0] == '-') {
    out.push_back('-');
    sci.erase(0, 1);
  }
  const size_t e = sci.find('e');
  const int exp10 = std::atoi(sci.c_str() + e + 1);
  std::string digits;
  for (size_t i = 0; i < e; ++i) {
    if (sci[i] != '.') digits.push_back(sci[i]);
  }
  if (exp10 >= -4 && exp10 < 16) {
    if (exp10 < 0) {
      out += "0.";
      out.append(static_cast<size_t>(-exp10 - 1), '0');
      out += digits;
    } else {
      const size_t int_len = static_cast<size_t>(exp10) + 1;
      if (digits.size() <= int_len) {
        out += digits;
        out.append(int_len - digits.size(), '0');
        out += ".0";
      } else {
        out += digits.substr(0, int_len);
        out.push_back('.');
        out += digits.substr(int_len);
      }
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) {
    out.push_back('.');
    out += digits.substr(1);
  }
  char ex[16];
  std::snprintf(ex, sizeof ex, "e%c%02d", exp10 < 0 ? '-' : '+', std::abs(exp10));
  out += ex;
  return out;
}

std::string Sha256Hex(const void* data, size_t n) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data, n, md, &len, EVP_sha256(), nullptr);
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out.push_back(kHex[md[i] >> 4]);
    out.push_back(kHex[md[i] & 15]);
  }
  return out;
}

namespace {

// The length of the UTF-8 sequence at p (its code point in *cp), or 0 if it is not valid.
size_t Utf8At(const unsigned char* p, const unsigned char* end, uint32_t* cp) {
  const unsigned char c = *p;
  size_t n;
  uint32_t v, min;
  if (c < 0x80) {
    *cp = c;
    return 1;
  } else if ((c & 0xe0) == 0xc0) { n = 2; v = c & 0x1f; min = 0x80; }
  else if ((c & 0xf0) == 0xe0) { n = 3; v = c & 0x0f; min = 0x800; }
  else if ((c & 0xf8) == 0xf0) { n = 4; v = c & 0x07; min = 0x10000; }
  else return 0;
  if (static_cast<size_t>(end - p) < n) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((p[k] & 0xc0) != 0x80) return 0;
    v = (v << 6) | (p[k] & 0x3f);
  }
  if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
  *cp = v;
  return n;
}

}  // namespace

std::string Printable(const std::string& s, bool keep_newlines) {
  static const char kHex[] = "0123456789abcdef";
  const unsigned char* p = reinterpret_cast<const unsigned char*>(s.data());
  const unsigned char* end = p + s.size();
  std::string out;
  out.reserve(s.size());
  while (p < end) {
    uint32_t cp = 0;
    const size_t n = Utf8At(p, end, &cp);
    const bool control = cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f);
    if (n != 0 && (!control || (keep_newlines && cp == '\n'))) {
      out.append(reinterpret_cast<const char*>(p), n);
      p += n;
    } else if (n != 0 && cp >= 0x80) {  // a C1 control character
      out += "\\u00";
      out.push_back(kHex[cp >> 4]);
      out.push_back(kHex[cp & 15]);
      p += n;
    } else {  // a C0 control character, DEL, or a byte that is not UTF-8
      out += "\\x";
      out.push_back(kHex[*p >> 4]);
      out.push_back(kHex[*p & 15]);
      ++p;
    }
  }
  return out;
}

bool IsUtf8(const std::string& s) {
  const unsigned char* p = reinterpret_cast<const unsigned char*>(s.data());
  const unsigned char* end = p + s.size();
  while (p < end) {
    unsigned char c = *p;
    size_t n;
    uint32_t v, min;
    if (c < 0x80) {
      ++p;
      continue;
    } else if ((c & 0xe0) == 0xc0) { n = 2; v = c & 0x1f; min = 0x80; }
    else if ((c & 0xf0) == 0xe0) { n = 3; v = c & 0x0f; min = 0x800; }
    else if ((c & 0xf8) == 0xf0) { n = 4; v = c & 0x07; min = 0x10000; }
    else return false;
    if (static_cast<size_t>(end - p) < n) return false;
    for (size_t k = 1; k < n; ++k) {
      if ((p[k] & 0xc0) != 0x80) return false;
      v = (v << 6) | (p[k] & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return false;
    p += n;
  }
  return true;
}

}  // namespace smdtool
