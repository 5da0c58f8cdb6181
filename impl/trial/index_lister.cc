#include "impl/trial/index_lister.h"

#include <algorithm>

#include "impl/core/text.h"
#include "impl/format/layout.h"
#include "impl/trial/trial_internal.h"

namespace smd::trial {

Result<std::vector<IndexFileName>> IndexLister::ListNew(bool* listed_any, const Warn& warn) {
  *listed_any = false;
  std::vector<IndexFileName> out;
  if (watcher_) {
    watcher_->Watch("");
    watcher_->Watch("index");
  }
  // Files sort before `floor` are not listed again: those before the cursor, and (a pure
  // shortcut) those of steps before range_steps' begin, which are never read. The listings
  // start there: only step folders from the floor's on, and in the cursor's folder only the
  // names from the cursor's on.
  std::string floor = cursor_;
  if (range_begin_ > 0) {
    std::string range_floor =
        io::IndexDirRelPath(range_begin_) + ZeroPad(range_begin_, 12);
    if (range_floor > floor) floor = std::move(range_floor);
  }
  std::string cursor_dir;
  if (!floor.empty()) {
    size_t a = floor.find('/');
    size_t b = floor.find('/', a + 1);
    cursor_dir = floor.substr(a + 1, b - a - 1);
  }
  std::string cursor_dir_rel, cursor_name;  // cursor_ as (folder, name)
  if (!cursor_.empty()) {
    size_t slash = cursor_.rfind('/');
    cursor_dir_rel = cursor_.substr(0, slash);
    cursor_name = cursor_.substr(slash + 1);
  }
  // Files whose read failed before come first, wherever the cursor is now.
  for (const auto& kv : unread_) {
    IndexFileName f;
    f.rel = kv.first;
    f.step = kv.second.first;
    f.worker = kv.second.second;
    out.push_back(std::move(f));
  }
  const size_t retried = out.size();
  auto dirs = storage_->List("index", cursor_dir);  // every path in an earlier one is before it
  if (!dirs.ok()) {
    if (dirs.status().code() == Code::kNotFound) return out;
    return dirs.status().WithContext("listing the index folders of '" + storage_->root() + "'");
  }
  // Folders in the order of the paths under them ("index/<d>/..."), names sorted within each:
  // the files come out in path order without sorting them afterwards.
  std::sort(dirs->begin(), dirs->end(),
            [](const std::string& a, const std::string& b) { return a + '/' < b + '/'; });
  ++listings_;
  for (const std::string& d : dirs.value()) {
    if (d < cursor_dir) continue;  // every path in it sorts before the cursor
    const std::string dir_rel = "index/" + d;
    if (watcher_) watcher_->Watch(dir_rel);
    // Names before the cursor's, in its folder, sort before the cursor: skipped below anyway.
    auto names = storage_->List(dir_rel, dir_rel == cursor_dir_rel ? std::string_view(cursor_name)
                                                                   : std::string_view());
    if (!names.ok()) {
      if (names.status().code() == Code::kNotFound) continue;  // vanished
      if (storage_->FileSize(dir_rel).ok()) continue;  // a file, where a step folder should be
      if (names.status().code() == Code::kCorrupt) {  // a link that leads out of the trial
        warn("skipped index folder '" + storage_->Describe(dir_rel) + "': " +
                   names.status().message());
        continue;
      }
      // Anything else (an I/O error, a listing S3 could not give after its retries) must not
      // pass for an empty folder: its steps would be skipped for good once the cursor moved on.
      return names.status().WithContext("listing '" + storage_->Describe(dir_rel) + "'");
    }
    for (const std::string& name : names.value()) {
      if (name.size() <= 5 || !EndsWith(name, ".json")) continue;
      std::string rel = dir_rel + "/" + name;
      if (rel < floor) {
        if (rel >= cursor_) *listed_any = true;  // listed by smdebug, skipped by the range
        continue;
      }
      *listed_any = true;
      if (read_files_.count(rel) || unread_.count(rel)) continue;
      std::optional<int64_t> step = io::StepFromFileName(name);
      std::optional<std::string> worker = io::WorkerFromFileName(name);
      if (!step || !worker || worker->empty()) {
        warn("skipped index file '" + storage_->Describe(rel) +
                   "': its name is not <step>_<worker>.json");
        read_files_.insert(rel);
        continue;
      }
      if (*step < 0) {
        // No writer names a step below 0 (smdebug refuses them): a stray or hostile file.
        warn("skipped index file '" + storage_->Describe(rel) + "': step " +
                   std::to_string(*step) + " is negative");
        read_files_.insert(rel);
        continue;
      }
      if ((range_begin_ >= 0 && *step < range_begin_) ||
          (range_end_ >= 0 && *step >= range_end_)) {
        continue;  // outside range_steps: never read (and not remembered, as in smdebug)
      }
      IndexFileName f;
      f.rel = std::move(rel);
      f.step = *step;
      f.worker = (*worker)[0] == '_' ? DeserializeWorker(std::move(*worker)) : std::move(*worker);
      out.push_back(std::move(f));
    }
  }
  if (retried > 0) {
    std::sort(out.begin(), out.end(),
              [](const IndexFileName& a, const IndexFileName& b) { return a.rel < b.rel; });
  }
  return out;
}

void IndexLister::RememberUnread(const IndexFileName& f) {
  if (unread_.emplace(f.rel, std::make_pair(f.step, f.worker)).second) ++unread_steps_[f.step];
}

void IndexLister::ForgetUnread(const std::string& rel) {
  if (unread_.empty()) return;
  auto it = unread_.find(rel);
  if (it == unread_.end()) return;
  auto s = unread_steps_.find(it->second.first);
  if (s != unread_steps_.end() && --s->second <= 0) unread_steps_.erase(s);
  unread_.erase(it);
}

void IndexLister::Advance(const std::string& last_worker, int64_t* last_complete_step,
                          int64_t known_steps, int64_t window) {
  int64_t token_step = 0;
  if (!cursor_.empty()) token_step = io::StepFromFileName(BaseName(cursor_)).value_or(0);
  if (*last_complete_step >= token_step) {
    cursor_ = io::IndexFileRelPath(*last_complete_step, last_worker);
  }
  // (written so that a last complete step of INT64_MAX does not overflow)
  if (known_steps - 1 - *last_complete_step > window) {
    const int64_t step = *last_complete_step + window / 2;
    cursor_ = io::IndexFileRelPath(step, last_worker);
    *last_complete_step = step;
  }
}

void IndexLister::ForgetReadBeforeCursor() {
  if (cursor_.empty()) return;
  for (auto it = read_files_.begin(); it != read_files_.end();) {
    it = *it < cursor_ ? read_files_.erase(it) : std::next(it);
  }
}

}  // namespace smd::trial
