#include "impl/format/layout.h"

#include "impl/core/text.h"

namespace smd::io {

int64_t IndexPrefixOf(int64_t step) {
  int64_t q = step / 1000;
  if (step % 1000 != 0 && step < 0) --q;
  return q;
}

std::string EventFileRelPath(int64_t step, std::string_view worker) {
  std::string s = ZeroPad(step, 12);
  std::string out = "events/";
  out += s;
  out += '/';
  out += s;
  out += '_';
  out.append(worker.data(), worker.size());
  out += ".tfevents";
  return out;
}

std::string IndexDirRelPath(int64_t step) { return "index/" + ZeroPad(IndexPrefixOf(step), 9) + "/"; }

std::string IndexFileRelPath(int64_t step, std::string_view worker) {
  std::string out = IndexDirRelPath(step);
  out += ZeroPad(step, 12);
  out += '_';
  out.append(worker.data(), worker.size());
  out += ".json";
  return out;
}

std::string CollectionsDirRelPath() { return "collections/000000000"; }

std::string CollectionsFileRelPath(std::string_view worker) {
  return CollectionsDirRelPath() + "/" + std::string(worker) + "_collections.json";
}

namespace {

// The longest worker name, in bytes: the longest file name holding it, an event file's temporary
// name "<step>_<worker>.tfevents.tmp" with a 20-character step, must fit the 255-byte file name
// limit of common file systems (ext4, XFS, APFS, NTFS).
constexpr size_t kMaxWorkerNameBytes = 255 - 20 - 1 - 13;

}  // namespace

// Also refused: names longer than kMaxWorkerNameBytes.
Status ValidateWorkerName(std::string_view w) {
  auto bad = [&](const std::string& why) {
    return InvalidArgument("invalid worker name '" + std::string(w) + "': " + why);
  };
  if (w.empty()) return bad("it is empty");
  if (w.size() > kMaxWorkerNameBytes) {
    // Named by its start only: the whole name would make an unreadable message.
    return InvalidArgument("invalid worker name '" + std::string(w.substr(0, 40)) + "...': it is " +
                           std::to_string(w.size()) + " bytes long; at most " +
                           std::to_string(kMaxWorkerNameBytes) +
                           " fit in its file names (a file name holds at most 255 bytes)");
  }
  if (!IsValidUtf8(w)) return bad("it is not valid UTF-8");
  if (w == "." || w == "..") return bad("it would name a folder outside the trial");
  for (char c : w) {
    if (c == '/' || c == '\\') return bad("it contains a path separator");
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return bad("it contains a control character");
  }
  if (w[0] == '_' || w.find("__") != std::string_view::npos) {
    return bad("names that begin with '_' or contain \"__\" are read back as TF device strings");
  }
  return Status::Ok();
}

std::optional<int64_t> StepFromFileName(std::string_view base) {
  size_t us = base.find('_');
  if (us == std::string_view::npos) return std::nullopt;
  return ParseInt64(base.substr(0, us));
}

std::optional<std::string> WorkerFromFileName(std::string_view base) {
  size_t i = 0;
  if (i < base.size() && base[i] == '-') ++i;
  size_t digits = i;
  while (i < base.size() && base[i] >= '0' && base[i] <= '9') ++i;
  if (i == digits || i >= base.size() || base[i] != '_') return std::nullopt;
  std::string_view rest = base.substr(i + 1);
  for (std::string_view ext : {std::string_view(".json"), std::string_view(".tfevents"),
                               std::string_view(".csv")}) {
    if (rest.size() > ext.size() && rest.substr(rest.size() - ext.size()) == ext) {
      return std::string(rest.substr(0, rest.size() - ext.size()));
    }
  }
  return std::nullopt;
}

}  // namespace smd::io
