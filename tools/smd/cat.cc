// smd cat PATH TENSOR: one value of a tensor, printed the way numpy prints arrays or written as a
// .npy file. Built on the public C API only.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "capi_util.h"
#include "json.h"
#include "commands.h"
#include "npy.h"
#include "numpy_format.h"
#include "smd/smd.h"

namespace smdtool {
namespace {

struct CatArgs {
  std::string path, tensor, worker, npy, reduction;
  bool have_step = false, have_worker = false, full = false, header = true;
  int64_t step = 0;
  smd_mode mode = SMD_MODE_GLOBAL;
};

// Errors that mean "what you asked for is not there" rather than "the trial is broken".
bool IsNotThere(smd_code c) {
  return c == SMD_E_TENSOR_UNAVAILABLE || c == SMD_E_TENSOR_UNAVAILABLE_FOR_STEP ||
         c == SMD_E_STEP_UNAVAILABLE || c == SMD_E_STEP_NOT_YET_AVAILABLE ||
         c == SMD_E_NO_MORE_DATA || c == SMD_E_INVALID_WORKER || c == SMD_E_NOT_FOUND;
}

int ExitFor(const Err& e) {
  if (IsNotThere(e.code())) return kExitNotFound;
  if (e.code() == SMD_E_INVALID_ARGUMENT) return kExitUsage;
  return TrialExitCode(e);
}

[[noreturn]] void Fail(const Err& e, const std::string& what) {
  throw Fatal{ExitFor(e), what + ": " + e.message()};
}

std::string StepText(smd_trial* trial, int64_t step, smd_mode mode) {
  if (mode != SMD_MODE_GLOBAL) {
    int64_t g = 0;
    Err e(smd_trial_global_step(trial, step, mode, &g));
    return std::string(smd_mode_name(mode)) + " step " + std::to_string(step) +
           (e ? std::string() : " (global step " + std::to_string(g) + ")");
  }
  smd_mode m;
  int64_t ms = 0;
  Err e1(smd_trial_mode(trial, step, &m));
  Err e2(smd_trial_mode_step(trial, step, &ms));
  std::string s = "step " + std::to_string(step);
  if (!e1 && !e2) {
    s += m == SMD_MODE_GLOBAL ? " (GLOBAL)" : " (" + std::string(smd_mode_name(m)) + " step " +
                                                 std::to_string(ms) + ")";
  }
  return s;
}

int CatValue(const CatArgs& a, const TrialPtr& trial);

int Cat(const CatArgs& a) {
  OptionsPtr opts;
  if (Err e{smd_trial_options_create(&opts.p)}) ThrowFatal(e, "options");
  TrialPtr trial;
  if (Err e{smd_trial_open(a.path.c_str(), opts.p, &trial.p)}) {
    throw Fatal{OpenExitCode(e), OpenFailure(a.path, e)};
  }
  // Index files the trial skipped (malformed) are said, as smd ls and smd dump say them: the
  // value asked for, or the last step, may be in one.
  const size_t skipped = PrintTrialWarnings(trial.p, "smd cat");
  int rc;
  try {
    rc = CatValue(a, trial);
  } catch (Fatal& f) {
    if (skipped > 0 && f.exit_code == kExitNotFound) {
      f.message += "\n  (the trial has skipped files: see the warnings above)";
    }
    throw;
  }
  return rc == kExitOk && skipped > 0 ? kExitPartial : rc;
}

int CatValue(const CatArgs& a, const TrialPtr& trial) {
  TensorPtr t;
  if (Err e{smd_trial_tensor(trial.p, a.tensor.c_str(), &t.p)}) {
    throw Fatal{ExitFor(e), "no tensor '" + a.tensor + "' in trial '" + a.path +
                                "' (smd ls " + a.path + " lists its tensors)"};
  }
  int64_t step = a.step;
  if (!a.have_step) {
    Steps s;
    if (Err e{smd_tensor_steps(t.p, a.mode, true, &s.p, &s.n)}) Fail(e, "steps of '" + a.tensor + "'");
    if (s.n == 0) {
      throw Fatal{kExitNotFound, "tensor '" + a.tensor + "' has no step in mode " +
                                     smd_mode_name(a.mode)};
    }
    step = s.p[s.n - 1];
  }
  std::string worker = a.worker;
  if (!a.have_worker) {  // the worker the value comes from: the first that saved it there
    StrArray ws;
    if (!Err(smd_tensor_workers(t.p, step, a.mode, &ws.a)) && ws.a.count > 0) worker = ws.a.strings[0];
  }
  const char* w = a.have_worker ? a.worker.c_str() : nullptr;
  const std::string where = "'" + a.tensor + "' at " + StepText(trial.p, step, a.mode);

  ValuePtr v;
  if (!a.reduction.empty()) {
    if (Err e{smd_tensor_reduction_value(t.p, step, a.mode, w, a.reduction.c_str(), &v.p)}) {
      Fail(e, "reduction '" + a.reduction + "' of " + where);
    }
  } else if (Err e{smd_tensor_value(t.p, step, a.mode, w, &v.p)}) {
    std::string msg = "value of " + where + ": " + e.message();
    if (e.code() == SMD_E_TENSOR_UNAVAILABLE_FOR_STEP) {
      StrArray names;
      if (!Err(smd_tensor_reduction_names(t.p, step, a.mode, w, &names.a)) && names.a.count > 0) {
        msg += "\n  saved reductions there:";
        for (size_t i = 0; i < names.a.count; ++i) msg += std::string(i ? ", " : " ") + names.a.strings[i];
        msg += " (show one with --reduction NAME)";
      }
    }
    throw Fatal{ExitFor(e), msg};
  }

  if (!a.npy.empty()) {
    std::string note, error;
    if (!WriteNpy(v.p, a.npy, &note, &error)) throw Fatal{kExitOutput, error};
    if (!note.empty()) std::fprintf(stderr, "smd cat: note: %s\n", Printable(note).c_str());
    return kExitOk;
  }
  std::string text;
  if (a.header) {
    const char* dn = smd_value_dtype(v.p) == SMD_DTYPE_STRING ? "str" : smd_dtype_name(smd_value_dtype(v.p));
    text = Printable(a.tensor) + (a.reduction.empty() ? "" : " " + Printable(a.reduction)) + "  " +
           StepText(trial.p, step, a.mode) + (worker.empty() ? "" : "  " + Printable(worker)) + "  " +
           (dn ? dn : "?") + " " + ShapeText(smd_value_shape(v.p), smd_value_ndim(v.p)) + "\n";
  }
  text += FormatValue(v.p, a.full);
  text += '\n';
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) {
    throw Fatal{kExitOutput, std::string("cannot write the output: ") + std::strerror(errno)};
  }
  return kExitOk;
}

// "--reduction R" help lines: the names the library accepts (smd_reduction_names), wrapped.
std::string ReductionHelp() {
  const std::string indent(18, ' ');
  std::string text = "  --reduction R   a reduction instead of the value: ";
  size_t column = text.size();
  StrArray names;
  std::vector<std::string> items;
  if (Err e{smd_reduction_names(&names.a)}) {
    items.push_back("(unknown: " + e.message() + "),");
  } else {
    for (const std::string& n : names.vec()) items.push_back(n + ",");
  }
  for (const char* w : {"or", "abs_<one", "of", "them>;", "saved,", "or", "computed", "from", "the", "value"}) {
    items.emplace_back(w);
  }
  for (const std::string& item : items) {
    if (column + 1 + item.size() > 90) {
      text += "\n" + indent;
      column = indent.size();
    } else if (column > indent.size() && text.back() != ' ') {
      text += ' ';
      ++column;
    }
    text += item;
    column += item.size();
  }
  return text + "\n";
}

}  // namespace

void HelpCat() {
  std::printf(
      "usage: smd cat PATH TENSOR [--step N] [--mode M] [--worker W] [--reduction R]\n"
      "               [--npy FILE] [--full] [--no-header]\n"
      "\n"
      "Prints one value of tensor TENSOR of the trial in folder PATH the way numpy prints arrays\n"
      "(np.array2string(a, separator=', '): 8 digits, more than 1000 elements summarized with\n"
      "\"...\"), after a line naming the tensor, step, worker, dtype and shape. Or writes the value\n"
      "as a numpy .npy file.\n"
      "\n"
      "options:\n"
      "  --step N        the step (a step of --mode; default: the tensor's last step)\n"
      "  --mode M        TRAIN, EVAL, PREDICT or GLOBAL (default GLOBAL: N is a global step)\n"
      "  --worker W      the worker that saved it (default: the first one, by name)\n"
      "%s"
      "  --npy FILE      write the value to FILE (\"-\": standard output) as a .npy file instead\n"
      "                  of printing it. numpy has no bfloat16: bfloat16 values are written as\n"
      "                  float32, an exact widening (a note on stderr says so)\n"
      "  --full          print every element (no \"...\")\n"
      "  --no-header     print only the value\n"
      "  -h, --help      show this help\n"
      "  --              the arguments after it are PATH and TENSOR (a name starting with '-')\n"
      "\n"
      "exit status: 0 ok; 1 the trial or the value could not be read; 2 bad usage (also an\n"
      "unknown reduction); 3 no collections file (MissingCollectionFiles); 4 the output could not\n"
      "be written; 5 written, but the trial skipped files (warnings on stderr); 7 no such tensor,\n"
      "or nothing of it at that step, mode or worker.\n",
      ReductionHelp().c_str());
}

int RunCat(int argc, char** argv) {
  CatArgs a;
  std::vector<std::string> positional;
  auto need = [&](int* i, const char* opt) -> const char* {
    if (*i + 1 >= argc) {
      std::fprintf(stderr, "smd cat: %s needs a value (see smd cat --help)\n", opt);
      return nullptr;
    }
    return argv[++*i];
  };
  for (int i = 1; i < argc; ++i) {
    const std::string o = argv[i];
    const char* v = nullptr;
    if (o == "--") {  // the rest are PATH and TENSOR, even when they start with '-'
      for (++i; i < argc; ++i) positional.push_back(argv[i]);
      break;
    } else if (o == "-h" || o == "--help") {
      HelpCat();
      return kExitOk;
    } else if (o == "--step") {
      if (!(v = need(&i, "--step"))) return kExitUsage;
      if (!ParseInt64Arg(v, &a.step)) {
        std::fprintf(stderr, "smd cat: --step needs an integer, not '%s'\n", v);
        return kExitUsage;
      }
      a.have_step = true;
    } else if (o == "--mode") {
      if (!(v = need(&i, "--mode"))) return kExitUsage;
      if (Err e{smd_mode_from_name(v, &a.mode)}) {
        std::fprintf(stderr, "smd cat: unknown mode '%s' (TRAIN, EVAL, PREDICT or GLOBAL)\n", v);
        return kExitUsage;
      }
    } else if (o == "--worker") {
      if (!(v = need(&i, "--worker"))) return kExitUsage;
      a.worker = v;
      a.have_worker = true;
    } else if (o == "--reduction") {
      if (!(v = need(&i, "--reduction"))) return kExitUsage;
      a.reduction = v;
      if (a.reduction.empty()) {
        std::fprintf(stderr, "smd cat: --reduction needs a name\n");
        return kExitUsage;
      }
    } else if (o == "--npy") {
      if (!(v = need(&i, "--npy"))) return kExitUsage;
      a.npy = v;
      if (a.npy.empty()) {
        std::fprintf(stderr, "smd cat: --npy needs a file name\n");
        return kExitUsage;
      }
    } else if (o == "--full") {
      a.full = true;
    } else if (o == "--no-header") {
      a.header = false;
    } else if (o.size() > 1 && o[0] == '-') {
      std::fprintf(stderr, "smd cat: unknown option '%s' (see smd cat --help)\n", o.c_str());
      return kExitUsage;
    } else {
      positional.push_back(o);
    }
  }
  if (positional.size() != 2) {
    std::fprintf(stderr, "smd cat: needs PATH and TENSOR%s (see smd cat --help)\n",
                 positional.size() > 2 ? ", and nothing else" : "");
    return kExitUsage;
  }
  a.path = positional[0];
  a.tensor = positional[1];
  try {
    return Cat(a);
  } catch (const Fatal& f) {
    std::fprintf(stderr, "smd cat: %s\n", Printable(f.message, /*keep_newlines=*/true).c_str());
    return f.exit_code;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "smd cat: out of memory\n");
    return kExitTrialError;
  }
}

}  // namespace smdtool
