// smd dump PATH: the canonical JSON view of a trial (the format tests/interop/smdebug_dump.py
// describes), made only from the public Trial/Tensor API.
#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <tuple>
#include <memory>
#include <string>
#include <vector>

#include "capi_util.h"
#include "commands.h"
#include "json.h"
#include "smd/smd.h"

namespace smdtool {
namespace {

Json IntArray(const std::vector<int64_t>& v) {
  Json a = Json::Array();
  for (int64_t x : v) a.Push(Json::Int(x));
  return a;
}

Json StrArrayJson(std::vector<std::string> v, bool sort) {
  if (sort) std::sort(v.begin(), v.end());
  Json a = Json::Array();
  for (std::string& s : v) a.Push(Json::Str(std::move(s)));
  return a;
}

// Unexpected per-value errors, reported on stderr grouped by (tensor, call, message).
class Notes {
 public:
  void Add(const std::string& tensor, const char* call, int64_t step, const std::string& worker,
           const std::string& msg) {
    auto& where = groups_[{tensor, call, msg}];
    where.push_back(std::to_string(step) + (worker.empty() ? "" : "/" + worker));
  }
  bool empty() const { return groups_.empty(); }
  void Report() const {
    for (const auto& kv : groups_) {
      const auto& where = kv.second;
      std::string shown;
      for (size_t i = 0; i < where.size() && i < 8; ++i) shown += (i ? ", " : "") + where[i];
      if (where.size() > 8) shown += ", ... (" + std::to_string(where.size()) + " in all)";
      std::fprintf(stderr, "smd dump: note: '%s': %s failed (%s) at step(s) %s -> null\n",
                   Printable(std::get<0>(kv.first)).c_str(), std::get<1>(kv.first).c_str(),
                   Printable(std::get<2>(kv.first)).c_str(), Printable(shown).c_str());
    }
  }

 private:
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<std::string>> groups_;
};

const smd_mode kModeOrder[] = {SMD_MODE_TRAIN, SMD_MODE_EVAL, SMD_MODE_PREDICT};

// {"dtype", "shape", "sha256"} or, for strings, {"dtype": "str", "shape", "values"}.
Json DescribeValue(const smd_value* v, std::string* problem) {
  Json d = Json::Object();
  const smd_dtype dt = smd_value_dtype(v);
  const char* name = smd_dtype_name(dt);
  d.Set("dtype", Json::Str(name ? name : "unknown"));
  const size_t ndim = smd_value_ndim(v);
  const int64_t* shape = smd_value_shape(v);
  d.Set("shape", IntArray(std::vector<int64_t>(shape, shape + ndim)));
  if (dt == SMD_DTYPE_STRING) {
    Json values = Json::Array();
    for (size_t i = 0; i < smd_value_count(v); ++i) {
      const char* s = nullptr;
      size_t len = 0;
      Err e(smd_value_string(v, i, &s, &len));
      std::string str = e ? std::string() : std::string(s, len);
      if (e || !IsUtf8(str)) {
        *problem = e ? e.message() : "a string element is not UTF-8";
        return Json();
      }
      values.Push(Json::Str(std::move(str)));
    }
    d.Set("values", std::move(values));
  } else {
    d.Set("sha256", Json::Str(Sha256Hex(smd_value_data(v), smd_value_nbytes(v))));
  }
  return d;
}

Json DumpTensor(smd_trial* trial, const std::string& name, const std::vector<smd_mode>& modes,
                Notes* notes) {
  TensorPtr t;
  if (Err e{smd_trial_tensor(trial, name.c_str(), &t.p)}) ThrowFatal(e, "tensor '" + name + "'");

  Json steps = Json::Object();
  {
    Steps s;
    if (Err e{smd_tensor_steps(t.p, SMD_MODE_GLOBAL, false, &s.p, &s.n)}) {
      ThrowFatal(e, "steps of tensor '" + name + "'");
    }
    steps.Set("GLOBAL", IntArray(s.vec()));
  }
  for (smd_mode m : modes) {
    Steps all;
    if (Err e{smd_tensor_steps(t.p, m, true, &all.p, &all.n)}) {
      ThrowFatal(e, "steps of tensor '" + name + "'");
    }
    if (all.n == 0) continue;
    Steps done;
    if (Err e{smd_tensor_steps(t.p, m, false, &done.p, &done.n)}) {
      ThrowFatal(e, "steps of tensor '" + name + "'");
    }
    steps.Set(smd_mode_name(m), IntArray(done.vec()));
  }

  Json at = Json::Object();
  Steps global;
  if (Err e{smd_tensor_steps(t.p, SMD_MODE_GLOBAL, true, &global.p, &global.n)}) {
    ThrowFatal(e, "steps of tensor '" + name + "'");
  }
  for (int64_t g : global.vec()) {
    Json entry = Json::Object();
    smd_mode mode;
    int64_t mode_step;
    {
      Err e(smd_trial_mode(trial, g, &mode));
      entry.Set("mode", e ? Json() : Json::Str(smd_mode_name(mode)));
    }
    {
      Err e(smd_trial_mode_step(trial, g, &mode_step));
      entry.Set("mode_step", e ? Json() : Json::Int(mode_step));
    }
    StrArray workers;
    if (Err e{smd_tensor_workers(t.p, g, SMD_MODE_GLOBAL, &workers.a)}) {
      notes->Add(name, "workers()", g, "", e.message());
      entry.Set("workers", Json());
      at.Set(std::to_string(g), std::move(entry));
      continue;
    }
    Json per_worker = Json::Object();
    for (const std::string& w : workers.vec()) {
      Json x = Json::Object();
      {
        ValuePtr v;
        Err e(smd_tensor_value(t.p, g, SMD_MODE_GLOBAL, w.c_str(), &v.p));
        if (!e) {
          std::string problem;
          Json d = DescribeValue(v.p, &problem);
          if (!problem.empty()) notes->Add(name, "value()", g, w, problem);
          x.Set("value", std::move(d));
        } else {
          // TensorUnavailableForStep is the expected answer where only reductions or a shape
          // were saved; the same error for a missing event file (the index lists the value, its
          // file is gone: the message says "is missing") is lost data, and said so.
          if (e.code() != SMD_E_TENSOR_UNAVAILABLE_FOR_STEP ||
              e.message().find("' is missing)") != std::string::npos) {
            notes->Add(name, "value()", g, w, e.message());
          }
          x.Set("value", Json());
        }
      }
      {
        int64_t* dims = nullptr;
        size_t ndim = 0;
        Err e(smd_tensor_shape(t.p, g, SMD_MODE_GLOBAL, w.c_str(), &dims, &ndim));
        if (!e) {
          x.Set("shape", IntArray(std::vector<int64_t>(dims, dims + ndim)));
          smd_free(dims);
        } else {
          if (e.code() != SMD_E_SHAPE_UNAVAILABLE_FOR_STEP) {
            notes->Add(name, "shape()", g, w, e.message());
          }
          x.Set("shape", Json());
        }
      }
      {
        StrArray names;
        smd_value** values = nullptr;
        size_t n_values = 0;
        Err e(smd_tensor_reduction_values(t.p, g, SMD_MODE_GLOBAL, w.c_str(), &names.a, &values,
                                          &n_values));
        if (e) {
          notes->Add(name, "reduction_values()", g, w, e.message());
          x.Set("reductions", Json());
        } else {
          Json red = Json::Object();
          for (size_t i = 0; i < n_values; ++i) {
            const char* key = names.a.strings[i];
            double d = 0;
            Err de(smd_value_count(values[i]) == 1 ? smd_value_double_at(values[i], 0, &d)
                                                   : nullptr);
            if (de || smd_value_count(values[i]) != 1) {
              notes->Add(name, "reduction_values()", g, w,
                         std::string(key) + ": " +
                             (de ? de.message() : "the reduction has more than one element"));
              red.Set(key, Json());
            } else {
              red.Set(key, Json::Str(PythonFloat(d)));
            }
          }
          smd_value_array_free(values, n_values);
          x.Set("reductions", std::move(red));
        }
      }
      per_worker.Set(w, std::move(x));
    }
    entry.Set("workers", std::move(per_worker));
    at.Set(std::to_string(g), std::move(entry));
  }
  Json out = Json::Object();
  out.Set("steps", std::move(steps));
  out.Set("at", std::move(at));
  return out;
}

// The document's text goes out as it is made, in pieces of about a MiB: memory stays bounded by
// the largest tensor's part of the document, not the whole document. A file (-o FILE) is written
// as FILE.tmp, opened at the first write, and renamed to FILE by Finish: an error part-way leaves
// no incomplete document under FILE.
class Output {
 public:
  explicit Output(std::string path) : path_(std::move(path)) {}
  ~Output() {
    if (f_ != nullptr && f_ != stdout) {
      std::fclose(f_);
      std::remove((path_ + ".tmp").c_str());
    }
  }
  std::string* text() { return &buf_; }
  void MaybeFlush() {
    if (buf_.size() >= (1u << 20)) Flush();
  }
  void Flush() {
    if (f_ == nullptr) Open();
    if (!buf_.empty() && std::fwrite(buf_.data(), 1, buf_.size(), f_) != buf_.size()) {
      throw Fatal{kExitOutput, std::string("cannot write the output: ") + std::strerror(errno)};
    }
    buf_.clear();
  }
  void Finish() {
    Flush();
    if (f_ == stdout) {
      if (std::fflush(stdout) != 0) {
        throw Fatal{kExitOutput, std::string("cannot write the output: ") + std::strerror(errno)};
      }
      return;
    }
    FILE* f = f_;
    f_ = nullptr;
    const std::string tmp = path_ + ".tmp";
    if (std::fclose(f) != 0 || std::rename(tmp.c_str(), path_.c_str()) != 0) {
      const int e = errno;
      std::remove(tmp.c_str());
      throw Fatal{kExitOutput, "cannot write '" + path_ + "': " + std::strerror(e)};
    }
  }

 private:
  void Open() {
    if (path_.empty()) {
      f_ = stdout;
      return;
    }
    f_ = std::fopen((path_ + ".tmp").c_str(), "wb");
    if (f_ == nullptr) throw Fatal{kExitOutput, "cannot write '" + path_ + "': " + std::strerror(errno)};
  }

  std::string path_;
  FILE* f_ = nullptr;
  std::string buf_;
};

void AppendMember(std::string* out, const std::string& key, const Json& value, int indent) {
  out->append(static_cast<size_t>(indent) * 2, ' ');
  AppendJsonString(out, key);
  out->append(": ");
  value.Write(out, indent);
}

// Writes the document (Json::Dump's layout: sorted keys, indent 2) with its "tensors" member
// streamed one tensor at a time.
void DumpTrial(const std::string& path, int64_t wait_ms, Notes* notes,
               std::vector<std::string>* warnings, Output* output) {
  OptionsPtr opts;
  if (Err e{smd_trial_options_create(&opts.p)}) ThrowFatal(e, "options");
  if (Err e{smd_trial_options_set_collection_wait_ms(opts.p, wait_ms)}) ThrowFatal(e, "options");
  TrialPtr trial;
  if (Err e{smd_trial_open(path.c_str(), opts.p, &trial.p)}) throw Fatal{OpenExitCode(e), OpenFailure(path, e)};

  // The members before "tensors" (in key order), and "workers" after it.
  std::map<std::string, Json> head;
  head["format"] = Json::Str("smd-dump/1");
  Json workers;
  {
    StrArray w;
    if (Err e{smd_trial_workers(trial.p, &w.a)}) ThrowFatal(e, "workers");
    workers = StrArrayJson(w.vec(), true);
  }
  std::vector<smd_mode> modes;
  {
    smd_mode* buf = nullptr;
    size_t n = 0;
    if (Err e{smd_trial_modes(trial.p, &buf, &n)}) ThrowFatal(e, "modes");
    for (smd_mode m : kModeOrder) {
      for (size_t i = 0; i < n; ++i) {
        if (buf[i] == m) modes.push_back(m);
      }
    }
    smd_free(buf);
    Json a = Json::Array();
    for (smd_mode m : modes) a.Push(Json::Str(smd_mode_name(m)));
    head["modes"] = std::move(a);
  }
  {
    bool ended = false;
    if (Err e{smd_trial_has_ended(trial.p, &ended)}) ThrowFatal(e, "training end");
    head["ended"] = Json::Bool(ended);
  }
  std::vector<smd_mode> all_modes{SMD_MODE_GLOBAL};
  all_modes.insert(all_modes.end(), modes.begin(), modes.end());
  for (bool incomplete : {false, true}) {
    Json steps = Json::Object();
    for (smd_mode m : all_modes) {
      Steps s;
      if (Err e{smd_trial_steps(trial.p, m, incomplete, &s.p, &s.n)}) ThrowFatal(e, "steps");
      steps.Set(smd_mode_name(m), IntArray(s.vec()));
    }
    head[incomplete ? "steps_incomplete" : "steps"] = std::move(steps);
  }
  {
    Json colls = Json::Object();
    StrArray names;
    if (Err e{smd_trial_collection_names(trial.p, &names.a)}) ThrowFatal(e, "collections");
    for (const std::string& n : names.vec()) {
      Owned<smd_collection_info, smd_collection_info_free> c;
      if (Err e{smd_trial_collection(trial.p, n.c_str(), &c.p)}) ThrowFatal(e, "collection '" + n + "'");
      StrArray regex, tnames;
      if (Err e{smd_collection_info_include_regex(c.p, &regex.a)}) ThrowFatal(e, "collection");
      if (Err e{smd_collection_info_tensor_names(c.p, &tnames.a)}) ThrowFatal(e, "collection");
      Json cj = Json::Object();
      cj.Set("include_regex", StrArrayJson(regex.vec(), true));
      cj.Set("tensor_names", StrArrayJson(tnames.vec(), true));
      colls.Set(n, std::move(cj));
    }
    head["collections"] = std::move(colls);
  }
  std::vector<std::string> tensor_names;
  {
    StrArray names;
    if (Err e{smd_trial_tensor_names(trial.p, nullptr, &names.a)}) ThrowFatal(e, "tensor names");
    tensor_names = names.vec();
  }
  std::sort(tensor_names.begin(), tensor_names.end());  // Json's key order (bytes)

  std::string* out = output->text();
  out->append("{\n");
  for (const auto& kv : head) {  // collections, ended, format, modes, steps, steps_incomplete
    AppendMember(out, kv.first, kv.second, 1);
    out->append(",\n");
  }
  out->append("  \"tensors\": ");
  if (tensor_names.empty()) {
    out->append("{}");
  } else {
    out->append("{\n");
    for (size_t i = 0; i < tensor_names.size(); ++i) {
      AppendMember(out, tensor_names[i], DumpTensor(trial.p, tensor_names[i], modes, notes), 2);
      out->append(i + 1 < tensor_names.size() ? ",\n" : "\n");
      output->MaybeFlush();
    }
    out->append("  }");
  }
  out->append(",\n");
  AppendMember(out, "workers", workers, 1);
  out->append("\n}\n");
  output->Finish();

  StrArray warn;
  if (Err e{smd_trial_warnings(trial.p, &warn.a)}) ThrowFatal(e, "warnings");
  *warnings = warn.vec();
}

}  // namespace

void HelpDump() {
  std::printf(
      "usage: smd dump PATH [-o FILE] [--wait-collections MS]\n"
      "\n"
      "Prints one JSON document (format smd-dump/1) describing everything the Trial/Tensor API\n"
      "answers for the trial in folder PATH: workers, modes, steps, collections, and per tensor\n"
      "its steps and, per step and worker, the value's dtype/shape/sha256, the shape and the\n"
      "saved reductions. Keys are sorted and the layout is fixed, so two dumps diff cleanly.\n"
      "\n"
      "options:\n"
      "  -o, --output FILE        write the document to FILE instead of standard output\n"
      "  --wait-collections MS    wait up to MS milliseconds for the collections file of a\n"
      "                           job that has not written it yet (default 0)\n"
      "  -h, --help               show this help\n"
      "  --                       the argument after it is PATH (a path starting with '-')\n"
      "\n"
      "exit status: 0 ok; 1 the trial could not be read; 2 bad usage; 3 no collections file\n"
      "(MissingCollectionFiles); 4 the output could not be written; 5 the document was written\n"
      "but some files or values could not be read (each is reported on stderr and shows as\n"
      "null; a value whose event file is missing is one of them).\n"
      "\n"
      "The document is written as it is made (one tensor at a time), so memory does not grow\n"
      "with the trial. If an error stops it part-way (exit 1 or 4), standard output holds an\n"
      "incomplete document; with -o FILE, FILE is written under FILE.tmp and renamed only when\n"
      "complete.\n");
}

int RunDump(int argc, char** argv) {
  std::string path, output;
  int64_t wait_ms = 0;
  bool have_path = false;
  bool options_ended = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    const bool option = !options_ended && a.size() > 1 && a[0] == '-';
    if (option && a == "--") {  // the rest are PATH, even when it starts with '-'
      options_ended = true;
    } else if (!option) {
      if (have_path) {
        std::fprintf(stderr, "smd dump: more than one PATH given ('%s' and '%s')\n", path.c_str(),
                     a.c_str());
        return kExitUsage;
      }
      path = a;
      have_path = true;
    } else if (a == "-h" || a == "--help") {
      HelpDump();
      return kExitOk;
    } else if (a == "-o" || a == "--output") {
      if (++i >= argc) {
        std::fprintf(stderr, "smd dump: %s needs a file name\n", a.c_str());
        return kExitUsage;
      }
      output = argv[i];
    } else if (a == "--wait-collections") {
      if (++i >= argc) {
        std::fprintf(stderr, "smd dump: --wait-collections needs a number of milliseconds\n");
        return kExitUsage;
      }
      char* end = nullptr;
      errno = 0;
      long long v = std::strtoll(argv[i], &end, 10);
      if (errno != 0 || end == argv[i] || *end != '\0' || v < 0) {
        std::fprintf(stderr, "smd dump: invalid --wait-collections value '%s'\n", argv[i]);
        return kExitUsage;
      }
      wait_ms = v;
    } else {
      std::fprintf(stderr, "smd dump: unknown option '%s' (see smd dump --help)\n", a.c_str());
      return kExitUsage;
    }
  }
  if (!have_path) {
    std::fprintf(stderr, "smd dump: PATH is required (see smd dump --help)\n");
    return kExitUsage;
  }

  Notes notes;
  std::vector<std::string> warnings;
  try {
    Output out(output);
    DumpTrial(path, wait_ms, &notes, &warnings, &out);
  } catch (const Fatal& f) {
    std::fprintf(stderr, "smd dump: %s\n", Printable(f.message).c_str());
    return f.exit_code;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "smd dump: out of memory\n");
    return kExitTrialError;
  }
  for (const std::string& w : warnings) {
    std::fprintf(stderr, "smd dump: warning: %s\n", Printable(w).c_str());
  }
  notes.Report();
  return warnings.empty() && notes.empty() ? kExitOk : kExitPartial;
}

}  // namespace smdtool
