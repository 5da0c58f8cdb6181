//! Rules: built-in rules by name, custom rules as closures, and their invocation.
use crate::error::{check, Error, ErrorKind, Result};
use crate::hook::create;
use crate::trial::Trial;
use crate::util::{borrowed_str, cstring, strarray, CStrList};
use smd_sys as sys;
use std::ffi::{c_int, c_void};
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

/// The names of the built-in rules, in documentation order.
pub fn builtin_names() -> Result<Vec<String>> {
    strarray(|o| unsafe { sys::smd_rule_builtin_names(o) })
}

/// One parameter of a built-in rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuiltinParam {
    /// The parameter's name as SageMaker passes it.
    pub name: String,
    /// Its default ("" when it has none).
    pub default: String,
    /// A one-line description.
    pub help: String,
}

/// A built-in rule's parameters, in documentation order. `InvalidArgument` for an unknown rule.
pub fn builtin_params(name: &str) -> Result<Vec<BuiltinParam>> {
    let rule = cstring(name, "rule name")?;
    let names = strarray(|o| unsafe { sys::smd_rule_builtin_params(rule.as_ptr(), o) })?;
    names
        .into_iter()
        .map(|name| {
            let param = cstring(&name, "parameter name")?;
            // SAFETY: static storage (or NULL) for a known rule and parameter.
            let lookup = |p: *const std::ffi::c_char, what: &str| {
                if p.is_null() {
                    Err(Error::new(ErrorKind::Internal, format!("no {what} for parameter {name} of rule {}", rule.to_string_lossy())))
                } else {
                    Ok(unsafe { borrowed_str(p) }.to_owned())
                }
            };
            let default = lookup(unsafe { sys::smd_rule_builtin_param_default(rule.as_ptr(), param.as_ptr()) }, "default")?;
            let help = lookup(unsafe { sys::smd_rule_builtin_param_help(rule.as_ptr(), param.as_ptr()) }, "help")?;
            Ok(BuiltinParam { name, default, help })
        })
        .collect()
}

/// A built-in rule's one-line description; `None` for an unknown name.
pub fn builtin_summary(name: &str) -> Option<&'static str> {
    let c = cstring(name, "rule name").ok()?;
    let p = unsafe { sys::smd_rule_builtin_summary(c.as_ptr()) };
    if p.is_null() {
        None
    } else {
        Some(unsafe { borrowed_str(p) })
    }
}

/// Why the last invocation stopped evaluating a rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleEnd {
    /// Not invoked yet.
    None,
    /// Reached end_step.
    Step,
    /// The job ended (a normal end).
    NoMoreData,
    /// The rule needs no more steps.
    EndOfRule,
    /// The condition was met and raised, or stop-at-first.
    ConditionMet,
    /// This rule failed: the error its invocation returned is its own (or its trial's), at
    /// [`Rule::failed_step`].
    Error,
    /// Stopped unfinished: another rule of the same invocation failed or raised its condition,
    /// a callback cancelled, or a wait timed out. The invocation's error is not this rule's.
    Stopped,
}

/// How one step went for one rule (progress callbacks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Evaluated; condition not met.
    NotMet,
    /// Evaluated; condition met.
    ConditionMet,
    /// Skipped (a step the job never had, or missing tensors).
    Skipped,
    /// Waiting for a step of a running job.
    Waiting,
}

/// A finding of a rule whose condition was met (copied out of the library).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The rule's name.
    pub rule: String,
    /// The global step.
    pub step: i64,
    /// The tensor that triggered it ("" when no single tensor did).
    pub tensor: String,
    /// Which trial: 0 the base trial, i the other trial i - 1.
    pub trial: usize,
    /// Why, in words.
    pub message: String,
    /// One line for logs and notifications.
    pub line: String,
}

impl Finding {
    fn from_raw(f: *const sys::smd_rule_finding) -> Finding {
        // SAFETY: f is a live finding; the strings are copied before it can go away.
        unsafe {
            Finding {
                rule: borrowed_str(sys::smd_rule_finding_rule(f)).to_owned(),
                step: sys::smd_rule_finding_step(f),
                tensor: borrowed_str(sys::smd_rule_finding_tensor(f)).to_owned(),
                trial: sys::smd_rule_finding_trial(f),
                message: borrowed_str(sys::smd_rule_finding_message(f)).to_owned(),
                line: borrowed_str(sys::smd_rule_finding_line(f)).to_owned(),
            }
        }
    }
}

/// What a custom rule's closures may do: valid only during the call.
pub struct RuleContext<'a> {
    raw: *mut sys::smd_rule_context,
    _call: PhantomData<&'a mut ()>,
}

/// A trial borrowed from a rule context.
pub struct TrialRef<'a> {
    trial: ManuallyDrop<Trial>,
    _ctx: PhantomData<&'a ()>,
}

impl std::ops::Deref for TrialRef<'_> {
    type Target = Trial;
    fn deref(&self) -> &Trial {
        &self.trial
    }
}

impl<'a> RuleContext<'a> {
    /// The rule's name.
    pub fn rule_name(&self) -> &str {
        unsafe { borrowed_str(sys::smd_rule_context_rule_name(self.raw)) }
    }

    /// 1 (the base trial) + the other trials.
    pub fn trial_count(&self) -> usize {
        unsafe { sys::smd_rule_context_trial_count(self.raw) }
    }

    /// Trial `index`: 0 the base trial, 1.. the others.
    pub fn trial(&self, index: usize) -> Result<TrialRef<'_>> {
        let p = unsafe { sys::smd_rule_context_trial(self.raw, index) };
        if p.is_null() {
            return Err(Error::invalid(format!("trial index {index} out of range (the rule has {})", self.trial_count())));
        }
        Ok(TrialRef { trial: ManuallyDrop::new(Trial { raw: p }), _ctx: PhantomData })
    }

    /// Adds a finding, delivered if the closure answers "condition met".
    pub fn report(&mut self, trial_index: usize, tensor: &str, message: &str) -> Result<()> {
        let t = cstring(tensor, "tensor name")?;
        let m = cstring(message, "message")?;
        check(unsafe { sys::smd_rule_context_report(self.raw, trial_index, t.as_ptr(), m.as_ptr()) })
    }

    /// smdebug's RequiredTensors.add (required-tensors closure only).
    pub fn require_tensor(&mut self, trial_index: usize, name: &str, regex: bool, steps: &[i64]) -> Result<()> {
        let c = cstring(name, "tensor name")?;
        check(unsafe { sys::smd_rule_context_require_tensor(self.raw, trial_index, c.as_ptr(), regex, steps.as_ptr(), steps.len()) })
    }

    /// The rule needs no more steps after this one.
    pub fn end_rule(&mut self) {
        unsafe { sys::smd_rule_context_end_rule(self.raw) }
    }
}

type InvokeFn = dyn FnMut(&mut RuleContext<'_>, i64) -> Result<bool> + Send;
type RequiredFn = dyn FnMut(&mut RuleContext<'_>, i64) -> Result<()> + Send;

struct Callbacks {
    invoke: Box<InvokeFn>,
    required: Option<Box<RequiredFn>>,
}

fn fail(ctx: *mut sys::smd_rule_context, e: &Error) -> c_int {
    let msg = cstring(&e.message().replace('\0', " "), "message").unwrap_or_default();
    unsafe { sys::smd_rule_context_fail_with(ctx, e.kind().code(), msg.as_ptr()) }
}

fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| p.downcast_ref::<String>().cloned()).unwrap_or_default()
}

fn panic_error(p: Box<dyn std::any::Any + Send>) -> Error {
    Error::new(ErrorKind::Internal, format!("rule callback panicked: {}", panic_message(p)))
}

unsafe extern "C" fn invoke_tramp(ctx: *mut sys::smd_rule_context, step: i64, met: *mut bool, payload: *mut c_void) -> c_int {
    let cb = &mut *(payload as *mut Callbacks);
    let mut rc = RuleContext { raw: ctx, _call: PhantomData };
    match catch_unwind(AssertUnwindSafe(|| (cb.invoke)(&mut rc, step))) {
        Ok(Ok(m)) => {
            *met = m;
            0
        }
        Ok(Err(e)) => fail(ctx, &e),
        Err(p) => fail(ctx, &panic_error(p)),
    }
}

unsafe extern "C" fn required_tramp(ctx: *mut sys::smd_rule_context, step: i64, payload: *mut c_void) -> c_int {
    let cb = &mut *(payload as *mut Callbacks);
    let mut rc = RuleContext { raw: ctx, _call: PhantomData };
    let Some(req) = cb.required.as_mut() else { return 0 };
    match catch_unwind(AssertUnwindSafe(|| req(&mut rc, step))) {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => fail(ctx, &e),
        Err(p) => fail(ctx, &panic_error(p)),
    }
}

/// A rule (built-in or custom). `Send`, not `Sync`: one thread at a time, invoking included.
pub struct Rule {
    raw: *mut sys::smd_rule,
    // Freed after `raw` (Drop below): the library calls into it until smd_rule_free.
    callbacks: Option<Box<Callbacks>>,
}

// SAFETY: docs/threading.md: smd_rule is used by one thread at a time; its closures are Send.
unsafe impl Send for Rule {}

impl Drop for Rule {
    fn drop(&mut self) {
        unsafe { sys::smd_rule_free(self.raw) };
        self.callbacks.take();
    }
}

impl std::fmt::Debug for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Rule({:?})", self.name())
    }
}

fn trial_ptrs(others: &[&Trial]) -> Vec<*mut sys::smd_trial> {
    others.iter().map(|t| t.raw).collect()
}

impl Rule {
    /// Built-in rule `name` ("VanishingGradient", ...) with SageMaker's string parameters.
    pub fn builtin(name: &str, base: &Trial, others: &[&Trial], params: &[(&str, &str)]) -> Result<Rule> {
        let c = cstring(name, "rule name")?;
        let keys = CStrList::new(&params.iter().map(|p| p.0).collect::<Vec<_>>(), "parameter name")?;
        let values = CStrList::new(&params.iter().map(|p| p.1).collect::<Vec<_>>(), "parameter value")?;
        let o = trial_ptrs(others);
        let raw = create(|out| unsafe {
            sys::smd_rule_create_builtin(c.as_ptr(), base.raw, o.as_ptr(), o.len(), keys.as_ptr(), values.as_ptr(), params.len(), out)
        })?;
        Ok(Rule { raw, callbacks: None })
    }

    /// A custom rule: `invoke(ctx, step)` answers whether the condition is met at `step`
    /// (smdebug's invoke_at_step). An `Err` skips the step for `TensorUnavailableForStep`,
    /// `StepUnavailable` and `TensorUnavailable`, and ends the invocation otherwise; a panic
    /// ends it with `Internal`.
    pub fn custom<F>(name: &str, base: &Trial, others: &[&Trial], invoke: F) -> Result<Rule>
    where
        F: FnMut(&mut RuleContext<'_>, i64) -> Result<bool> + Send + 'static,
    {
        Self::make(name, base, others, Box::new(invoke), None)
    }

    /// A custom rule that also declares, per step, the tensors it reads (smdebug's
    /// set_required_tensors), so that the invoker waits for and loads them first.
    pub fn custom_with_required<F, R>(name: &str, base: &Trial, others: &[&Trial], invoke: F, required: R) -> Result<Rule>
    where
        F: FnMut(&mut RuleContext<'_>, i64) -> Result<bool> + Send + 'static,
        R: FnMut(&mut RuleContext<'_>, i64) -> Result<()> + Send + 'static,
    {
        Self::make(name, base, others, Box::new(invoke), Some(Box::new(required)))
    }

    fn make(name: &str, base: &Trial, others: &[&Trial], invoke: Box<InvokeFn>, required: Option<Box<RequiredFn>>) -> Result<Rule> {
        let c = cstring(name, "rule name")?;
        let has_required = required.is_some();
        let mut cb = Box::new(Callbacks { invoke, required });
        let payload = (&mut *cb as *mut Callbacks).cast::<c_void>();
        let o = trial_ptrs(others);
        let req: sys::smd_rule_required_tensors_fn = if has_required { Some(required_tramp) } else { None };
        let raw = create(|out| unsafe {
            sys::smd_rule_create(c.as_ptr(), base.raw, if o.is_empty() { ptr::null() } else { o.as_ptr() }, o.len(), Some(invoke_tramp), req, payload, out)
        })?;
        Ok(Rule { raw, callbacks: Some(cb) })
    }

    /// The rule's name.
    pub fn name(&self) -> &str {
        unsafe { borrowed_str(sys::smd_rule_name(self.raw)) }
    }

    /// Whether the rule raises the stop-training signal when it fires.
    pub fn stop_training(&self) -> bool {
        unsafe { sys::smd_rule_stop_training(self.raw) }
    }

    /// Sets whether the rule raises the stop-training signal when it fires.
    pub fn set_stop_training(&mut self, on: bool) -> Result<()> {
        check(unsafe { sys::smd_rule_set_stop_training(self.raw, on) })
    }

    /// smdebug's invoke_rule: evaluates every step from `start_step` to `end_step` (exclusive;
    /// -1: until the job ends). With `raise_eval_cond`, a met condition ends the invocation with
    /// `ErrorKind::RuleConditionMet`. While the rule evaluates a step its trials do not refresh
    /// on this thread (smdebug's no_refresh); other threads reading them still do.
    ///
    /// Any failure is the `Err` returned here. If the rule itself failed, [`end_reason`](Rule::end_reason)
    /// is then [`RuleEnd::Error`] and [`failed_step`](Rule::failed_step) says where; a
    /// cancellation or a wait that timed out leaves it [`RuleEnd::Stopped`].
    pub fn invoke(&mut self, start_step: i64, end_step: i64, raise_eval_cond: bool, options: Option<&mut InvokeOptions>) -> Result<()> {
        let o = options.as_ref().map_or(ptr::null(), |o| o.raw as *const _);
        let r = check(unsafe { sys::smd_rule_invoke(self.raw, start_step, end_step, raise_eval_cond, o) });
        InvokeOptions::panicked(options, r)
    }

    /// The same for several rules sharing one base trial, step by step together. The first
    /// error ends the invocation: the rule that failed ends with [`RuleEnd::Error`] (the `Err`
    /// returned is its own), the others still running with [`RuleEnd::Stopped`].
    pub fn invoke_many(rules: &mut [&mut Rule], start_step: i64, end_step: i64, raise_eval_cond: bool, options: Option<&mut InvokeOptions>) -> Result<()> {
        let raws: Vec<*mut sys::smd_rule> = rules.iter().map(|r| r.raw).collect();
        let o = options.as_ref().map_or(ptr::null(), |o| o.raw as *const _);
        let r = check(unsafe { sys::smd_rule_invoke_many(raws.as_ptr(), raws.len(), start_step, end_step, raise_eval_cond, o) });
        InvokeOptions::panicked(options, r)
    }

    /// The findings collected so far.
    pub fn findings(&self) -> Vec<Finding> {
        let n = unsafe { sys::smd_rule_findings_count(self.raw) };
        (0..n).map(|i| Finding::from_raw(unsafe { sys::smd_rule_findings_at(self.raw, i) })).collect()
    }

    /// Forgets the collected findings.
    pub fn clear_findings(&mut self) {
        unsafe { sys::smd_rule_findings_clear(self.raw) }
    }

    /// Steps evaluated over every invocation.
    pub fn steps_evaluated(&self) -> i64 {
        unsafe { sys::smd_rule_steps_evaluated(self.raw) }
    }

    /// Steps skipped over every invocation.
    pub fn steps_skipped(&self) -> i64 {
        unsafe { sys::smd_rule_steps_skipped(self.raw) }
    }

    /// Conditions met over every invocation.
    pub fn conditions_met(&self) -> i64 {
        unsafe { sys::smd_rule_conditions_met(self.raw) }
    }

    /// The last step evaluated or skipped; -1 if none.
    pub fn last_step(&self) -> i64 {
        unsafe { sys::smd_rule_last_step(self.raw) }
    }

    /// Why the last invocation stopped.
    pub fn end_reason(&self) -> RuleEnd {
        match unsafe { sys::smd_rule_end_reason(self.raw) } {
            sys::SMD_RULE_END_STEP => RuleEnd::Step,
            sys::SMD_RULE_END_NO_MORE_DATA => RuleEnd::NoMoreData,
            sys::SMD_RULE_END_OF_RULE => RuleEnd::EndOfRule,
            sys::SMD_RULE_END_CONDITION_MET => RuleEnd::ConditionMet,
            sys::SMD_RULE_END_ERROR => RuleEnd::Error,
            sys::SMD_RULE_END_STOPPED => RuleEnd::Stopped,
            _ => RuleEnd::None,
        }
    }

    /// The step at which this rule failed in its last invocation ([`end_reason`](Rule::end_reason)
    /// is [`RuleEnd::Error`]); `None` otherwise. How it failed is the `Err` that invocation
    /// returned (its message names the rule and the step): the rule keeps no error.
    pub fn failed_step(&self) -> Option<i64> {
        match unsafe { sys::smd_rule_failed_step(self.raw) } {
            -1 => None,
            step => Some(step),
        }
    }
}

type FindingFn = dyn FnMut(&str, &Finding) -> bool;
type ProgressFn = dyn FnMut(Option<&str>, i64, Outcome) -> bool;

/// Options of [`Rule::invoke`]: callbacks (closures run on the invoking thread), stop signal,
/// message file, waits. A plain value.
pub struct InvokeOptions {
    raw: *mut sys::smd_rule_invoke_options,
    callbacks: Box<InvokeCallbacks>, // the callbacks' payload: its address must not change
}

#[derive(Default)]
struct InvokeCallbacks {
    finding: Option<Box<FindingFn>>,
    progress: Option<Box<ProgressFn>>,
    panicked: Option<String>, // the first panic of a callback in the current invocation
}

impl InvokeCallbacks {
    unsafe fn from_payload<'a>(payload: *mut c_void) -> &'a mut InvokeCallbacks {
        &mut *(payload as *mut InvokeCallbacks)
    }

    fn note_panic(&mut self, which: &str, p: Box<dyn std::any::Any + Send>) {
        if self.panicked.is_none() {
            self.panicked = Some(format!("{} callback panicked: {}", which, panic_message(p)));
        }
    }
}

impl std::fmt::Debug for InvokeOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "InvokeOptions({:p})", self.raw)
    }
}

impl Drop for InvokeOptions {
    fn drop(&mut self) {
        unsafe { sys::smd_rule_invoke_options_free(self.raw) }
    }
}

unsafe extern "C" fn finding_tramp(rule: *const sys::smd_rule, f: *const sys::smd_rule_finding, payload: *mut c_void) -> c_int {
    let cbs = InvokeCallbacks::from_payload(payload);
    let Some(cb) = cbs.finding.as_mut() else { return 0 };
    let finding = Finding::from_raw(f);
    let name = borrowed_str(sys::smd_rule_name(rule));
    match catch_unwind(AssertUnwindSafe(|| cb(name, &finding))) {
        Ok(true) => 0,
        Ok(false) => 1,
        Err(p) => {
            cbs.note_panic("on_finding", p);
            1
        }
    }
}

unsafe extern "C" fn progress_tramp(rule: *const sys::smd_rule, step: i64, outcome: sys::smd_rule_outcome, payload: *mut c_void) -> c_int {
    let cbs = InvokeCallbacks::from_payload(payload);
    let Some(cb) = cbs.progress.as_mut() else { return 0 };
    let name = if rule.is_null() { None } else { Some(borrowed_str(sys::smd_rule_name(rule))) };
    let outcome = match outcome {
        sys::SMD_RULE_CONDITION_MET => Outcome::ConditionMet,
        sys::SMD_RULE_SKIPPED => Outcome::Skipped,
        sys::SMD_RULE_WAITING => Outcome::Waiting,
        _ => Outcome::NotMet,
    };
    match catch_unwind(AssertUnwindSafe(|| cb(name, step, outcome))) {
        Ok(true) => 0,
        Ok(false) => 1,
        Err(p) => {
            cbs.note_panic("on_progress", p);
            1
        }
    }
}

impl InvokeOptions {
    /// The defaults: no callbacks, no message file, no stop signal, findings collected.
    pub fn new() -> Result<InvokeOptions> {
        Ok(InvokeOptions { raw: create(|o| unsafe { sys::smd_rule_invoke_options_create(o) })?, callbacks: Box::default() })
    }

    fn payload(&mut self) -> *mut c_void {
        (&mut *self.callbacks as *mut InvokeCallbacks).cast()
    }

    /// The result of an invocation with these options: a callback's panic, which cancelled it,
    /// replaces the `Cancelled` error with an `Internal` one carrying the panic's message.
    fn panicked(options: Option<&mut InvokeOptions>, r: Result<()>) -> Result<()> {
        match options.and_then(|o| o.callbacks.panicked.take()) {
            Some(msg) => Err(Error::new(ErrorKind::Internal, msg)),
            None => r,
        }
    }

    /// Called with the rule's name for each finding; returning false cancels the invocation
    /// (`ErrorKind::Cancelled`). A panic cancels it too: the invocation then returns an
    /// `ErrorKind::Internal` error with the panic's message.
    pub fn on_finding(&mut self, f: impl FnMut(&str, &Finding) -> bool + 'static) -> Result<&mut Self> {
        let p = self.payload();
        check(unsafe { sys::smd_rule_invoke_options_set_finding_callback(self.raw, Some(finding_tramp), p) })?;
        self.callbacks.finding = Some(Box::new(f));
        Ok(self)
    }

    /// Called after each step of each rule (rule name, step, outcome) and while waiting (no
    /// rule); returning false cancels the invocation, and a panic cancels it as on_finding's.
    pub fn on_progress(&mut self, f: impl FnMut(Option<&str>, i64, Outcome) -> bool + 'static) -> Result<&mut Self> {
        let p = self.payload();
        check(unsafe { sys::smd_rule_invoke_options_set_progress_callback(self.raw, Some(progress_tramp), p) })?;
        self.callbacks.progress = Some(Box::new(f));
        Ok(self)
    }

    /// Raise the stop-training signal when a condition is met.
    pub fn set_stop_training(&mut self, on: bool) -> Result<&mut Self> {
        check(unsafe { sys::smd_rule_invoke_options_set_stop_training(self.raw, on) })?;
        Ok(self)
    }

    /// Stop evaluating a rule once its condition was met.
    pub fn set_stop_at_first(&mut self, on: bool) -> Result<&mut Self> {
        check(unsafe { sys::smd_rule_invoke_options_set_stop_at_first(self.raw, on) })?;
        Ok(self)
    }

    /// Keep findings in the rule (default true).
    pub fn set_collect_findings(&mut self, on: bool) -> Result<&mut Self> {
        check(unsafe { sys::smd_rule_invoke_options_set_collect_findings(self.raw, on) })?;
        Ok(self)
    }

    /// Append each finding's line to this file (None: none).
    pub fn set_message_file(&mut self, path: Option<&std::path::Path>) -> Result<&mut Self> {
        let c = match path {
            Some(p) => Some(cstring(crate::hook::path_str(p, "message file")?, "message file")?),
            None => None,
        };
        check(unsafe { sys::smd_rule_invoke_options_set_message_file(self.raw, crate::util::opt_ptr(&c)) })?;
        Ok(self)
    }

    /// The longest wait for one step of a running job, in ms (-1: unbounded).
    pub fn set_wait_timeout_ms(&mut self, ms: i64) -> Result<&mut Self> {
        check(unsafe { sys::smd_rule_invoke_options_set_wait_timeout_ms(self.raw, ms) })?;
        Ok(self)
    }

    /// How often a wait wakes up for the progress callback, in ms.
    pub fn set_wait_slice_ms(&mut self, ms: i64) -> Result<&mut Self> {
        check(unsafe { sys::smd_rule_invoke_options_set_wait_slice_ms(self.raw, ms) })?;
        Ok(self)
    }
}
