#include "impl/format/index_parser.h"

#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace smd::trial {
namespace {

constexpr int kMaxDepth = 64;  // nesting allowed inside values we skip

// Appends code point cp as UTF-8.
void AppendUtf8(std::string* out, uint32_t cp) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xc0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xe0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else {
    out->push_back(static_cast<char>(0xf0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  }
}

int HexVal(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Length of a valid UTF-8 sequence starting at p (p < end, *p >= 0x80), or 0 if invalid.
size_t Utf8SeqLen(const unsigned char* p, const unsigned char* end) {
  const unsigned char c = p[0];
  size_t n;
  uint32_t v, min;
  if ((c & 0xe0) == 0xc0) { n = 2; v = c & 0x1f; min = 0x80; }
  else if ((c & 0xf0) == 0xe0) { n = 3; v = c & 0x0f; min = 0x800; }
  else if ((c & 0xf8) == 0xf0) { n = 4; v = c & 0x07; min = 0x10000; }
  else return 0;
  if (static_cast<size_t>(end - p) < n) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((p[k] & 0xc0) != 0x80) return 0;
    v = (v << 6) | (p[k] & 0x3f);
  }
  if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
  return n;
}

class Parser {
 public:
  Parser(std::string_view text, ParsedIndex* out, bool fast_path)
      : begin_(text.data()), p_(text.data()), end_(text.data() + text.size()), out_(out),
        fast_path_(fast_path) {}

  Status Run() {
    Ws();
    if (!ParseTop()) return status_;
    Ws();
    if (p_ != end_) return Error("unexpected data after the JSON object");
    if (!seen_meta_) return Corrupt("meta section is not present");
    if (!seen_tensor_payload_ && !seen_shape_payload_) {
      return Corrupt("neither tensor_payload nor shape_payload sections are present");
    }
    if (!out_->tensors.empty() && !out_->has_event_file_name) {
      return Corrupt("meta section has no event_file_name but tensor_payload is not empty");
    }
    return Status::Ok();
  }

 private:
  // ---- error reporting -------------------------------------------------------------------
  bool Fail(const std::string& what) {
    if (status_.ok()) status_ = Error(what);
    return false;
  }
  Status Error(const std::string& what) const {
    return Corrupt("invalid index JSON at byte " + std::to_string(p_ - begin_) + ": " + what);
  }

  // ---- lexical helpers ---------------------------------------------------------------------
  void Ws() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }
  bool Consume(char c) {
    Ws();
    if (p_ < end_ && *p_ == c) {
      ++p_;
      return true;
    }
    return false;
  }
  bool Expect(char c) {
    if (Consume(c)) return true;
    std::string what = "expected '";
    what += c;
    what += p_ < end_ ? "'" : "' but the file ends";
    return Fail(what);
  }

  // The first byte at or after p that is not plain printable ASCII other than '"' and '\\'
  // (a quote, a backslash, a control character or a byte >= 0x80), or end.
  static const char* ScanPlain(const char* p, const char* end) {
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    const __m128i space = _mm_set1_epi8(0x20);
    while (end - p >= 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      // Signed compare: bytes >= 0x80 are negative, so "< 0x20" also flags non-ASCII.
      const __m128i special =
          _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                       _mm_cmplt_epi8(v, space));
      const int mask = _mm_movemask_epi8(special);
      if (mask != 0) return p + __builtin_ctz(static_cast<unsigned>(mask));
      p += 16;
    }
#endif
    while (p < end) {
      const unsigned char c = static_cast<unsigned char>(*p);
      if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) return p;
      ++p;
    }
    return p;
  }

  // Up to 18 decimal digits without a leading zero at p (fits int64 without overflow checks);
  // false (p unchanged) for anything else, which the general parser then judges.
  static bool FastDigits(const char** pp, const char* end, uint64_t* out) {
    const char* p = *pp;
    const char* start = p;
    uint64_t v = 0;
    while (p < end && *p >= '0' && *p <= '9' && p - start < 18) v = v * 10 + static_cast<uint64_t>(*p++ - '0');
    const size_t n = static_cast<size_t>(p - start);
    if (n == 0 || (n > 1 && *start == '0') || (p < end && *p >= '0' && *p <= '9')) return false;
    *pp = p;
    *out = v;
    return true;
  }

  // One tensor_payload entry exactly as smdebug writes it, with an ASCII name:
  // {"tensorname": "<name>", "start_idx": <n>, "length": <n>}. Anything else returns false with
  // nothing consumed, and the general parser takes over.
  bool FastTensorEntry() {
    static constexpr char kName[] = "{\"tensorname\": \"";
    static constexpr char kStart[] = ", \"start_idx\": ";
    static constexpr char kLength[] = ", \"length\": ";
    Ws();
    const char* p = p_;
    auto lit = [&](const char* s, size_t n) {
      if (static_cast<size_t>(end_ - p) < n || std::memcmp(p, s, n) != 0) return false;
      p += n;
      return true;
    };
    IndexTensorRef t;
    if (!lit(kName, sizeof kName - 1)) return false;
    const char* name = p;
    p = ScanPlain(p, end_);
    if (p >= end_ || *p != '"') return false;
    t.name = std::string_view(name, static_cast<size_t>(p - name));
    ++p;
    if (!lit(kStart, sizeof kStart - 1) || !FastDigits(&p, end_, &t.start)) return false;
    if (!lit(kLength, sizeof kLength - 1) || !FastDigits(&p, end_, &t.length)) return false;
    if (p >= end_ || *p != '}') return false;
    p_ = p + 1;
    out_->tensors.push_back(t);
    return true;
  }

  // A JSON string: the view points into the text when it has no escapes, else into a decoded
  // copy kept in out_->unescaped. Rejects control characters, invalid UTF-8, lone surrogates
  // and NUL (names become C strings).
  bool String(std::string_view* out) {
    Ws();
    if (p_ >= end_ || *p_ != '"') return Fail("expected a string");
    ++p_;
    const char* start = p_;
    // Fast path: skip plain ASCII; bail out to the slow path at the first escape.
    p_ = ScanPlain(p_, end_);
    while (p_ < end_) {
      const unsigned char c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        *out = std::string_view(start, static_cast<size_t>(p_ - start));
        ++p_;
        return true;
      }
      if (c == '\\') return StringSlow(start, out);
      if (c < 0x20) return Fail("control character in a string");
      if (c < 0x80) {
        ++p_;
        continue;
      }
      size_t n = Utf8SeqLen(reinterpret_cast<const unsigned char*>(p_),
                            reinterpret_cast<const unsigned char*>(end_));
      if (n == 0) return Fail("invalid UTF-8 in a string");
      p_ += n;
    }
    return Fail("unterminated string");
  }

  bool StringSlow(const char* start, std::string_view* out) {
    std::string s(start, static_cast<size_t>(p_ - start));
    while (p_ < end_) {
      const unsigned char c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        ++p_;
        out_->unescaped.push_back(std::make_unique<std::string>(std::move(s)));
        *out = *out_->unescaped.back();
        return true;
      }
      if (c < 0x20) return Fail("control character in a string");
      if (c >= 0x80) {
        size_t n = Utf8SeqLen(reinterpret_cast<const unsigned char*>(p_),
                              reinterpret_cast<const unsigned char*>(end_));
        if (n == 0) return Fail("invalid UTF-8 in a string");
        s.append(p_, n);
        p_ += n;
        continue;
      }
      if (c != '\\') {
        s.push_back(static_cast<char>(c));
        ++p_;
        continue;
      }
      if (end_ - p_ < 2) return Fail("unterminated escape");
      const char e = p_[1];
      p_ += 2;
      switch (e) {
        case '"': s.push_back('"'); break;
        case '\\': s.push_back('\\'); break;
        case '/': s.push_back('/'); break;
        case 'b': s.push_back('\b'); break;
        case 'f': s.push_back('\f'); break;
        case 'n': s.push_back('\n'); break;
        case 'r': s.push_back('\r'); break;
        case 't': s.push_back('\t'); break;
        case 'u': {
          uint32_t cp;
          if (!Hex4(&cp)) return false;
          if (cp >= 0xd800 && cp <= 0xdbff) {
            uint32_t lo;
            if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') return Fail("lone UTF-16 surrogate");
            p_ += 2;
            if (!Hex4(&lo)) return false;
            if (lo < 0xdc00 || lo > 0xdfff) return Fail("lone UTF-16 surrogate");
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
          } else if (cp >= 0xdc00 && cp <= 0xdfff) {
            return Fail("lone UTF-16 surrogate");
          }
          if (cp == 0) return Fail("NUL character in a string");
          AppendUtf8(&s, cp);
          break;
        }
        default: return Fail("invalid escape in a string");
      }
    }
    return Fail("unterminated string");
  }

  bool Hex4(uint32_t* cp) {
    if (end_ - p_ < 4) return Fail("truncated \\u escape");
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      int h = HexVal(p_[i]);
      if (h < 0) return Fail("invalid \\u escape");
      v = (v << 4) | static_cast<uint32_t>(h);
    }
    p_ += 4;
    *cp = v;
    return true;
  }

  // A JSON integer (no fraction, no exponent) that fits int64.
  bool Int(int64_t* out) {
    Ws();
    const char* s = p_;
    bool neg = false;
    if (p_ < end_ && *p_ == '-') {
      neg = true;
      ++p_;
    }
    if (p_ >= end_ || *p_ < '0' || *p_ > '9') return Fail("expected an integer");
    if (*p_ == '0' && p_ + 1 < end_ && p_[1] >= '0' && p_[1] <= '9') {
      return Fail("leading zeros in a number");
    }
    uint64_t v = 0;
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9') {
      uint64_t d = static_cast<uint64_t>(*p_ - '0');
      if (v > (UINT64_C(9223372036854775808) - d) / 10) return Fail("integer out of range");
      v = v * 10 + d;
      ++p_;
    }
    if (p_ < end_ && (*p_ == '.' || *p_ == 'e' || *p_ == 'E')) {
      p_ = s;
      return Fail("expected an integer, found a fraction or exponent");
    }
    if (!neg && v > static_cast<uint64_t>(INT64_MAX)) return Fail("integer out of range");
    *out = neg ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
    return true;
  }

  bool NonNegative(uint64_t* out, const char* what) {
    int64_t v;
    if (!Int(&v)) return false;
    if (v < 0) return Fail(std::string(what) + " is negative");
    *out = static_cast<uint64_t>(v);
    return true;
  }

  bool Literal(const char* word) {
    size_t n = std::strlen(word);
    if (static_cast<size_t>(end_ - p_) < n || std::memcmp(p_, word, n) != 0) {
      return Fail("invalid JSON value");
    }
    p_ += n;
    return true;
  }

  bool SkipNumber() {
    if (p_ < end_ && *p_ == '-') ++p_;
    if (p_ < end_ && *p_ == 'I') return Literal("Infinity");
    const char* digits = p_;
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
    if (p_ == digits) return Fail("invalid number");
    if (p_ < end_ && *p_ == '.') {
      ++p_;
      const char* frac = p_;
      while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
      if (p_ == frac) return Fail("invalid number");
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      const char* exp = p_;
      while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
      if (p_ == exp) return Fail("invalid number");
    }
    return true;
  }

  // Skips any JSON value (Python's json also accepts NaN, Infinity and -Infinity).
  bool SkipValue(int depth) {
    if (depth > kMaxDepth) return Fail("JSON nested too deeply");
    Ws();
    if (p_ >= end_) return Fail("expected a value but the file ends");
    switch (*p_) {
      case '"': {
        std::string_view s;
        return String(&s);
      }
      case '{':
        return Object([&](std::string_view) { return SkipValue(depth + 1); });
      case '[':
        return Array([&] { return SkipValue(depth + 1); });
      case 't': return Literal("true");
      case 'f': return Literal("false");
      case 'n': return Literal("null");
      case 'N': return Literal("NaN");
      default: return SkipNumber();
    }
  }

  // Iterates an object's members; on_member(key) must parse the value.
  template <typename F>
  bool Object(F on_member) {
    if (!Expect('{')) return false;
    if (Consume('}')) return true;
    for (;;) {
      std::string_view key;
      if (!String(&key)) return false;
      if (!Expect(':')) return false;
      if (!on_member(key)) return false;
      if (Consume(',')) continue;
      return Expect('}');
    }
  }

  template <typename F>
  bool Array(F on_element) {
    if (!Expect('[')) return false;
    if (Consume(']')) return true;
    for (;;) {
      if (!on_element()) return false;
      if (Consume(',')) continue;
      return Expect(']');
    }
  }

  // ---- schema ------------------------------------------------------------------------------
  bool ParseTop() {
    return Object([&](std::string_view key) {
      if (key == "meta") return ParseMeta();
      if (key == "tensor_payload") {
        seen_tensor_payload_ = true;
        out_->tensors.clear();
        out_->tensors.reserve(static_cast<size_t>(end_ - p_) / 64 + 1);  // ~70 bytes per entry
        return Array([&] { return (fast_path_ && FastTensorEntry()) || ParseTensorEntry(); });
      }
      if (key == "shape_payload") {
        seen_shape_payload_ = true;
        out_->shapes.clear();
        out_->dims.clear();
        return Array([&] { return ParseShapeEntry(); });
      }
      return SkipValue(1);
    });
  }

  bool ParseMeta() {
    seen_meta_ = true;
    out_->has_event_file_name = false;
    bool has_mode = false, has_mode_step = false;
    size_t members = 0;
    Ws();
    if (p_ < end_ && *p_ != '{') return Fail("meta section is not an object");
    bool ok = Object([&](std::string_view key) {
      ++members;
      if (key == "mode") {
        std::string_view m;
        if (!String(&m)) return false;
        // smdebug strips whitespace, then looks the upper-case enum name up.
        while (!m.empty() && (m.front() == ' ' || m.front() == '\t' || m.front() == '\n' ||
                              m.front() == '\r'))
          m.remove_prefix(1);
        while (!m.empty() && (m.back() == ' ' || m.back() == '\t' || m.back() == '\n' ||
                              m.back() == '\r'))
          m.remove_suffix(1);
        if (m == "TRAIN") out_->mode = Mode::kTrain;
        else if (m == "EVAL") out_->mode = Mode::kEval;
        else if (m == "PREDICT") out_->mode = Mode::kPredict;
        else if (m == "GLOBAL") out_->mode = Mode::kGlobal;
        else return Fail("unknown mode '" + std::string(m) + "' in meta");
        has_mode = true;
        return true;
      }
      if (key == "mode_step") {
        if (!Int(&out_->mode_step)) return false;
        has_mode_step = true;
        return true;
      }
      if (key == "event_file_name") {
        Ws();
        if (p_ < end_ && *p_ == 'n') {  // null: treated as absent
          if (!Literal("null")) return false;
          out_->has_event_file_name = false;
          return true;
        }
        if (!String(&out_->event_file_name)) return false;
        out_->has_event_file_name = true;
        return true;
      }
      return SkipValue(1);
    });
    if (!ok) return false;
    if (members == 0) return Fail("meta section is empty");
    if (!has_mode) return Fail("meta section has no mode");
    if (!has_mode_step) return Fail("meta section has no mode_step");
    return true;
  }

  bool ParseTensorEntry() {
    IndexTensorRef t;
    bool has_name = false, has_start = false, has_length = false;
    bool ok = Object([&](std::string_view key) {
      if (key == "tensorname") return has_name = String(&t.name);
      if (key == "start_idx") return has_start = NonNegative(&t.start, "start_idx");
      if (key == "length") return has_length = NonNegative(&t.length, "length");
      return SkipValue(1);
    });
    if (!ok) return false;
    if (!has_name) return Fail("tensor_payload entry without tensorname");
    if (!has_start) return Fail("tensor_payload entry without start_idx");
    if (!has_length) return Fail("tensor_payload entry without length");
    out_->tensors.push_back(t);
    return true;
  }

  bool ParseShapeEntry() {
    IndexShapeRef s;
    bool has_name = false, has_original = false, has_shape = false;
    bool ok = Object([&](std::string_view key) {
      if (key == "tensorname") return has_name = String(&s.name);
      if (key == "originalname") {
        Ws();
        if (p_ < end_ && *p_ == 'n') {
          has_original = false;
          return Literal("null");
        }
        return has_original = String(&s.original_name);
      }
      if (key == "shape") {
        // A repeated key replaces the earlier shape; its dims stay unused in `dims`.
        s.dims_begin = static_cast<uint32_t>(out_->dims.size());
        s.ndim = 0;
        has_shape = true;
        return Array([&] {
          int64_t d;
          if (!Int(&d)) return false;
          if (d < 0) return Fail("negative dimension in a shape");
          // As for a record's shape (R13): no tensor has more.
          if (s.ndim == 255) return Fail("a shape of more than 255 dimensions");
          out_->dims.push_back(d);
          ++s.ndim;
          return true;
        });
      }
      return SkipValue(1);
    });
    if (!ok) return false;
    if (!has_name) return Fail("shape_payload entry without tensorname");
    if (!has_shape) return Fail("shape_payload entry without shape");
    if (!has_original) s.original_name = s.name;
    out_->shapes.push_back(s);
    return true;
  }

  const char* begin_;
  const char* p_;
  const char* end_;
  ParsedIndex* out_;
  const bool fast_path_;
  Status status_;
  bool seen_meta_ = false, seen_tensor_payload_ = false, seen_shape_payload_ = false;
};

}  // namespace

void ParsedIndex::Clear() {
  mode = Mode::kGlobal;
  mode_step = 0;
  has_event_file_name = false;
  event_file_name = std::string_view();
  tensors.clear();
  shapes.clear();
  dims.clear();
  unescaped.clear();
}

Status ParseIndexFile(std::string_view text, ParsedIndex* out, bool fast_path) {
  out->Clear();
  Parser p(text, out, fast_path);
  return p.Run();
}

}  // namespace smd::trial
