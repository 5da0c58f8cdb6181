package smd

/*
#include <stdint.h>
#include <stdlib.h>
#include "smd/smd.h"

void *smdgo_payload(uintptr_t handle);
int smdgo_rule_invoke(smd_rule_context *ctx, int64_t step, bool *condition_met, void *payload);
int smdgo_rule_required(smd_rule_context *ctx, int64_t step, void *payload);
int smdgo_finding(const smd_rule *rule, const smd_rule_finding *finding, void *payload);
int smdgo_progress(const smd_rule *rule, int64_t step, smd_rule_outcome outcome, void *payload);
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/cgo"
	"sort"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// RuleFunc evaluates a custom rule at a global step (smdebug's invoke_at_step) and says whether
// its condition is met; explain a met condition with ctx.Report. Returning an error that matches
// ErrTensorUnavailableForStep, ErrTensorUnavailable or ErrStepUnavailable skips the step, as
// smdebug does; any other error ends the invocation with it.
type RuleFunc func(ctx *RuleContext, step int64) (bool, error)

// RequiredFunc declares, with ctx.RequireTensor, the tensors and steps a rule reads at a step
// (smdebug's set_required_tensors); the invoker waits for them before calling the RuleFunc.
type RequiredFunc func(ctx *RuleContext, step int64) error

// RuleContext is what a rule callback may use. It is valid only during the callback.
type RuleContext struct {
	p      *C.smd_rule_context
	trials []*Trial
}

func (c *RuleContext) valid() error {
	if c == nil || c.p == nil {
		return &Error{Code: CodeInvalidState, Message: "RuleContext used after its callback returned", closed: true}
	}
	return nil
}

// RuleName is the rule's name.
func (c *RuleContext) RuleName() string {
	if c.valid() != nil {
		return ""
	}
	return C.GoString(C.smd_rule_context_rule_name(c.p))
}

// TrialCount is 1 (the base trial) + the number of other trials.
func (c *RuleContext) TrialCount() int {
	if c.valid() != nil {
		return 0
	}
	return int(C.smd_rule_context_trial_count(c.p))
}

// Trial returns trial index (0: the base trial). It belongs to the rule: it is usable during the
// callback only and need not be closed; tensors and values read from it stay valid.
func (c *RuleContext) Trial(index int) (*Trial, error) {
	if err := c.valid(); err != nil {
		return nil, err
	}
	if index < 0 {
		return nil, argErr("trial index %d is negative", index)
	}
	p := C.smd_rule_context_trial(c.p, C.size_t(index))
	if p == nil {
		return nil, argErr("trial index %d out of range (the rule has %d trials)", index, c.TrialCount())
	}
	t := &Trial{p: p, borrowed: true}
	c.trials = append(c.trials, t)
	return t, nil
}

// Report adds a finding: the tensor (may be "") of trial trialIndex that triggered the rule, and
// why. It is delivered if the callback answers "condition met".
func (c *RuleContext) Report(trialIndex int, tensor, message string) error {
	if err := c.valid(); err != nil {
		return err
	}
	if trialIndex < 0 {
		return argErr("trial index %d is negative", trialIndex)
	}
	ts, err := cstr("tensor", tensor)
	if err != nil {
		return err
	}
	ms, err := cstr("message", message)
	if err != nil {
		return err
	}
	return takeErr(C.smd_rule_context_report(c.p, C.size_t(trialIndex), ts, ms))
}

// RequireTensor declares tensor name (a regex if regex is true) of trial trialIndex at the given
// global steps. Only from a RequiredFunc.
func (c *RuleContext) RequireTensor(trialIndex int, name string, regex bool, steps ...int64) error {
	if err := c.valid(); err != nil {
		return err
	}
	if trialIndex < 0 {
		return argErr("trial index %d is negative", trialIndex)
	}
	ns, err := cstr("tensor", name)
	if err != nil {
		return err
	}
	return takeErr(C.smd_rule_context_require_tensor(c.p, C.size_t(trialIndex), ns, C.bool(regex), int64Ptr(steps), C.size_t(len(steps))))
}

// EndRule says the rule needs no more steps after this one.
func (c *RuleContext) EndRule() {
	if c.valid() == nil {
		C.smd_rule_context_end_rule(c.p)
	}
}

func (c *RuleContext) invalidate() {
	for _, t := range c.trials {
		t.mu.Lock()
		t.p = nil
		t.mu.Unlock()
	}
	c.p = nil
}

type customRule struct {
	invoke   RuleFunc
	required RequiredFunc
	inv      atomic.Pointer[invocation] // the invocation running the rule, nil when none
}

// failWith hands a Go error to the invoker, keeping smd's code when there is one.
func failWith(ctx *C.smd_rule_context, err error) C.int {
	code := CodeInternal
	var se *Error
	if errors.As(err, &se) {
		code = se.Code
	}
	msg := err.Error()
	b := make([]byte, 0, len(msg)+1)
	for i := 0; i < len(msg); i++ {
		if msg[i] != 0 {
			b = append(b, msg[i])
		}
	}
	b = append(b, 0)
	return C.smd_rule_context_fail_with(ctx, C.smd_code(code), (*C.char)(unsafe.Pointer(&b[0])))
}

//export goRuleInvoke
func goRuleInvoke(ctx *C.smd_rule_context, step C.int64_t, met *C.bool, payload C.uintptr_t) (rc C.int) {
	r := cgo.Handle(payload).Value().(*customRule)
	c := &RuleContext{p: ctx}
	defer c.invalidate()
	defer func() {
		if p := recover(); p != nil {
			rc = failWith(ctx, fmt.Errorf("rule callback panicked: %v", p))
		}
	}()
	if inv := r.inv.Load(); inv != nil {
		defer inv.enter()()
	}
	ok, err := r.invoke(c, int64(step))
	if err != nil {
		return failWith(ctx, err)
	}
	*met = C.bool(ok)
	return 0
}

//export goRuleRequired
func goRuleRequired(ctx *C.smd_rule_context, step C.int64_t, payload C.uintptr_t) (rc C.int) {
	r := cgo.Handle(payload).Value().(*customRule)
	c := &RuleContext{p: ctx}
	defer c.invalidate()
	defer func() {
		if p := recover(); p != nil {
			rc = failWith(ctx, fmt.Errorf("required-tensors callback panicked: %v", p))
		}
	}()
	if inv := r.inv.Load(); inv != nil {
		defer inv.enter()()
	}
	if err := r.required(c, int64(step)); err != nil {
		return failWith(ctx, err)
	}
	return 0
}

// Rule is a built-in or custom rule. One goroutine at a time. While it is invoked, the
// invocation's callbacks (OnFinding, OnProgress, a custom rule's functions) may read it (Name,
// Stats, Findings, EndReason, FailedStep, StopTraining); what would change it (SetStopTraining,
// ClearFindings, another Invoke) returns ErrInvalidState there, and Close there frees it once the
// invocation has returned.
type Rule struct {
	mu         sync.Mutex
	idle       sync.Cond // signalled when an invocation ends or enters a Go callback
	p          *C.smd_rule
	handle     cgo.Handle  // custom rules: the Go callbacks
	inv        *invocation // the invocation running the rule, nil when none
	closeAfter bool        // Close was called during the invocation
}

func wrapRule(p *C.smd_rule, h cgo.Handle) *Rule {
	r := &Rule{p: p, handle: h}
	r.idle.L = &r.mu
	runtime.SetFinalizer(r, (*Rule).Close)
	return r
}

func trialPtrs(base *Trial, others []*Trial) (*C.smd_trial, []*C.smd_trial, func(), error) {
	var unlock []func()
	done := func() {
		for _, u := range unlock {
			u()
		}
	}
	get := func(t *Trial, what string) (*C.smd_trial, error) {
		if t == nil {
			return nil, argErr("%s is nil", what)
		}
		t.mu.RLock()
		unlock = append(unlock, t.mu.RUnlock)
		if t.p == nil {
			return nil, closedErr(what)
		}
		return t.p, nil
	}
	bp, err := get(base, "base trial")
	if err != nil {
		done()
		return nil, nil, nil, err
	}
	ops := make([]*C.smd_trial, 0, len(others))
	for i, o := range others {
		op, err := get(o, fmt.Sprintf("other trial %d", i))
		if err != nil {
			done()
			return nil, nil, nil, err
		}
		ops = append(ops, op)
	}
	return bp, ops, done, nil
}

// cTrialArray copies trial pointers into C memory (C must not hold Go memory holding pointers).
func cTrialArray(ps []*C.smd_trial) (**C.smd_trial, func()) {
	if len(ps) == 0 {
		return nil, func() {}
	}
	arr := (*[1 << 20]*C.smd_trial)(C.malloc(C.size_t(len(ps)) * C.size_t(unsafe.Sizeof(ps[0]))))[:len(ps):len(ps)]
	copy(arr, ps)
	return &arr[0], func() { C.free(unsafe.Pointer(&arr[0])) }
}

// NewRule creates a custom rule named name on base and others (which may be closed afterwards:
// the rule keeps its own references). required may be nil. Close the rule when done with it:
// smd holds invoke and required until then, so a rule whose functions refer to the rule itself
// stays reachable and is never finalized.
func NewRule(name string, base *Trial, others []*Trial, invoke RuleFunc, required RequiredFunc) (*Rule, error) {
	if invoke == nil {
		return nil, argErr("rule %q: invoke function is nil", name)
	}
	ns, err := cstr("rule name", name)
	if err != nil {
		return nil, err
	}
	bp, ops, done, err := trialPtrs(base, others)
	if err != nil {
		return nil, err
	}
	defer done()
	arr, free := cTrialArray(ops)
	defer free()
	h := cgo.NewHandle(&customRule{invoke: invoke, required: required})
	var req C.smd_rule_required_tensors_fn
	if required != nil {
		req = C.smd_rule_required_tensors_fn(C.smdgo_rule_required)
	}
	var p *C.smd_rule
	if err := takeErr(C.smd_rule_create(ns, bp, arr, C.size_t(len(ops)), C.smd_rule_invoke_fn(C.smdgo_rule_invoke),
		req, C.smdgo_payload(C.uintptr_t(h)), &p)); err != nil {
		h.Delete()
		return nil, err
	}
	return wrapRule(p, h), nil
}

// NewBuiltinRule creates built-in rule name ("VanishingGradient", ...) with string parameters as
// SageMaker passes them.
func NewBuiltinRule(name string, base *Trial, others []*Trial, params map[string]string) (*Rule, error) {
	ns, err := cstr("rule name", name)
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	vals := make([]string, len(keys))
	for i, k := range keys {
		vals[i] = params[k]
	}
	ck, freeK, err := cstrArray("parameter name", keys)
	if err != nil {
		return nil, err
	}
	defer freeK()
	cv, freeV, err := cstrArray("parameter value", vals)
	if err != nil {
		return nil, err
	}
	defer freeV()
	bp, ops, done, err := trialPtrs(base, others)
	if err != nil {
		return nil, err
	}
	defer done()
	arr, free := cTrialArray(ops)
	defer free()
	var p *C.smd_rule
	if err := takeErr(C.smd_rule_create_builtin(ns, bp, arr, C.size_t(len(ops)), ck, cv, C.size_t(len(keys)), &p)); err != nil {
		return nil, err
	}
	return wrapRule(p, 0), nil
}

// BuiltinRuleNames lists the built-in rules.
func BuiltinRuleNames() ([]string, error) {
	var a C.smd_strarray
	if err := takeErr(C.smd_rule_builtin_names(&a)); err != nil {
		return nil, err
	}
	return takeStrArray(&a), nil
}

// RuleParam is one parameter of a built-in rule.
type RuleParam struct{ Name, Default, Help string }

// BuiltinRuleParams lists a built-in rule's parameters, in documentation order, with their
// defaults ("" when a parameter has none) and one-line descriptions.
func BuiltinRuleParams(name string) ([]RuleParam, error) {
	ns, err := cstr("rule name", name)
	if err != nil {
		return nil, err
	}
	var a C.smd_strarray
	if err := takeErr(C.smd_rule_builtin_params(ns, &a)); err != nil {
		return nil, err
	}
	names := takeStrArray(&a)
	out := make([]RuleParam, len(names))
	for i, n := range names {
		ps, err := cstr("parameter name", n)
		if err != nil {
			return nil, err
		}
		out[i] = RuleParam{Name: n, Default: staticStr(C.smd_rule_builtin_param_default(ns, ps)),
			Help: staticStr(C.smd_rule_builtin_param_help(ns, ps))}
	}
	return out, nil
}

// staticStr copies a C string of static storage; NULL gives "".
func staticStr(s *C.char) string {
	if s == nil {
		return ""
	}
	return C.GoString(s)
}

// BuiltinRuleSummary is a one-line description of a built-in rule ("" for an unknown name).
func BuiltinRuleSummary(name string) string {
	ns, err := cstr("rule name", name)
	if err != nil {
		return ""
	}
	s := C.smd_rule_builtin_summary(ns)
	if s == nil {
		return ""
	}
	return C.GoString(s)
}

// Close frees the rule (and its findings). It may be called more than once. Called while the
// rule is invoked (from a callback), it frees the rule when the invocation returns.
func (r *Rule) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.inv != nil {
		r.closeAfter = true
		return
	}
	r.freeLocked()
}

func (r *Rule) freeLocked() {
	if r.p != nil {
		C.smd_rule_free(r.p)
		r.p = nil
		if r.handle != 0 {
			r.handle.Delete()
			r.handle = 0
		}
		runtime.SetFinalizer(r, nil)
	}
}

// get gives the rule's pointer for a call that reads it: at once from the callbacks of an
// invocation running it; elsewhere once no invocation runs it (or one is in a callback).
func (r *Rule) get() (*C.smd_rule, func(), error) {
	r.mu.Lock()
	for r.inv != nil && r.inv.callbacks.Load() == 0 && !r.closeAfter {
		r.idle.Wait()
	}
	if r.p == nil || r.closeAfter {
		r.mu.Unlock()
		return nil, nil, closedErr("Rule")
	}
	return r.p, r.mu.Unlock, nil
}

// change gives the rule's pointer for a call that changes it (or invokes it): refused from the
// callbacks of an invocation running it, else once no invocation runs it.
func (r *Rule) change(what string) (*C.smd_rule, func(), error) {
	r.mu.Lock()
	if r.inv != nil && r.inv.callbacks.Load() > 0 {
		r.mu.Unlock()
		return nil, nil, &Error{Code: CodeInvalidState, Message: fmt.Sprintf("%s: the rule is being invoked (its callbacks may only read it)", what)}
	}
	for r.inv != nil {
		r.idle.Wait()
	}
	if r.p == nil {
		r.mu.Unlock()
		return nil, nil, closedErr("Rule")
	}
	return r.p, r.mu.Unlock, nil
}

func (r *Rule) custom() (*customRule, bool) {
	if r.handle == 0 {
		return nil, false
	}
	cr, ok := r.handle.Value().(*customRule)
	return cr, ok
}

// finishInvocation ends the invocation that runs r: a Close made during it frees r now.
func (r *Rule) finishInvocation() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if cr, ok := r.custom(); ok {
		cr.inv.Store(nil)
	}
	r.inv = nil
	if r.closeAfter {
		r.closeAfter = false
		r.freeLocked()
	}
	r.idle.Broadcast()
}

// Name is the rule's name ("" when closed).
func (r *Rule) Name() string {
	p, done, err := r.get()
	if err != nil {
		return ""
	}
	defer done()
	return C.GoString(C.smd_rule_name(p))
}

// StopTraining tells whether the rule raises the stop-training signal when it fires.
func (r *Rule) StopTraining() bool {
	p, done, err := r.get()
	if err != nil {
		return false
	}
	defer done()
	return bool(C.smd_rule_stop_training(p))
}

// SetStopTraining sets whether the rule raises the stop-training signal when it fires.
func (r *Rule) SetStopTraining(on bool) error {
	p, done, err := r.change("SetStopTraining")
	if err != nil {
		return err
	}
	defer done()
	return takeErr(C.smd_rule_set_stop_training(p, C.bool(on)))
}

// Finding is one reason a rule's condition was met at a step.
type Finding struct {
	Rule    string
	Step    int64 // global step
	Tensor  string
	Trial   int // 0 the base trial, i the other trial i-1
	Message string
	Line    string // "SMDebugRule:<rule> fired. step <step>, tensor '<tensor>': <message>"
}

func goFindingOf(f *C.smd_rule_finding) Finding {
	return Finding{
		Rule:    C.GoString(C.smd_rule_finding_rule(f)),
		Step:    int64(C.smd_rule_finding_step(f)),
		Tensor:  C.GoString(C.smd_rule_finding_tensor(f)),
		Trial:   int(C.smd_rule_finding_trial(f)),
		Message: C.GoString(C.smd_rule_finding_message(f)),
		Line:    C.GoString(C.smd_rule_finding_line(f)),
	}
}

// Findings returns the findings collected so far, oldest first.
func (r *Rule) Findings() []Finding {
	p, done, err := r.get()
	if err != nil {
		return nil
	}
	defer done()
	n := int(C.smd_rule_findings_count(p))
	out := make([]Finding, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, goFindingOf((*C.smd_rule_finding)(unsafe.Pointer(C.smd_rule_findings_at(p, C.size_t(i))))))
	}
	return out
}

// ClearFindings forgets the collected findings (the counts are kept).
func (r *Rule) ClearFindings() {
	if p, done, err := r.change("ClearFindings"); err == nil {
		C.smd_rule_findings_clear(p)
		done()
	}
}

// RuleStats are a rule's counts over every invocation.
type RuleStats struct {
	StepsEvaluated, StepsSkipped, ConditionsMet int64
	LastStep                                    int64 // -1 if none
}

// Stats returns the rule's counts.
func (r *Rule) Stats() RuleStats {
	p, done, err := r.get()
	if err != nil {
		return RuleStats{LastStep: -1}
	}
	defer done()
	return RuleStats{int64(C.smd_rule_steps_evaluated(p)), int64(C.smd_rule_steps_skipped(p)),
		int64(C.smd_rule_conditions_met(p)), int64(C.smd_rule_last_step(p))}
}

// RuleEnd is why the last invocation stopped evaluating a rule.
type RuleEnd int

// The end reasons.
const (
	RuleEndNone         RuleEnd = C.SMD_RULE_END_NONE          // not invoked yet
	RuleEndStep         RuleEnd = C.SMD_RULE_END_STEP          // reached the end step
	RuleEndNoMoreData   RuleEnd = C.SMD_RULE_END_NO_MORE_DATA  // the job ended (smdebug's NoMoreData): a normal end
	RuleEndOfRule       RuleEnd = C.SMD_RULE_END_OF_RULE       // the rule needs no more steps (RuleContext.EndRule)
	RuleEndConditionMet RuleEnd = C.SMD_RULE_END_CONDITION_MET // met and raised (raiseEvalCond), or StopAtFirst
	// RuleEndError: this rule failed; the error the invocation returned is its own (or its
	// trial's), at FailedStep.
	RuleEndError RuleEnd = C.SMD_RULE_END_ERROR
	// RuleEndStopped: stopped unfinished because another rule failed or raised its condition, a
	// callback or the context cancelled, or a wait timed out.
	RuleEndStopped RuleEnd = C.SMD_RULE_END_STOPPED
)

// EndReason says why the last invocation stopped evaluating the rule.
func (r *Rule) EndReason() RuleEnd {
	p, done, err := r.get()
	if err != nil {
		return RuleEndNone
	}
	defer done()
	return RuleEnd(C.smd_rule_end_reason(p))
}

// FailedStep is the global step at which the rule failed in its last invocation (EndReason is
// RuleEndError), -1 otherwise (and when closed). How it failed is the error that invocation
// returned: errors are per call, the rule keeps none.
func (r *Rule) FailedStep() int64 {
	p, done, err := r.get()
	if err != nil {
		return -1
	}
	defer done()
	return int64(C.smd_rule_failed_step(p))
}

// RuleOutcome is how one step went for one rule (progress callbacks).
type RuleOutcome int

// The outcomes.
const (
	RuleNotMet       RuleOutcome = C.SMD_RULE_NOT_MET
	RuleConditionMet RuleOutcome = C.SMD_RULE_CONDITION_MET
	RuleSkipped      RuleOutcome = C.SMD_RULE_SKIPPED
	RuleWaiting      RuleOutcome = C.SMD_RULE_WAITING
)

// InvokeOptions are the options of Invoke. The zero value means smdebug's defaults.
type InvokeOptions struct {
	// OnFinding is called for each finding of a met condition; an error cancels the invocation,
	// which then returns that error.
	OnFinding func(f Finding) error
	// OnProgress is called after each step of each rule (rule name "" and RuleWaiting while
	// waiting for a step of a running job).
	OnProgress func(rule string, step int64, outcome RuleOutcome)
	// StopTraining raises the stop-training signal when any rule's condition is met.
	StopTraining bool
	// StopAtFirst stops evaluating a rule once its condition was met.
	StopAtFirst bool
	// NoCollectFindings keeps findings out of the rule (Rule.Findings stays empty).
	NoCollectFindings bool
	// MessageFile gets one line per finding appended ("": none).
	MessageFile string
	// WaitTimeout bounds the wait for one step of a running job (0: as long as it takes, the
	// default; use the context for an overall bound). NoWait evaluates what is there now.
	WaitTimeout time.Duration
	NoWait      bool
}

type invocation struct {
	ctx       context.Context
	opts      *InvokeOptions
	err       error // the first error of a Go callback
	rules     []*Rule
	callbacks atomic.Int32 // Go callbacks running (on the invoking goroutine)
}

// enter marks a Go callback of the invocation as running until the function it returns is called:
// meanwhile the rules may be read (Rule.get). Before C resumes, reads begun meanwhile end.
func (inv *invocation) enter() func() {
	inv.callbacks.Add(1)
	for _, r := range inv.rules {
		r.mu.Lock()
		r.idle.Broadcast()
		r.mu.Unlock()
	}
	return func() {
		inv.callbacks.Add(-1)
		for _, r := range inv.rules {
			r.mu.Lock()
			r.mu.Unlock() //nolint:staticcheck // waits for a read in progress
		}
	}
}

//export goFinding
func goFinding(rule *C.smd_rule, f *C.smd_rule_finding, payload C.uintptr_t) (rc C.int) {
	inv := cgo.Handle(payload).Value().(*invocation)
	defer inv.enter()()
	defer func() {
		if p := recover(); p != nil {
			inv.err = fmt.Errorf("smd: finding callback panicked: %v", p)
			rc = 1
		}
	}()
	if inv.opts != nil && inv.opts.OnFinding != nil {
		if err := inv.opts.OnFinding(goFindingOf(f)); err != nil {
			inv.err = err
			return 1
		}
	}
	return 0
}

//export goProgress
func goProgress(rule *C.smd_rule, step C.int64_t, outcome C.int, payload C.uintptr_t) (rc C.int) {
	inv := cgo.Handle(payload).Value().(*invocation)
	defer inv.enter()()
	defer func() {
		if p := recover(); p != nil {
			inv.err = fmt.Errorf("smd: progress callback panicked: %v", p)
			rc = 1
		}
	}()
	if inv.opts != nil && inv.opts.OnProgress != nil {
		name := ""
		if rule != nil {
			name = C.GoString(C.smd_rule_name(rule))
		}
		inv.opts.OnProgress(name, int64(step), RuleOutcome(outcome))
	}
	if inv.ctx.Err() != nil {
		return 1
	}
	return 0
}

func (o *InvokeOptions) build(h cgo.Handle, cancellable bool) (*C.smd_rule_invoke_options, error) {
	var p *C.smd_rule_invoke_options
	if err := takeErr(C.smd_rule_invoke_options_create(&p)); err != nil {
		return nil, err
	}
	if o == nil {
		o = &InvokeOptions{}
	}
	steps := []func() *C.smd_error{
		func() *C.smd_error {
			return C.smd_rule_invoke_options_set_progress_callback(p, C.smd_rule_progress_fn(C.smdgo_progress), C.smdgo_payload(C.uintptr_t(h)))
		},
		func() *C.smd_error {
			if o.OnFinding == nil {
				return nil
			}
			return C.smd_rule_invoke_options_set_finding_callback(p, C.smd_rule_finding_fn(C.smdgo_finding), C.smdgo_payload(C.uintptr_t(h)))
		},
		func() *C.smd_error { return C.smd_rule_invoke_options_set_stop_training(p, C.bool(o.StopTraining)) },
		func() *C.smd_error { return C.smd_rule_invoke_options_set_stop_at_first(p, C.bool(o.StopAtFirst)) },
		func() *C.smd_error {
			return C.smd_rule_invoke_options_set_collect_findings(p, C.bool(!o.NoCollectFindings))
		},
		func() *C.smd_error {
			if o.NoWait {
				return C.smd_rule_invoke_options_set_wait_timeout_ms(p, 0)
			}
			if o.WaitTimeout > 0 {
				return C.smd_rule_invoke_options_set_wait_timeout_ms(p, C.int64_t(max(1, millis(o.WaitTimeout))))
			}
			return nil
		},
		func() *C.smd_error {
			if !cancellable {
				return nil
			}
			return C.smd_rule_invoke_options_set_wait_slice_ms(p, C.int64_t(waitSlice.Milliseconds()))
		},
	}
	for _, s := range steps {
		if err := takeErr(s()); err != nil {
			C.smd_rule_invoke_options_free(p)
			return nil, err
		}
	}
	if o.MessageFile != "" {
		ms, err := cstr("message file", o.MessageFile)
		if err == nil {
			err = takeErr(C.smd_rule_invoke_options_set_message_file(p, ms))
		}
		if err != nil {
			C.smd_rule_invoke_options_free(p)
			return nil, err
		}
	}
	return p, nil
}

// Invoke is smdebug's invoke_rule: it evaluates the rule at every global step start <= step <
// end (end < 0: until the job ends), waiting for the steps of a running job. It returns nil when
// the invocation ended normally (see EndReason). With raiseEvalCond a met condition returns an
// error matching ErrRuleEvaluationConditionMet. Cancelling ctx stops the invocation (checked at
// least every 100 ms while waiting); the error then matches ctx.Err() and ErrCancelled. An error
// the rule itself returned (or its trial's) ends the invocation with EndReason RuleEndError and
// the step at FailedStep.
func (r *Rule) Invoke(ctx context.Context, start, end int64, raiseEvalCond bool, opts *InvokeOptions) error {
	return InvokeMany(ctx, []*Rule{r}, start, end, raiseEvalCond, opts)
}

// InvokeMany invokes several rules sharing one base trial, stepping through it once: at each
// step every rule still running is evaluated, in slice order; it returns when all have ended or at
// the first error. A rule's failure is the error returned (its message names the rule and the
// step): that rule's EndReason is RuleEndError with the step at FailedStep, and the rules left
// unfinished end with RuleEndStopped.
func InvokeMany(ctx context.Context, rules []*Rule, start, end int64, raiseEvalCond bool, opts *InvokeOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if len(rules) == 0 {
		return argErr("InvokeMany: no rules")
	}
	seen := make(map[*Rule]bool, len(rules))
	for i, r := range rules {
		if r == nil {
			return argErr("rule %d is nil", i)
		}
		if seen[r] {
			return argErr("rule %d (%s) is given twice", i, r.Name())
		}
		seen[r] = true
	}
	inv := &invocation{ctx: ctx, opts: opts}
	ps := make([]*C.smd_rule, 0, len(rules))
	for i, r := range rules {
		p, done, err := r.change("Invoke")
		if err != nil {
			for _, taken := range rules[:i] {
				taken.finishInvocation()
			}
			return err
		}
		r.inv = inv
		if cr, ok := r.custom(); ok {
			cr.inv.Store(inv)
		}
		done()
		ps = append(ps, p)
	}
	inv.rules = rules
	defer func() {
		for _, r := range rules {
			r.finishInvocation()
		}
	}()
	h := cgo.NewHandle(inv)
	defer h.Delete()
	op, err := opts.build(h, ctx.Done() != nil)
	if err != nil {
		return err
	}
	defer C.smd_rule_invoke_options_free(op)
	arr := (*[1 << 20]*C.smd_rule)(C.malloc(C.size_t(len(ps)) * C.size_t(unsafe.Sizeof(ps[0]))))[:len(ps):len(ps)]
	defer C.free(unsafe.Pointer(&arr[0]))
	copy(arr, ps)
	err = takeErr(C.smd_rule_invoke_many(&arr[0], C.size_t(len(ps)), C.int64_t(start), C.int64_t(end), C.bool(raiseEvalCond), op))
	if err != nil && errorsIs(err, ErrCancelled) {
		if inv.err != nil {
			return fmt.Errorf("%w (%w)", inv.err, err)
		}
		if cerr := ctx.Err(); cerr != nil {
			return &ctxError{cerr, err}
		}
	}
	return err
}
