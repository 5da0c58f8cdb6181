// A trial's in-memory index (BEHAVIOR.md §6.6): what the index files it read say, in compact
// tables. Per tensor and mode, the (mode step, worker) -> record location and saved shape, and
// the saved reductions; per global step, its mode, workers and tensors; the mode step <-> global
// step maps; whether each step is complete. Names (tensors, workers, reductions, event files)
// and shapes are interned: entries hold small ids.
//
// Not synchronized: the trial reads it under its table lock held shared, and applies index files
// to it (Resolve, Reserve, Apply, Shrink) with that lock held exclusively.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "impl/core/mode.h"
#include "impl/format/index_parser.h"
#include "impl/trial/index_lister.h"

namespace smd::trial {

// smdebug's StepState, same values.
enum class StepState : int { kUnavailable = 0, kAvailable = 1, kNotYetAvailable = 2 };

constexpr uint32_t kNone = UINT32_MAX;

// One (tensor, mode step, worker): where its raw value's record is, and its saved shape.
struct StepEntry {
  int64_t mode_step;
  uint32_t worker;
  uint32_t file;  // kNone: no raw value location
  uint64_t offset;
  uint64_t length;
  uint32_t shape;  // kNone: no saved shape
  uint32_t reserved;
};

// One saved reduction of a (tensor, mode step, worker).
struct RedEntry {
  int64_t mode_step;
  uint32_t worker;
  uint16_t red;
  uint8_t abs;
  uint8_t reserved;
  uint32_t file;
  uint32_t reserved2;
  uint64_t offset;
  uint64_t length;
};

struct TensorData {
  std::string name;
  std::vector<StepEntry> by_mode[kNumModes];  // sorted by (mode_step, worker id)
  std::vector<RedEntry> reds[kNumModes];      // sorted by (mode_step, worker id, red, abs)
  uint8_t mode_mask = 0;
  // The "originalname" of the last shape entry read for it (smdebug's Tensor.original_name: the
  // name itself when the entry has none); none before a shape entry.
  std::optional<std::string> original_name;
};

struct StepInfo {
  Mode mode = Mode::kGlobal;  // of the first index file seen for the step
  int64_t mode_step = 0;
  std::vector<uint32_t> workers;  // sorted ids of the workers with an index file for it
  std::vector<uint32_t> tensors;  // sorted ids of the tensors saved at it
};

// A tensor found at a step: the mode step it was saved under, the chosen worker's entry and the
// reductions saved with it.
struct FoundEntry {
  Mode mode = Mode::kGlobal;
  int64_t mode_step = 0;
  StepEntry entry{};
  std::vector<RedEntry> reds;
};

// What an index file's tag names: a tensor's raw value, or one of its reductions.
struct ResolvedTag {
  uint32_t tensor = kNone;
  uint32_t red = kNone;  // kNone: a raw tensor entry
  bool abs = false;
};

class IndexTables {
 public:
  // lister (outlives the tables) says which steps have an index file still to be read: such a
  // step is never complete, and nothing about steps is final while one is pending.
  explicit IndexTables(const IndexLister* lister) : lister_(lister) {}
  IndexTables(const IndexTables&) = delete;
  IndexTables& operator=(const IndexTables&) = delete;

  // ---- completeness ----
  // From the collections file; a step is complete when this many workers wrote its index file.
  void set_num_workers(int64_t n) { num_workers_ = n; }
  int64_t num_workers() const { return num_workers_; }
  int64_t last_complete_step() const { return last_complete_step_; }
  // The job ended and everything was read: every step known is complete, no more will come.
  bool loaded_all() const { return loaded_all_; }
  void MarkLoadedAll();
  // The lister's cursor moves from what the tables know (and may give up on steps).
  void AdvanceCursor(IndexLister* lister, const std::string& last_worker, int64_t window);
  bool IsComplete(int64_t global_step) const;

  // ---- applying index files ----
  // Resolves the tags of an index file to (tensor, reduction) ids, interning new names.
  void Resolve(const ParsedIndex& p, std::vector<ResolvedTag>* out);
  // Reserves the tables of the tensors a batch of resolved files adds to (once per batch, to the
  // size they will have); files_after: files of this refresh after the batch; live: the job has
  // not ended. Adds to *grown the (tensor, mode) tables given room beyond the batch.
  void Reserve(const std::vector<const ParsedIndex*>& files,
               const std::vector<std::vector<ResolvedTag>>& resolved, size_t files_after,
               bool live, std::vector<uint32_t>* grown);
  // Gives back what a guess of Reserve left unused (a tensor that stopped appearing).
  void Shrink(const std::vector<uint32_t>& grown);
  // Registers one index file of `worker` at `global_step`.
  void Apply(const ParsedIndex& p, const std::vector<ResolvedTag>& resolved, int64_t global_step,
             const std::string& worker);

  // ---- steps ----
  std::vector<Mode> Modes() const;
  std::vector<int64_t> Steps(Mode mode, bool show_incomplete) const;
  // The global step of a mode step (GLOBAL: the step itself); nullopt if unknown.
  std::optional<int64_t> GlobalStep(Mode mode, int64_t mode_step) const;
  const StepInfo* Step(int64_t global_step) const;
  // The last step of `mode`, incomplete included; -1 if none.
  int64_t LastStep(Mode mode) const;
  StepState HasPassedStep(int64_t step, Mode mode) const;

  // ---- tensors ----
  size_t num_tensors() const { return tensors_.size(); }
  // Never moves: a reference stays valid while the tables live.
  const std::string& tensor_name(uint32_t id) const { return tensors_[id]->name; }
  const std::optional<std::string>& tensor_original_name(uint32_t id) const {
    return tensors_[id]->original_name;
  }
  std::optional<uint32_t> FindTensor(std::string_view name) const;
  // The tensors saved in `mode` (all for GLOBAL), by id.
  std::vector<uint32_t> TensorsOfMode(Mode mode) const;
  std::vector<int64_t> TensorSteps(uint32_t id, Mode mode, bool show_incomplete) const;
  // A tensor at a step (a global step translated to its mode step when the tensor was not saved
  // in GLOBAL mode). worker null: the lexicographically smallest that saved it.
  enum class FindResult { kFound, kNotFound, kNoSuchWorker };
  FindResult Find(uint32_t id, int64_t step, Mode mode, const std::string* worker,
                  FoundEntry* out) const;
  // The workers that saved a tensor at the step of a found entry.
  std::vector<std::string> WorkersOf(uint32_t id, const FoundEntry& f) const;
  std::vector<int64_t> Shape(uint32_t shape) const;
  const std::string& reduction_name(uint16_t red) const { return red_names_[red]; }
  // An event file's relative path (never moves) and the bytes its indexed records cover.
  const std::string& event_file(uint32_t file) const { return event_files_[file]; }
  uint64_t event_file_span(uint32_t file) const { return event_file_span_[file]; }

  struct Stats {
    size_t entries = 0;
    size_t reduction_entries = 0;
    size_t table_bytes = 0;
  };
  Stats GetStats() const;

 private:
  // The first step of `mode` at or after `step` (a mode step for TRAIN/EVAL/PREDICT) with its
  // global step, incomplete steps included.
  std::optional<std::pair<int64_t, int64_t>> StepAtOrAfter(Mode mode, int64_t step) const;
  StepState HasPassedStepIgnoringUnread(int64_t step, Mode mode) const;

  uint32_t InternWorker(const std::string& w);
  uint32_t InternTensor(std::string_view name);
  uint32_t InternReduction(std::string_view name);
  uint32_t InternShape(const int64_t* dims, uint32_t ndim);
  uint32_t InternEventFile(std::string_view rel);

  const IndexLister* const lister_;
  int64_t num_workers_ = 1;
  int64_t last_complete_step_ = -1;
  bool loaded_all_ = false;

  std::vector<std::string> workers_;  // worker names from index file names, by id
  std::unordered_map<std::string, uint32_t> worker_ids_;
  std::vector<std::unique_ptr<TensorData>> tensors_;
  std::unordered_map<std::string_view, uint32_t> tensor_ids_;  // keys view TensorData::name
  std::vector<std::string> red_names_;
  std::unordered_map<std::string, uint32_t> red_ids_;
  std::vector<int64_t> shape_dims_;
  std::vector<std::pair<uint32_t, uint32_t>> shapes_;  // (first dim, ndim)
  std::unordered_multimap<uint64_t, uint32_t> shape_ids_;
  // Relative paths, by id. A deque: its strings never move as it grows, so a reader may keep a
  // reference after dropping the lock.
  std::deque<std::string> event_files_;
  std::vector<uint64_t> event_file_span_;  // bytes covered by the records the index names
  std::unordered_map<std::string_view, uint32_t> event_file_ids_;  // keys view event_files_

  std::map<int64_t, StepInfo> steps_;             // global step -> info
  std::map<int64_t, int64_t> mode_to_global_[3];  // TRAIN, EVAL, PREDICT
  std::vector<ResolvedTag> predicted_;  // how the previous file's tags were resolved
};

}  // namespace smd::trial
