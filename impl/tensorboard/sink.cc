#include "impl/tensorboard/sink.h"

#include <cjson/cJSON.h>

#include <cerrno>
#include <memory>
#include <sstream>

#include "impl/core/json_scan.h"
#include "impl/core/environment.h"
#include "impl/storage/open.h"
#include "impl/tensorboard/summary.h"

namespace smd::tensorboard {

std::string* RecordBatch::Begin(Mode mode, int64_t step, double wall_time) {
  if (runs_.empty() || runs_.back().mode != mode || runs_.back().step != step) {
    runs_.push_back({mode, step, wall_time, bytes_.size(), bytes_.size()});
  }
  return &bytes_;
}

void RecordBatch::End() {
  if (!runs_.empty()) runs_.back().end = bytes_.size();
}

Status EncodeTensorSummaries(const TensorSummaryRequest& req, RecordBatch* out) {
  const bool hist = !req.histogram_tag.empty() && req.dtype != DType::kBool && req.num_elements > 0;
  const bool scalar = !req.scalar_tag.empty() && req.num_elements == 1;
  if (!hist && !scalar) return Status::Ok();
  if (req.data == nullptr && (scalar || req.histogram == nullptr)) {
    return InvalidArgument("no data for the TensorBoard summaries");
  }
  if (hist) {
    Histogram computed;
    const Histogram* h = req.histogram;
    if (h == nullptr) {
      SMD_ASSIGN_OR_RETURN(bool any, ComputeHistogram(req.dtype, req.data, req.num_elements, &computed));
      // As smdebug: a tensor with no value within the buckets (all NaN, infinite or beyond 1e20)
      // gets no histogram.
      if (any) h = &computed;
    }
    if (h != nullptr) {
      std::string* buf = out->Begin(req.mode, req.step, req.wall_time);
      AppendHistogramRecord(buf, req.wall_time, req.step, SanitizeTag(req.histogram_tag), *h);
      out->End();
    }
  }
  if (scalar) {
    SMD_ASSIGN_OR_RETURN(double v, ScalarValue(req.dtype, req.data, req.num_elements));
    std::string* buf = out->Begin(req.mode, req.step, req.wall_time);
    AppendScalarRecord(buf, req.wall_time, req.step, SanitizeTag(req.scalar_tag), static_cast<float>(v));
    out->End();
  }
  return Status::Ok();
}

Status TensorBoardSink::Write(const RecordBatch& batch) {
  for (const RecordBatch::Run& r : batch.runs()) {
    SMD_RETURN_IF_ERROR(files_.Append(
        r.mode, r.step, r.wall_time,
        std::string_view(batch.bytes().data() + r.begin, r.end - r.begin)));
  }
  return Status::Ok();
}

std::optional<std::string> ResolveTensorBoardDir(const std::string& out_dir, bool export_tensorboard,
                                                 const std::optional<std::string>& tensorboard_dir) {
  if (tensorboard_dir && !tensorboard_dir->empty()) {
    // "~" and "~/..." are the home folder, as smdebug's os.path.expanduser.
    return io::ExpandHome(*tensorboard_dir);
  }
  if (!export_tensorboard) return std::nullopt;
  std::string dir = io::ExpandHome(out_dir);
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir + "/tensorboard";
}

Result<std::optional<std::string>> SageMakerTensorBoardDir() {
  const std::string path = env::TensorBoardConfigPath();
  Result<std::string> text = env::ReadConfigFile("the TensorBoard configuration", path);
  if (!text.ok() && text.status().code() == Code::kNotFound) return std::optional<std::string>();
  if (!text.ok()) return text.status();
  if (JsonHasNulEscape(*text)) {
    return InvalidArgument("the TensorBoard configuration '" + path +
                           "' holds a \\u0000 (NUL) in a string, which no path can hold");
  }
  std::unique_ptr<cJSON, void (*)(cJSON*)> root(cJSON_ParseWithLength(text->data(), text->size()),
                                                 cJSON_Delete);
  if (root == nullptr || !cJSON_IsObject(root.get())) {
    return InvalidArgument("the TensorBoard configuration '" + path + "' is not a JSON object");
  }
  const cJSON* local = cJSON_GetObjectItemCaseSensitive(root.get(), "LocalPath");
  if (local == nullptr || cJSON_IsNull(local)) return std::optional<std::string>();
  if (!cJSON_IsString(local) || local->valuestring[0] == '\0') {
    return InvalidArgument("the TensorBoard configuration '" + path +
                           "': LocalPath must be a non-empty string");
  }
  return std::optional<std::string>(local->valuestring);
}

}  // namespace smd::tensorboard
