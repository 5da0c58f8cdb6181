#include "impl/core/text.h"

#include "impl/core/json_scan.h"

#include <locale.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace smd {
namespace {

// Decodes one UTF-8 sequence at s[i]; returns its length and the code point, or 0 if invalid.
size_t DecodeUtf8(std::string_view s, size_t i, uint32_t* cp) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  size_t n;
  uint32_t v;
  uint32_t min;
  if ((c & 0xe0) == 0xc0) { n = 2; v = c & 0x1f; min = 0x80; }
  else if ((c & 0xf0) == 0xe0) { n = 3; v = c & 0x0f; min = 0x800; }
  else if ((c & 0xf8) == 0xf0) { n = 4; v = c & 0x07; min = 0x10000; }
  else return 0;
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    const unsigned char d = static_cast<unsigned char>(s[i + k]);
    if ((d & 0xc0) != 0x80) return 0;
    v = (v << 6) | (d & 0x3f);
  }
  if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
  *cp = v;
  return n;
}

void AppendU4(std::string* out, uint32_t u) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(u & 0xffff));
  out->append(buf);
}

bool AppendCommonEscape(std::string* out, unsigned char c) {
  switch (c) {
    case '"': out->append("\\\""); return true;
    case '\\': out->append("\\\\"); return true;
    case '\n': out->append("\\n"); return true;
    case '\r': out->append("\\r"); return true;
    case '\t': out->append("\\t"); return true;
    case '\b': out->append("\\b"); return true;
    case '\f': out->append("\\f"); return true;
    default: return false;
  }
}

}  // namespace

bool IsValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    uint32_t cp;
    size_t n = DecodeUtf8(s, i, &cp);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string EscapeControl(std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  auto plain = [](unsigned char c) { return c >= 0x20 && c < 0x7f; };
  size_t i = 0;
  while (i < s.size() && plain(static_cast<unsigned char>(s[i]))) ++i;
  if (i == s.size()) return std::string(s);
  std::string out(s.substr(0, i));
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (plain(c)) {
      out.push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    if (c >= 0x80) {
      uint32_t cp;
      const size_t n = DecodeUtf8(s, i, &cp);
      if (n != 0 && cp > 0x9f) {
        out.append(s.data() + i, n);
        i += n;
        continue;
      }
      if (n != 0) {  // a C1 control character
        out += "\\u00";
        out.push_back(kHex[cp >> 4]);
        out.push_back(kHex[cp & 15]);
        i += n;
        continue;
      }
    }
    out += "\\x";
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
    ++i;
  }
  return out;
}

void AppendJsonStringAscii(std::string* out, std::string_view s) {
  // Fast path: nothing to escape.
  bool plain = true;
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
      plain = false;
      break;
    }
  }
  if (plain) {
    out->push_back('"');
    out->append(s.data(), s.size());
    out->push_back('"');
    return;
  }
  out->push_back('"');
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      out->push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    if (c < 0x80) {
      if (!AppendCommonEscape(out, c)) AppendU4(out, c);
      ++i;
      continue;
    }
    uint32_t cp;
    size_t n = DecodeUtf8(s, i, &cp);
    if (n == 0) {  // not UTF-8: escape the byte as its Latin-1 code point
      AppendU4(out, c);
      ++i;
      continue;
    }
    if (cp >= 0x10000) {
      uint32_t v = cp - 0x10000;
      AppendU4(out, 0xd800 + (v >> 10));
      AppendU4(out, 0xdc00 + (v & 0x3ff));
    } else {
      AppendU4(out, cp);
    }
    i += n;
  }
  out->push_back('"');
}

void AppendJsonStringUtf8(std::string* out, std::string_view s) {
  out->push_back('"');
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == '"' || c == '\\') {
      if (!AppendCommonEscape(out, c)) AppendU4(out, c);
    } else {
      out->push_back(ch);
    }
  }
  out->push_back('"');
}

std::string PythonFloatRepr(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  if (x == 0) return std::signbit(x) ? "-0.0" : "0.0";
  // Shortest round-trip digits in scientific form: d.ddde±X.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  bool neg = sci[0] == '-';
  if (neg) sci.erase(0, 1);
  size_t epos = sci.find('e');
  std::string mant = sci.substr(0, epos);
  int exp10 = std::atoi(sci.c_str() + epos + 1);
  std::string digits;
  for (char c : mant) {
    if (c != '.') digits.push_back(c);
  }
  std::string out = neg ? "-" : "";
  if (exp10 >= -4 && exp10 < 16) {
    if (exp10 < 0) {
      out += "0.";
      out.append(static_cast<size_t>(-exp10 - 1), '0');
      out += digits;
    } else {
      size_t int_len = static_cast<size_t>(exp10) + 1;
      if (digits.size() <= int_len) {
        out += digits;
        out.append(int_len - digits.size(), '0');
        out += ".0";
      } else {
        out += digits.substr(0, int_len);
        out += ".";
        out += digits.substr(int_len);
      }
    }
  } else {
    out += digits.substr(0, 1);
    if (digits.size() > 1) {
      out += ".";
      out += digits.substr(1);
    }
    char e[16];
    std::snprintf(e, sizeof e, "e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
    out += e;
  }
  return out;
}

std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = AsciiLower(c);
  return out;
}

std::string_view StripAscii(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && IsAsciiSpace(s[b])) ++b;
  while (e > b && IsAsciiSpace(s[e - 1])) --e;
  return s.substr(b, e - b);
}

std::optional<int64_t> ParseInt64(std::string_view s) {
  s = StripAscii(s);
  if (!s.empty() && s[0] == '+') {
    s.remove_prefix(1);
    if (!s.empty() && s[0] == '-') return std::nullopt;
  }
  if (s.empty()) return std::nullopt;
  int64_t v = 0;
  auto res = std::from_chars(s.data(), s.data() + s.size(), v);
  if (res.ec != std::errc() || res.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> ParseDouble(std::string_view s) {
  s = StripAscii(s);
  if (s.empty()) return std::nullopt;
  std::string tmp(s);
  char* end = nullptr;
  // strtod_l in the "C" locale: strtod reads the decimal point of the host program's LC_NUMERIC
  // (in de_DE, "0.5" would stop at the '.').
  static const locale_t c_locale = ::newlocale(LC_ALL_MASK, "C", static_cast<locale_t>(0));
  double v = c_locale != static_cast<locale_t>(0) ? ::strtod_l(tmp.c_str(), &end, c_locale)
                                                 : std::strtod(tmp.c_str(), &end);
  if (end != tmp.c_str() + tmp.size()) return std::nullopt;
  // strtod also accepts hex floats; Python float() does not.
  if (tmp.find_first_of("xX") != std::string::npos) return std::nullopt;
  return v;
}

std::vector<std::string> SplitAndStrip(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) pos = s.size();
    std::string_view piece = StripAscii(s.substr(start, pos - start));
    if (!piece.empty()) out.emplace_back(piece);
    start = pos + 1;
  }
  return out;
}

std::string ZeroPad(int64_t v, int width) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%0*lld", width, static_cast<long long>(v));
  return buf;
}

bool JsonHasNulEscape(std::string_view json) {
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
    if (!in_string) {
      in_string = c == '"';
    } else if (c == '"') {
      in_string = false;
    } else if (c == '\\') {
      if (json.substr(i + 1, 5) == "u0000") return true;
      ++i;  // the escaped character (a quote or backslash does not end or start anything)
    }
  }
  return false;
}

}  // namespace smd
