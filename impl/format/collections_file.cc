#include "impl/format/collections_file.h"

#include <cjson/cJSON.h>

#include <cmath>
#include <memory>

#include "impl/core/text.h"

namespace smd::trial {
namespace {

Status BadCollections(const std::string& file, const std::string& what) {
  return Corrupt("malformed collections file '" + file + "': " + what);
}

Result<std::vector<std::string>> StringList(const cJSON* item, const std::string& file,
                                            const std::string& what) {
  std::vector<std::string> out;
  if (item == nullptr || cJSON_IsNull(item) || cJSON_IsFalse(item)) return out;
  if (cJSON_IsString(item)) {
    if (!IsValidUtf8(item->valuestring)) return BadCollections(file, what + " is not UTF-8");
    out.emplace_back(item->valuestring);
    return out;
  }
  if (!cJSON_IsArray(item)) return BadCollections(file, what + " is not a list of strings");
  for (const cJSON* e = item->child; e != nullptr; e = e->next) {
    if (!cJSON_IsString(e)) return BadCollections(file, what + " holds a non-string");
    if (!IsValidUtf8(e->valuestring)) return BadCollections(file, what + " is not UTF-8");
    out.emplace_back(e->valuestring);
  }
  return out;
}

}  // namespace

Result<CollectionsFile> ParseCollectionsFile(std::string_view text, const std::string& file) {
  std::unique_ptr<cJSON, void (*)(cJSON*)> root(cJSON_ParseWithLength(text.data(), text.size()),
                                                cJSON_Delete);
  if (!root || !cJSON_IsObject(root.get())) return BadCollections(file, "not a JSON object");
  const cJSON* colls = cJSON_GetObjectItemCaseSensitive(root.get(), "collections");
  if (colls == nullptr || !cJSON_IsObject(colls)) {
    return BadCollections(file, "no \"collections\" object");
  }
  CollectionsFile out;
  for (const cJSON* c = colls->child; c != nullptr; c = c->next) {
    const std::string key = c->string ? c->string : "";
    if (!IsValidUtf8(key)) return BadCollections(file, "a collection name is not UTF-8");
    if (!cJSON_IsObject(c)) return BadCollections(file, "collection '" + key + "' is not an object");
    CollectionInfo info;
    const cJSON* name = cJSON_GetObjectItemCaseSensitive(c, "name");
    info.name = cJSON_IsString(name) ? name->valuestring : key;
    if (!IsValidUtf8(info.name)) return BadCollections(file, "a collection name is not UTF-8");
    SMD_ASSIGN_OR_RETURN(info.include_regex,
                         StringList(cJSON_GetObjectItemCaseSensitive(c, "include_regex"), file,
                                    "include_regex of '" + info.name + "'"));
    SMD_ASSIGN_OR_RETURN(info.tensor_names,
                         StringList(cJSON_GetObjectItemCaseSensitive(c, "tensor_names"), file,
                                    "tensor_names of '" + info.name + "'"));
    const cJSON* rc = cJSON_GetObjectItemCaseSensitive(c, "reduction_config");
    if (cJSON_IsObject(rc)) {
      info.has_reduction_config = true;
      const cJSON* r = cJSON_GetObjectItemCaseSensitive(rc, "reductions");
      if (cJSON_IsString(r)) {
        if (!IsValidUtf8(r->valuestring)) {
          return BadCollections(file, "the reductions of '" + info.name + "' are not UTF-8");
        }
        info.reductions = r->valuestring;
      }
      info.save_raw_tensor = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(rc, "save_raw_tensor"));
      info.save_shape = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(rc, "save_shape"));
    }
    const cJSON* sh = cJSON_GetObjectItemCaseSensitive(c, "save_histogram");
    info.save_histogram = sh == nullptr || cJSON_IsNull(sh) || cJSON_IsTrue(sh);
    std::string n = info.name;
    out.collections[n] = std::move(info);  // the last of a repeated name wins, as in smdebug
  }
  const cJSON* meta = cJSON_GetObjectItemCaseSensitive(root.get(), "_meta");
  const cJSON* nw = cJSON_IsObject(meta) ? cJSON_GetObjectItemCaseSensitive(meta, "num_workers") : nullptr;
  if (cJSON_IsNumber(nw) && nw->valuedouble >= 1 && nw->valuedouble < 1e9 &&
      std::floor(nw->valuedouble) == nw->valuedouble) {
    out.num_workers = static_cast<int64_t>(nw->valuedouble);
  }
  return out;
}

std::string BuildCollectionsJson(const std::vector<CollectionsFileEntry>& collections,
                                 int64_t num_workers) {
  std::string out = "{\"collections\": {";
  for (size_t i = 0; i < collections.size(); ++i) {
    const CollectionsFileEntry& c = collections[i];
    if (i) out += ", ";
    AppendJsonStringAscii(&out, c.name);
    out += ": {\"name\": ";
    AppendJsonStringAscii(&out, c.name);
    out += ", \"include_regex\": [";
    for (size_t k = 0; k < c.include_regex.size(); ++k) {
      if (k) out += ", ";
      AppendJsonStringAscii(&out, c.include_regex[k]);
    }
    out += "], \"tensor_names\": [";
    for (size_t k = 0; k < c.tensor_names.size(); ++k) {
      if (k) out += ", ";
      AppendJsonStringAscii(&out, c.tensor_names[k]);
    }
    out += "], \"reduction_config\": ";
    out += c.reduction_config_json;
    out += ", \"save_config\": {";
    for (size_t m = 0; m < kNumModes; ++m) {
      if (m) out += ", ";
      out += '"';
      out += ModeName(kAllModesInOrder[m]);
      out += "\": ";
      out += c.save_config_json[m];
    }
    out += "}, \"save_histogram\": ";
    out += c.save_histogram ? "true" : "false";
    out += '}';
  }
  out += "}, \"_meta\": {\"num_workers\": ";
  out += std::to_string(num_workers);
  out += "}}";
  return out;
}

}  // namespace smd::trial
