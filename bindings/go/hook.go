package smd

/*
#cgo noescape smd_hook_save_tensor
#cgo nocallback smd_hook_save_tensor
#include <stdlib.h>
#include "smd/smd.h"
*/
import "C"

import (
	"runtime"
	"strings"
	"sync"
	"unsafe"
)

// SaveConfig says when to save, per mode (smdebug's SaveConfig). A plain value: one goroutine at
// a time.
type SaveConfig struct{ p *C.smd_save_config }

// NewSaveConfig returns a configuration with every mode unset.
func NewSaveConfig() (*SaveConfig, error) {
	c := &SaveConfig{}
	if err := takeErr(C.smd_save_config_create(&c.p)); err != nil {
		return nil, err
	}
	runtime.SetFinalizer(c, (*SaveConfig).Close)
	return c, nil
}

// Close frees the configuration. It may be called more than once.
func (c *SaveConfig) Close() {
	if c != nil && c.p != nil {
		C.smd_save_config_free(c.p)
		c.p = nil
		runtime.SetFinalizer(c, nil)
	}
}

func (c *SaveConfig) ptr() (*C.smd_save_config, error) {
	if c == nil || c.p == nil {
		return nil, closedErr("SaveConfig")
	}
	return c.p, nil
}

// Clone returns an independent copy.
func (c *SaveConfig) Clone() (*SaveConfig, error) {
	defer runtime.KeepAlive(c)
	p, err := c.ptr()
	if err != nil {
		return nil, err
	}
	n := &SaveConfig{}
	if err := takeErr(C.smd_save_config_clone(p, &n.p)); err != nil {
		return nil, err
	}
	runtime.SetFinalizer(n, (*SaveConfig).Close)
	return n, nil
}

// Set sets a mode (or ModeAll): save every saveInterval steps from startStep to endStep
// (exclusive; negative: no end), plus the steps in saveSteps.
func (c *SaveConfig) Set(mode Mode, saveInterval, startStep, endStep int64, saveSteps ...int64) error {
	defer runtime.KeepAlive(c)
	p, err := c.ptr()
	if err != nil {
		return err
	}
	return takeErr(C.smd_save_config_set(p, C.smd_mode(mode), C.int64_t(saveInterval), C.int64_t(startStep),
		C.int64_t(endStep), int64Ptr(saveSteps), C.size_t(len(saveSteps))))
}

// SetInterval sets only the save interval of a mode.
func (c *SaveConfig) SetInterval(mode Mode, saveInterval int64) error {
	defer runtime.KeepAlive(c)
	p, err := c.ptr()
	if err != nil {
		return err
	}
	return takeErr(C.smd_save_config_set_interval(p, C.smd_mode(mode), C.int64_t(saveInterval)))
}

// Unset makes a mode (or ModeAll) unset again.
func (c *SaveConfig) Unset(mode Mode) error {
	defer runtime.KeepAlive(c)
	p, err := c.ptr()
	if err != nil {
		return err
	}
	return takeErr(C.smd_save_config_unset(p, C.smd_mode(mode)))
}

// ShouldSave tells whether modeStep of mode is saved by this configuration.
func (c *SaveConfig) ShouldSave(modeStep int64, mode Mode) (bool, error) {
	defer runtime.KeepAlive(c)
	p, err := c.ptr()
	if err != nil {
		return false, err
	}
	var out C.bool
	if err := takeErr(C.smd_save_config_should_save(p, C.int64_t(modeStep), C.smd_mode(mode), &out)); err != nil {
		return false, err
	}
	return bool(out), nil
}

// SaveConfigMode is one mode's settings (smdebug's SaveConfigMode): every SaveInterval steps
// from StartStep to EndStep (exclusive; negative: no end), plus the steps in SaveSteps.
type SaveConfigMode struct {
	SaveInterval int64
	StartStep    int64
	EndStep      int64
	SaveSteps    []int64
}

// Settings returns a mode's settings and whether the mode is set (an unset mode gives the
// defaults: 500, 0, -1, none). Errors: ErrInvalidArgument for ModeAll or an unknown mode.
func (c *SaveConfig) Settings(mode Mode) (SaveConfigMode, bool, error) {
	defer runtime.KeepAlive(c)
	p, err := c.ptr()
	if err != nil {
		return SaveConfigMode{}, false, err
	}
	var set C.bool
	var interval, start, end C.int64_t
	var steps *C.int64_t
	var n C.size_t
	if err := takeErr(C.smd_save_config_settings(p, C.smd_mode(mode), &set, &interval, &start, &end, &steps, &n)); err != nil {
		return SaveConfigMode{}, false, err
	}
	return SaveConfigMode{SaveInterval: int64(interval), StartStep: int64(start), EndStep: int64(end),
		SaveSteps: takeInt64s(steps, n)}, bool(set), nil
}

// ReductionConfig says what to save of a tensor (smdebug's ReductionConfig). A plain value.
type ReductionConfig struct{ p *C.smd_reduction_config }

func wrapReductionConfig(p *C.smd_reduction_config) *ReductionConfig {
	c := &ReductionConfig{p: p}
	runtime.SetFinalizer(c, (*ReductionConfig).Close)
	return c
}

// NewReductionConfig returns an empty configuration (no reductions, no raw tensor, no shape).
func NewReductionConfig() (*ReductionConfig, error) {
	var p *C.smd_reduction_config
	if err := takeErr(C.smd_reduction_config_create(&p)); err != nil {
		return nil, err
	}
	return wrapReductionConfig(p), nil
}

// ParseReductionConfig parses a comma-separated list ("min,abs_mean,l2_norm").
func ParseReductionConfig(reductions string) (*ReductionConfig, error) {
	cs, err := cstr("reductions", reductions)
	if err != nil {
		return nil, err
	}
	var p *C.smd_reduction_config
	if err := takeErr(C.smd_reduction_config_parse(cs, &p)); err != nil {
		return nil, err
	}
	return wrapReductionConfig(p), nil
}

// Close frees the configuration. It may be called more than once.
func (c *ReductionConfig) Close() {
	if c != nil && c.p != nil {
		C.smd_reduction_config_free(c.p)
		c.p = nil
		runtime.SetFinalizer(c, nil)
	}
}

func (c *ReductionConfig) ptr() (*C.smd_reduction_config, error) {
	if c == nil || c.p == nil {
		return nil, closedErr("ReductionConfig")
	}
	return c.p, nil
}

// Clone returns an independent copy.
func (c *ReductionConfig) Clone() (*ReductionConfig, error) {
	defer runtime.KeepAlive(c)
	p, err := c.ptr()
	if err != nil {
		return nil, err
	}
	var n *C.smd_reduction_config
	if err := takeErr(C.smd_reduction_config_clone(p, &n)); err != nil {
		return nil, err
	}
	return wrapReductionConfig(n), nil
}

// Add adds one reduction by name ("mean", "abs_l2_norm", ...).
func (c *ReductionConfig) Add(name string) error {
	defer runtime.KeepAlive(c)
	p, err := c.ptr()
	if err != nil {
		return err
	}
	cs, err := cstr("reduction", name)
	if err != nil {
		return err
	}
	return takeErr(C.smd_reduction_config_add(p, cs))
}

// SetSaveRawTensor sets whether the raw value is saved too.
func (c *ReductionConfig) SetSaveRawTensor(save bool) error {
	defer runtime.KeepAlive(c)
	p, err := c.ptr()
	if err != nil {
		return err
	}
	return takeErr(C.smd_reduction_config_set_save_raw_tensor(p, C.bool(save)))
}

// SetSaveShape sets whether the shape is saved.
func (c *ReductionConfig) SetSaveShape(save bool) error {
	defer runtime.KeepAlive(c)
	p, err := c.ptr()
	if err != nil {
		return err
	}
	return takeErr(C.smd_reduction_config_set_save_shape(p, C.bool(save)))
}

// String is the configuration as smdebug writes it in the collections file.
func (c *ReductionConfig) String() string {
	defer runtime.KeepAlive(c)
	p, err := c.ptr()
	if err != nil {
		return "<closed>"
	}
	var out *C.char
	if err := takeErr(C.smd_reduction_config_to_string(p, &out)); err != nil {
		return "<" + err.Error() + ">"
	}
	s := C.GoString(out)
	C.smd_free(unsafe.Pointer(out))
	return s
}

// IncludeWorkers says which workers write tensors.
type IncludeWorkers int

// The choices of HookOptions.SetIncludeWorkers.
const (
	IncludeWorkersOne IncludeWorkers = C.SMD_INCLUDE_WORKERS_ONE
	IncludeWorkersAll IncludeWorkers = C.SMD_INCLUDE_WORKERS_ALL
)

// HookOptions configure a hook (smdebug's hook arguments). A plain value.
type HookOptions struct{ p *C.smd_hook_options }

// NewHookOptions returns options with every default.
func NewHookOptions() (*HookOptions, error) {
	o := &HookOptions{}
	if err := takeErr(C.smd_hook_options_create(&o.p)); err != nil {
		return nil, err
	}
	runtime.SetFinalizer(o, (*HookOptions).Close)
	return o, nil
}

// Close frees the options. It may be called more than once.
func (o *HookOptions) Close() {
	if o != nil && o.p != nil {
		C.smd_hook_options_free(o.p)
		o.p = nil
		runtime.SetFinalizer(o, nil)
	}
}

func (o *HookOptions) ptr() (*C.smd_hook_options, error) {
	if o == nil || o.p == nil {
		return nil, closedErr("HookOptions")
	}
	return o.p, nil
}

func (o *HookOptions) str(what, s string, f func(*C.smd_hook_options, *C.char) *C.smd_error) error {
	defer runtime.KeepAlive(o)
	p, err := o.ptr()
	if err != nil {
		return err
	}
	cs, err := cstr(what, s)
	if err != nil {
		return err
	}
	return takeErr(f(p, cs))
}

// SetSaveConfig sets the hook's save configuration (copied).
func (o *HookOptions) SetSaveConfig(c *SaveConfig) error {
	defer runtime.KeepAlive(o)
	p, err := o.ptr()
	if err != nil {
		return err
	}
	defer runtime.KeepAlive(c)
	cp, err := c.ptr()
	if err != nil {
		return err
	}
	return takeErr(C.smd_hook_options_set_save_config(p, cp))
}

// SetReductionConfig sets the hook's reduction configuration (copied).
func (o *HookOptions) SetReductionConfig(c *ReductionConfig) error {
	defer runtime.KeepAlive(o)
	p, err := o.ptr()
	if err != nil {
		return err
	}
	defer runtime.KeepAlive(c)
	cp, err := c.ptr()
	if err != nil {
		return err
	}
	return takeErr(C.smd_hook_options_set_reduction_config(p, cp))
}

// AddIncludeRegex saves tensors whose names match regex (Python re syntax).
func (o *HookOptions) AddIncludeRegex(regex string) error {
	return o.str("regex", regex, func(p *C.smd_hook_options, s *C.char) *C.smd_error {
		return C.smd_hook_options_add_include_regex(p, s)
	})
}

// AddIncludeCollection adds a collection to the saved ones.
func (o *HookOptions) AddIncludeCollection(name string) error {
	return o.str("collection", name, func(p *C.smd_hook_options, s *C.char) *C.smd_error {
		return C.smd_hook_options_add_include_collection(p, s)
	})
}

// SetWorker sets this process's worker name.
func (o *HookOptions) SetWorker(worker string) error {
	return o.str("worker", worker, func(p *C.smd_hook_options, s *C.char) *C.smd_error {
		return C.smd_hook_options_set_worker(p, s)
	})
}

// SetTensorBoardDir sets where the hook exports TensorBoard logs.
func (o *HookOptions) SetTensorBoardDir(dir string) error {
	return o.str("tensorboard dir", dir, func(p *C.smd_hook_options, s *C.char) *C.smd_error {
		return C.smd_hook_options_set_tensorboard_dir(p, s)
	})
}

func (o *HookOptions) flag(v bool, f func(*C.smd_hook_options, C.bool) *C.smd_error) error {
	defer runtime.KeepAlive(o)
	p, err := o.ptr()
	if err != nil {
		return err
	}
	return takeErr(f(p, C.bool(v)))
}

// SetSaveAll saves every tensor.
func (o *HookOptions) SetSaveAll(on bool) error {
	return o.flag(on, func(p *C.smd_hook_options, b C.bool) *C.smd_error { return C.smd_hook_options_set_save_all(p, b) })
}

// SetDryRun makes the hook decide everything but write nothing.
func (o *HookOptions) SetDryRun(on bool) error {
	return o.flag(on, func(p *C.smd_hook_options, b C.bool) *C.smd_error { return C.smd_hook_options_set_dry_run(p, b) })
}

// SetRealPayloadCRC writes real CRC32C payload checksums (smdebug's reader then refuses them).
func (o *HookOptions) SetRealPayloadCRC(on bool) error {
	return o.flag(on, func(p *C.smd_hook_options, b C.bool) *C.smd_error {
		return C.smd_hook_options_set_real_payload_crc(p, b)
	})
}

// SetKeepColonIndex keeps a TensorFlow name's ":<digits>" in its reduction tags
// ("smdebug/reductions/max/dense/kernel:0", read back as reductions of "dense/kernel:0"), as
// smdebug's TensorFlow hooks write them. Default false: the index is dropped, as smdebug's other
// hooks do, and the reductions belong to "dense/kernel".
func (o *HookOptions) SetKeepColonIndex(on bool) error {
	return o.flag(on, func(p *C.smd_hook_options, b C.bool) *C.smd_error {
		return C.smd_hook_options_set_keep_colon_index(p, b)
	})
}

// SetWriteEndMarker sets whether Close writes training_job_end.ts (default true).
func (o *HookOptions) SetWriteEndMarker(on bool) error {
	return o.flag(on, func(p *C.smd_hook_options, b C.bool) *C.smd_error {
		return C.smd_hook_options_set_write_end_marker(p, b)
	})
}

// SetExportTensorBoard exports scalars and histograms to TensorBoard too.
func (o *HookOptions) SetExportTensorBoard(on bool) error {
	return o.flag(on, func(p *C.smd_hook_options, b C.bool) *C.smd_error {
		return C.smd_hook_options_set_export_tensorboard(p, b)
	})
}

// SetIncludeWorkers says which workers write tensors.
func (o *HookOptions) SetIncludeWorkers(which IncludeWorkers) error {
	defer runtime.KeepAlive(o)
	p, err := o.ptr()
	if err != nil {
		return err
	}
	return takeErr(C.smd_hook_options_set_include_workers(p, C.smd_include_workers(which)))
}

// SetNumWorkers sets the number of workers of the job.
func (o *HookOptions) SetNumWorkers(n int64) error {
	defer runtime.KeepAlive(o)
	p, err := o.ptr()
	if err != nil {
		return err
	}
	return takeErr(C.smd_hook_options_set_num_workers(p, C.int64_t(n)))
}

// SetWallTimeBase sets the wall time base (seconds since the epoch).
func (o *HookOptions) SetWallTimeBase(base float64) error {
	defer runtime.KeepAlive(o)
	p, err := o.ptr()
	if err != nil {
		return err
	}
	return takeErr(C.smd_hook_options_set_wall_time_base(p, C.double(base)))
}

// SetMemoryBudget sets the bytes of tensor data the hook may hold waiting to be written.
func (o *HookOptions) SetMemoryBudget(bytes uint64) error {
	defer runtime.KeepAlive(o)
	p, err := o.ptr()
	if err != nil {
		return err
	}
	return takeErr(C.smd_hook_options_set_memory_budget(p, C.size_t(bytes)))
}

// SetMaxPendingSteps bounds how many steps training may run ahead of the writer (-1: no bound).
func (o *HookOptions) SetMaxPendingSteps(steps int64) error {
	defer runtime.KeepAlive(o)
	p, err := o.ptr()
	if err != nil {
		return err
	}
	return takeErr(C.smd_hook_options_set_max_pending_steps(p, C.int64_t(steps)))
}

// Hook writes one smdebug trial from a training program. Its methods may be called from any
// goroutine; Close must not race with other calls' use of the handle (the binding guards this: a
// call after Close returns ErrClosed).
type Hook struct {
	mu sync.RWMutex
	p  *C.smd_hook
}

func wrapHook(p *C.smd_hook) *Hook {
	h := &Hook{p: p}
	runtime.SetFinalizer(h, func(h *Hook) {
		if h.p != nil {
			C.smd_hook_free(h.p)
		}
	})
	return h
}

// optPtr gives the options' C pointer. The caller keeps `o` reachable until its C call returns
// (runtime.KeepAlive): the finalizer of options not used after the call could free them during
// it.
func optPtr(o *HookOptions) (*C.smd_hook_options, error) {
	if o == nil {
		return nil, nil
	}
	return o.ptr()
}

// NewHook creates a hook writing the trial folder outDir. options may be nil (defaults).
func NewHook(outDir string, options *HookOptions) (*Hook, error) {
	cs, err := cstr("out_dir", outDir)
	if err != nil {
		return nil, err
	}
	defer runtime.KeepAlive(options)
	op, err := optPtr(options)
	if err != nil {
		return nil, err
	}
	var p *C.smd_hook
	if err := takeErr(C.smd_hook_create(cs, op, &p)); err != nil {
		return nil, err
	}
	return wrapHook(p), nil
}

// NewHookFromJSON creates a hook from SageMaker's debug hook configuration JSON.
func NewHookFromJSON(json []byte, options *HookOptions) (*Hook, error) {
	defer runtime.KeepAlive(options)
	op, err := optPtr(options)
	if err != nil {
		return nil, err
	}
	var jp *C.char
	if len(json) > 0 {
		jp = (*C.char)(unsafe.Pointer(&json[0]))
	}
	var p *C.smd_hook
	if err := takeErr(C.smd_hook_create_from_json(jp, C.size_t(len(json)), op, &p)); err != nil {
		return nil, err
	}
	return wrapHook(p), nil
}

// NewHookFromJSONFile creates a hook from a JSON file ("" means $SMDEBUG_CONFIG_FILE_PATH, else
// SageMaker's default path).
func NewHookFromJSONFile(path string, options *HookOptions) (*Hook, error) {
	var cs *C.char
	if path != "" {
		var err error
		if cs, err = cstr("json path", path); err != nil {
			return nil, err
		}
	}
	defer runtime.KeepAlive(options)
	op, err := optPtr(options)
	if err != nil {
		return nil, err
	}
	var p *C.smd_hook
	if err := takeErr(C.smd_hook_create_from_json_file(cs, op, &p)); err != nil {
		return nil, err
	}
	return wrapHook(p), nil
}

// Close drains everything, writes the collections file and the end marker, frees the hook and
// returns the first error met since it was created. Later calls return nil.
func (h *Hook) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.p == nil {
		return nil
	}
	err := takeErr(C.smd_hook_close(h.p))
	C.smd_hook_free(h.p)
	h.p = nil
	runtime.SetFinalizer(h, nil)
	return err
}

func (h *Hook) lock() (*C.smd_hook, error) {
	h.mu.RLock()
	if h.p == nil {
		h.mu.RUnlock()
		return nil, closedErr("Hook")
	}
	return h.p, nil
}

func (h *Hook) call(f func(*C.smd_hook) *C.smd_error) error {
	p, err := h.lock()
	if err != nil {
		return err
	}
	defer h.mu.RUnlock()
	return takeErr(f(p))
}

// Flush waits until everything queued is written to the current step's file.
func (h *Hook) Flush() error {
	return h.call(func(p *C.smd_hook) *C.smd_error { return C.smd_hook_flush(p) })
}

// SetMode sets the current mode.
func (h *Hook) SetMode(mode Mode) error {
	return h.call(func(p *C.smd_hook) *C.smd_error { return C.smd_hook_set_mode(p, C.smd_mode(mode)) })
}

// BeginStep ends the current step and starts the next (the first call starts step 0).
func (h *Hook) BeginStep() error {
	return h.call(func(p *C.smd_hook) *C.smd_error { return C.smd_hook_begin_step(p) })
}

// EndStep ends the current step without beginning another: its files are completed (Flush waits
// for them) so that a trial sees the step while the hook stays open. Saves made before the next
// BeginStep are kept for the next step (Close begins one for them). Nothing to do when no step
// is open.
func (h *Hook) EndStep() error {
	return h.call(func(p *C.smd_hook) *C.smd_error { return C.smd_hook_end_step(p) })
}

// GlobalStep is the current global step (-1 before the first BeginStep, or when closed).
func (h *Hook) GlobalStep() int64 {
	p, err := h.lock()
	if err != nil {
		return -1
	}
	defer h.mu.RUnlock()
	return int64(C.smd_hook_global_step(p))
}

// Mode is the current mode.
func (h *Hook) Mode() Mode {
	p, err := h.lock()
	if err != nil {
		return ModeGlobal
	}
	defer h.mu.RUnlock()
	return Mode(C.smd_hook_mode(p))
}

// ModeStep is the current mode's step.
func (h *Hook) ModeStep() int64 {
	p, err := h.lock()
	if err != nil {
		return -1
	}
	defer h.mu.RUnlock()
	return int64(C.smd_hook_mode_step(p))
}

// Worker is this hook's worker name ("" when closed).
func (h *Hook) Worker() string {
	p, err := h.lock()
	if err != nil {
		return ""
	}
	defer h.mu.RUnlock()
	return C.GoString(C.smd_hook_worker(p))
}

// IsDue tells whether a tensor of this name would be saved now.
func (h *Hook) IsDue(name string) bool {
	p, err := h.lock()
	if err != nil {
		return false
	}
	defer h.mu.RUnlock()
	cs, err := cstr("name", name)
	if err != nil {
		return false
	}
	return bool(C.smd_hook_is_due(p, cs))
}

// AnyDue tells whether any collection is due at the current step.
func (h *Hook) AnyDue() bool {
	p, err := h.lock()
	if err != nil {
		return false
	}
	defer h.mu.RUnlock()
	return bool(C.smd_hook_any_due(p))
}

// MaySave tells whether a tensor of this name can be saved at all under the collections as they
// are (it can belong to an included collection), whatever the step. With numbered, whether any
// name made of name and a decimal index ("relu_output_" for "relu_output_0", ...) can. False
// means offering it is useless until CollectionsVersion changes.
func (h *Hook) MaySave(name string, numbered bool) bool {
	p, err := h.lock()
	if err != nil {
		return false
	}
	defer h.mu.RUnlock()
	cs, err := cstr("name", name)
	if err != nil {
		return false
	}
	return bool(C.smd_hook_may_save(p, cs, C.bool(numbered)))
}

// CollectionsVersion is a number that changes whenever the collections change (the answers of
// MaySave hold while it stays the same); 0 when closed.
func (h *Hook) CollectionsVersion() uint64 {
	p, err := h.lock()
	if err != nil {
		return 0
	}
	defer h.mu.RUnlock()
	return uint64(C.smd_hook_collections_version(p))
}

// StopRequested tells whether a rule asked this training job to stop.
func (h *Hook) StopRequested() (bool, error) {
	var out C.bool
	err := h.call(func(p *C.smd_hook) *C.smd_error { return C.smd_hook_stop_requested(p, &out) })
	return bool(out), err
}

// Elem is the Go element types that map to one smd data type.
type Elem interface {
	~float32 | ~float64 | ~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 |
		~bool | ~complex64 | ~complex128
}

// DTypeOf is the data type of T.
func DTypeOf[T Elem]() DType {
	var z T
	switch any(z).(type) {
	case float32:
		return DTypeFloat32
	case float64:
		return DTypeFloat64
	case int8:
		return DTypeInt8
	case int16:
		return DTypeInt16
	case int32:
		return DTypeInt32
	case int64:
		return DTypeInt64
	case uint8:
		return DTypeUint8
	case uint16:
		return DTypeUint16
	case uint32:
		return DTypeUint32
	case uint64:
		return DTypeUint64
	case bool:
		return DTypeBool
	case complex64:
		return DTypeComplex64
	case complex128:
		return DTypeComplex128
	}
	// Named types (~T): fall back on the size and kind through a conversion table.
	return dtypeOfNamed(z)
}

func elemCount(shape []int64) (int64, error) {
	n := int64(1)
	for i, d := range shape {
		if d < 0 {
			return 0, argErr("shape %v: dimension %d is negative", shape, i)
		}
		n *= d
	}
	return n, nil
}

// SaveTensor offers a tensor of data type dtype for the current step; data holds its elements
// as raw little-endian bytes (for float16, bfloat16 and other types without a Go type). The
// bytes are copied by smd before the call returns if anything is due, and not at all otherwise.
func (h *Hook) SaveTensor(name string, dtype DType, shape []int64, data []byte, collections ...string) error {
	var dp unsafe.Pointer
	if len(data) > 0 {
		dp = unsafe.Pointer(&data[0])
	}
	return h.save(name, dtype, shape, dp, len(data), collections)
}

// Save offers a tensor whose element type is T (Hook.SaveTensor for typed slices): data must
// hold exactly the product of shape elements. No copy is made unless something is due.
func Save[T Elem](h *Hook, name string, shape []int64, data []T, collections ...string) error {
	n, err := elemCount(shape)
	if err != nil {
		return err
	}
	if n != int64(len(data)) {
		return argErr("tensor %q: shape %v holds %d elements but data has %d", name, shape, n, len(data))
	}
	var dp unsafe.Pointer
	if len(data) > 0 {
		dp = unsafe.Pointer(&data[0])
	}
	var z T
	return h.save(name, DTypeOf[T](), shape, dp, len(data)*int(unsafe.Sizeof(z)), collections)
}

func (h *Hook) save(name string, dtype DType, shape []int64, data unsafe.Pointer, nbytes int, collections []string) error {
	// Short names go through a buffer on the stack (smd_hook_save_tensor is declared noescape:
	// it keeps no pointer after the call), so that a save that is not due allocates nothing.
	var buf [256]byte
	var cs *C.char
	if len(name) < len(buf) && strings.IndexByte(name, 0) < 0 {
		copy(buf[:], name)
		cs = (*C.char)(unsafe.Pointer(&buf[0]))
	} else {
		var err error
		if cs, err = cstr("tensor name", name); err != nil {
			return err
		}
	}
	var err error
	var colls **C.char
	if len(collections) > 0 {
		var free func()
		colls, free, err = cstrArray("collection", collections)
		if err != nil {
			return err
		}
		defer free()
	}
	p, err := h.lock()
	if err != nil {
		return err
	}
	defer h.mu.RUnlock()
	return takeErr(C.smd_hook_save_tensor(p, cs, C.smd_dtype(dtype), int64Ptr(shape), C.size_t(len(shape)),
		data, C.size_t(nbytes), colls, C.size_t(len(collections))))
}

// SaveStrings saves a 1-D tensor of strings (smdebug reads it as a numpy str array).
func (h *Hook) SaveStrings(name string, values []string, collections ...string) error {
	cs, err := cstr("tensor name", name)
	if err != nil {
		return err
	}
	// Strings may hold NUL bytes here: they are passed with their lengths.
	n := len(values)
	var strs **C.char
	var lens *C.size_t
	if n > 0 {
		ptrs := (*[1 << 28]*C.char)(C.malloc(C.size_t(n) * C.size_t(unsafe.Sizeof((*C.char)(nil)))))[:n:n]
		ls := (*[1 << 28]C.size_t)(C.malloc(C.size_t(n) * C.size_t(unsafe.Sizeof(C.size_t(0)))))[:n:n]
		for i, s := range values {
			ptrs[i] = (*C.char)(C.CBytes(append([]byte(s), 0)))
			ls[i] = C.size_t(len(s))
		}
		defer func() {
			for _, q := range ptrs {
				C.free(unsafe.Pointer(q))
			}
			C.free(unsafe.Pointer(&ptrs[0]))
			C.free(unsafe.Pointer(&ls[0]))
		}()
		strs, lens = &ptrs[0], &ls[0]
	}
	colls, free, err := cstrArray("collection", collections)
	if err != nil {
		return err
	}
	defer free()
	p, err := h.lock()
	if err != nil {
		return err
	}
	defer h.mu.RUnlock()
	return takeErr(C.smd_hook_save_strings(p, cs, strs, lens, C.size_t(n), colls, C.size_t(len(collections))))
}

// SaveScalar saves a scalar as "scalar/<name>" (float64) in the current step, whatever the save
// configuration says.
func (h *Hook) SaveScalar(name string, value float64) error {
	cs, err := cstr("scalar name", name)
	if err != nil {
		return err
	}
	return h.call(func(p *C.smd_hook) *C.smd_error { return C.smd_hook_save_scalar(p, cs, C.double(value)) })
}

// SaveScalarOf saves a scalar keeping its type (int64, bool, float32, ...), as smdebug does for
// numpy scalars.
func SaveScalarOf[T Elem](h *Hook, name string, value T) error {
	cs, err := cstr("scalar name", name)
	if err != nil {
		return err
	}
	v := [1]T{value}
	return h.call(func(p *C.smd_hook) *C.smd_error {
		return C.smd_hook_save_scalar_typed(p, cs, C.smd_dtype(DTypeOf[T]()), unsafe.Pointer(&v[0]), C.size_t(unsafe.Sizeof(value)))
	})
}

// SaveScalarAt is SaveScalarOf with the record's wall time: timestamp in seconds since the Unix
// epoch (smdebug's save_scalar(..., timestamp=)); 0 means the time of the call.
func SaveScalarAt[T Elem](h *Hook, name string, value T, timestamp float64) error {
	cs, err := cstr("scalar name", name)
	if err != nil {
		return err
	}
	v := [1]T{value}
	return h.call(func(p *C.smd_hook) *C.smd_error {
		return C.smd_hook_save_scalar_timestamped(p, cs, C.smd_dtype(DTypeOf[T]()), unsafe.Pointer(&v[0]),
			C.size_t(unsafe.Sizeof(value)), C.double(timestamp))
	})
}

// HookStats is what the hook's writer has done so far.
type HookStats struct {
	Records, Bytes, Steps, BudgetWaits, PeakPendingBytes uint64
	EncoderCPUSeconds, CommitterCPUSeconds               float64
}

// Stats reports what the writer has done so far.
func (h *Hook) Stats() (HookStats, error) {
	var s C.smd_hook_stats
	s.struct_size = C.size_t(unsafe.Sizeof(s))
	err := h.call(func(p *C.smd_hook) *C.smd_error { return C.smd_hook_writer_stats(p, &s) })
	if err != nil {
		return HookStats{}, err
	}
	return HookStats{uint64(s.records), uint64(s.bytes), uint64(s.steps), uint64(s.budget_waits),
		uint64(s.peak_pending_bytes), float64(s.encoder_cpu_seconds), float64(s.committer_cpu_seconds)}, nil
}

// Collection gets (creating if needed) the hook's collection of that name.
func (h *Hook) Collection(name string) (*Collection, error) {
	cs, err := cstr("collection name", name)
	if err != nil {
		return nil, err
	}
	var c *C.smd_collection
	if err := h.call(func(p *C.smd_hook) *C.smd_error { return C.smd_hook_get_collection(p, cs, &c) }); err != nil {
		return nil, err
	}
	col := &Collection{p: c}
	runtime.SetFinalizer(col, (*Collection).Close)
	return col, nil
}

// CollectionNames lists the hook's collections in creation order.
func (h *Hook) CollectionNames() ([]string, error) {
	var a C.smd_strarray
	if err := h.call(func(p *C.smd_hook) *C.smd_error { return C.smd_hook_collection_names(p, &a) }); err != nil {
		return nil, err
	}
	return takeStrArray(&a), nil
}

// IncludeCollection adds a collection to the saved ones.
func (h *Hook) IncludeCollection(name string) error {
	cs, err := cstr("collection name", name)
	if err != nil {
		return err
	}
	return h.call(func(p *C.smd_hook) *C.smd_error { return C.smd_hook_include_collection(p, cs) })
}

// MakeDue saves an included collection for the rest of the current step whatever its save
// configuration says (the tensors saved into it until the step ends are written); the next
// BeginStep or EndStep ends it. Errors: ErrNotFound (no such collection), ErrInvalidState
// (closed, or no step open).
func (h *Hook) MakeDue(collection string) error {
	cs, err := cstr("collection name", collection)
	if err != nil {
		return err
	}
	return h.call(func(p *C.smd_hook) *C.smd_error { return C.smd_hook_make_due(p, cs) })
}

// Collection is a named group of tensors with its own configuration. Safe for concurrent use;
// once the hook is closed, changes fail with ErrInvalidState.
type Collection struct {
	mu sync.RWMutex
	p  *C.smd_collection
}

// Close releases the handle (the collection stays in the hook). It may be called more than once.
func (c *Collection) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.p != nil {
		C.smd_collection_free(c.p)
		c.p = nil
		runtime.SetFinalizer(c, nil)
	}
}

func (c *Collection) call(f func(*C.smd_collection) *C.smd_error) error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.p == nil {
		return closedErr("Collection")
	}
	return takeErr(f(c.p))
}

// Name is the collection's name ("" when closed).
func (c *Collection) Name() string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.p == nil {
		return ""
	}
	return C.GoString(C.smd_collection_name(c.p))
}

// AddIncludeRegex adds a regex (Python re syntax, search semantics).
func (c *Collection) AddIncludeRegex(regex string) error {
	cs, err := cstr("regex", regex)
	if err != nil {
		return err
	}
	return c.call(func(p *C.smd_collection) *C.smd_error { return C.smd_collection_add_include_regex(p, cs) })
}

// ClearIncludeRegex takes every include regex out of the collection, its built-in one too; the
// tensor names added to it, and those it already holds, stay.
func (c *Collection) ClearIncludeRegex() error {
	return c.call(func(p *C.smd_collection) *C.smd_error { return C.smd_collection_clear_include_regex(p) })
}

// AddTensorName adds an exact tensor name.
func (c *Collection) AddTensorName(name string) error {
	cs, err := cstr("tensor name", name)
	if err != nil {
		return err
	}
	return c.call(func(p *C.smd_collection) *C.smd_error { return C.smd_collection_add_tensor_name(p, cs) })
}

// SetSaveConfig sets the collection's own save configuration (copied); nil removes it.
func (c *Collection) SetSaveConfig(sc *SaveConfig) error {
	defer runtime.KeepAlive(sc)
	var sp *C.smd_save_config
	if sc != nil {
		var err error
		if sp, err = sc.ptr(); err != nil {
			return err
		}
	}
	return c.call(func(p *C.smd_collection) *C.smd_error { return C.smd_collection_set_save_config(p, sp) })
}

// SetReductionConfig sets the collection's own reduction configuration (copied); nil removes it.
func (c *Collection) SetReductionConfig(rc *ReductionConfig) error {
	defer runtime.KeepAlive(rc)
	var rp *C.smd_reduction_config
	if rc != nil {
		var err error
		if rp, err = rc.ptr(); err != nil {
			return err
		}
	}
	return c.call(func(p *C.smd_collection) *C.smd_error { return C.smd_collection_set_reduction_config(p, rp) })
}

// SetSaveHistogram sets whether TensorBoard histograms are exported for the collection.
func (c *Collection) SetSaveHistogram(save bool) error {
	return c.call(func(p *C.smd_collection) *C.smd_error { return C.smd_collection_set_save_histogram(p, C.bool(save)) })
}

// TensorNames lists the tensor names the collection holds so far, sorted.
func (c *Collection) TensorNames() ([]string, error) {
	var a C.smd_strarray
	if err := c.call(func(p *C.smd_collection) *C.smd_error { return C.smd_collection_tensor_names(p, &a) }); err != nil {
		return nil, err
	}
	return takeStrArray(&a), nil
}

// ReductionValue is one reduction of a tensor that the caller computed (on a GPU, say):
// Reduction is a name as ReductionConfig takes it without the abs_ prefix ("min", "mean", "l2",
// ...), Abs says it is over absolute values.
type ReductionValue struct {
	Reduction string
	Abs       bool
	Value     float64
}

// DueReductions is what SaveTensor would write for a tensor now (Hook.DueReductions).
type DueReductions struct {
	// Reductions are the due reductions in write order, each as "[abs_]<name>" ("min",
	// "abs_l2", ...).
	Reductions []string
	// Value says the tensor's elements themselves are needed (a due collection saves raw
	// tensors, or a TensorBoard scalar summary may be exported): save it with SaveTensor.
	Value bool
	// Histogram says a TensorBoard histogram of the tensor may be exported: give one to
	// SaveReductions (see Histogram), or save the tensor itself.
	Histogram bool
}

// DueReductions says what SaveTensor would write for a tensor of this name now (with no extra
// collections). Nothing due: no reductions and both flags false. Errors: ErrInvalidArgument (an
// empty name), ErrInvalidState (closed, or no step open).
func (h *Hook) DueReductions(name string) (DueReductions, error) {
	cs, err := cstr("tensor name", name)
	if err != nil {
		return DueReductions{}, err
	}
	var a C.smd_strarray
	var value, hist C.bool
	if err := h.call(func(p *C.smd_hook) *C.smd_error { return C.smd_hook_due_reductions(p, cs, &a, &value, &hist) }); err != nil {
		return DueReductions{}, err
	}
	return DueReductions{Reductions: takeStrArray(&a), Value: bool(value), Histogram: bool(hist)}, nil
}

// Histogram is a tensor's TensorBoard histogram computed by the caller (on a GPU, say), for
// SaveReductions. Counts[i] is the number of elements x (as float64; complex: the real part) with
// edges[i] <= x < edges[i+1] over the edges of HistogramBucketEdges (the last bucket also holds x
// equal to its right edge), so there is one count fewer than edges; NaN, infinities and values
// outside the edges are in no bucket. Min, Max, Sum and SumSquares are over all elements as
// float64 (NaN in any of them when an element is NaN: Min and Max are then both NaN). smd trims
// the buckets as it does for the histograms it computes; one with every count 0 is not written.
type Histogram struct {
	Min, Max, Sum, SumSquares float64
	Counts                    []uint64
}

var bucketEdges = sync.OnceValue(func() []float64 {
	var n C.size_t
	p := C.smd_histogram_bucket_edges(&n)
	if p == nil {
		return nil
	}
	return append([]float64(nil), unsafe.Slice((*float64)(unsafe.Pointer(p)), int(n))...)
})

// HistogramBucketEdges returns the bucket edges of smd's (and smdebug's) TensorBoard
// histograms, ascending: 0, then +-1e-12 times powers of 1.1 below 1e20 (1,549 edges, 1,548
// buckets). A Histogram's Counts are over these. The slice is a copy of smd's edges made on the
// first call and shared by every call: read it, do not modify it.
func HistogramBucketEdges() []float64 {
	return bucketEdges()
}

// SaveReductions saves reductions the caller computed for a tensor of dtype and shape whose
// elements smd never sees, exactly as SaveTensor writes the reductions it computes itself.
// Every due reduction must be among values (others are ignored). hist is the tensor's TensorBoard
// histogram: required when DueReductions says one is due, ignored otherwise (nil: none).
// Errors: ErrInvalidArgument (an unknown reduction, a due one missing, a value the result dtype
// cannot hold, a due histogram not given or with the wrong number of buckets or more elements in
// them than the tensor has, DTypeString, shape and name errors), ErrUnsupported (a complex
// tensor's non-abs reduction), ErrInvalidState (the tensor's value is due at this step: save it
// with SaveTensor; closed; no step open).
func (h *Hook) SaveReductions(name string, dtype DType, shape []int64, values []ReductionValue, hist *Histogram, collections ...string) error {
	cs, err := cstr("tensor name", name)
	if err != nil {
		return err
	}
	if _, err := elemCount(shape); err != nil {
		return err
	}
	n := len(values)
	var vals *C.smd_reduction_value
	if n > 0 {
		// C memory: the structs hold C string pointers.
		vs := unsafe.Slice((*C.smd_reduction_value)(C.malloc(C.size_t(n)*C.size_t(unsafe.Sizeof(C.smd_reduction_value{})))), n)
		for i, v := range values {
			if strings.IndexByte(v.Reduction, 0) >= 0 {
				for _, w := range vs[:i] {
					C.free(unsafe.Pointer(w.reduction))
				}
				C.free(unsafe.Pointer(&vs[0]))
				return argErr("reduction %q contains a NUL byte", v.Reduction)
			}
			vs[i].reduction = C.CString(v.Reduction)
			vs[i].abs = C.bool(v.Abs)
			vs[i].value = C.double(v.Value)
		}
		defer func() {
			for _, w := range vs {
				C.free(unsafe.Pointer(w.reduction))
			}
			C.free(unsafe.Pointer(&vs[0]))
		}()
		vals = &vs[0]
	}
	var hp *C.smd_histogram
	if hist != nil {
		hp = &C.smd_histogram{min: C.double(hist.Min), max: C.double(hist.Max), sum: C.double(hist.Sum),
			sum_squares: C.double(hist.SumSquares), n_counts: C.size_t(len(hist.Counts))}
		if len(hist.Counts) > 0 {
			// The struct (Go memory) points at the caller's counts: pinned for the call, no copy.
			var pin runtime.Pinner
			pin.Pin(&hist.Counts[0])
			defer pin.Unpin()
			hp.counts = (*C.uint64_t)(unsafe.Pointer(&hist.Counts[0]))
		}
	}
	colls, free, err := cstrArray("collection", collections)
	if err != nil {
		return err
	}
	defer free()
	return h.call(func(p *C.smd_hook) *C.smd_error {
		return C.smd_hook_save_reductions(p, cs, C.smd_dtype(dtype), int64Ptr(shape), C.size_t(len(shape)),
			vals, C.size_t(n), hp, colls, C.size_t(len(collections)))
	})
}
