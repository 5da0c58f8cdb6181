// smd ls PATH: a human summary of a trial, made from the public C API only: workers, status,
// steps per mode, every tensor (dtype, shape, saved steps, reductions) and the collections.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "capi_util.h"
#include "json.h"
#include "commands.h"
#include "numpy_format.h"
#include "smd/smd.h"

namespace smdtool {
namespace {

constexpr size_t kMaxNameColumn = 40;  // longer names get a line of their own
constexpr size_t kMaxSegments = 3;     // step ranges shown before "..."
constexpr size_t kMaxListed = 4;       // workers shown before "..."
constexpr size_t kMaxReductionText = 60;
constexpr size_t kMaxRegexText = 60;

// "0-9", "0-90/10", "3, 7", "0-4, 10-90/10, 95": ascending steps as arithmetic runs, at most
// max_segments of them and then ", ..., <the last run>".
std::string CompressSteps(const std::vector<int64_t>& s, size_t max_segments) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = i + 1;
    if (j < s.size()) {
      const int64_t stride = s[j] - s[i];
      while (j + 1 < s.size() && s[j + 1] - s[j] == stride) ++j;
      const size_t len = j - i + 1;
      if (len >= 3 || (len == 2 && stride == 1)) {
        std::string p = std::to_string(s[i]) + "-" + std::to_string(s[j]);
        if (stride != 1) p += "/" + std::to_string(stride);
        parts.push_back(p);
        i = j + 1;
        continue;
      }
    }
    parts.push_back(std::to_string(s[i]));
    ++i;
  }
  std::string out;
  for (size_t k = 0; k < parts.size(); ++k) {
    if (k == max_segments && parts.size() > max_segments + 1) {
      out += ", ..., " + parts.back();
      break;
    }
    if (k) out += ", ";
    out += parts[k];
  }
  return out.empty() ? "-" : out;
}

std::string Plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string Truncated(const std::string& s, size_t max) {
  if (s.size() <= max) return s;
  return s.substr(0, max - 3) + "...";
}

// Reduction names in canonical order; "+abs": each of the plain ones also in its abs_ form.
std::string ReductionsText(const std::vector<std::string>& names) {
  if (names.empty()) return "-";
  static const char* const kOrder[] = {"min", "max", "mean", "std", "variance", "sum", "prod", "l1", "l2"};
  auto rank = [](const std::string& n) {
    for (size_t i = 0; i < sizeof kOrder / sizeof kOrder[0]; ++i) {
      if (n == kOrder[i]) return i;
    }
    return sizeof kOrder / sizeof kOrder[0];
  };
  std::set<std::string> plain, abs;
  for (const std::string& n : names) {
    if (n.compare(0, 4, "abs_") == 0) {
      abs.insert(n.substr(4));
    } else {
      plain.insert(n);
    }
  }
  auto ordered = [&](const std::set<std::string>& set) {
    std::vector<std::string> v(set.begin(), set.end());
    std::stable_sort(v.begin(), v.end(),
                     [&](const std::string& a, const std::string& b) { return rank(a) < rank(b); });
    return v;
  };
  std::string out;
  auto add = [&](const std::string& n) { out += (out.empty() ? "" : ",") + n; };
  if (!plain.empty() && std::includes(abs.begin(), abs.end(), plain.begin(), plain.end())) {
    for (const std::string& n : ordered(plain)) add(n);
    out += " +abs";
    for (const std::string& n : ordered(abs)) {
      if (!plain.count(n)) out += ",abs_" + n;
    }
  } else {
    for (const std::string& n : ordered(plain)) add(n);
    for (const std::string& n : ordered(abs)) add("abs_" + n);
  }
  return Truncated(out, kMaxReductionText);
}

std::string ListText(const std::vector<std::string>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i == kMaxListed - 1 && v.size() > kMaxListed) {
      out += ", ..., " + v.back();
      break;
    }
    out += (i ? ", " : "") + v[i];
  }
  return out;
}

// Rows of a table, columns padded to their widest cell; the first column wraps onto a line of
// its own when it is wider than kMaxNameColumn. The last column is not padded.
void PrintTable(std::string* out, const std::vector<std::vector<std::string>>& rows) {
  if (rows.empty()) return;
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& r : rows) {
    for (size_t c = 0; c < r.size(); ++c) {
      size_t w = r[c].size();
      if (c == 0) w = std::min(w, kMaxNameColumn);
      width[c] = std::max(width[c], w);
    }
  }
  for (const auto& r : rows) {
    std::string line = "  ";
    for (size_t c = 0; c < r.size(); ++c) {
      if (c == 0 && r[c].size() > width[0]) {
        *out += "  " + r[c] + "\n";
        line += std::string(width[0], ' ');
      } else if (c + 1 == r.size()) {
        line += r[c];
      } else {
        line += r[c] + std::string(width[c] - r[c].size(), ' ');
      }
      if (c + 1 < r.size()) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    *out += line + "\n";
  }
}

// "[2, 3]"; dimensions that differ between the first and the last step as "?".
std::string MergedShape(const std::vector<int64_t>& last, const std::vector<int64_t>* first) {
  if (first == nullptr || *first == last) return ShapeText(last.data(), last.size());
  if (first->size() != last.size()) return "varies";
  std::string s = "[";
  for (size_t i = 0; i < last.size(); ++i) {
    if (i) s += ", ";
    s += (*first)[i] == last[i] ? std::to_string(last[i]) : "?";
  }
  return s + "]";
}

struct Problems {
  std::vector<std::string> lines;
  void Add(const std::string& s) { lines.push_back(s); }
};

// dtype and shape of a tensor at a step: from the value's record, else the saved shape.
bool DescribeAt(smd_tensor* t, int64_t step, std::string* dtype, std::vector<int64_t>* shape,
                Problems* problems) {
  smd_dtype dt;
  int64_t* dims = nullptr;
  size_t ndim = 0;
  Err e(smd_tensor_value_info(t, step, SMD_MODE_GLOBAL, nullptr, &dt, &dims, &ndim));
  if (!e) {
    const char* n = dt == SMD_DTYPE_STRING ? "str" : smd_dtype_name(dt);
    *dtype = n ? n : "?";
    shape->assign(dims, dims + ndim);
    smd_free(dims);
    return true;
  }
  if (e.code() != SMD_E_TENSOR_UNAVAILABLE_FOR_STEP) {
    problems->Add("'" + std::string(smd_tensor_name(t)) + "' at step " + std::to_string(step) +
                  ": " + e.message());
    *dtype = "?";
  } else {
    *dtype = "-";  // only reductions and/or a shape were saved
  }
  Err se(smd_tensor_shape(t, step, SMD_MODE_GLOBAL, nullptr, &dims, &ndim));
  if (se) return false;
  shape->assign(dims, dims + ndim);
  smd_free(dims);
  return true;
}

// A tensor's saved steps as steps of their modes ("TRAIN 0-190/10, EVAL 0-7 (28)"; without the
// mode names in a trial of one mode), and how many global steps that is.
std::string TensorStepsText(smd_trial* tr, smd_tensor* t, const std::vector<int64_t>& global,
                            bool multi_mode) {
  std::string out;
  auto add = [&](smd_mode m, const std::vector<int64_t>& steps) {
    if (steps.empty()) return;
    if (!out.empty()) out += ", ";
    if (multi_mode) out += std::string(smd_mode_name(m)) + " ";
    out += CompressSteps(steps, kMaxSegments);
  };
  for (smd_mode m : {SMD_MODE_TRAIN, SMD_MODE_EVAL, SMD_MODE_PREDICT}) {
    Steps s;
    if (!Err(smd_tensor_steps(t, m, true, &s.p, &s.n))) add(m, s.vec());
  }
  std::vector<int64_t> global_mode;  // steps saved in GLOBAL mode
  for (int64_t g : global) {
    smd_mode m;
    if (!Err(smd_trial_mode(tr, g, &m)) && m == SMD_MODE_GLOBAL) global_mode.push_back(g);
  }
  add(SMD_MODE_GLOBAL, global_mode);
  return (out.empty() ? "-" : out) + " (" + std::to_string(global.size()) + ")";
}

std::string Ls(const std::string& path, int64_t wait_ms, Problems* problems) {
  OptionsPtr opts;
  if (Err e{smd_trial_options_create(&opts.p)}) ThrowFatal(e, "options");
  if (Err e{smd_trial_options_set_collection_wait_ms(opts.p, wait_ms)}) ThrowFatal(e, "options");
  TrialPtr trial;
  if (Err e{smd_trial_open(path.c_str(), opts.p, &trial.p)}) {
    throw Fatal{OpenExitCode(e), OpenFailure(path, e)};
  }
  smd_trial* tr = trial.p;
  std::string out;

  bool ended = false;
  if (Err e{smd_trial_has_ended(tr, &ended)}) ThrowFatal(e, "training end");
  StrArray workers;
  if (Err e{smd_trial_workers(tr, &workers.a)}) ThrowFatal(e, "workers");
  Steps all, complete;
  if (Err e{smd_trial_steps(tr, SMD_MODE_GLOBAL, true, &all.p, &all.n)}) ThrowFatal(e, "steps");
  if (Err e{smd_trial_steps(tr, SMD_MODE_GLOBAL, false, &complete.p, &complete.n)}) {
    ThrowFatal(e, "steps");
  }
  const int64_t num_workers = smd_trial_num_workers(tr);

  out += "trial:    " + Printable(smd_trial_path(tr)) + "\n";
  out += std::string("status:   ") +
         (ended ? "ended (training_job_end.ts is there)" : "running (no training_job_end.ts yet)") +
         "\n";
  out += "workers:  " + std::to_string(workers.a.count);
  if (workers.a.count) {
    std::vector<std::string> shown;
    for (const std::string& w : workers.vec()) shown.push_back(Printable(w));
    out += " (" + ListText(shown) + ")";
  }
  if (num_workers != static_cast<int64_t>(workers.a.count)) {
    out += "; num_workers is " + std::to_string(num_workers);
  }
  out += "\n";

  // Steps per mode, with the global steps they sit at.
  std::vector<int64_t> all_steps = all.vec();
  std::vector<int64_t> done = complete.vec();
  std::vector<int64_t> incomplete;
  std::set_difference(all_steps.begin(), all_steps.end(), done.begin(), done.end(),
                      std::back_inserter(incomplete));
  out += "steps:    " + Plural(all_steps.size(), "global step", "global steps");
  if (!all_steps.empty()) out += ", " + CompressSteps(all_steps, kMaxSegments);
  if (!incomplete.empty()) {
    out += "; incomplete (not written by all " + std::to_string(num_workers) +
           " workers yet): " + CompressSteps(incomplete, kMaxSegments);
  }
  out += "\n";
  std::map<int, std::pair<std::vector<int64_t>, std::vector<int64_t>>> per_mode;  // mode steps, globals
  for (int64_t g : all_steps) {
    smd_mode m;
    int64_t ms;
    if (Err(smd_trial_mode(tr, g, &m)) || Err(smd_trial_mode_step(tr, g, &ms))) continue;
    per_mode[m].first.push_back(ms);
    per_mode[m].second.push_back(g);
  }
  std::vector<std::vector<std::string>> mode_rows;
  for (smd_mode m : {SMD_MODE_TRAIN, SMD_MODE_EVAL, SMD_MODE_PREDICT, SMD_MODE_GLOBAL}) {
    auto it = per_mode.find(m);
    if (it == per_mode.end()) continue;
    std::vector<int64_t> ms = it->second.first;
    std::sort(ms.begin(), ms.end());
    ms.erase(std::unique(ms.begin(), ms.end()), ms.end());
    std::vector<std::string> row = {smd_mode_name(m), Plural(ms.size(), "step", "steps"),
                                    CompressSteps(ms, kMaxSegments)};
    if (m != SMD_MODE_GLOBAL) row.push_back("at global " + CompressSteps(it->second.second, kMaxSegments));
    mode_rows.push_back(row);
  }
  if (!mode_rows.empty()) {
    out += "modes:\n";
    PrintTable(&out, mode_rows);
  }

  // Tensors.
  const bool multi_mode = per_mode.size() > 1;
  StrArray names;
  if (Err e{smd_trial_tensor_names(tr, nullptr, &names.a)}) ThrowFatal(e, "tensor names");
  out += "\ntensors (" + std::to_string(names.a.count) + "):\n";
  std::vector<std::vector<std::string>> rows = {{"NAME", "DTYPE", "SHAPE", "STEPS", "REDUCTIONS"}};
  for (const std::string& n : names.vec()) {
    TensorPtr t;
    if (Err e{smd_trial_tensor(tr, n.c_str(), &t.p)}) ThrowFatal(e, "tensor '" + n + "'");
    Steps s;
    if (Err e{smd_tensor_steps(t.p, SMD_MODE_GLOBAL, true, &s.p, &s.n)}) {
      ThrowFatal(e, "steps of tensor '" + n + "'");
    }
    std::string dtype = "-", shape_text = "-", reds = "-";
    if (s.n > 0) {
      const int64_t last = s.p[s.n - 1], first = s.p[0];
      std::vector<int64_t> shape, first_shape;
      std::string first_dtype;
      if (DescribeAt(t.p, last, &dtype, &shape, problems)) {
        const bool have_first =
            s.n > 1 && DescribeAt(t.p, first, &first_dtype, &first_shape, problems);
        shape_text = MergedShape(shape, have_first ? &first_shape : nullptr);
        if (have_first && first_dtype != dtype && first_dtype != "-" && dtype != "-") {
          dtype = first_dtype + "/" + dtype;
        }
      }
      StrArray rn;
      if (Err e{smd_tensor_reduction_names(t.p, last, SMD_MODE_GLOBAL, nullptr, &rn.a)}) {
        problems->Add("reductions of '" + n + "': " + e.message());
      } else {
        reds = ReductionsText(rn.vec());
      }
    }
    rows.push_back({Printable(n), dtype, shape_text, TensorStepsText(tr, t.p, s.vec(), multi_mode),
                    Printable(reds)});
  }
  if (names.a.count) PrintTable(&out, rows);

  // Collections.
  StrArray colls;
  if (Err e{smd_trial_collection_names(tr, &colls.a)}) ThrowFatal(e, "collections");
  out += "\ncollections (" + std::to_string(colls.a.count) + "):\n";
  std::vector<std::vector<std::string>> crows = {{"NAME", "TENSORS", "REDUCTIONS", "INCLUDE_REGEX"}};
  for (const std::string& c : colls.vec()) {
    CollectionPtr info;
    if (Err e{smd_trial_collection(tr, c.c_str(), &info.p)}) ThrowFatal(e, "collection '" + c + "'");
    Owned<smd_tensor_filter, smd_tensor_filter_free> f;
    std::string members = "?";
    if (!Err(smd_tensor_filter_create(&f.p)) && !Err(smd_tensor_filter_set_collection(f.p, c.c_str()))) {
      StrArray in;
      Err e(smd_trial_tensor_names(tr, f.p, &in.a));
      if (!e) {
        members = std::to_string(in.a.count);
      } else {
        problems->Add("members of collection '" + c + "': " + e.message());
      }
    }
    const char* r = smd_collection_info_reductions(info.p);
    StrArray regex;
    std::string rx = "-";
    if (!Err(smd_collection_info_include_regex(info.p, &regex.a)) && regex.a.count) {
      rx.clear();
      for (size_t i = 0; i < regex.a.count; ++i) rx += (i ? "  " : "") + std::string(regex.a.strings[i]);
    }
    std::vector<std::string> rnames;  // the configuration's spelling: "l2_norm", "abs_l1_norm"
    for (const char* p = r; p != nullptr && *p != '\0';) {
      const char* comma = std::strchr(p, ',');
      std::string n(p, comma ? static_cast<size_t>(comma - p) : std::strlen(p));
      if (n.size() > 5 && n.compare(n.size() - 5, 5, "_norm") == 0) n.resize(n.size() - 5);
      if (!n.empty()) rnames.push_back(n);
      p = comma ? comma + 1 : nullptr;
    }
    crows.push_back({Printable(c), members, Printable(ReductionsText(rnames)),
                     Truncated(Printable(rx), kMaxRegexText)});
  }
  if (colls.a.count) PrintTable(&out, crows);

  StrArray warn;
  if (!Err(smd_trial_warnings(tr, &warn.a))) {
    for (const std::string& w : warn.vec()) problems->Add(w);
  }
  return out;
}

}  // namespace

void HelpLs() {
  std::printf(
      "usage: smd ls PATH [--wait-collections MS]\n"
      "\n"
      "Summarizes the trial in folder PATH: whether the job ended, its workers, its steps per\n"
      "mode (with the global steps they sit at), every tensor with its dtype, shape, saved steps\n"
      "and saved reductions, and the collections with how many of the tensors belong to each.\n"
      "\n"
      "Steps are written as ranges: 0-9 is 0 to 9, 0-90/10 is 0, 10, ..., 90. A tensor's steps\n"
      "are steps of their modes (named when the trial has several), then in parentheses how\n"
      "many global steps they are. A tensor's dtype and shape are those of its last step, read\n"
      "from the start of its record only; a '?' in the shape marks a dimension that differs at\n"
      "the first step, '-' a step without a value (only reductions or a saved shape).\n"
      "Reductions are those saved at the last step; '+abs' means each also in its abs_ form.\n"
      "Incomplete steps (not written by every worker yet) are included.\n"
      "\n"
      "options:\n"
      "  --wait-collections MS    wait up to MS milliseconds for the collections file of a\n"
      "                           job that has not written it yet (default 0)\n"
      "  -h, --help               show this help\n"
      "  --                       the argument after it is PATH (a path starting with '-')\n"
      "\n"
      "exit status: 0 ok; 1 the trial could not be read; 2 bad usage; 3 no collections file\n"
      "(MissingCollectionFiles); 4 the output could not be written; 5 the summary was written\n"
      "but some files or values could not be read (each is reported on stderr).\n");
}

int RunLs(int argc, char** argv) {
  std::string path;
  bool have_path = false;
  int64_t wait_ms = 0;
  bool options_ended = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool option = !options_ended && a.size() > 1 && a[0] == '-';
    if (option && a == "--") {  // the rest are PATH, even when it starts with '-'
      options_ended = true;
    } else if (!option) {
      if (have_path) {
        std::fprintf(stderr, "smd ls: more than one PATH given ('%s' and '%s')\n", path.c_str(), a.c_str());
        return kExitUsage;
      }
      path = a;
      have_path = true;
    } else if (a == "-h" || a == "--help") {
      HelpLs();
      return kExitOk;
    } else if (a == "--wait-collections") {
      if (++i >= argc || !ParseInt64Arg(argv[i], &wait_ms) || wait_ms < 0) {
        std::fprintf(stderr, "smd ls: --wait-collections needs a number of milliseconds >= 0\n");
        return kExitUsage;
      }
    } else {
      std::fprintf(stderr, "smd ls: unknown option '%s' (see smd ls --help)\n", a.c_str());
      return kExitUsage;
    }
  }
  if (!have_path) {
    std::fprintf(stderr, "smd ls: PATH is required (see smd ls --help)\n");
    return kExitUsage;
  }
  Problems problems;
  std::string text;
  try {
    text = Ls(path, wait_ms, &problems);
  } catch (const Fatal& f) {
    std::fprintf(stderr, "smd ls: %s\n", Printable(f.message).c_str());
    return f.exit_code;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "smd ls: out of memory\n");
    return kExitTrialError;
  }
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) {
    std::fprintf(stderr, "smd ls: cannot write the output: %s\n", std::strerror(errno));
    return kExitOutput;
  }
  for (const std::string& p : problems.lines) std::fprintf(stderr, "smd ls: warning: %s\n", Printable(p).c_str());
  return problems.lines.empty() ? kExitOk : kExitPartial;
}

}  // namespace smdtool
