// smd rules PATH --rule NAME[:key=value,...] ...: runs built-in rules over a trial, on the public
// C API only (smd/rules.h).
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "capi_util.h"
#include "commands.h"
#include "json.h"
#include "smd/smd.h"

namespace smdtool {
namespace {

volatile sig_atomic_t g_interrupted = 0;

void OnInterrupt(int) { g_interrupted = 1; }

struct RuleSpec {
  std::string name;
  std::vector<std::pair<std::string, std::string>> params;
};

bool IsKeyStart(const std::string& seg) {
  // "key=value": key = [A-Za-z_][A-Za-z0-9_.-]*
  size_t eq = seg.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  for (size_t i = 0; i < eq; ++i) {
    const char c = seg[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                    (i > 0 && ((c >= '0' && c <= '9') || c == '.' || c == '-'));
    if (!ok) return false;
  }
  return true;
}

// "NAME" or "NAME:key=value,key=value". A comma-separated piece that does not start with
// "key=" continues the previous value, so list values keep their commas:
// "ExplodingTensor:collection_names=gradients,weights,only_nan=True".
bool ParseRuleSpec(const std::string& text, RuleSpec* out, std::string* error) {
  size_t colon = text.find(':');
  out->name = text.substr(0, colon);
  if (out->name.empty()) {
    *error = "no rule name in '" + text + "'";
    return false;
  }
  if (colon == std::string::npos) return true;
  std::string rest = text.substr(colon + 1);
  std::vector<std::string> segs;
  size_t start = 0;
  for (;;) {
    size_t comma = rest.find(',', start);
    segs.push_back(rest.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  for (const std::string& seg : segs) {
    if (IsKeyStart(seg)) {
      size_t eq = seg.find('=');
      out->params.emplace_back(seg.substr(0, eq), seg.substr(eq + 1));
    } else if (!out->params.empty()) {
      out->params.back().second += "," + seg;
    } else if (!seg.empty()) {
      *error = "expected key=value after '" + out->name + ":', got '" + seg + "'";
      return false;
    }
  }
  return true;
}

std::string JsonString(const std::string& s) {
  std::string out;
  AppendJsonString(&out, s);
  return out;
}

// State shared with the callbacks.
struct Run {
  bool json = false;
  bool progress = false;
  bool follow = false;
  int64_t last_known = -1;  // last step of the base trial when the run started
  int64_t step = -1;
  int64_t findings = 0;
  int64_t waiting_for = -1;
  std::chrono::steady_clock::time_point last_draw;
  bool drawn = false;

  void Clear() {
    if (drawn) {
      std::fprintf(stderr, "\r\033[K");
      drawn = false;
    }
  }
  void Draw(bool force) {
    auto now = std::chrono::steady_clock::now();
    if (!force && drawn && now - last_draw < std::chrono::milliseconds(100)) return;
    last_draw = now;
    char line[256];
    if (waiting_for >= 0) {
      std::snprintf(line, sizeof line, "smd rules: waiting for step %" PRId64
                    " of the running job | %" PRId64 " finding(s)", waiting_for, findings);
    } else if (last_known >= 0 && !follow) {
      std::snprintf(line, sizeof line, "smd rules: step %" PRId64 " of %" PRId64 " | %" PRId64
                    " finding(s)", step, last_known, findings);
    } else {
      std::snprintf(line, sizeof line, "smd rules: step %" PRId64 " | %" PRId64 " finding(s)",
                    step, findings);
    }
    std::fprintf(stderr, "\r\033[K%s", line);
    std::fflush(stderr);
    drawn = true;
  }
};

int OnFinding(const smd_rule* rule, const smd_rule_finding* f, void* payload) {
  Run* run = static_cast<Run*>(payload);
  (void)rule;
  ++run->findings;
  run->Clear();
  const char* tensor = smd_rule_finding_tensor(f);
  const size_t trial = smd_rule_finding_trial(f);
  if (run->json) {
    std::printf("{\"rule\": %s, \"step\": %" PRId64 ", \"tensor\": %s, \"trial\": %zu, \"message\": %s}\n",
                JsonString(smd_rule_finding_rule(f)).c_str(), smd_rule_finding_step(f),
                JsonString(tensor).c_str(), trial, JsonString(smd_rule_finding_message(f)).c_str());
  } else {
    std::string where = tensor[0] != '\0' ? Printable(tensor) : std::string("-");
    if (trial > 0) where += " (other trial " + std::to_string(trial - 1) + ")";
    std::printf("%s: step %" PRId64 ": %s: %s\n", Printable(smd_rule_finding_rule(f)).c_str(),
                smd_rule_finding_step(f), where.c_str(),
                Printable(smd_rule_finding_message(f)).c_str());
  }
  std::fflush(stdout);
  return 0;
}

int OnProgress(const smd_rule* rule, int64_t step, smd_rule_outcome outcome, void* payload) {
  Run* run = static_cast<Run*>(payload);
  if (g_interrupted) return 1;
  (void)rule;
  if (outcome == SMD_RULE_WAITING) {
    run->waiting_for = step;
  } else {
    run->waiting_for = -1;
    run->step = step;
  }
  if (run->progress) run->Draw(outcome == SMD_RULE_WAITING);
  return 0;
}

const char* EndText(smd_rule_end e) {
  switch (e) {
    case SMD_RULE_END_NONE: return "not run";
    case SMD_RULE_END_STEP: return "reached the end step";
    case SMD_RULE_END_NO_MORE_DATA: return "the job ended";
    case SMD_RULE_END_OF_RULE: return "the rule needed no more steps";
    case SMD_RULE_END_CONDITION_MET: return "stopped at the first issue";
    case SMD_RULE_END_ERROR: return "failed";
    case SMD_RULE_END_STOPPED: return "stopped";
  }
  return "?";
}

void ListRules() {
  smd_strarray names = {nullptr, 0};
  Err e(smd_rule_builtin_names(&names));
  if (e) return;
  for (size_t i = 0; i < names.count; ++i) {
    const char* n = names.strings[i];
    std::printf("%s\n    %s\n", n, smd_rule_builtin_summary(n));
    smd_strarray params = {nullptr, 0};
    Err pe(smd_rule_builtin_params(n, &params));
    for (size_t k = 0; !pe && k < params.count; ++k) {
      const char* p = params.strings[k];
      const char* d = smd_rule_builtin_param_default(n, p);
      std::string def = d != nullptr && d[0] != '\0' ? std::string(" (default ") + d + ")" : "";
      std::printf("    %s%s: %s\n", p, def.c_str(), smd_rule_builtin_param_help(n, p));
    }
    smd_strarray_free(&params);
  }
  smd_strarray_free(&names);
}

}  // namespace

void HelpRules() {
  std::printf(
      "usage: smd rules PATH --rule NAME[:key=value,...] [--rule ...] [--other PATH]...\n"
      "                 [--follow] [--start N] [--end N] [--keep-going] [--stop-training]\n"
      "                 [--timeout MS] [--message-file FILE] [--json] [--no-progress]\n"
      "       smd rules --list\n"
      "\n"
      "Runs SageMaker Debugger's built-in rules over the trial in folder PATH, step by step, and\n"
      "prints each finding: the rule, the step, the tensor that triggered it and why. Parameters\n"
      "are given as SageMaker passes them, as strings: a value may contain commas (lists).\n"
      "  smd rules ./run --rule VanishingGradient --rule ExplodingTensor:collection_names=gradients,weights\n"
      "  smd rules ./run --rule LossNotDecreasing:num_steps=20,diff_percent=1 --follow\n"
      "  smd rules ./run --rule SimilarAcrossRuns --other ./baseline\n"
      "\n"
      "options:\n"
      "  --rule SPEC          a built-in rule (smd rules --list shows them and their parameters)\n"
      "  --other PATH         another trial, for rules that compare runs (SimilarAcrossRuns)\n"
      "  --follow             watch a running job until it ends (training_job_end.ts); without it\n"
      "                       the steps written so far are evaluated and smd rules stops there.\n"
      "                       It may start before the training: it waits up to 10 minutes (or\n"
      "                       --timeout) for the folder and its collections file, and so for\n"
      "                       each other trial (--other, other_trial_N)\n"
      "  --timeout MS         with --follow: stop waiting when no new step came for MS\n"
      "                       milliseconds (a writer that died without training_job_end.ts);\n"
      "                       the summary says so and the exit status is 8 (default: wait\n"
      "                       until the job ends)\n"
      "  --start N, --end N   evaluate global steps N <= step < END only\n"
      "  --keep-going         evaluate every step; by default a rule stops at its first issue,\n"
      "                       as a SageMaker rule job does\n"
      "  --stop-training      when a rule fires, write the stop-training signal into PATH: a\n"
      "                       training loop polling smd_hook_stop_requested() then stops\n"
      "  --message-file FILE  append one line per finding to FILE\n"
      "  --json               print findings and the summary as JSON lines\n"
      "  --no-progress        no progress line (shown on a terminal by default)\n"
      "  --list               list the built-in rules and their parameters\n"
      "  -h, --help           show this help\n"
      "  --                   the argument after it is PATH (a path starting with '-')\n"
      "\n"
      "After the findings, one summary line per rule gives its status: IssuesFound or\n"
      "NoIssuesFound when it ran to its end (or to the last step a running job has written);\n"
      "Error, with the step and the error, when the rule failed (for instance on a file it could\n"
      "not read); Stopped when it was not finished because another rule failed or smd rules was\n"
      "interrupted.\n"
      "\n"
      "exit status: 0 no rule found an issue; 6 some rule's condition was met (IssuesFound);\n"
      "1 the trial could not be read or a rule failed; 2 bad usage (also a bad rule parameter);\n"
      "3 no collections file (MissingCollectionFiles); 8 --follow --timeout ran out waiting for\n"
      "a step; 130 interrupted.\n");
}

int RunRules(int argc, char** argv) {
  std::string path;
  std::vector<std::string> others;
  std::vector<RuleSpec> specs;
  bool follow = false, keep_going = false, stop_training = false, json = false;
  bool progress = ::isatty(STDERR_FILENO) != 0;
  int64_t start = 0, end = -1, timeout_ms = -1;
  std::string message_file;
  auto need = [&](int& i, const char* what) -> const char* {
    if (i + 1 >= argc) {
      std::fprintf(stderr, "smd rules: %s needs %s\n", argv[i], what);
      return nullptr;
    }
    return argv[++i];
  };
  bool options_ended = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    const bool option = !options_ended && !a.empty() && a[0] == '-';
    if (option && a == "--") {  // the rest are PATH, even when it starts with '-'
      options_ended = true;
    } else if (!option) {
      if (!path.empty()) {
        std::fprintf(stderr, "smd rules: more than one PATH given ('%s' and '%s')\n", path.c_str(),
                     a.c_str());
        return kExitUsage;
      }
      path = a;
    } else if (a == "-h" || a == "--help") {
      HelpRules();
      return kExitOk;
    } else if (a == "--list") {
      ListRules();
      return kExitOk;
    } else if (a == "--rule") {
      const char* v = need(i, "a rule (NAME[:key=value,...])");
      if (!v) return kExitUsage;
      RuleSpec s;
      std::string err;
      if (!ParseRuleSpec(v, &s, &err)) {
        std::fprintf(stderr, "smd rules: --rule: %s\n", err.c_str());
        return kExitUsage;
      }
      specs.push_back(std::move(s));
    } else if (a == "--other") {
      const char* v = need(i, "a trial folder");
      if (!v) return kExitUsage;
      others.emplace_back(v);
    } else if (a == "--start" || a == "--end") {
      const char* v = need(i, "a step number");
      int64_t n;
      if (!v || !ParseInt64Arg(v, &n) || n < (a == "--end" ? -1 : 0)) {
        std::fprintf(stderr, "smd rules: invalid %s value '%s'\n", a.c_str(), v ? v : "");
        return kExitUsage;
      }
      (a == "--start" ? start : end) = n;
    } else if (a == "--timeout") {
      const char* v = need(i, "a number of milliseconds");
      if (!v || !ParseInt64Arg(v, &timeout_ms) || timeout_ms < 0) {
        std::fprintf(stderr, "smd rules: invalid --timeout value '%s' (milliseconds >= 0)\n",
                     v ? Printable(v).c_str() : "");
        return kExitUsage;
      }
    } else if (a == "--message-file") {
      const char* v = need(i, "a file name");
      if (!v) return kExitUsage;
      message_file = v;
    } else if (a == "--follow") {
      follow = true;
    } else if (a == "--keep-going") {
      keep_going = true;
    } else if (a == "--stop-training") {
      stop_training = true;
    } else if (a == "--json") {
      json = true;
    } else if (a == "--no-progress") {
      progress = false;
    } else if (a == "--progress") {
      progress = true;
    } else {
      std::fprintf(stderr, "smd rules: unknown option '%s' (see smd rules --help)\n", a.c_str());
      return kExitUsage;
    }
  }
  if (path.empty()) {
    std::fprintf(stderr, "smd rules: no trial PATH given (see smd rules --help)\n");
    return kExitUsage;
  }
  if (specs.empty()) {
    std::fprintf(stderr, "smd rules: no --rule given (smd rules --list shows the rules)\n");
    return kExitUsage;
  }
  if (timeout_ms >= 0 && !follow) {
    std::fprintf(stderr, "smd rules: --timeout applies to --follow only (without it smd rules "
                         "does not wait)\n");
    return kExitUsage;
  }
  if (end >= 0 && end <= start) {
    std::fprintf(stderr, "smd rules: --end %" PRId64 " must be after --start %" PRId64 "\n", end, start);
    return kExitUsage;
  }

  // Trials. A followed job may not have written its collections file yet, nor made its folder
  // (the rule may start before the training, and a run it compares with may start after the base
  // one): under --follow each trial's folder and then its collections file are waited for, up to
  // 10 minutes or --timeout. Other trials named by rule parameters (other_trial_N, other_trials)
  // are opened by the library with the base trial's options, and so waited for likewise.
  smd_trial_options* topts = nullptr;
  if (Err e{smd_trial_options_create(&topts)}) {
    std::fprintf(stderr, "smd rules: %s\n", Printable(e.message()).c_str());
    return kExitTrialError;
  }
  if (follow) {
    const int64_t wait = timeout_ms >= 0 && timeout_ms < 600000 ? timeout_ms : 600000;
    smd_error_free(smd_trial_options_set_collection_wait_ms(topts, wait));
  }
  std::vector<smd_trial*> trials;  // the base trial, then --other's
  auto cleanup = [&]() {
    for (smd_trial* t : trials) smd_trial_free(t);
    smd_trial_options_free(topts);
  };
  for (size_t i = 0; i <= others.size(); ++i) {
    const std::string& p = i == 0 ? path : others[i - 1];
    smd_trial* t = nullptr;
    Err e(smd_trial_open(p.c_str(), topts, &t));
    if (e) {
      std::fprintf(stderr, "smd rules: %s\n", Printable(OpenFailure(p, e)).c_str());
      cleanup();
      return OpenExitCode(e);
    }
    trials.push_back(t);
  }

  // Rules.
  std::vector<smd_rule*> rules;
  auto free_rules = [&]() {
    for (smd_rule* r : rules) smd_rule_free(r);
  };
  for (const RuleSpec& s : specs) {
    std::vector<const char*> keys, values;
    for (const auto& kv : s.params) {
      keys.push_back(kv.first.c_str());
      values.push_back(kv.second.c_str());
    }
    smd_rule* r = nullptr;
    Err e(smd_rule_create_builtin(s.name.c_str(), trials[0], trials.data() + 1, trials.size() - 1,
                                  keys.data(), values.data(), keys.size(), &r));
    if (e) {
      std::fprintf(stderr, "smd rules: %s\n", Printable(smd_error_message(e.e)).c_str());
      free_rules();
      cleanup();
      // An other trial named by a parameter that could not be opened: as the base trial's open.
      return e.code() == SMD_E_INVALID_ARGUMENT ? kExitUsage : TrialExitCode(e);
    }
    rules.push_back(r);
  }

  Run run;
  run.json = json;
  run.progress = progress;
  run.follow = follow;
  {
    int64_t* steps = nullptr;
    size_t n = 0;
    Err e(smd_trial_steps(trials[0], SMD_MODE_GLOBAL, true, &steps, &n));
    if (!e && n > 0) run.last_known = steps[n - 1];
    smd_free(steps);
  }
  smd_rule_invoke_options* o = nullptr;
  smd_error_free(smd_rule_invoke_options_create(&o));
  smd_error_free(smd_rule_invoke_options_set_finding_callback(o, OnFinding, &run));
  smd_error_free(smd_rule_invoke_options_set_progress_callback(o, OnProgress, &run));
  smd_error_free(smd_rule_invoke_options_set_stop_at_first(o, !keep_going));
  smd_error_free(smd_rule_invoke_options_set_stop_training(o, stop_training));
  smd_error_free(smd_rule_invoke_options_set_collect_findings(o, false));
  smd_error_free(smd_rule_invoke_options_set_wait_timeout_ms(o, follow ? timeout_ms : 0));
  if (!message_file.empty()) {
    smd_error_free(smd_rule_invoke_options_set_message_file(o, message_file.c_str()));
  }

  struct sigaction sa, old_int, old_term;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = OnInterrupt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  Err e(smd_rule_invoke_many(rules.data(), rules.size(), start, end, false, o));
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  run.Clear();

  int code = kExitOk;
  bool live_edge = false, timed_out = false, other_running = false;
  if (e) {
    if (e.code() == SMD_E_CANCELLED && g_interrupted) {
      std::fprintf(stderr, "smd rules: interrupted\n");
      code = kExitInterrupted;
    } else if (e.code() == SMD_E_STEP_NOT_YET_AVAILABLE && !follow) {
      live_edge = true;  // the job is still running: evaluated what is there
      // Or the job ended, and a rule stopped at the live edge of another trial it compares with
      // (the other rules ran to their end): say which.
      bool ended = false;
      Err h(smd_trial_has_ended(trials[0], &ended));
      if (!h && ended) {
        other_running = true;
        std::fprintf(stderr, "smd rules: %s: use --follow to wait for it\n",
                     Printable(e.message()).c_str());
      }
    } else if (e.code() == SMD_E_STEP_NOT_YET_AVAILABLE && timeout_ms >= 0) {
      live_edge = timed_out = true;  // --timeout: no new step came
      std::fprintf(stderr, "smd rules: stopped waiting: %s\n", Printable(e.message()).c_str());
      code = kExitTimedOut;
    } else {
      std::fprintf(stderr, "smd rules: %s\n", Printable(e.message()).c_str());
      code = kExitTrialError;
    }
  }
  bool issues = false;
  for (smd_rule* r : rules) {
    const int64_t met = smd_rule_conditions_met(r);
    issues = issues || met > 0;
    const smd_rule_end why = smd_rule_end_reason(r);
    // A rule that failed says so (Error, with the error and its step); one that an error or an
    // interruption stopped before it finished is Stopped; only a rule that ran to its end (or
    // to the live edge of a running job) reports IssuesFound or NoIssuesFound.
    // A rule that failed is the one whose error the invocation returned (errors are per call).
    const char* failure = why == SMD_RULE_END_ERROR && e ? smd_error_message(e.e) : nullptr;
    const bool stopped = why == SMD_RULE_END_STOPPED && !live_edge;
    const char* status = failure != nullptr ? "Error"
                         : met > 0          ? "IssuesFound"
                         : stopped          ? "Stopped"
                                            : "NoIssuesFound";
    if (json) {
      std::printf("{\"rule\": %s, \"status\": \"%s\", \"conditions_met\": %" PRId64
                  ", \"steps_evaluated\": %" PRId64 ", \"steps_skipped\": %" PRId64
                  ", \"last_step\": %" PRId64,
                  JsonString(smd_rule_name(r)).c_str(), status, met, smd_rule_steps_evaluated(r),
                  smd_rule_steps_skipped(r), smd_rule_last_step(r));
      if (failure != nullptr) {
        std::printf(", \"error\": {\"code\": %s, \"step\": %" PRId64 ", \"message\": %s}",
                    JsonString(CodeName(e.code())).c_str(), smd_rule_failed_step(r),
                    JsonString(failure).c_str());
      }
      std::printf("}\n");
    } else if (failure != nullptr) {
      std::printf("%s: Error at step %" PRId64 " (%" PRId64 " step(s) evaluated, %" PRId64
                  " skipped, %" PRId64 " issue(s) found before): %s: %s\n",
                  Printable(smd_rule_name(r)).c_str(), smd_rule_failed_step(r),
                  smd_rule_steps_evaluated(r), smd_rule_steps_skipped(r), met,
                  CodeName(e.code()), Printable(failure).c_str());
    } else {
      const char* end = timed_out && why == SMD_RULE_END_STOPPED
                            ? "no new step within --timeout: stopped waiting"
                        : live_edge && why == SMD_RULE_END_STOPPED
                            ? (other_running ? "another trial it reads is still running: use --follow to wait for it"
                                             : "the job is still running: use --follow to watch it")
                        : stopped ? (code == kExitInterrupted ? "interrupted before the end"
                                                               : "not finished: another rule failed")
                                  : EndText(why);
      std::printf("%s: %s (%" PRId64 " step(s) evaluated, %" PRId64 " skipped, last step %" PRId64
                  "; %s)\n",
                  Printable(smd_rule_name(r)).c_str(), status, smd_rule_steps_evaluated(r),
                  smd_rule_steps_skipped(r),
                  smd_rule_last_step(r), end);
    }
  }
  std::fflush(stdout);
  smd_rule_invoke_options_free(o);
  free_rules();
  cleanup();
  if (code == kExitTimedOut && issues) return kExitConditionMet;  // the findings matter more
  if (code != kExitOk) return code;
  return issues ? kExitConditionMet : kExitOk;
}

}  // namespace smdtool
