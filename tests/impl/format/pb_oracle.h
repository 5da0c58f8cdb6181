// The protoc-c decoder and encoder of smd_event.proto as an oracle for smd's hand-written event
// codec (impl/format/event.cc). Used by the unit tests, the record fuzzer and the codec benchmark.
//
// Each check returns an empty string when the two codecs agree, else what differs.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "impl/core/text.h"
#include "impl/format/event.h"
#include "smd_event.pb-c.h"

namespace smd::pb_oracle {

struct EventDeleter {
  void operator()(Smd__Event* e) const { smd__event__free_unpacked(e, nullptr); }
};

inline Smd__Event* Unpack(std::string_view payload) {
  return smd__event__unpack(nullptr, payload.size(), reinterpret_cast<const uint8_t*>(payload.data()));
}

inline std::string Pack(const Smd__Event* e) {
  std::string out(smd__event__get_packed_size(e), '\0');
  smd__event__pack(e, reinterpret_cast<uint8_t*>(out.data()));
  return out;
}

inline std::string_view View(const ProtobufCBinaryData& b) {
  return std::string_view(reinterpret_cast<const char*>(b.data), b.len);
}

template <typename A, typename B>
bool SameBits(const A* a, size_t na, const std::vector<B>& b) {
  static_assert(sizeof(A) == sizeof(B));
  return na == b.size() && (na == 0 || std::memcmp(a, b.data(), na * sizeof(A)) == 0);
}

// An unknown field whose number protobuf does not allow (0, or above 2^29 - 1): protoc-c keeps it
// (it reads tags as any 32-bit number), smd rejects the key as malformed.
inline bool HasOutOfRangeField(const ProtobufCMessage* m) {
  if (m == nullptr) return false;
  for (unsigned i = 0; i < m->n_unknown_fields; ++i) {
    const uint32_t tag = m->unknown_fields[i].tag;
    if (tag == 0 || tag > 0x1fffffffu) return true;
  }
  return false;
}

// What smd's decoder rejects on purpose in a message protoc-c accepts: a negative dimension size,
// more than io::kMaxTensorDims dimensions, and a field number out of protobuf's range in a
// message smd reads.
inline bool SmdRejectsOnPurpose(const Smd__Event* e) {
  if (HasOutOfRangeField(&e->base)) return true;
  if (e->what_case != SMD__EVENT__WHAT_SUMMARY || e->summary == nullptr) return false;
  if (HasOutOfRangeField(&e->summary->base)) return true;
  for (size_t v = 0; v < e->summary->n_value; ++v) {
    const Smd__Summary__Value* val = e->summary->value[v];
    if (v > 0) continue;  // smd reads only the first value
    if (HasOutOfRangeField(&val->base)) return true;
    if (val->metadata != nullptr) {
      if (HasOutOfRangeField(&val->metadata->base)) return true;
      for (size_t i = 0; i < val->metadata->n_plugin_data; ++i) {
        if (HasOutOfRangeField(&val->metadata->plugin_data[i]->base)) return true;
      }
    }
    if (val->value_case != SMD__SUMMARY__VALUE__VALUE_TENSOR) continue;
    if (HasOutOfRangeField(&val->tensor->base)) return true;
    const Smd__TensorShapeProto* s = val->tensor->tensor_shape;
    if (s == nullptr) continue;
    if (HasOutOfRangeField(&s->base)) return true;
    if (s->n_dim > io::kMaxTensorDims) return true;  // more dimensions than smd reads
    for (size_t i = 0; i < s->n_dim; ++i) {
      if (s->dim[i]->size < 0 || HasOutOfRangeField(&s->dim[i]->base)) return true;
    }
  }
  return false;
}

// What smd's decoder must have extracted from the event protoc-c decoded: the first summary
// value's tag, kind, tensor fields and plugin metadata, the event's wall time and step.
inline std::string Compare(const Smd__Event* pb, const io::DecodedEvent& ev) {
  uint64_t a, b;
  // protoc-c's canonical encoding (proto3) leaves out a wall time that compares equal to zero,
  // -0.0 included, so smd decodes +0.0 from it where protoc-c's own struct kept -0.0.
  const double pb_wall = pb->wall_time == 0 ? 0.0 : pb->wall_time;
  std::memcpy(&a, &pb_wall, 8);
  std::memcpy(&b, &ev.wall_time, 8);
  if (a != b) return "wall_time";
  if (pb->step != ev.step) return "step";
  const Smd__Summary__Value* v = nullptr;
  if (pb->what_case == SMD__EVENT__WHAT_SUMMARY && pb->summary->n_value > 0) v = pb->summary->value[0];
  if ((v != nullptr) != ev.has_summary_value) return "has_summary_value";
  if (v == nullptr) return "";
  if (View(v->tag) != ev.tag) return "tag";
  using K = io::DecodedEvent::ValueKind;
  K kind = K::kNone;
  switch (v->value_case) {
    case SMD__SUMMARY__VALUE__VALUE_TENSOR: kind = K::kTensor; break;
    case SMD__SUMMARY__VALUE__VALUE_SIMPLE_VALUE: kind = K::kSimpleValue; break;
    case SMD__SUMMARY__VALUE__VALUE_HISTO: kind = K::kHisto; break;
    case SMD__SUMMARY__VALUE__VALUE_OBSOLETE_OLD_STYLE_HISTOGRAM:
    case SMD__SUMMARY__VALUE__VALUE_IMAGE:
    case SMD__SUMMARY__VALUE__VALUE_AUDIO: kind = K::kOther; break;
    default: break;
  }
  if (kind != ev.kind) return "value kind";
  if (kind == K::kSimpleValue && std::memcmp(&v->simple_value, &ev.simple_value, 4) != 0) {
    return "simple_value";
  }
  if (kind == K::kTensor) {
    const Smd__TensorProto* t = v->tensor;
    if (t->dtype != ev.dtype) return "dtype";
    size_t ndim = t->tensor_shape ? t->tensor_shape->n_dim : 0;
    if (ndim != ev.shape.size()) return "shape rank";
    for (size_t i = 0; i < ndim; ++i) {
      if (t->tensor_shape->dim[i]->size != ev.shape[i]) return "shape dim " + std::to_string(i);
    }
    if (View(t->tensor_content) != ev.tensor_content) return "tensor_content";
    if (t->n_string_val != ev.string_val.size()) return "string_val count";
    for (size_t i = 0; i < t->n_string_val; ++i) {
      if (View(t->string_val[i]) != ev.string_val[i]) return "string_val " + std::to_string(i);
    }
    if (!SameBits(t->float_val, t->n_float_val, ev.float_val)) return "float_val";
    if (!SameBits(t->double_val, t->n_double_val, ev.double_val)) return "double_val";
    if (!SameBits(t->int_val, t->n_int_val, ev.int_val)) return "int_val";
    if (!SameBits(t->half_val, t->n_half_val, ev.half_val)) return "half_val";
    if (!SameBits(t->int64_val, t->n_int64_val, ev.int64_val)) return "int64_val";
    if (t->n_bool_val != ev.bool_val.size()) return "bool_val count";
    for (size_t i = 0; i < t->n_bool_val; ++i) {
      if ((t->bool_val[i] != 0) != (ev.bool_val[i] != 0)) return "bool_val";
    }
  }
  // The plugin entries smdebug writes: the last well-formed one of each name counts.
  std::optional<int64_t> mode_step;
  std::optional<int> mode;
  if (v->metadata != nullptr) {
    for (size_t i = 0; i < v->metadata->n_plugin_data; ++i) {
      const Smd__SummaryMetadata__PluginData* p = v->metadata->plugin_data[i];
      std::optional<int64_t> n = ParseInt64(View(p->content));
      if (View(p->plugin_name) == "mode_step" && n) mode_step = *n;
      if (View(p->plugin_name) == "mode" && n) mode = static_cast<int>(*n);
    }
  }
  if (mode_step != ev.mode_step) return "mode_step";
  if (mode != ev.mode) return "mode";
  return "";
}

// Decodes `payload` with both codecs. Where protoc-c accepts it, smd's decoder must accept the
// same message in protoc-c's canonical encoding (one value per field, fields in number order)
// and extract the same fields, except where smd rejects on purpose (SmdRejectsOnPurpose). Where
// the payload is already canonical, that is a comparison on the payload itself.
// Inputs protoc-c rejects are not compared (smd may skip what it never reads).
inline std::string CheckDecode(std::string_view payload) {
  std::unique_ptr<Smd__Event, EventDeleter> pb(Unpack(payload));
  if (!pb) return "";
  const std::string canonical = Pack(pb.get());
  io::DecodedEvent ev;
  Status st = io::DecodeEvent(canonical, &ev);
  if (!st.ok()) {
    if (SmdRejectsOnPurpose(pb.get())) return "";
    return "smd rejects an event protoc-c decodes: " + st.message();
  }
  std::string diff = Compare(pb.get(), ev);
  if (!diff.empty()) return "smd and protoc-c decode a different " + diff;
  return "";
}

// Checks a payload smd's encoder wrote: protoc-c decodes it to exactly `f`, `content` (or
// `strings` for a string tensor) and the two plugin entries, and re-encodes it byte for byte.
inline std::string CheckEncoded(std::string_view payload, const io::TensorEventFields& f,
                                std::string_view content, const std::vector<std::string>* strings) {
  std::unique_ptr<Smd__Event, EventDeleter> pb(Unpack(payload));
  if (!pb) return "protoc-c cannot decode the payload smd encoded";
  if (Pack(pb.get()) != payload) return "protoc-c re-encodes smd's payload differently";
  uint64_t a, b;
  std::memcpy(&a, &pb->wall_time, 8);
  std::memcpy(&b, &f.wall_time, 8);
  if (a != b) return "wall_time";
  if (pb->step != f.step) return "step";
  if (pb->what_case != SMD__EVENT__WHAT_SUMMARY || pb->summary->n_value != 1) return "summary";
  const Smd__Summary__Value* v = pb->summary->value[0];
  if (View(v->tag) != f.tag) return "tag";
  if (v->value_case != SMD__SUMMARY__VALUE__VALUE_TENSOR) return "value kind";
  const Smd__TensorProto* t = v->tensor;
  if (t->dtype != (strings ? 0 : static_cast<int>(f.dtype))) return "dtype";
  if (t->tensor_shape == nullptr) return "no tensor_shape";
  std::vector<int64_t> shape(f.shape, f.shape + f.ndim);
  if (strings) shape = {static_cast<int64_t>(strings->size())};
  if (t->tensor_shape->n_dim != shape.size()) return "shape rank";
  for (size_t i = 0; i < shape.size(); ++i) {
    const Smd__TensorShapeProto__Dim* d = t->tensor_shape->dim[i];
    if (d->size != shape[i]) return "dim size " + std::to_string(i);
    if (View(d->name) != std::string(f.tag) + "_" + std::to_string(shape[i])) return "dim name";
  }
  if (View(t->tensor_content) != (strings ? std::string_view() : content)) return "tensor_content";
  size_t n_strings = strings ? strings->size() : 0;
  if (t->n_string_val != n_strings) return "string_val count";
  for (size_t i = 0; i < n_strings; ++i) {
    if (View(t->string_val[i]) != (*strings)[i]) return "string_val";
  }
  const Smd__SummaryMetadata* md = v->metadata;
  if (md == nullptr || md->n_plugin_data != 2) return "plugin entries";
  if (View(md->plugin_data[0]->plugin_name) != "mode_step" ||
      View(md->plugin_data[0]->content) != std::to_string(f.mode_step)) {
    return "mode_step entry";
  }
  if (View(md->plugin_data[1]->plugin_name) != "mode" ||
      View(md->plugin_data[1]->content) != std::to_string(static_cast<int>(f.mode))) {
    return "mode entry";
  }
  return "";
}

}  // namespace smd::pb_oracle
