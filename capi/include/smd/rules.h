/* smd/rules.h: rules, smdebug's way of watching a training job and saying when it goes wrong.
 *
 * A rule is evaluated step after step on a base trial (and possibly other trials, e.g. to compare
 * two runs). At each global step it answers "condition met" or "not met"; a met condition
 * produces findings (rule, step, tensor, message). smd_rule_invoke() is smdebug's invoke_rule
 * (see docs/rules.md):
 *   - it waits for each step of a running job (refreshing the trial as files appear; no fixed
 *     sleeps) and skips steps the job will never have (smdebug's StepUnavailable), and steps at
 *     which the rule's tensors are missing (TensorUnavailable, TensorUnavailableForStep);
 *   - while a rule evaluates a step, automatic refresh is off on its trials for the invoking
 *     thread (smdebug's no_refresh, as smd_trial_refresh_scope_create does it), so the rule sees
 *     one consistent state; other threads reading the trials keep refreshing;
 *   - the end of the job (smdebug's NoMoreData) ends an open-ended invocation normally: the call
 *     returns NULL and smd_rule_end_reason() says SMD_RULE_END_NO_MORE_DATA (smdebug raises
 *     NoMoreData there instead);
 *   - a met condition runs the actions: the finding callback, an optional message file and an
 *     optional stop-training signal (see smd_hook_stop_requested() in smd/hook.h); then, with
 *     raise_eval_cond, the call fails with SMD_E_RULE_CONDITION_MET ("Evaluation of the rule
 *     <name> at step <step> resulted in the condition being met: ..."); without it, the
 *     invocation goes on.
 *
 * Rules are either built in (smd_rule_create_builtin: SageMaker's rules by name, configured with
 * string parameters exactly as SageMaker passes them; docs/rules.md lists them) or custom
 * (smd_rule_create: a callback).
 *
 * Threading: an smd_rule is used by one thread at a time; rules that share a trial are best
 * invoked together (smd_rule_invoke_many: the trial is stepped through once). A rule's failure
 * is the error its invocation returns, like every other error. smd_rule_finding objects are
 * immutable. smd_rule_invoke_options is a plain value: one thread at a time.
 */
#ifndef SMD_RULES_H
#define SMD_RULES_H

#include "smd/common.h"
#include "smd/trial.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct smd_rule smd_rule;
typedef struct smd_rule_context smd_rule_context;
typedef struct smd_rule_finding smd_rule_finding;
typedef struct smd_rule_invoke_options smd_rule_invoke_options;

/* ---------------------------------------------------------------------------------------------
 * Custom rules.
 * ------------------------------------------------------------------------------------------- */

/* smdebug's invoke_at_step: evaluate the rule at global step `step` and set *condition_met.
 * Explain a met condition with smd_rule_context_report() (which tensor, why). Return 0 on
 * success. To fail, return non-zero: after smd_rule_context_fail() the invocation treats the
 * error as smdebug treats an exception (SMD_E_TENSOR_UNAVAILABLE_FOR_STEP, SMD_E_STEP_UNAVAILABLE
 * and SMD_E_TENSOR_UNAVAILABLE skip the step; anything else ends the invocation with that error);
 * without it, the invocation ends with SMD_E_CANCELLED. Must not unwind (throw, longjmp). */
typedef int (*smd_rule_invoke_fn)(smd_rule_context *ctx, int64_t step, bool *condition_met,
                                  void *payload);

/* smdebug's set_required_tensors: declare, with smd_rule_context_require_tensor(), the tensors
 * and steps the rule reads at `step`; the invoker waits for those steps and reads the values
 * (into the trial's cache) before calling the invoke callback. Return values as for
 * smd_rule_invoke_fn. */
typedef int (*smd_rule_required_tensors_fn)(smd_rule_context *ctx, int64_t step, void *payload);

/* Creates a custom rule named `name` (used in findings and errors) on `base` and n_others other
 * trials (others may be NULL when n_others is 0). The rule keeps its own references to the
 * trials: the caller may free its handles. `required` may be NULL. `payload` is passed to the
 * callbacks and must stay valid until smd_rule_free(). *out is the caller's (smd_rule_free).
 * Errors: SMD_E_INVALID_ARGUMENT (NULL or empty name, NULL base or other trial, NULL invoke). */
SMD_API SMD_MUST_USE smd_error *smd_rule_create(const char *name, smd_trial *base,
                                                smd_trial *const *others, size_t n_others,
                                                smd_rule_invoke_fn invoke,
                                                smd_rule_required_tensors_fn required,
                                                void *payload, smd_rule **out) SMD_NOEXCEPT;

/* What a callback may do with its context. The context is valid only during the callback. */

/* The rule's name, borrowed for the callback's duration. */
SMD_API const char *smd_rule_context_rule_name(const smd_rule_context *ctx) SMD_NOEXCEPT;
/* The number of trials of the rule: 1 (the base trial) + the other trials. */
SMD_API size_t smd_rule_context_trial_count(const smd_rule_context *ctx) SMD_NOEXCEPT;
/* Trial `index`: 0 is the base trial, 1.. the other trials in creation order. Borrowed: owned by
 * the rule, valid as long as the rule (do not free it); NULL for an index out of range. Every
 * smd_trial_* / smd_tensor_* function may be used on it. */
SMD_API smd_trial *smd_rule_context_trial(const smd_rule_context *ctx, size_t index) SMD_NOEXCEPT;
/* Adds a finding, delivered if the callback answers "condition met": the tensor (NULL or "" when
 * no single tensor is to blame) of trial `trial_index` that triggered the rule, and a message
 * (copied). Errors: SMD_E_INVALID_ARGUMENT (NULL ctx or message, trial index out of range). */
SMD_API SMD_MUST_USE smd_error *smd_rule_context_report(smd_rule_context *ctx, size_t trial_index,
                                                        const char *tensor,
                                                        const char *message) SMD_NOEXCEPT;
/* smdebug's RequiredTensors.add, only from the required-tensors callback: tensor `name` of trial
 * `trial_index` at the n_steps global steps (copied; steps may be NULL when n_steps is 0), or with
 * `regex` every tensor whose name the pattern matches (search semantics; matching none is fine).
 * Errors: SMD_E_TENSOR_UNAVAILABLE (no tensor of that name), SMD_E_INVALID_ARGUMENT (NULL
 * arguments, bad index, bad regex, called from the invoke callback). */
SMD_API SMD_MUST_USE smd_error *smd_rule_context_require_tensor(smd_rule_context *ctx,
                                                                size_t trial_index,
                                                                const char *name, bool regex,
                                                                const int64_t *steps,
                                                                size_t n_steps) SMD_NOEXCEPT;
/* The rule needs no more steps: the invocation stops evaluating it after this one
 * (SMD_RULE_END_OF_RULE; smdebug's RuleEvaluationConditionMet with end_of_rule). */
SMD_API void smd_rule_context_end_rule(smd_rule_context *ctx) SMD_NOEXCEPT;
/* Hands an error to the invoker and returns 1, so that a callback can end with
 * `return smd_rule_context_fail(ctx, err);`. Takes ownership of err (NULL: returns 0 and does
 * nothing; with a NULL ctx err is freed and 1 returned). The invoker handles it as described at
 * smd_rule_invoke_fn. */
SMD_API int smd_rule_context_fail(smd_rule_context *ctx, smd_error *err) SMD_NOEXCEPT;
/* The same with a code and message of the callback's own (e.g. SMD_E_INVALID_ARGUMENT for
 * smdebug's InsufficientInformationForRuleInvocation). SMD_OK, or a value that is not an smd_code,
 * becomes SMD_E_INTERNAL; message may be NULL (none). Returns 1. */
SMD_API int smd_rule_context_fail_with(smd_rule_context *ctx, smd_code code,
                                       const char *message) SMD_NOEXCEPT;
/* Whether a callback failing with this code makes the invoker skip the step (the data is absent:
 * SMD_E_TENSOR_UNAVAILABLE_FOR_STEP, SMD_E_TENSOR_UNAVAILABLE, SMD_E_STEP_UNAVAILABLE, as smdebug
 * skips on those exceptions) instead of ending the invocation with the error. Bindings ask this
 * rather than keep their own list. */
SMD_API bool smd_code_skips_rule_step(smd_code code) SMD_NOEXCEPT;

/* ---------------------------------------------------------------------------------------------
 * Built-in rules (docs/rules.md).
 * ------------------------------------------------------------------------------------------- */

/* Creates built-in rule `name` (case-insensitive: "VanishingGradient", "LossNotDecreasing", ...)
 * on `base` and n_others other trials, with n_params string parameters keys[i] = values[i] as
 * SageMaker passes them ("threshold" = "0.0000001", "collection_names" = "gradients,weights",
 * booleans "True"/"False", lists comma-separated; an empty value means "not given"). Missing
 * parameters take their documented defaults. SageMaker's other keys are accepted too:
 * rule_to_invoke (must name this rule), action_json (a "stoptraining" action raises the stop
 * signal when the rule fires; email and sms actions are accepted and not performed),
 * other_trial_0, other_trial_1, ... (trial folders to open, when n_others is 0, with the options
 * `base` was opened with: its S3 settings, collection wait, range and cache). The rule keeps
 * its own references to the trials. others may be NULL when n_others is 0, keys and values when
 * n_params is 0. *out is the caller's (smd_rule_free).
 * Errors: SMD_E_INVALID_ARGUMENT with a message naming the rule, the parameter and the value (an
 * unknown rule or parameter, a value that does not parse, a missing required parameter or other
 * trial, e.g. AllZero without collection_names or tensor_regex: smdebug's
 * InsufficientInformationForRuleInvocation); the errors of smd_trial_open for other_trial_N. */
SMD_API SMD_MUST_USE smd_error *smd_rule_create_builtin(const char *name, smd_trial *base,
                                                        smd_trial *const *others, size_t n_others,
                                                        const char *const *keys,
                                                        const char *const *values,
                                                        size_t n_params,
                                                        smd_rule **out) SMD_NOEXCEPT;

/* The names of the built-in rules, in documentation order. */
SMD_API SMD_MUST_USE smd_error *smd_rule_builtin_names(smd_strarray *out) SMD_NOEXCEPT;

/* A built-in rule's parameter names, in documentation order.
 * Errors: SMD_E_INVALID_ARGUMENT (unknown rule). */
SMD_API SMD_MUST_USE smd_error *smd_rule_builtin_params(const char *name,
                                                        smd_strarray *out) SMD_NOEXCEPT;
/* A built-in rule's parameter: its default ("" when it has none) and a one-line description,
 * static storage; NULL for an unknown rule or parameter. */
SMD_API const char *smd_rule_builtin_param_default(const char *rule, const char *param) SMD_NOEXCEPT;
SMD_API const char *smd_rule_builtin_param_help(const char *rule, const char *param) SMD_NOEXCEPT;

/* A one-line description of a built-in rule (static storage); NULL for an unknown name. */
SMD_API const char *smd_rule_builtin_summary(const char *name) SMD_NOEXCEPT;

/* ---------------------------------------------------------------------------------------------
 * Rules: common functions.
 * ------------------------------------------------------------------------------------------- */

/* Frees a rule (and its findings and trial references). NULL is allowed. */
SMD_API void smd_rule_free(smd_rule *rule) SMD_NOEXCEPT;
/* The rule's name ("VanishingGradient" for built-ins), borrowed for the rule's lifetime. */
SMD_API const char *smd_rule_name(const smd_rule *rule) SMD_NOEXCEPT;
/* Whether the rule raises the stop-training signal when it fires, whatever the invoke options
 * say (set by a built-in rule's action_json / stop_training_on_fire, or by the setter). */
SMD_API bool smd_rule_stop_training(const smd_rule *rule) SMD_NOEXCEPT;
/* Errors: SMD_E_INVALID_ARGUMENT (NULL rule). */
SMD_API SMD_MUST_USE smd_error *smd_rule_set_stop_training(smd_rule *rule, bool on) SMD_NOEXCEPT;

/* ---------------------------------------------------------------------------------------------
 * Findings: one reason a rule's condition was met at a step. Immutable.
 * ------------------------------------------------------------------------------------------- */

/* The rule's name, borrowed for the finding's lifetime. */
SMD_API const char *smd_rule_finding_rule(const smd_rule_finding *finding) SMD_NOEXCEPT;
/* The global step at which the condition was met. -1 for NULL. */
SMD_API int64_t smd_rule_finding_step(const smd_rule_finding *finding) SMD_NOEXCEPT;
/* The tensor that triggered it ("" when no single tensor did), borrowed. */
SMD_API const char *smd_rule_finding_tensor(const smd_rule_finding *finding) SMD_NOEXCEPT;
/* Which trial the tensor belongs to: 0 the base trial, i the other trial i - 1. */
SMD_API size_t smd_rule_finding_trial(const smd_rule_finding *finding) SMD_NOEXCEPT;
/* Why, in words, borrowed. */
SMD_API const char *smd_rule_finding_message(const smd_rule_finding *finding) SMD_NOEXCEPT;
/* One line for logs and notifications, smdebug's SNS text made local, borrowed:
 * "SMDebugRule:<rule> fired. step <step>, tensor '<tensor>': <message>". */
SMD_API const char *smd_rule_finding_line(const smd_rule_finding *finding) SMD_NOEXCEPT;

/* The findings collected in the rule by its invocations so far (see
 * smd_rule_invoke_options_set_collect_findings), oldest first. */
SMD_API size_t smd_rule_findings_count(const smd_rule *rule) SMD_NOEXCEPT;
/* Finding i, borrowed: valid until the rule is freed or its findings cleared; NULL out of range. */
SMD_API const smd_rule_finding *smd_rule_findings_at(const smd_rule *rule, size_t i) SMD_NOEXCEPT;
/* Forgets the collected findings (the counts below are kept). */
SMD_API void smd_rule_findings_clear(smd_rule *rule) SMD_NOEXCEPT;

/* Counts over every invocation of the rule: steps evaluated (condition met or not), steps
 * skipped (unavailable), and steps at which the condition was met. 0 for NULL. */
SMD_API int64_t smd_rule_steps_evaluated(const smd_rule *rule) SMD_NOEXCEPT;
SMD_API int64_t smd_rule_steps_skipped(const smd_rule *rule) SMD_NOEXCEPT;
SMD_API int64_t smd_rule_conditions_met(const smd_rule *rule) SMD_NOEXCEPT;
/* The last step evaluated or skipped; -1 if none (and for NULL). */
SMD_API int64_t smd_rule_last_step(const smd_rule *rule) SMD_NOEXCEPT;

/* Why the last invocation stopped evaluating the rule. */
typedef enum smd_rule_end {
  SMD_RULE_END_NONE = 0,          /* not invoked yet */
  SMD_RULE_END_STEP = 1,          /* reached end_step */
  SMD_RULE_END_NO_MORE_DATA = 2,  /* the job ended (smdebug's NoMoreData): a normal end */
  SMD_RULE_END_OF_RULE = 3,       /* the rule needs no more steps (smd_rule_context_end_rule) */
  SMD_RULE_END_CONDITION_MET = 4, /* met and raised (raise_eval_cond), or stop at first */
  SMD_RULE_END_ERROR = 5,         /* the rule failed: the error the invocation returned is its own
                                     (or its trial's), at smd_rule_failed_step() */
  SMD_RULE_END_STOPPED = 6        /* stopped unfinished: another rule failed or raised its
                                     condition, a callback cancelled, or a wait timed out */
} smd_rule_end;
SMD_API smd_rule_end smd_rule_end_reason(const smd_rule *rule) SMD_NOEXCEPT;
/* The step at which the rule failed in its last invocation (smd_rule_end_reason() is
 * SMD_RULE_END_ERROR), -1 otherwise (and for NULL). How it failed is the error that invocation
 * returned (its message names the rule and the step): errors are per call, the rule keeps none. */
SMD_API int64_t smd_rule_failed_step(const smd_rule *rule) SMD_NOEXCEPT;

/* ---------------------------------------------------------------------------------------------
 * Invocation.
 * ------------------------------------------------------------------------------------------- */

/* How one step went for one rule, for progress callbacks. */
typedef enum smd_rule_outcome {
  SMD_RULE_NOT_MET = 0,        /* evaluated; condition not met */
  SMD_RULE_CONDITION_MET = 1,  /* evaluated; condition met (after the finding callbacks) */
  SMD_RULE_SKIPPED = 2,        /* skipped: a step the job never had (reported once per run of
                                  consecutive such steps, with its first step), or a step at
                                  which the rule's tensors were missing (once each) */
  SMD_RULE_WAITING = 3         /* waiting for `step` of a running job (rule is NULL) */
} smd_rule_outcome;

/* Called for each finding of a met condition, before the invocation goes on. The finding is
 * borrowed for the call. Non-zero cancels: the invocation fails with SMD_E_CANCELLED. */
typedef int (*smd_rule_finding_fn)(const smd_rule *rule, const smd_rule_finding *finding,
                                   void *payload);
/* Called after each step of each rule, and once per wait slice (about a second by default)
 * with SMD_RULE_WAITING and rule NULL while waiting for a step. Non-zero cancels
 * (SMD_E_CANCELLED), which is how a caller stops an open-ended invocation of a live job. */
typedef int (*smd_rule_progress_fn)(const smd_rule *rule, int64_t step, smd_rule_outcome outcome,
                                    void *payload);

/* Options with the defaults: no callbacks, no message file, no stop signal, findings collected,
 * wait as long as a running job takes, evaluate every step. */
SMD_API SMD_MUST_USE smd_error *smd_rule_invoke_options_create(smd_rule_invoke_options **out) SMD_NOEXCEPT;
SMD_API void smd_rule_invoke_options_free(smd_rule_invoke_options *options) SMD_NOEXCEPT;
/* The finding callback (NULL: none); payload is passed back and must outlive the invocations. */
SMD_API SMD_MUST_USE smd_error *smd_rule_invoke_options_set_finding_callback(
    smd_rule_invoke_options *options, smd_rule_finding_fn fn, void *payload) SMD_NOEXCEPT;
/* The progress callback (NULL: none). */
SMD_API SMD_MUST_USE smd_error *smd_rule_invoke_options_set_progress_callback(
    smd_rule_invoke_options *options, smd_rule_progress_fn fn, void *payload) SMD_NOEXCEPT;
/* Raise the stop-training signal when any rule's condition is met: the file stop_training.smd
 * in the base trial's folder (the hook's out_dir), holding the finding as JSON. A training loop
 * polls it with smd_hook_stop_requested(). Default false. */
SMD_API SMD_MUST_USE smd_error *smd_rule_invoke_options_set_stop_training(
    smd_rule_invoke_options *options, bool on) SMD_NOEXCEPT;
/* Stop evaluating a rule once its condition was met (SageMaker ends a rule job there: status
 * IssuesFound). Default false: evaluate every step (smdebug's invoke_rule). */
SMD_API SMD_MUST_USE smd_error *smd_rule_invoke_options_set_stop_at_first(
    smd_rule_invoke_options *options, bool on) SMD_NOEXCEPT;
/* Keep findings in the rule (smd_rule_findings_count, smd_rule_findings_at). Default true. */
SMD_API SMD_MUST_USE smd_error *smd_rule_invoke_options_set_collect_findings(
    smd_rule_invoke_options *options, bool on) SMD_NOEXCEPT;
/* Append each finding's line to this file (created if needed; NULL or "": none), the local
 * stand-in for smdebug's email/SMS actions. The path is copied. */
SMD_API SMD_MUST_USE smd_error *smd_rule_invoke_options_set_message_file(
    smd_rule_invoke_options *options, const char *path) SMD_NOEXCEPT;
/* The longest wait for one step of a running job, in ms: -1 (default) as long as it takes, 0
 * not at all (evaluate what is there now). A timeout fails with SMD_E_STEP_NOT_YET_AVAILABLE.
 * Errors: SMD_E_INVALID_ARGUMENT (< -1). */
SMD_API SMD_MUST_USE smd_error *smd_rule_invoke_options_set_wait_timeout_ms(
    smd_rule_invoke_options *options, int64_t timeout_ms) SMD_NOEXCEPT;
/* How often a wait wakes up to call the progress callback and time-based rules (default 1000
 * ms). Errors: SMD_E_INVALID_ARGUMENT (< 1). */
SMD_API SMD_MUST_USE smd_error *smd_rule_invoke_options_set_wait_slice_ms(
    smd_rule_invoke_options *options, int64_t slice_ms) SMD_NOEXCEPT;

/* smdebug's invoke_rule(rule, start_step, end_step, raise_eval_cond): evaluates the rule at every
 * global step start_step <= step < end_step (end_step < 0: until the job ends), as described at
 * the top of this header. options may be NULL (defaults). Returns NULL when the invocation ended
 * normally: end_step reached, the job ended (SMD_RULE_END_NO_MORE_DATA), or the rule ended
 * itself; smd_rule_end_reason() tells which.
 * Errors: SMD_E_RULE_CONDITION_MET (raise_eval_cond and a met condition; the message names the
 * rule, the step and the first finding), SMD_E_CANCELLED (a callback returned non-zero),
 * SMD_E_STEP_NOT_YET_AVAILABLE (the wait timeout passed), SMD_E_INVALID_ARGUMENT, SMD_E_IO, and
 * whatever error a rule returned. */
SMD_API SMD_MUST_USE smd_error *smd_rule_invoke(smd_rule *rule, int64_t start_step, int64_t end_step,
                                                bool raise_eval_cond,
                                                const smd_rule_invoke_options *options) SMD_NOEXCEPT;

/* The same for n rules sharing one base trial (the same smd_trial, or handles of one trial
 * object), stepping through the trial once: at each step every rule still running is evaluated,
 * in array order. A rule that ends (end of rule, stop at first) drops out; the call returns when
 * all have ended or at the first error. Errors: as smd_rule_invoke; SMD_E_INVALID_ARGUMENT also
 * for rules with different base trials. */
SMD_API SMD_MUST_USE smd_error *smd_rule_invoke_many(smd_rule *const *rules, size_t n,
                                                     int64_t start_step, int64_t end_step,
                                                     bool raise_eval_cond,
                                                     const smd_rule_invoke_options *options) SMD_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif /* SMD_RULES_H */
