// smd export-tensorboard PATH OUT: TensorBoard logs from an existing trial, made only from the
// public C API (the Trial/Tensor reader and the TensorBoard writer of smd/tensorboard.h).
//
// What is exported mirrors what the hook exports while training (FORMAT.md §11):
//  - a scalar summary of every one-element value of a tensor that belongs to a scalar collection
//    (losses, metrics, feature_importance, average_shap, sm_metrics) or is a save_scalar value
//    ("scalar/<name>"), tagged with the tensor name;
//  - a histogram of every saved value of a tensor that belongs to a collection with save_histogram
//    (other than the scalar collections and tensorflow_summaries), tagged "<collection>/<tensor>"
//    with the first such collection by name; bool and empty values excluded.
// A tensor belongs to a collection if the collections file lists it or one of the collection's
// regexes matches it (smdebug's own collection queries). Steps are global steps, each written to
// the folder of the mode it was saved in. Only raw values can be exported: a step where a tensor
// has only reductions or a shape is skipped.
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "capi_util.h"
#include "json.h"
#include "commands.h"
#include "smd/smd.h"

namespace smdtool {
namespace {

// The output side fails with kExitOutput; trial errors use ThrowFatal (capi_util.h).
[[noreturn]] void FailOutput(const std::string& what, const Err& err) {
  throw Fatal{kExitOutput, what + ": " + err.message()};
}

bool IsScalarCollection(const std::string& name) {
  return name == "losses" || name == "metrics" || name == "feature_importance" ||
         name == "average_shap" || name == "sm_metrics";
}
bool IsNonHistogramCollection(const std::string& name) {
  return IsScalarCollection(name) || name == "tensorflow_summaries";
}

double Now() {
  using namespace std::chrono;
  return duration_cast<duration<double>>(system_clock::now().time_since_epoch()).count();
}

struct Options {
  std::string path, out, worker;
  bool quiet = false;
};

// A local OUT is written in a folder beside it ("<OUT>.partial-<pid>") and each file is renamed
// into OUT once every file is complete: a full disk or an error part-way leaves no truncated file
// under a final name (the staging folder is removed). An s3:// OUT needs none of this: an object
// appears only when its upload completes.
class Staging {
 public:
  explicit Staging(std::string out) : out_(std::move(out)) {
    while (out_.size() > 1 && out_.back() == '/') out_.pop_back();
    if (out_.find("://") == std::string::npos) {
      dir_ = out_ + ".partial-" + std::to_string(static_cast<long long>(::getpid()));
      Remove(dir_);  // a leftover of an earlier process with this pid
    }
  }
  ~Staging() {
    if (!dir_.empty()) Remove(dir_);
  }
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;

  // Where the writer writes.
  const std::string& dir() const { return dir_.empty() ? out_ : dir_; }

  // Moves every file into OUT (same relative path), then removes the staging folder.
  void Commit() {
    if (dir_.empty()) return;
    Move(dir_, out_);
    Remove(dir_);
    dir_.clear();
  }

 private:
  static void MakeDir(const std::string& d) {
    if (::mkdir(d.c_str(), 0755) == 0 || errno == EEXIST) return;
    if (errno == ENOENT) {
      const size_t slash = d.rfind('/');
      if (slash != std::string::npos && slash > 0) {
        MakeDir(d.substr(0, slash));
        if (::mkdir(d.c_str(), 0755) == 0 || errno == EEXIST) return;
      }
    }
    throw Fatal{kExitOutput, "cannot create folder '" + d + "': " + std::strerror(errno)};
  }
  static void Move(const std::string& from, const std::string& to) {
    MakeDir(to);
    DIR* d = ::opendir(from.c_str());
    if (d == nullptr && errno == ENOENT) return;  // nothing was written (the writer makes it)
    if (d == nullptr) throw Fatal{kExitOutput, "cannot list '" + from + "': " + std::strerror(errno)};
    std::vector<std::string> names;
    while (struct dirent* e = ::readdir(d)) {
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names.emplace_back(e->d_name);
    }
    ::closedir(d);
    for (const std::string& n : names) {
      const std::string src = from + "/" + n, dst = to + "/" + n;
      struct stat st;
      if (::lstat(src.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
        Move(src, dst);
      } else if (::rename(src.c_str(), dst.c_str()) != 0) {
        throw Fatal{kExitOutput, "cannot move '" + src + "' to '" + dst + "': " + std::strerror(errno)};
      }
    }
  }
  static void Remove(const std::string& path) {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) return;
    if (S_ISDIR(st.st_mode)) {
      if (DIR* d = ::opendir(path.c_str())) {
        std::vector<std::string> names;
        while (struct dirent* e = ::readdir(d)) {
          if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names.emplace_back(e->d_name);
        }
        ::closedir(d);
        for (const std::string& n : names) Remove(path + "/" + n);
      }
      ::rmdir(path.c_str());
    } else {
      ::unlink(path.c_str());
    }
  }

  std::string out_, dir_;
};

struct Counts {
  uint64_t scalars = 0, histograms = 0, skipped = 0, problems = 0;
};

class Exporter {
 public:
  Exporter(const Options& o) : opts_(o) {}

  int Run() {
    {
      // A finished trial is loaded whole by the open; a running one is exported as far as it is
      // (no automatic refresh).
      smd_trial_options* options = nullptr;
      Err e(smd_trial_options_create(&options));
      if (!e) e.e = smd_trial_options_set_auto_refresh(options, false);
      if (!e) e.e = smd_trial_open(opts_.path.c_str(), options, &trial_.p);
      smd_trial_options_free(options);
      if (e) throw Fatal{OpenExitCode(e), OpenFailure(opts_.path, e)};
    }
    const size_t skipped_files = PrintTrialWarnings(trial_.p, "smd export-tensorboard");
    if (!opts_.worker.empty()) CheckWorker();
    RefuseEarlierExport(opts_.out);
    LoadCollections();
    Staging staging(opts_.out);
    {
      Err e(smd_tensorboard_writer_create(staging.dir().c_str(), nullptr, &writer_.p));
      if (e) FailOutput("cannot write into '" + opts_.out + "'", e);
    }
    int64_t* steps = nullptr;
    size_t n = 0;
    {
      Err e(smd_trial_steps(trial_.p, SMD_MODE_GLOBAL, true, &steps, &n));
      if (e) ThrowFatal(e, "cannot list the steps");
    }
    std::vector<int64_t> global_steps(steps, steps + n);
    smd_free(steps);
    wall_time_ = Now();
    for (int64_t step : global_steps) ExportStep(step);
    {
      Err e(smd_tensorboard_writer_close(writer_.p));
      if (e) FailOutput("cannot complete the TensorBoard files", e);
    }
    staging.Commit();
    if (!opts_.quiet) {
      std::fprintf(stderr,
                   "smd export-tensorboard: %" PRIu64 " scalar(s) and %" PRIu64
                   " histogram(s) from %zu step(s) written to %s\n",
                   counts_.scalars, counts_.histograms, global_steps.size(), opts_.out.c_str());
    }
    return counts_.problems > 0 || skipped_files > 0 ? kExitPartial : kExitOk;
  }

 private:
  // --worker must name one of the trial's workers (an unknown one exported nothing, silently).
  void CheckWorker() {
    StrArray workers;
    {
      Err e(smd_trial_workers(trial_.p, &workers.a));
      if (e) ThrowFatal(e, "cannot list the workers");
    }
    std::string known;
    for (const std::string& w : workers.vec()) {
      if (w == opts_.worker) return;
      known += (known.empty() ? "" : ", ") + Printable(w);
    }
    throw Fatal{kExitNotFound, "Invalid Worker: " + Printable(opts_.worker) + " (the trial's workers: " +
                                   known + ")"};
  }

  // A local OUT that already holds TensorBoard event files (an earlier export, the hook's own
  // export) is refused: the new files would sit beside them, and TensorBoard would show every
  // point twice.
  static void RefuseEarlierExport(const std::string& out) {
    if (out.find("://") != std::string::npos) return;
    std::string found;
    FindEventFile(out, 0, &found);
    if (!found.empty()) {
      throw Fatal{kExitOutput, "'" + out + "' already holds TensorBoard event files ('" + found +
                                   "'): TensorBoard would show their points twice; export into an "
                                   "empty or new folder, or remove them first"};
    }
  }
  static void FindEventFile(const std::string& dir, int depth, std::string* found) {
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return;
    while (struct dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n == "." || n == "..") continue;
      const std::string path = dir + "/" + n;
      struct stat st;
      if (::lstat(path.c_str(), &st) != 0) continue;
      if (S_ISDIR(st.st_mode) && depth < 4) {
        FindEventFile(path, depth + 1, found);
      } else if (S_ISREG(st.st_mode) && n.find(".tfevents") != std::string::npos) {
        *found = path;
      }
      if (!found->empty()) break;
    }
    ::closedir(d);
  }

  void LoadCollections() {
    StrArray names;
    {
      Err e(smd_trial_collection_names(trial_.p, &names.a));
      if (e) ThrowFatal(e, "cannot list the collections");
    }
    for (const std::string& name : names.vec()) {  // sorted: the first histogram collection wins
      CollectionPtr info;
      {
        Err e(smd_trial_collection(trial_.p, name.c_str(), &info.p));
        if (e) ThrowFatal(e, "cannot read collection '" + name + "'");
      }
      const bool scalar = IsScalarCollection(name);
      const bool histogram =
          !IsNonHistogramCollection(name) && smd_collection_info_save_histogram(info.p);
      if (!scalar && !histogram) continue;
      FilterPtr filter;
      StrArray members;
      {
        Err e(smd_tensor_filter_create(&filter.p));
        if (e) ThrowFatal(e, "cannot create a tensor filter");
      }
      {
        Err e(smd_tensor_filter_set_collection(filter.p, name.c_str()));
        if (e) ThrowFatal(e, "cannot filter by collection '" + name + "'");
      }
      {
        Err e(smd_trial_tensor_names(trial_.p, filter.p, &members.a));
        if (e) ThrowFatal(e, "cannot list the tensors of collection '" + name + "'");
      }
      for (const std::string& t : members.vec()) {
        if (scalar) scalar_tensors_.insert(t);
        if (histogram && histogram_collection_.count(t) == 0) histogram_collection_[t] = name;
      }
    }
  }

  smd_tensor* Tensor(const std::string& name) {
    auto it = tensors_.find(name);
    if (it != tensors_.end()) return it->second.p;
    TensorPtr& t = tensors_[name];
    Err e(smd_trial_tensor(trial_.p, name.c_str(), &t.p));
    if (e) ThrowFatal(e, "cannot open tensor '" + name + "'");
    return t.p;
  }

  void Problem(const std::string& tensor, int64_t step, const Err& e) {
    ++counts_.problems;
    std::fprintf(stderr, "smd export-tensorboard: '%s' at step %" PRId64 " skipped: %s\n",
                 Printable(tensor).c_str(), step, Printable(e.message()).c_str());
  }

  void ExportStep(int64_t step) {
    smd_mode mode;
    {
      Err e(smd_trial_mode(trial_.p, step, &mode));
      if (e) ThrowFatal(e, "cannot get the mode of step " + std::to_string(step));
    }
    FilterPtr filter;
    StrArray names;
    {
      Err e(smd_tensor_filter_create(&filter.p));
      if (e) ThrowFatal(e, "cannot create a tensor filter");
    }
    {
      Err e(smd_tensor_filter_set_step(filter.p, step));
      if (e) ThrowFatal(e, "cannot filter by step");
    }
    {
      Err e(smd_trial_tensor_names(trial_.p, filter.p, &names.a));
      if (e) ThrowFatal(e, "cannot list the tensors of step " + std::to_string(step));
    }
    for (const std::string& name : names.vec()) {
      auto hist = histogram_collection_.find(name);
      const bool scalar = scalar_tensors_.count(name) > 0 || name.rfind("scalar/", 0) == 0;
      if (hist == histogram_collection_.end() && !scalar) continue;
      ValuePtr value;
      {
        Err e(smd_tensor_value(Tensor(name), step, SMD_MODE_GLOBAL,
                               opts_.worker.empty() ? nullptr : opts_.worker.c_str(), &value.p));
        if (e) {
          const smd_code c = e.code();
          if (c == SMD_E_TENSOR_UNAVAILABLE_FOR_STEP || c == SMD_E_INVALID_WORKER) {
            ++counts_.skipped;  // only reductions / a shape, or not from this worker
          } else {
            Problem(name, step, e);
          }
          continue;
        }
      }
      const smd_dtype dt = smd_value_dtype(value.p);
      const size_t count = smd_value_count(value.p);
      const bool numeric = dt != SMD_DTYPE_STRING && smd_dtype_size(dt) > 0;
      if (hist != histogram_collection_.end() && numeric && dt != SMD_DTYPE_BOOL && count > 0) {
        const std::string tag = hist->second + "/" + name;
        bool written = false;
        Err e(smd_tensorboard_writer_add_histogram(writer_.p, step, mode, wall_time_, tag.c_str(), dt,
                                                   smd_value_data(value.p),
                                                   smd_value_nbytes(value.p), &written));
        if (e) FailOutput("cannot write the histogram of '" + name + "'", e);
        if (written) ++counts_.histograms;
      }
      if (scalar && numeric && count == 1) {
        double v = 0;
        Err ge(smd_value_double_at(value.p, 0, &v));
        if (ge && ge.code() == SMD_E_UNSUPPORTED && (dt == SMD_DTYPE_COMPLEX64 || dt == SMD_DTYPE_COMPLEX128)) {
          // The real part, as the hook's own export writes a complex scalar.
          v = dt == SMD_DTYPE_COMPLEX64 ? static_cast<const float*>(smd_value_data(value.p))[0]
                                        : static_cast<const double*>(smd_value_data(value.p))[0];
        } else if (ge) {
          Problem(name, step, ge);
          continue;
        }
        Err e(smd_tensorboard_writer_add_scalar(writer_.p, step, mode, wall_time_, name.c_str(), v));
        if (e) FailOutput("cannot write the scalar '" + name + "'", e);
        ++counts_.scalars;
      }
    }
  }

  const Options& opts_;
  TrialPtr trial_;
  WriterPtr writer_;
  std::set<std::string> scalar_tensors_;
  std::map<std::string, std::string> histogram_collection_;  // tensor -> collection
  std::map<std::string, TensorPtr> tensors_;
  double wall_time_ = 0;
  Counts counts_;
};

}  // namespace

void HelpExportTensorBoard() {
  std::printf(
      "usage: smd export-tensorboard [--worker NAME] [--quiet] PATH OUT\n"
      "\n"
      "Writes TensorBoard logs of the trial in folder PATH into folder OUT, as the hook's\n"
      "TensorBoard export would have: OUT/<MODE>/<step>_<pid>_<host>.tfevents, one folder (run)\n"
      "per mode, steps as global steps.\n"
      "  scalars     one-element values of tensors in the losses, metrics, feature_importance,\n"
      "              average_shap and sm_metrics collections, and save_scalar values (scalar/*)\n"
      "  histograms  values of tensors in collections with save_histogram, tagged\n"
      "              <collection>/<tensor> (TensorFlow's default buckets)\n"
      "Tensors saved only as reductions or shapes have no value to export and are skipped.\n"
      "A local OUT is written in the folder OUT.partial-<pid> beside it and the files are moved\n"
      "into OUT when all are complete: an error part-way (a full disk) leaves no truncated file\n"
      "in OUT.\n"
      "\n"
      "  --worker NAME  export this worker's values (default: at each step, the first worker\n"
      "                 by name that saved the tensor)\n"
      "  --quiet        no summary line on stderr\n"
      "  --             the arguments after it are PATH and OUT (paths starting with '-')\n"
      "\n"
      "OUT must not hold TensorBoard event files already (an earlier export: TensorBoard would\n"
      "show every point twice).\n"
      "\n"
      "exit status: 0 ok; 1 the trial could not be read; 2 bad usage; 3 no collections file;\n"
      "4 the output could not be written (or OUT holds event files); 5 written, but some values\n"
      "could not be read or the trial skipped files; 7 --worker names no worker of the trial.\n");
}

int RunExportTensorBoard(int argc, char** argv) {
  Options o;
  std::vector<std::string> pos;
  bool options_ended = false;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const bool option = !options_ended && a[0] == '-' && a[1] != '\0';
    if (!option) {
      pos.emplace_back(a);
    } else if (std::strcmp(a, "--") == 0) {  // the rest are PATH and OUT, even when they start with '-'
      options_ended = true;
    } else if (std::strcmp(a, "--help") == 0 || std::strcmp(a, "-h") == 0) {
      HelpExportTensorBoard();
      return kExitOk;
    } else if (std::strcmp(a, "--quiet") == 0 || std::strcmp(a, "-q") == 0) {
      o.quiet = true;
    } else if (std::strcmp(a, "--worker") == 0) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "smd export-tensorboard: --worker needs a name\n");
        return kExitUsage;
      }
      o.worker = argv[++i];
    } else if (std::strncmp(a, "--worker=", 9) == 0) {
      o.worker = a + 9;
    } else {
      std::fprintf(stderr, "smd export-tensorboard: unknown option '%s'\n", a);
      return kExitUsage;
    }
  }
  if (pos.size() != 2) {
    const char* what = pos.empty()       ? "needs the trial folder PATH and the output folder OUT"
                       : pos.size() == 1 ? "needs the output folder OUT after the trial folder PATH"
                                         : "takes two arguments, PATH and OUT, and nothing else";
    std::fprintf(stderr,
                 "smd export-tensorboard: %s\n"
                 "usage: smd export-tensorboard [--worker NAME] [--quiet] PATH OUT\n",
                 what);
    return kExitUsage;
  }
  o.path = pos[0];
  o.out = pos[1];
  try {
    Exporter ex(o);
    return ex.Run();
  } catch (const Fatal& f) {
    std::fprintf(stderr, "smd export-tensorboard: %s\n", Printable(f.message).c_str());
    return f.exit_code;
  }
}

}  // namespace smdtool
