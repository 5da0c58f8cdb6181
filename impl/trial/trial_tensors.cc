// Trial: per-tensor queries (steps, values, shapes, reductions, workers).
#include "impl/trial/trial.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <thread>

#include "impl/core/reductions.h"
#include "impl/core/regex.h"
#include "impl/core/text.h"
#include "impl/format/event.h"
#include "impl/format/layout.h"
#include "impl/format/record.h"
#include "impl/format/index_parser.h"
#include "impl/trial/record_cache.h"
#include "impl/trial/parallel.h"
#include "impl/trial/trial_internal.h"

namespace smd::trial {

// ---------------------------------------------------------------------------------------------
// Tensor queries

Result<std::vector<int64_t>> Trial::TensorSteps(uint32_t id, Mode mode, bool show_incomplete) {
  SMD_RETURN_IF_ERROR(MaybeRefresh());
  std::shared_lock<std::shared_mutex> lock(mu_);
  return tables_.TensorSteps(id, mode, show_incomplete);
}

// BEHAVIOR.md §7.1, with NoMoreData raised properly.
Result<FoundEntry> Trial::Resolve(uint32_t id, int64_t step, Mode mode, const std::string* worker) {
  using FR = IndexTables::FindResult;
  FoundEntry f;
  FR r;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    r = tables_.Find(id, step, mode, worker, &f);
  }
  if (r == FR::kFound) return f;
  if (r == FR::kNoSuchWorker) return InvalidWorkerError(*worker);
  SMD_RETURN_IF_ERROR(MaybeRefresh());
  std::shared_lock<std::shared_mutex> lock(mu_);
  switch (tables_.HasPassedStep(step, mode)) {
    case StepState::kAvailable:
      r = tables_.Find(id, step, mode, worker, &f);
      if (r == FR::kFound) return f;
      if (r == FR::kNoSuchWorker) return InvalidWorkerError(*worker);
      return TensorUnavailableForStepError(tables_.tensor_name(id), step, mode);
    case StepState::kUnavailable:
      return StepUnavailableError(step, mode);
    case StepState::kNotYetAvailable:
      if (tables_.loaded_all()) {
        const std::vector<int64_t> done = tables_.Steps(mode, false);
        return NoMoreDataError(step, mode, done.empty() ? -1 : done.back());
      }
      return StepNotYetAvailableError(step, mode);
  }
  return Internal("unreachable step state");
}

Result<Trial::ValueInfo> Trial::TensorValueInfo(uint32_t id, int64_t step, Mode mode,
                                                const std::string* worker) {
  SMD_ASSIGN_OR_RETURN(FoundEntry f, Resolve(id, step, mode, worker));
  const StepEntry& e = f.entry;
  if (e.file != kNone && e.length > kWholeRecordInfoMax &&
      !records_->cache().GetValue(e.file, e.offset, RecordCache::TagKey(TensorName(id)))) {
    SMD_ASSIGN_OR_RETURN(std::optional<ValueInfo> head,
                         records_->ReadHead(LocateRecord(e.file, e.offset, e.length), TensorName(id),
                                            RecordOwner{&TensorName(id), step, mode}));
    if (head) return std::move(*head);
  }
  SMD_ASSIGN_OR_RETURN(ValuePtr v, ValueOf(id, f, step, mode));
  ValueInfo out;
  out.dtype = v->dtype();
  out.shape = v->shape();
  return out;
}

Result<ValuePtr> Trial::ValueOf(uint32_t id, const FoundEntry& f, int64_t step, Mode mode) {
  const std::string& name = TensorName(id);
  if (f.entry.file == kNone) {
    return TensorUnavailableForStepError(name, step, mode, !f.reds.empty());
  }
  return ReadRecord(f.entry.file, f.entry.offset, f.entry.length, name, id, step, mode);
}

Result<ValuePtr> Trial::TensorValue(uint32_t id, int64_t step, Mode mode, const std::string* worker) {
  SMD_ASSIGN_OR_RETURN(FoundEntry f, Resolve(id, step, mode, worker));
  return ValueOf(id, f, step, mode);
}

Result<std::vector<std::pair<int64_t, ValuePtr>>> Trial::TensorValues(uint32_t id, Mode mode,
                                                                      const std::string* worker) {
  SMD_ASSIGN_OR_RETURN(std::vector<int64_t> steps, TensorSteps(id, mode, false));
  std::vector<FoundEntry> found;
  found.reserve(steps.size());
  for (int64_t s : steps) {
    SMD_ASSIGN_OR_RETURN(FoundEntry f, Resolve(id, s, mode, worker));
    found.push_back(std::move(f));
  }
  // The records live in different event files: read them in parallel. What the reading threads
  // would otherwise share (the cache, the trial's lock, the read counter) is done before and
  // after, once for all: shared state bounced between cores costs more than the reads gain.
  const size_t n = steps.size();
  const std::string& name = TensorName(id);
  std::vector<std::pair<uint32_t, uint64_t>> keys(n);
  for (size_t i = 0; i < n; ++i) keys[i] = {found[i].entry.file, found[i].entry.offset};
  std::vector<ValuePtr> values;
  const uint64_t tag = RecordCache::TagKey(name);
  records_->cache().GetValues(keys, tag, &values);
  std::vector<const std::string*> rels(n, nullptr);
  std::vector<uint64_t> spans(n, 0);
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    for (size_t i = 0; i < n; ++i) {
      if (found[i].entry.file == kNone) continue;
      rels[i] = &tables_.event_file(found[i].entry.file);
      spans[i] = tables_.event_file_span(found[i].entry.file);
    }
  }
  std::vector<Status> errors(n);
  std::vector<ValuePtr> fresh(n);
  std::vector<uint8_t> reads(n, 0);
  ParallelFor(0, n, kParallelMinValues, 4, kParallelBlock, [&](size_t i) {
    const StepEntry& e = found[i].entry;
    if (e.file == kNone) {
      errors[i] = TensorUnavailableForStepError(name, steps[i], mode, !found[i].reds.empty());
      return;
    }
    if (values[i]) return;  // cached
    int r = 0;
    RecordLocation at{e.file, rels[i], spans[i], e.offset, e.length};
    auto v = records_->ReadUncached(at, name, RecordOwner{&name, steps[i], mode},
                                    /*use_blocks=*/false, &r);
    reads[i] = static_cast<uint8_t>(r);
    if (v.ok()) {
      fresh[i] = std::move(v).value();
    } else {
      errors[i] = v.status();
    }
  });
  records_->cache().PutValues(keys, tag, fresh);
  std::vector<uint32_t> touched;
  uint64_t total_reads = 0;
  for (size_t i = 0; i < n; ++i) {
    total_reads += reads[i];
    if (fresh[i]) {
      touched.push_back(keys[i].first);
      values[i] = std::move(fresh[i]);
    }
  }
  records_->cache().TouchFiles(touched);
  records_->CountReads(total_reads);
  std::vector<std::pair<int64_t, ValuePtr>> out;
  out.reserve(steps.size());
  for (size_t i = 0; i < n; ++i) {
    if (!errors[i].ok()) return errors[i];  // the first failing step, as a loop would report
    out.emplace_back(steps[i], std::move(values[i]));
  }
  return out;
}

Result<std::vector<int64_t>> Trial::TensorShape(uint32_t id, int64_t step, Mode mode,
                                                const std::string* worker) {
  SMD_ASSIGN_OR_RETURN(FoundEntry f, Resolve(id, step, mode, worker));
  if (f.entry.shape != kNone) {
    std::shared_lock<std::shared_mutex> lock(mu_);
    return tables_.Shape(f.entry.shape);
  }
  auto v = ValueOf(id, f, step, mode);
  if (!v.ok()) {
    if (v.status().code() == Code::kTensorUnavailableForStep) {
      return ShapeUnavailableForStepError(TensorName(id), step, mode);
    }
    return v.status();
  }
  return v.value()->shape();
}

Result<std::vector<std::pair<int64_t, std::vector<int64_t>>>> Trial::TensorShapes(
    uint32_t id, Mode mode, const std::string* worker) {
  SMD_ASSIGN_OR_RETURN(std::vector<int64_t> steps, TensorSteps(id, mode, false));
  std::vector<std::pair<int64_t, std::vector<int64_t>>> out;
  out.reserve(steps.size());
  for (int64_t s : steps) {
    SMD_ASSIGN_OR_RETURN(std::vector<int64_t> shape, TensorShape(id, s, mode, worker));
    out.emplace_back(s, std::move(shape));
  }
  return out;
}

Result<std::vector<std::string>> Trial::TensorReductionNames(uint32_t id, int64_t step, Mode mode,
                                                             const std::string* worker) {
  SMD_ASSIGN_OR_RETURN(FoundEntry f, Resolve(id, step, mode, worker));
  std::vector<std::string> out;
  std::shared_lock<std::shared_mutex> lock(mu_);
  for (const RedEntry& r : f.reds) out.push_back((r.abs ? "abs_" : "") + tables_.reduction_name(r.red));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Result<ValuePtr> Trial::TensorReductionValue(uint32_t id, int64_t step, std::string_view reduction,
                                             Mode mode, const std::string* worker) {
  SMD_ASSIGN_OR_RETURN(FoundEntry f, Resolve(id, step, mode, worker));
  const std::string& name = TensorName(id);
  // The saved one: "abs_<r>" or "<r>", with "l1_norm"/"l2_norm" accepted for l1/l2.
  bool abs = false;
  std::string_view base = reduction;
  if (base.size() > 4 && base.compare(0, 4, "abs_") == 0) {
    abs = true;
    base.remove_prefix(4);
  }
  if (base == "l1_norm" || base == "l2_norm") base = base.substr(0, 2);
  const RedEntry* saved = nullptr;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    for (const RedEntry& r : f.reds) {
      if ((r.abs != 0) == abs && tables_.reduction_name(r.red) == base) saved = &r;
    }
  }
  if (saved != nullptr) {
    return ReadRecord(saved->file, saved->offset, saved->length,
                      ReductionTagOf(base, abs, name), id, step, mode);
  }
  // Not saved: compute it from the raw value, if that was saved.
  auto parsed = ParseReductionName(reduction);
  if (!parsed.ok()) {
    return InvalidArgument("Invalid reduction type " + std::string(reduction) + " (" +
                           parsed.status().message() + ")");
  }
  if (f.entry.file == kNone) return TensorUnavailableForStepError(name, step, mode, !f.reds.empty());
  SMD_ASSIGN_OR_RETURN(ValuePtr raw, ValueOf(id, f, step, mode));
  if (raw->is_string()) {
    return Unsupported("cannot compute reduction " + std::string(reduction) + " of string tensor " +
                       name);
  }
  auto rv = ComputeReduction(parsed->op, parsed->abs, raw->dtype(), raw->data(), raw->count());
  if (!rv.ok()) {
    return Status(rv.status().code(), "reduction " + std::string(reduction) + " of tensor " + name +
                                          " at step " + std::to_string(step) + ": " +
                                          rv.status().message());
  }
  std::shared_ptr<Value> out = Value::MakeNumeric(rv->dtype, {1});
  std::memcpy(out->mutable_data(), rv->bytes, DTypeSize(rv->dtype));
  return ValuePtr(std::move(out));
}

Result<std::vector<std::string>> Trial::TensorWorkers(uint32_t id, int64_t step, Mode mode) {
  auto find_all = [&](std::vector<std::string>* out) {
    std::shared_lock<std::shared_mutex> lock(mu_);
    FoundEntry f;
    if (tables_.Find(id, step, mode, nullptr, &f) != IndexTables::FindResult::kFound) return false;
    *out = tables_.WorkersOf(id, f);
    return true;
  };
  std::vector<std::string> out;
  if (!find_all(&out)) {
    SMD_RETURN_IF_ERROR(MaybeRefresh());
    if (!find_all(&out)) return TensorUnavailableForStepError(TensorName(id), step, mode);
  }
  std::sort(out.begin(), out.end());
  return out;
}

Result<std::vector<int64_t>> Trial::TensorPrevSteps(uint32_t id, int64_t step, size_t n, Mode mode) {
  SMD_ASSIGN_OR_RETURN(std::vector<int64_t> steps, TensorSteps(id, mode, false));
  auto end = std::upper_bound(steps.begin(), steps.end(), step);
  auto begin = steps.begin();
  if (n > 0 && static_cast<size_t>(end - begin) > n) begin = end - static_cast<ptrdiff_t>(n);
  return std::vector<int64_t>(begin, end);
}

}  // namespace smd::trial
