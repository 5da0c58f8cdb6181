package smd

/*
#include <stdlib.h>
#include "smd/smd.h"
*/
import "C"

import (
	"context"
	"runtime"
	"sync"
	"time"
	"unsafe"
)

// StepState is smdebug's StepState: whether the trial has passed a step.
type StepState int

// The step states.
const (
	StepUnavailable     StepState = C.SMD_STEP_UNAVAILABLE
	StepAvailable       StepState = C.SMD_STEP_AVAILABLE
	StepNotYetAvailable StepState = C.SMD_STEP_NOT_YET_AVAILABLE
)

// TrialOptions are the options of OpenTrial. The zero value means every default.
type TrialOptions struct {
	// RangeBegin, RangeEnd: load only global steps RangeBegin <= step < RangeEnd (smdebug's
	// range_steps); both 0 means no range, -1 means no bound on that side.
	RangeBegin, RangeEnd int64
	// NoAutoRefresh turns off the automatic refresh of queries that need newer data (Refresh
	// loads new data then). The setting is fixed for the trial's life; WithAutoRefresh overrides
	// it for a block of one goroutine.
	NoAutoRefresh bool
	// CollectionWait is how long OpenTrial waits for the collections file of a running job.
	CollectionWait time.Duration
	// CacheBytes is the value cache size; 0 keeps the default (64 MiB), negative disables it.
	CacheBytes int64
	// S3 says how to reach an s3://bucket/prefix trial; nil leaves everything to the AWS
	// configuration chain. Local paths ignore it.
	S3 *S3Settings
}

func (o *TrialOptions) build() (*C.smd_trial_options, error) {
	var p *C.smd_trial_options
	if err := takeErr(C.smd_trial_options_create(&p)); err != nil {
		return nil, err
	}
	err := func() error {
		if o.RangeBegin != 0 || o.RangeEnd != 0 {
			if err := takeErr(C.smd_trial_options_set_range_steps(p, C.int64_t(o.RangeBegin), C.int64_t(o.RangeEnd))); err != nil {
				return err
			}
		}
		if o.NoAutoRefresh {
			if err := takeErr(C.smd_trial_options_set_auto_refresh(p, false)); err != nil {
				return err
			}
		}
		if o.CollectionWait != 0 {
			if err := takeErr(C.smd_trial_options_set_collection_wait_ms(p, C.int64_t(millis(o.CollectionWait)))); err != nil {
				return err
			}
		}
		if o.CacheBytes != 0 {
			b := o.CacheBytes
			if b < 0 {
				b = 0
			}
			if err := takeErr(C.smd_trial_options_set_cache_bytes(p, C.size_t(b))); err != nil {
				return err
			}
		}
		if o.S3 != nil {
			return withStorage(o.S3, func(sp *C.smd_storage_options) *C.smd_error { return C.smd_trial_options_set_storage(p, sp) })
		}
		return nil
	}()
	if err != nil {
		C.smd_trial_options_free(p)
		return nil, err
	}
	return p, nil
}

// Trial reads a trial folder. Its methods may be called concurrently from any goroutine.
type Trial struct {
	mu       sync.RWMutex
	p        *C.smd_trial
	borrowed bool // a rule's trial, seen from a callback: not freed by Close
}

func wrapTrial(p *C.smd_trial) *Trial {
	t := &Trial{p: p}
	runtime.SetFinalizer(t, func(t *Trial) {
		if t.p != nil && !t.borrowed {
			C.smd_trial_free(t.p)
		}
	})
	return t
}

// OpenTrial opens the trial in folder path. options may be nil.
func OpenTrial(path string, options *TrialOptions) (*Trial, error) {
	cs, err := cstr("trial path", path)
	if err != nil {
		return nil, err
	}
	var op *C.smd_trial_options
	if options != nil {
		if op, err = options.build(); err != nil {
			return nil, err
		}
		defer C.smd_trial_options_free(op)
	}
	var p *C.smd_trial
	if err := takeErr(C.smd_trial_open(cs, op, &p)); err != nil {
		return nil, err
	}
	return wrapTrial(p), nil
}

// Close releases the trial. Tensors and values obtained from it stay valid. It may be called more
// than once.
func (t *Trial) Close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.p != nil && !t.borrowed {
		C.smd_trial_free(t.p)
	}
	t.p = nil
	runtime.SetFinalizer(t, nil)
}

func (t *Trial) call(f func(*C.smd_trial) *C.smd_error) error {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.p == nil {
		return closedErr("Trial")
	}
	return takeErr(f(t.p))
}

// Path is the trial folder ("" when closed).
func (t *Trial) Path() string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.p == nil {
		return ""
	}
	return C.GoString(C.smd_trial_path(t.p))
}

// NumWorkers is _meta.num_workers of the collections file (0 when closed).
func (t *Trial) NumWorkers() int64 {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.p == nil {
		return 0
	}
	return int64(C.smd_trial_num_workers(t.p))
}

// LastCompleteStep is the last global step that every worker has written, as smdebug's
// trial.last_complete_step (-1 before any, and when closed).
func (t *Trial) LastCompleteStep() int64 {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.p == nil {
		return -1
	}
	return int64(C.smd_trial_last_complete_step(t.p))
}

// LoadedAllSteps tells whether the trial has seen the end of the job and loaded every step written
// before it, so that no step can appear any more (smdebug's trial.loaded_all_steps): set by the
// first refresh (the one OpenTrial makes included) that found training_job_end.ts before listing
// and could read every index file. It checks nothing itself; false when closed.
func (t *Trial) LoadedAllSteps() bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.p == nil {
		return false
	}
	return bool(C.smd_trial_loaded_all_steps(t.p))
}

// IndexCursor is the index file after which the next refresh lists new ones, relative to the
// trial ("index/000000000/000000000070_worker_0.json"), or "" before any step is complete.
// smdebug's trial.last_index_token is this joined to the trial's path.
func (t *Trial) IndexCursor() (string, error) {
	var out *C.char
	if err := t.call(func(p *C.smd_trial) *C.smd_error { return C.smd_trial_index_cursor(p, &out) }); err != nil {
		return "", err
	}
	if out == nil {
		return "", nil
	}
	s := C.GoString(out)
	C.smd_free(unsafe.Pointer(out))
	return s, nil
}

// Refresh loads what was written since the last refresh.
func (t *Trial) Refresh() error {
	return t.call(func(p *C.smd_trial) *C.smd_error { return C.smd_trial_refresh(p) })
}

// AutoRefresh tells whether queries of the trial made by the calling goroutine refresh by
// themselves when they need newer data: inside WithAutoRefresh, the innermost block's setting;
// elsewhere the setting the trial was opened with (TrialOptions.NoAutoRefresh). false when closed.
func (t *Trial) AutoRefresh() bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.p == nil {
		return false
	}
	return bool(C.smd_trial_auto_refresh(t.p))
}

// WithAutoRefresh runs fn with automatic refresh of this trial on or off, whatever the trial was
// opened with: smdebug's refresh (on) and no_refresh (off) blocks. The setting is fixed for the
// trial's life; the block overrides it for the queries that fn makes on the calling goroutine,
// through any handle of the trial, its tensors included. Other goroutines are not affected: a
// goroutine reading the trial at the same time keeps refreshing as the trial was opened (or as
// its own WithAutoRefresh says), and a goroutine that fn starts is outside the block too.
//
// The C library keeps the setting per OS thread, so the goroutine is locked to its thread
// (runtime.LockOSThread) while fn runs and unlocked afterwards; the block ends when fn returns or
// panics. Blocks nest, the innermost wins. It returns fn's error, or the error of starting the
// block (then fn is not called).
func (t *Trial) WithAutoRefresh(on bool, fn func() error) error {
	if fn == nil {
		return argErr("WithAutoRefresh: nil function")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var scope *C.smd_trial_refresh_scope
	if err := t.call(func(p *C.smd_trial) *C.smd_error {
		return C.smd_trial_refresh_scope_create(p, C.bool(on), &scope)
	}); err != nil {
		return err
	}
	// Freed on this (locked) thread before the unlock above runs; the scope keeps the C trial
	// alive, so a Close inside fn does not invalidate it.
	defer C.smd_trial_refresh_scope_free(scope)
	return fn()
}

func (t *Trial) strings(f func(*C.smd_trial, *C.smd_strarray) *C.smd_error) ([]string, error) {
	var a C.smd_strarray
	if err := t.call(func(p *C.smd_trial) *C.smd_error { return f(p, &a) }); err != nil {
		return nil, err
	}
	return takeStrArray(&a), nil
}

// Warnings lists messages about the files skipped so far.
func (t *Trial) Warnings() ([]string, error) {
	return t.strings(func(p *C.smd_trial, a *C.smd_strarray) *C.smd_error { return C.smd_trial_warnings(p, a) })
}

// HasEnded tells whether training_job_end.ts exists now.
func (t *Trial) HasEnded() (bool, error) {
	var out C.bool
	err := t.call(func(p *C.smd_trial) *C.smd_error { return C.smd_trial_has_ended(p, &out) })
	return bool(out), err
}

// Steps lists the steps of mode at which anything was saved (global steps for ModeGlobal).
func (t *Trial) Steps(mode Mode, showIncomplete bool) ([]int64, error) {
	var s *C.int64_t
	var n C.size_t
	if err := t.call(func(p *C.smd_trial) *C.smd_error {
		return C.smd_trial_steps(p, C.smd_mode(mode), C.bool(showIncomplete), &s, &n)
	}); err != nil {
		return nil, err
	}
	return takeInt64s(s, n), nil
}

// Modes lists the modes other than GLOBAL in which steps were saved.
func (t *Trial) Modes() ([]Mode, error) {
	var m *C.smd_mode
	var n C.size_t
	if err := t.call(func(p *C.smd_trial) *C.smd_error { return C.smd_trial_modes(p, &m, &n) }); err != nil {
		return nil, err
	}
	out := make([]Mode, int(n))
	if n > 0 {
		for i, v := range unsafe.Slice(m, int(n)) {
			out[i] = Mode(v)
		}
	}
	C.smd_free(unsafe.Pointer(m))
	return out, nil
}

// Mode is the mode of a global step.
func (t *Trial) Mode(globalStep int64) (Mode, error) {
	var out C.smd_mode
	err := t.call(func(p *C.smd_trial) *C.smd_error { return C.smd_trial_mode(p, C.int64_t(globalStep), &out) })
	return Mode(out), err
}

// ModeStep is the mode step of a global step.
func (t *Trial) ModeStep(globalStep int64) (int64, error) {
	var out C.int64_t
	err := t.call(func(p *C.smd_trial) *C.smd_error { return C.smd_trial_mode_step(p, C.int64_t(globalStep), &out) })
	return int64(out), err
}

// GlobalStep is the global step of a mode step.
func (t *Trial) GlobalStep(modeStep int64, mode Mode) (int64, error) {
	var out C.int64_t
	err := t.call(func(p *C.smd_trial) *C.smd_error {
		return C.smd_trial_global_step(p, C.int64_t(modeStep), C.smd_mode(mode), &out)
	})
	return int64(out), err
}

// Workers lists the worker names, sorted.
func (t *Trial) Workers() ([]string, error) {
	return t.strings(func(p *C.smd_trial, a *C.smd_strarray) *C.smd_error { return C.smd_trial_workers(p, a) })
}

// HasPassedStep is smdebug's has_passed_step.
func (t *Trial) HasPassedStep(step int64, mode Mode) (StepState, error) {
	var out C.smd_step_state
	err := t.call(func(p *C.smd_trial) *C.smd_error {
		return C.smd_trial_has_passed_step(p, C.int64_t(step), C.smd_mode(mode), &out)
	})
	return StepState(out), err
}

// waitSlice is how long one C wait lasts before the context is looked at again.
const waitSlice = 100 * time.Millisecond

// WaitForSteps waits until every step in steps of mode is available, or ctx is done (then the
// error wraps ctx.Err()). Errors: ErrStepUnavailable (a step was skipped), ErrNoMoreData (the
// job ended before the step).
func (t *Trial) WaitForSteps(ctx context.Context, steps []int64, mode Mode) error {
	for {
		slice := waitSlice
		if dl, ok := ctx.Deadline(); ok {
			if left := time.Until(dl); left < slice {
				slice = left
			}
		}
		if slice < 0 {
			slice = 0
		}
		err := t.call(func(p *C.smd_trial) *C.smd_error {
			return C.smd_trial_wait_for_steps(p, int64Ptr(steps), C.size_t(len(steps)), C.smd_mode(mode), C.int64_t(millis(slice)))
		})
		if err == nil || !errorsIs(err, ErrStepNotYetAvailable) {
			return err
		}
		if cerr := ctx.Err(); cerr != nil {
			return &ctxError{cerr, err}
		}
	}
}

// ctxError is a wait ended by its context: it matches ctx.Err() and the last smd error.
type ctxError struct {
	ctx  error
	last error
}

func (e *ctxError) Error() string   { return e.ctx.Error() + " (" + e.last.Error() + ")" }
func (e *ctxError) Unwrap() []error { return []error{e.ctx, e.last} }

// TensorFilter selects tensor names for Trial.TensorNames. The zero value keeps everything.
type TensorFilter struct {
	Step       *int64 // only tensors saved at this step of Mode
	Mode       Mode   // 0 or ModeGlobal: any mode
	Regexes    []string
	Collection string
}

// TensorNames lists the names of the tensors that pass filter (nil: all), sorted.
func (t *Trial) TensorNames(filter *TensorFilter) ([]string, error) {
	var fp *C.smd_tensor_filter
	if filter != nil {
		if err := takeErr(C.smd_tensor_filter_create(&fp)); err != nil {
			return nil, err
		}
		defer C.smd_tensor_filter_free(fp)
		if filter.Step != nil {
			if err := takeErr(C.smd_tensor_filter_set_step(fp, C.int64_t(*filter.Step))); err != nil {
				return nil, err
			}
		}
		if filter.Mode != ModeAll {
			if err := takeErr(C.smd_tensor_filter_set_mode(fp, C.smd_mode(filter.Mode))); err != nil {
				return nil, err
			}
		}
		for _, r := range filter.Regexes {
			cs, err := cstr("regex", r)
			if err != nil {
				return nil, err
			}
			if err := takeErr(C.smd_tensor_filter_add_include_regex(fp, cs)); err != nil {
				return nil, err
			}
		}
		if filter.Collection != "" {
			cs, err := cstr("collection", filter.Collection)
			if err != nil {
				return nil, err
			}
			if err := takeErr(C.smd_tensor_filter_set_collection(fp, cs)); err != nil {
				return nil, err
			}
		}
	}
	return t.strings(func(p *C.smd_trial, a *C.smd_strarray) *C.smd_error { return C.smd_trial_tensor_names(p, fp, a) })
}

// HasTensor tells whether the trial has a tensor of this name.
func (t *Trial) HasTensor(name string) (bool, error) {
	cs, err := cstr("tensor name", name)
	if err != nil {
		return false, err
	}
	var out C.bool
	err = t.call(func(p *C.smd_trial) *C.smd_error { return C.smd_trial_has_tensor(p, cs, &out) })
	return bool(out), err
}

// Tensor returns the named tensor. It stays valid after the trial is closed.
// Errors: ErrTensorUnavailable.
func (t *Trial) Tensor(name string) (*Tensor, error) {
	cs, err := cstr("tensor name", name)
	if err != nil {
		return nil, err
	}
	var tp *C.smd_tensor
	if err := t.call(func(p *C.smd_trial) *C.smd_error { return C.smd_trial_tensor(p, cs, &tp) }); err != nil {
		return nil, err
	}
	return wrapTensor(tp), nil
}

// CollectionNames lists the trial's collections, sorted.
func (t *Trial) CollectionNames() ([]string, error) {
	return t.strings(func(p *C.smd_trial, a *C.smd_strarray) *C.smd_error { return C.smd_trial_collection_names(p, a) })
}

// CollectionInfo is a collection as the trial's collections file describes it (a copy).
type CollectionInfo struct {
	Name          string
	IncludeRegex  []string
	TensorNames   []string
	Reductions    string
	SaveRawTensor bool
	SaveShape     bool
	SaveHistogram bool
	// SaveConfig is the collection's save configuration (smdebug's Collection.save_config), nil
	// when the file gives it none; a mode the file leaves null is unset (SaveConfig.Settings).
	SaveConfig *SaveConfig
}

// Collection describes one collection. Errors: ErrNotFound.
func (t *Trial) Collection(name string) (*CollectionInfo, error) {
	cs, err := cstr("collection name", name)
	if err != nil {
		return nil, err
	}
	var ip *C.smd_collection_info
	if err := t.call(func(p *C.smd_trial) *C.smd_error { return C.smd_trial_collection(p, cs, &ip) }); err != nil {
		return nil, err
	}
	defer C.smd_collection_info_free(ip)
	info := &CollectionInfo{
		Name:          C.GoString(C.smd_collection_info_name(ip)),
		Reductions:    C.GoString(C.smd_collection_info_reductions(ip)),
		SaveRawTensor: bool(C.smd_collection_info_save_raw_tensor(ip)),
		SaveShape:     bool(C.smd_collection_info_save_shape(ip)),
		SaveHistogram: bool(C.smd_collection_info_save_histogram(ip)),
	}
	var a C.smd_strarray
	if err := takeErr(C.smd_collection_info_include_regex(ip, &a)); err != nil {
		return nil, err
	}
	info.IncludeRegex = takeStrArray(&a)
	if err := takeErr(C.smd_collection_info_tensor_names(ip, &a)); err != nil {
		return nil, err
	}
	info.TensorNames = takeStrArray(&a)
	var sc *C.smd_save_config
	if err := takeErr(C.smd_collection_info_save_config(ip, &sc)); err != nil {
		return nil, err
	}
	if sc != nil {
		info.SaveConfig = &SaveConfig{p: sc}
		runtime.SetFinalizer(info.SaveConfig, (*SaveConfig).Close)
	}
	return info, nil
}
