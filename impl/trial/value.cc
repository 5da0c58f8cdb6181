#include "impl/trial/value.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "impl/format/event.h"

namespace smd::trial {
namespace {

constexpr size_t kAlign = 64;

void* AllocAligned(size_t n) {
  size_t size = (n == 0 ? kAlign : (n + kAlign - 1) / kAlign * kAlign);
  void* p = std::aligned_alloc(kAlign, size);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

// Element count of a shape; false on overflow.
bool CountOf(const std::vector<int64_t>& shape, size_t* out) {
  size_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return false;
    if (d != 0 && n > SIZE_MAX / static_cast<size_t>(d)) return false;
    n *= static_cast<size_t>(d);
  }
  *out = n;
  return true;
}

template <typename Dst, typename Src>
void CopyConverted(const std::vector<Src>& src, void* dst) {
  Dst* d = static_cast<Dst*>(dst);
  for (size_t i = 0; i < src.size(); ++i) d[i] = static_cast<Dst>(src[i]);
}

Status BadValue(const std::string& what) { return Corrupt("malformed tensor record: " + what); }

}  // namespace

Value::~Value() { std::free(data_); }

std::string_view Value::string_at(size_t i) const {
  if (i >= strings_.size()) return std::string_view();
  return strings_[i];
}

size_t Value::memory_size() const {
  size_t n = sizeof(Value) + shape_.size() * sizeof(int64_t) + nbytes_;
  for (const std::string& s : strings_) n += sizeof(std::string) + s.capacity();
  return n;
}

std::shared_ptr<Value> Value::MakeNumeric(DType dtype, std::vector<int64_t> shape) {
  struct Shared : Value {};  // lets make_shared (one allocation) use the private constructor
  std::shared_ptr<Value> v = std::make_shared<Shared>();
  v->dtype_ = dtype;
  if (!CountOf(shape, &v->count_)) throw std::bad_alloc();
  v->shape_ = std::move(shape);
  v->nbytes_ = v->count_ * DTypeSize(dtype);
  v->data_ = AllocAligned(v->nbytes_);
  return v;
}

std::shared_ptr<Value> Value::MakeStrings(std::vector<int64_t> shape,
                                          std::vector<std::string> strings) {
  std::shared_ptr<Value> v(new Value());
  v->dtype_ = DType::kString;
  v->shape_ = std::move(shape);
  v->count_ = strings.size();
  v->strings_ = std::move(strings);
  return v;
}

Result<ValuePtr> DecodeValue(std::string_view payload, std::string_view expected_tag) {
  io::DecodedEvent ev;
  SMD_RETURN_IF_ERROR(io::DecodeEvent(payload, &ev));
  if (!ev.has_summary_value) return BadValue("the event holds no summary value");
  if (ev.kind != io::DecodedEvent::ValueKind::kTensor) {
    return BadValue("the summary value of '" + std::string(ev.tag) + "' is not a tensor");
  }
  if (!expected_tag.empty() && ev.tag != expected_tag) {
    return Corrupt("the record holds tensor '" + std::string(ev.tag) + "' but the index names '" +
                   std::string(expected_tag) + "'");
  }
  size_t count;
  if (!CountOf(ev.shape, &count)) return BadValue("the shape's element count overflows");

  // Strings: smdebug leaves dtype unset (DT_INVALID) and fills string_val; TF's DT_STRING too.
  if (ev.dtype == 0 || ev.dtype == static_cast<int>(DType::kString)) {
    if (ev.string_val.size() != count) {
      if (ev.dtype == 0 && ev.string_val.empty() && ev.tensor_content.empty()) {
        return BadValue("tensor of unset dtype with " + std::to_string(count) +
                        " elements but no values");
      }
      return BadValue("string tensor of shape with " + std::to_string(count) + " elements holds " +
                      std::to_string(ev.string_val.size()) + " strings");
    }
    std::vector<std::string> strings;
    strings.reserve(ev.string_val.size());
    for (std::string_view s : ev.string_val) strings.emplace_back(s);
    return ValuePtr(Value::MakeStrings(std::move(ev.shape), std::move(strings)));
  }

  const DTypeInfo* info = GetDTypeInfo(ev.dtype);
  if (info == nullptr) {
    return Status(Code::kUnsupported,
                  "tensor '" + std::string(ev.tag) + "' has data type " + std::to_string(ev.dtype) +
                      ", which smd cannot decode");
  }
  const DType dtype = info->dtype;
  const size_t esize = info->size;
  if (count != 0 && esize > SIZE_MAX / count) return BadValue("tensor too large");

  if (!ev.tensor_content.empty() || count == 0) {
    if (ev.tensor_content.size() != count * esize) {
      return BadValue("tensor '" + std::string(ev.tag) + "' has " +
                      std::to_string(ev.tensor_content.size()) + " content bytes, its shape needs " +
                      std::to_string(count * esize));
    }
    std::shared_ptr<Value> v = Value::MakeNumeric(dtype, std::move(ev.shape));
    if (count) std::memcpy(v->mutable_data(), ev.tensor_content.data(), ev.tensor_content.size());
    if (dtype == DType::kBool) {
      unsigned char* b = static_cast<unsigned char*>(v->mutable_data());
      for (size_t i = 0; i < count; ++i) b[i] = b[i] != 0;
    }
    return ValuePtr(std::move(v));
  }

  // No tensor_content: TensorFlow's typed value fields (smdebug never writes them, but its reader
  // accepts some). The number of values must match the shape.
  auto from_field = [&](size_t n, auto fill) -> Result<ValuePtr> {
    if (n != count) {
      return BadValue("tensor '" + std::string(ev.tag) + "' holds " + std::to_string(n) +
                      " typed values, its shape needs " + std::to_string(count));
    }
    std::shared_ptr<Value> v = Value::MakeNumeric(dtype, std::move(ev.shape));
    fill(v->mutable_data());
    return ValuePtr(std::move(v));
  };
  switch (dtype) {
    case DType::kFloat32:
      return from_field(ev.float_val.size(), [&](void* d) { CopyConverted<float>(ev.float_val, d); });
    case DType::kFloat64:
      return from_field(ev.double_val.size(), [&](void* d) { CopyConverted<double>(ev.double_val, d); });
    case DType::kInt32:
      return from_field(ev.int_val.size(), [&](void* d) { CopyConverted<int32_t>(ev.int_val, d); });
    case DType::kInt16:
      return from_field(ev.int_val.size(), [&](void* d) { CopyConverted<int16_t>(ev.int_val, d); });
    case DType::kInt8:
      return from_field(ev.int_val.size(), [&](void* d) { CopyConverted<int8_t>(ev.int_val, d); });
    case DType::kUInt8:
      return from_field(ev.int_val.size(), [&](void* d) { CopyConverted<uint8_t>(ev.int_val, d); });
    case DType::kUInt16:
      return from_field(ev.int_val.size(), [&](void* d) { CopyConverted<uint16_t>(ev.int_val, d); });
    case DType::kInt64:
      return from_field(ev.int64_val.size(), [&](void* d) { CopyConverted<int64_t>(ev.int64_val, d); });
    case DType::kBool:
      return from_field(ev.bool_val.size(), [&](void* d) { CopyConverted<uint8_t>(ev.bool_val, d); });
    case DType::kFloat16:
    case DType::kBFloat16:
      return from_field(ev.half_val.size(), [&](void* d) { CopyConverted<uint16_t>(ev.half_val, d); });
    default:
      return BadValue("tensor '" + std::string(ev.tag) + "' of " + std::to_string(count) +
                      " elements has no tensor_content");
  }
}

}  // namespace smd::trial
