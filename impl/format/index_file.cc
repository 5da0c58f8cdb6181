#include "impl/format/index_file.h"

#include <charconv>

#include "impl/core/text.h"

namespace smd::io {
namespace {

template <typename T>
void AppendNumber(std::string* out, T v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out->append(buf, static_cast<size_t>(r.ptr - buf));
}

}  // namespace

std::string BuildIndexJson(const IndexMeta& meta, const std::vector<IndexTensorEntry>& tensors,
                           const std::vector<IndexShapeEntry>& shapes) {
  std::string out;
  size_t names = 0;
  for (const IndexTensorEntry& t : tensors) names += t.name.size();
  for (const IndexShapeEntry& e : shapes) names += 2 * e.name.size() + 8 * e.shape.size();
  out.reserve(160 + names + tensors.size() * 64 + shapes.size() * 64);
  out += "{\"meta\": {\"mode\": \"";
  out += ModeName(meta.mode);
  out += "\", \"mode_step\": ";
  AppendNumber(&out, meta.mode_step);
  if (meta.event_file_name) {
    out += ", \"event_file_name\": ";
    AppendJsonStringAscii(&out, *meta.event_file_name);
  }
  out += "}, \"tensor_payload\": [";
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (i) out += ", ";
    out += "{\"tensorname\": ";
    AppendJsonStringAscii(&out, tensors[i].name);
    out += ", \"start_idx\": ";
    AppendNumber(&out, tensors[i].start);
    out += ", \"length\": ";
    AppendNumber(&out, tensors[i].length);
    out += '}';
  }
  out += "], \"shape_payload\": [";
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (i) out += ", ";
    out += "{\"tensorname\": ";
    AppendJsonStringAscii(&out, shapes[i].name);
    out += ", \"originalname\": ";
    AppendJsonStringAscii(&out, shapes[i].original_name);
    out += ", \"shape\": [";
    for (size_t k = 0; k < shapes[i].shape.size(); ++k) {
      if (k) out += ", ";
      AppendNumber(&out, shapes[i].shape[k]);
    }
    out += "]}";
  }
  out += "]}";
  return out;
}

}  // namespace smd::io
