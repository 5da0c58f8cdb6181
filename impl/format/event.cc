#include "impl/format/event.h"

#include <algorithm>
#include <cstring>

#include "impl/format/crc32c.h"
#include "impl/format/wire.h"
#include "impl/core/text.h"

namespace smd::io {
namespace {

using wire::LengthDelimitedSize;
using wire::PutLengthDelimited;
using wire::PutTag;
using wire::PutVarint;
using wire::VarintSize;

// SummaryMetadata{plugin_data: [{"mode_step", <n>}, {"mode", <m>}]}
std::string EncodeMetadata(Mode mode, int64_t mode_step) {
  std::string ms = std::to_string(mode_step);
  std::string m = std::to_string(static_cast<int>(mode));
  std::string pd1, pd2, md;
  PutLengthDelimited(&pd1, 1, "mode_step");
  PutLengthDelimited(&pd1, 2, ms);
  PutLengthDelimited(&pd2, 1, "mode");
  PutLengthDelimited(&pd2, 2, m);
  PutLengthDelimited(&md, 1, pd1);
  PutLengthDelimited(&md, 1, pd2);
  return md;
}

// TensorShapeProto{dim: [{size, name: "<tag>_<size>"}]}
std::string EncodeShape(std::string_view tag, const int64_t* shape, size_t ndim) {
  std::string out, dim;
  for (size_t i = 0; i < ndim; ++i) {
    dim.clear();
    if (shape[i] != 0) {
      PutTag(&dim, 1, wire::kVarint);
      PutVarint(&dim, static_cast<uint64_t>(shape[i]));
    }
    std::string name(tag);
    name += '_';
    name += std::to_string(shape[i]);
    PutLengthDelimited(&dim, 2, name);
    PutLengthDelimited(&out, 2, dim);
  }
  return out;
}

// Writes Event{wall_time, step, summary{value{tag, tensor{<tensor_head>...}}}} up to the point
// where the tensor message's remaining `tensor_rest_len` bytes begin, then returns. The caller
// appends those bytes and then the metadata field.
void EncodeEventHead(const TensorEventFields& f, size_t tensor_len, size_t md_len,
                     std::string* out) {
  size_t value_len = LengthDelimitedSize(1, f.tag.size()) + LengthDelimitedSize(8, tensor_len) +
                     LengthDelimitedSize(9, md_len);
  size_t summary_len = LengthDelimitedSize(1, value_len);
  if (f.wall_time != 0) {
    PutTag(out, 1, wire::kFixed64);
    wire::PutDouble(out, f.wall_time);
  }
  if (f.step != 0) {
    PutTag(out, 2, wire::kVarint);
    PutVarint(out, static_cast<uint64_t>(f.step));
  }
  PutTag(out, 5, wire::kLengthDelimited);
  PutVarint(out, summary_len);
  PutTag(out, 1, wire::kLengthDelimited);
  PutVarint(out, value_len);
  PutLengthDelimited(out, 1, f.tag);
  PutTag(out, 8, wire::kLengthDelimited);
  PutVarint(out, tensor_len);
}

void FinishRecord(std::string* prefix, std::string_view content, std::string* suffix,
                  PayloadCrcKind crc) {
  size_t payload_len = prefix->size() - kRecordHeaderSize + content.size() + suffix->size();
  unsigned char header[kRecordHeaderSize];
  EncodeRecordHeader(payload_len, header);
  std::memcpy(&(*prefix)[0], header, kRecordHeaderSize);
  uint32_t footer = kSmdebugPayloadCrc;
  if (crc == PayloadCrcKind::kReal) {
    uint32_t c = Crc32c(prefix->data() + kRecordHeaderSize, prefix->size() - kRecordHeaderSize);
    c = Crc32c(content.data(), content.size(), c);
    c = Crc32c(suffix->data(), suffix->size(), c);
    footer = MaskCrc(c);
  }
  unsigned char f[4];
  EncodeFixed32(footer, f);
  suffix->append(reinterpret_cast<const char*>(f), 4);
}

}  // namespace

namespace {

size_t DecimalLength(uint64_t v) {
  size_t n = 1;
  while (v >= 10) {
    v /= 10;
    ++n;
  }
  return n;
}

size_t SignedDecimalLength(int64_t v) {
  return v < 0 ? 1 + DecimalLength(0 - static_cast<uint64_t>(v)) : DecimalLength(static_cast<uint64_t>(v));
}

// Sizes of the nested messages, computed without building them.
struct RecordLayout {
  size_t dim_len[64];
  size_t shape_len = 0;
  size_t pd1_len = 0, pd2_len = 0, md_len = 0;
  size_t tensor_len = 0;
};

void ComputeLayout(const TensorEventFields& f, size_t content_len, RecordLayout* L) {
  L->shape_len = 0;
  for (size_t i = 0; i < f.ndim; ++i) {
    const uint64_t d = static_cast<uint64_t>(f.shape[i]);
    size_t name_len = f.tag.size() + 1 + DecimalLength(d);
    size_t dim = (d != 0 ? 1 + VarintSize(d) : 0) + LengthDelimitedSize(2, name_len);
    if (i < 64) L->dim_len[i] = dim;
    L->shape_len += LengthDelimitedSize(2, dim);
  }
  size_t ms_len = SignedDecimalLength(f.mode_step);
  size_t m_len = DecimalLength(static_cast<uint64_t>(static_cast<int>(f.mode)));
  L->pd1_len = LengthDelimitedSize(1, 9) + LengthDelimitedSize(2, ms_len);
  L->pd2_len = LengthDelimitedSize(1, 4) + LengthDelimitedSize(2, m_len);
  L->md_len = LengthDelimitedSize(1, L->pd1_len) + LengthDelimitedSize(1, L->pd2_len);
  int dtype = static_cast<int>(f.dtype);
  L->tensor_len = 0;
  if (dtype != 0) L->tensor_len += 1 + VarintSize(static_cast<uint64_t>(dtype));
  L->tensor_len += LengthDelimitedSize(2, L->shape_len);
  if (content_len > 0) L->tensor_len += LengthDelimitedSize(4, content_len);
}

// Decimal digits of v written backwards from `end`; returns the first digit.
char* FormatDecimal(char* end, int64_t v) {
  uint64_t u = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  char* p = end;
  do {
    *--p = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u != 0);
  if (v < 0) *--p = '-';
  return p;
}

void PutDecimal(wire::Cursor* c, int64_t v) {
  char buf[24];
  char* first = FormatDecimal(buf + sizeof buf, v);
  c->Bytes(first, static_cast<size_t>(buf + sizeof buf - first));
}

}  // namespace

void AppendTensorRecord(const TensorEventFields& f, std::string_view content, PayloadCrcKind crc,
                        bool inline_content, std::string* out, size_t* prefix_len,
                        size_t* suffix_len) {
  RecordLayout L;
  ComputeLayout(f, content.size(), &L);
  const int dtype = static_cast<int>(f.dtype);
  const size_t value_len = LengthDelimitedSize(1, f.tag.size()) +
                           LengthDelimitedSize(8, L.tensor_len) + LengthDelimitedSize(9, L.md_len);
  const size_t summary_len = LengthDelimitedSize(1, value_len);
  size_t prefix = kRecordHeaderSize;
  if (f.wall_time != 0) prefix += 9;
  if (f.step != 0) prefix += 1 + VarintSize(static_cast<uint64_t>(f.step));
  prefix += 1 + VarintSize(summary_len) + 1 + VarintSize(value_len);
  prefix += LengthDelimitedSize(1, f.tag.size());
  prefix += 1 + VarintSize(L.tensor_len);
  if (dtype != 0) prefix += 1 + VarintSize(static_cast<uint64_t>(dtype));
  prefix += LengthDelimitedSize(2, L.shape_len);
  if (!content.empty()) prefix += 1 + VarintSize(content.size());
  const size_t suffix = LengthDelimitedSize(9, L.md_len) + kRecordFooterSize;
  const size_t body = inline_content ? content.size() : 0;

  const size_t start = out->size();
  out->resize(start + prefix + body + suffix);
  char* base = &(*out)[start];
  wire::Cursor c{base + kRecordHeaderSize};
  if (f.wall_time != 0) {
    c.Tag(1, wire::kFixed64);
    uint64_t bits;
    std::memcpy(&bits, &f.wall_time, 8);
    c.Fixed64(bits);
  }
  if (f.step != 0) {
    c.Tag(2, wire::kVarint);
    c.Varint(static_cast<uint64_t>(f.step));
  }
  c.Tag(5, wire::kLengthDelimited);
  c.Varint(summary_len);
  c.Tag(1, wire::kLengthDelimited);
  c.Varint(value_len);
  c.LengthDelimited(1, f.tag);
  c.Tag(8, wire::kLengthDelimited);
  c.Varint(L.tensor_len);
  if (dtype != 0) {
    c.Tag(1, wire::kVarint);
    c.Varint(static_cast<uint64_t>(dtype));
  }
  // The shape field is always present, even empty for a 0-d tensor (smdebug writes "12 00").
  c.Tag(2, wire::kLengthDelimited);
  c.Varint(L.shape_len);
  for (size_t i = 0; i < f.ndim; ++i) {
    const uint64_t d = static_cast<uint64_t>(f.shape[i]);
    const size_t name_len = f.tag.size() + 1 + DecimalLength(d);
    const size_t dim = i < 64 ? L.dim_len[i] : (d != 0 ? 1 + VarintSize(d) : 0) + LengthDelimitedSize(2, name_len);
    c.Tag(2, wire::kLengthDelimited);
    c.Varint(dim);
    if (d != 0) {
      c.Tag(1, wire::kVarint);
      c.Varint(d);
    }
    c.Tag(2, wire::kLengthDelimited);
    c.Varint(name_len);
    c.Bytes(f.tag.data(), f.tag.size());
    c.Byte('_');
    PutDecimal(&c, static_cast<int64_t>(d));
  }
  if (!content.empty()) {
    c.Tag(4, wire::kLengthDelimited);
    c.Varint(content.size());
  }
  if (inline_content) c.Bytes(content.data(), content.size());
  char* suffix_start = c.p;
  // SummaryMetadata{plugin_data: [{"mode_step", <n>}, {"mode", <m>}]}
  c.Tag(9, wire::kLengthDelimited);
  c.Varint(L.md_len);
  c.Tag(1, wire::kLengthDelimited);
  c.Varint(L.pd1_len);
  c.LengthDelimited(1, "mode_step");
  c.Tag(2, wire::kLengthDelimited);
  c.Varint(SignedDecimalLength(f.mode_step));
  PutDecimal(&c, f.mode_step);
  c.Tag(1, wire::kLengthDelimited);
  c.Varint(L.pd2_len);
  c.LengthDelimited(1, "mode");
  c.Tag(2, wire::kLengthDelimited);
  c.Varint(DecimalLength(static_cast<uint64_t>(static_cast<int>(f.mode))));
  PutDecimal(&c, static_cast<int>(f.mode));

  const size_t payload_len = (prefix - kRecordHeaderSize) + content.size() + (suffix - kRecordFooterSize);
  EncodeRecordHeader(payload_len, reinterpret_cast<unsigned char*>(base));
  uint32_t footer = kSmdebugPayloadCrc;
  if (crc == PayloadCrcKind::kReal) {
    uint32_t crc32 = Crc32c(base + kRecordHeaderSize, prefix - kRecordHeaderSize);
    crc32 = Crc32c(content.data(), content.size(), crc32);
    crc32 = Crc32c(suffix_start, suffix - kRecordFooterSize, crc32);
    footer = MaskCrc(crc32);
  }
  EncodeFixed32(footer, reinterpret_cast<unsigned char*>(c.p));
  *prefix_len = prefix;
  *suffix_len = suffix;
}

void EncodeTensorRecord(const TensorEventFields& f, std::string_view content, PayloadCrcKind crc,
                        std::string* prefix, std::string* suffix) {
  std::string all;
  size_t p, s;
  AppendTensorRecord(f, content, crc, /*inline_content=*/false, &all, &p, &s);
  prefix->assign(all, 0, p);
  suffix->assign(all, p, s);
}

void AppendStringTensorRecord(const TensorEventFields& f, const std::string_view* values, size_t n,
                              PayloadCrcKind crc, std::string* out) {
  int64_t dim = static_cast<int64_t>(n);
  std::string shape = EncodeShape(f.tag, &dim, 1);
  std::string md = EncodeMetadata(f.mode, f.mode_step);
  std::string body;
  PutLengthDelimited(&body, 2, shape);
  for (size_t i = 0; i < n; ++i) PutLengthDelimited(&body, 8, values[i]);
  std::string prefix(kRecordHeaderSize, '\0');
  EncodeEventHead(f, body.size(), md.size(), &prefix);
  prefix += body;
  std::string suffix;
  PutLengthDelimited(&suffix, 9, md);
  FinishRecord(&prefix, std::string_view(), &suffix, crc);
  out->append(prefix);
  out->append(suffix);
}

void EncodeStringTensorRecord(const TensorEventFields& f, const std::vector<std::string>& values,
                              PayloadCrcKind crc, std::string* record) {
  std::vector<std::string_view> views(values.begin(), values.end());
  record->clear();
  AppendStringTensorRecord(f, views.data(), views.size(), crc, record);
}

// ------------------------------------------------------------------------------------------
// Decoder

namespace {

using wire::Reader;
using wire::WireType;

Status Bad(const char* what) { return Corrupt(std::string("malformed event: ") + what); }

template <typename T, typename ReadOne>
bool ReadRepeated(Reader* r, WireType wt, WireType scalar_wt, std::vector<T>* out, ReadOne one) {
  if (wt == wire::kLengthDelimited) {  // packed
    std::string_view packed;
    if (!r->ReadBytes(&packed)) return false;
    Reader pr(packed);
    while (!pr.done()) {
      T v;
      if (!one(&pr, &v)) return false;
      out->push_back(v);
    }
    return true;
  }
  if (wt != scalar_wt) return false;
  T v;
  if (!one(r, &v)) return false;
  out->push_back(v);
  return true;
}

bool ReadF32(Reader* r, float* v) {
  uint32_t u;
  if (!r->ReadFixed32(&u)) return false;
  std::memcpy(v, &u, 4);
  return true;
}
bool ReadF64(Reader* r, double* v) {
  uint64_t u;
  if (!r->ReadFixed64(&u)) return false;
  std::memcpy(v, &u, 8);
  return true;
}
bool ReadI32(Reader* r, int32_t* v) {
  uint64_t u;
  if (!r->ReadVarint(&u)) return false;
  *v = static_cast<int32_t>(u);
  return true;
}
bool ReadI64(Reader* r, int64_t* v) {
  uint64_t u;
  if (!r->ReadVarint(&u)) return false;
  *v = static_cast<int64_t>(u);
  return true;
}
bool ReadBool(Reader* r, uint8_t* v) {
  uint64_t u;
  if (!r->ReadVarint(&u)) return false;
  *v = u != 0;
  return true;
}

Status DecodeShape(std::string_view data, std::vector<int64_t>* out) {
  out->reserve(std::min<size_t>(8, data.size() / 2));  // a dim takes at least 2 bytes
  Reader r(data);
  while (!r.done()) {
    uint32_t field;
    WireType wt;
    if (!r.ReadTag(&field, &wt)) return Bad("tensor shape");
    if (field == 2 && wt == wire::kLengthDelimited) {
      std::string_view dim;
      if (!r.ReadBytes(&dim)) return Bad("tensor shape dim");
      Reader dr(dim);
      int64_t size = 0;
      while (!dr.done()) {
        uint32_t df;
        WireType dwt;
        if (!dr.ReadTag(&df, &dwt)) return Bad("tensor shape dim");
        if (df == 1 && dwt == wire::kVarint) {
          uint64_t v;
          if (!dr.ReadVarint(&v)) return Bad("dim size");
          size = static_cast<int64_t>(v);
        } else if (!dr.Skip(dwt)) {
          return Bad("tensor shape dim");
        }
      }
      if (size < 0) return Bad("negative dimension size");
      if (out->size() >= kMaxTensorDims) {
        return Corrupt("malformed event: the tensor has more than " + std::to_string(kMaxTensorDims) +
                       " dimensions (smd reads and writes at most " + std::to_string(kMaxTensorDims) +
                       ")");
      }
      out->push_back(size);
    } else if (!r.Skip(wt)) {
      return Bad("tensor shape");
    }
  }
  return Status::Ok();
}

Status DecodeTensor(std::string_view data, DecodedEvent* out) {
  Reader r(data);
  while (!r.done()) {
    uint32_t field;
    WireType wt;
    if (!r.ReadTag(&field, &wt)) return Bad("tensor");
    bool ok = true;
    switch (field) {
      case 1: {
        uint64_t v = 0;
        ok = wt == wire::kVarint && r.ReadVarint(&v);
        out->dtype = static_cast<int>(static_cast<int32_t>(v));
        break;
      }
      case 2: {
        std::string_view shape;
        ok = wt == wire::kLengthDelimited && r.ReadBytes(&shape);
        if (ok) {
          out->shape.clear();
          SMD_RETURN_IF_ERROR(DecodeShape(shape, &out->shape));
        }
        break;
      }
      case 4: ok = wt == wire::kLengthDelimited && r.ReadBytes(&out->tensor_content); break;
      case 5: ok = ReadRepeated(&r, wt, wire::kFixed32, &out->float_val, ReadF32); break;
      case 6: ok = ReadRepeated(&r, wt, wire::kFixed64, &out->double_val, ReadF64); break;
      case 7: ok = ReadRepeated(&r, wt, wire::kVarint, &out->int_val, ReadI32); break;
      case 8: {
        std::string_view s;
        ok = wt == wire::kLengthDelimited && r.ReadBytes(&s);
        if (ok) out->string_val.push_back(s);
        break;
      }
      case 10: ok = ReadRepeated(&r, wt, wire::kVarint, &out->int64_val, ReadI64); break;
      case 11: ok = ReadRepeated(&r, wt, wire::kVarint, &out->bool_val, ReadBool); break;
      case 13: ok = ReadRepeated(&r, wt, wire::kVarint, &out->half_val, ReadI32); break;
      default: ok = r.Skip(wt);
    }
    if (!ok) return Bad("tensor field");
  }
  return Status::Ok();
}

Status DecodeMetadata(std::string_view data, DecodedEvent* out) {
  Reader r(data);
  while (!r.done()) {
    uint32_t field;
    WireType wt;
    if (!r.ReadTag(&field, &wt)) return Bad("summary metadata");
    if (field == 1 && wt == wire::kLengthDelimited) {
      std::string_view pd;
      if (!r.ReadBytes(&pd)) return Bad("plugin data");
      Reader pr(pd);
      std::string_view name, content;
      while (!pr.done()) {
        uint32_t pf;
        WireType pwt;
        if (!pr.ReadTag(&pf, &pwt)) return Bad("plugin data");
        if (pf == 1 && pwt == wire::kLengthDelimited) {
          if (!pr.ReadBytes(&name)) return Bad("plugin name");
        } else if (pf == 2 && pwt == wire::kLengthDelimited) {
          if (!pr.ReadBytes(&content)) return Bad("plugin content");
        } else if (!pr.Skip(pwt)) {
          return Bad("plugin data");
        }
      }
      std::optional<int64_t> v = ParseInt64(content);
      if (name == "mode_step" && v) out->mode_step = *v;
      if (name == "mode" && v) out->mode = static_cast<int>(*v);
    } else if (!r.Skip(wt)) {
      return Bad("summary metadata");
    }
  }
  return Status::Ok();
}

Status DecodeValue(std::string_view data, DecodedEvent* out) {
  Reader r(data);
  out->has_summary_value = true;
  while (!r.done()) {
    uint32_t field;
    WireType wt;
    if (!r.ReadTag(&field, &wt)) return Bad("summary value");
    bool ok = true;
    std::string_view sub;
    switch (field) {
      case 1: ok = wt == wire::kLengthDelimited && r.ReadBytes(&out->tag); break;
      case 2:
        ok = wt == wire::kFixed32 && ReadF32(&r, &out->simple_value);
        out->kind = DecodedEvent::ValueKind::kSimpleValue;
        break;
      case 5:
        ok = r.Skip(wt);
        out->kind = DecodedEvent::ValueKind::kHisto;
        break;
      case 8:
        ok = wt == wire::kLengthDelimited && r.ReadBytes(&sub);
        if (ok) {
          out->kind = DecodedEvent::ValueKind::kTensor;
          SMD_RETURN_IF_ERROR(DecodeTensor(sub, out));
        }
        break;
      case 9:
        ok = wt == wire::kLengthDelimited && r.ReadBytes(&sub);
        if (ok) SMD_RETURN_IF_ERROR(DecodeMetadata(sub, out));
        break;
      case 3: case 4: case 6:
        ok = r.Skip(wt);
        out->kind = DecodedEvent::ValueKind::kOther;
        break;
      default: ok = r.Skip(wt);
    }
    if (!ok) return Bad("summary value field");
  }
  return Status::Ok();
}

}  // namespace

Status DecodeEvent(std::string_view payload, DecodedEvent* out) {
  *out = DecodedEvent();
  Reader r(payload);
  while (!r.done()) {
    uint32_t field;
    WireType wt;
    if (!r.ReadTag(&field, &wt)) return Bad("event field key");
    bool ok = true;
    switch (field) {
      case 1: ok = wt == wire::kFixed64 && ReadF64(&r, &out->wall_time); break;
      case 2: {
        uint64_t v = 0;
        ok = wt == wire::kVarint && r.ReadVarint(&v);
        out->step = static_cast<int64_t>(v);
        break;
      }
      case 5: {
        std::string_view summary;
        ok = wt == wire::kLengthDelimited && r.ReadBytes(&summary);
        if (!ok) break;
        Reader sr(summary);
        while (!sr.done()) {
          uint32_t sf;
          WireType swt;
          if (!sr.ReadTag(&sf, &swt)) return Bad("summary");
          if (sf == 1 && swt == wire::kLengthDelimited) {
            std::string_view value;
            if (!sr.ReadBytes(&value)) return Bad("summary value");
            if (!out->has_summary_value) SMD_RETURN_IF_ERROR(DecodeValue(value, out));
          } else if (!sr.Skip(swt)) {
            return Bad("summary");
          }
        }
        break;
      }
      default: ok = r.Skip(wt);
    }
    if (!ok) return Bad("event field");
  }
  return Status::Ok();
}

namespace {

bool DecodeTensorHead(std::string_view data, TensorEventHead* out) {
  Reader r(data);
  bool have_dtype = false;
  while (!r.done()) {
    uint32_t field;
    WireType wt;
    if (!r.ReadTag(&field, &wt)) return false;
    if (field == 1 && wt == wire::kVarint) {
      uint64_t v;
      if (!r.ReadVarint(&v)) return false;
      out->dtype = static_cast<int>(static_cast<int32_t>(v));
      have_dtype = true;
    } else if (field == 2 && wt == wire::kLengthDelimited) {
      std::string_view shape;
      if (!r.ReadBytes(&shape)) return false;
      out->shape.clear();
      if (!DecodeShape(shape, &out->shape).ok()) return false;
    } else if (field == 4 && wt == wire::kLengthDelimited) {
      return have_dtype && r.ReadVarint(&out->content_size);
    } else if (!r.Skip(wt)) {
      return false;
    }
  }
  return false;
}

bool DecodeValueHead(std::string_view data, TensorEventHead* out) {
  Reader r(data);
  bool have_tag = false;
  while (!r.done()) {
    uint32_t field;
    WireType wt;
    if (!r.ReadTag(&field, &wt)) return false;
    if (field == 1 && wt == wire::kLengthDelimited) {
      if (!r.ReadBytes(&out->tag)) return false;
      have_tag = true;
    } else if (field == 8 && wt == wire::kLengthDelimited) {
      std::string_view tensor;
      if (!r.ReadBytesPrefix(&tensor)) return false;
      return have_tag && DecodeTensorHead(tensor, out);
    } else if (!r.Skip(wt)) {
      return false;
    }
  }
  return false;
}

}  // namespace

bool DecodeTensorEventHead(std::string_view prefix, TensorEventHead* out) {
  *out = TensorEventHead();
  Reader r(prefix);
  while (!r.done()) {
    uint32_t field;
    WireType wt;
    if (!r.ReadTag(&field, &wt)) return false;
    if (field == 5 && wt == wire::kLengthDelimited) {
      std::string_view summary;
      if (!r.ReadBytesPrefix(&summary)) return false;
      Reader sr(summary);
      while (!sr.done()) {  // the first summary value, as DecodeEvent
        uint32_t sf;
        WireType swt;
        if (!sr.ReadTag(&sf, &swt)) return false;
        if (sf == 1 && swt == wire::kLengthDelimited) {
          std::string_view value;
          if (!sr.ReadBytesPrefix(&value)) return false;
          return DecodeValueHead(value, out);
        }
        if (!sr.Skip(swt)) return false;
      }
      return false;
    }
    if (!r.Skip(wt)) return false;
  }
  return false;
}

}  // namespace smd::io
