#include "impl/format/index_file.h"

#include "impl/core/text.h"

namespace smd::io {

std::string BuildIndexJson(const IndexMeta& meta, const std::vector<IndexTensorEntry>& tensors,
                           const std::vector<IndexShapeEntry>& shapes) {
  std::string out;
  out.reserve(128 + tensors.size() * 80 + shapes.size() * 96);
  out += "{\"meta\": {\"mode\": \"";
  out += ModeName(meta.mode);
  out += "\", \"mode_step\": ";
  out += std::to_string(meta.mode_step);
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
    out += std::to_string(tensors[i].start);
    out += ", \"length\": ";
    out += std::to_string(tensors[i].length);
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
      out += std::to_string(shapes[i].shape[k]);
    }
    out += "]}";
  }
  out += "]}";
  return out;
}

}  // namespace smd::io
