package smd

/*
#include <stdlib.h>
#include "smd/smd.h"
*/
import "C"

import (
	"runtime"
	"sync"
	"unsafe"
)

// Tensor is one named tensor of a trial. Safe for concurrent use. It stays valid after its trial
// is closed. Per-step methods take a step, the mode it is counted in (ModeGlobal: a global step)
// and a worker ("" for the first worker that saved the tensor at that step).
type Tensor struct {
	mu sync.RWMutex
	p  *C.smd_tensor
}

func wrapTensor(p *C.smd_tensor) *Tensor {
	t := &Tensor{p: p}
	runtime.SetFinalizer(t, func(t *Tensor) {
		if t.p != nil {
			C.smd_tensor_free(t.p)
		}
	})
	return t
}

// Close releases the tensor handle; values obtained from it stay valid. It may be called more
// than once.
func (t *Tensor) Close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.p != nil {
		C.smd_tensor_free(t.p)
		t.p = nil
		runtime.SetFinalizer(t, nil)
	}
}

func (t *Tensor) call(f func(*C.smd_tensor) *C.smd_error) error {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.p == nil {
		return closedErr("Tensor")
	}
	return takeErr(f(t.p))
}

func workerPtr(worker string) (*C.char, error) {
	if worker == "" {
		return nil, nil
	}
	return cstr("worker", worker)
}

// Name is the tensor's name ("" when closed).
func (t *Tensor) Name() string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.p == nil {
		return ""
	}
	return C.GoString(C.smd_tensor_name(t.p))
}

// OriginalName is smdebug's Tensor.original_name: the "originalname" of the last shape entry
// loaded for the tensor (smdebug's TensorFlow hooks write the variable's own name there, such as
// "dense/kernel:0"; the name itself when the entry has none). ok is false when its shape was not
// saved (save_shape).
func (t *Tensor) OriginalName() (name string, ok bool, err error) {
	var out *C.char
	if err := t.call(func(p *C.smd_tensor) *C.smd_error { return C.smd_tensor_original_name(p, &out) }); err != nil {
		return "", false, err
	}
	if out == nil {
		return "", false, nil
	}
	name = C.GoString(out)
	C.smd_free(unsafe.Pointer(out))
	return name, true, nil
}

// Steps lists the steps of mode at which anything of this tensor was saved.
func (t *Tensor) Steps(mode Mode, showIncomplete bool) ([]int64, error) {
	var s *C.int64_t
	var n C.size_t
	if err := t.call(func(p *C.smd_tensor) *C.smd_error {
		return C.smd_tensor_steps(p, C.smd_mode(mode), C.bool(showIncomplete), &s, &n)
	}); err != nil {
		return nil, err
	}
	return takeInt64s(s, n), nil
}

// Value reads the value saved at a step. Close it when done (or let the runtime do it).
func (t *Tensor) Value(step int64, mode Mode, worker string) (*Value, error) {
	w, err := workerPtr(worker)
	if err != nil {
		return nil, err
	}
	var v *C.smd_value
	if err := t.call(func(p *C.smd_tensor) *C.smd_error {
		return C.smd_tensor_value(p, C.int64_t(step), C.smd_mode(mode), w, &v)
	}); err != nil {
		return nil, err
	}
	return wrapValue(v), nil
}

func takeValues(vs **C.smd_value, n C.size_t) []*Value {
	out := make([]*Value, int(n))
	if n > 0 {
		for i, v := range unsafe.Slice(vs, int(n)) {
			out[i] = wrapValue(C.smd_value_ref(v))
		}
	}
	C.smd_value_array_free(vs, n)
	return out
}

// Values reads every value of the complete steps of mode (smdebug's values()): steps and values
// in parallel slices.
func (t *Tensor) Values(mode Mode, worker string) ([]int64, []*Value, error) {
	w, err := workerPtr(worker)
	if err != nil {
		return nil, nil, err
	}
	var s *C.int64_t
	var vs **C.smd_value
	var n C.size_t
	if err := t.call(func(p *C.smd_tensor) *C.smd_error {
		return C.smd_tensor_values(p, C.smd_mode(mode), w, &s, &vs, &n)
	}); err != nil {
		return nil, nil, err
	}
	return takeInt64s(s, n), takeValues(vs, n), nil
}

// Shape is the shape at a step (the saved shape, else the value's). Errors:
// ErrShapeUnavailableForStep.
func (t *Tensor) Shape(step int64, mode Mode, worker string) ([]int64, error) {
	w, err := workerPtr(worker)
	if err != nil {
		return nil, err
	}
	var d *C.int64_t
	var n C.size_t
	if err := t.call(func(p *C.smd_tensor) *C.smd_error {
		return C.smd_tensor_shape(p, C.int64_t(step), C.smd_mode(mode), w, &d, &n)
	}); err != nil {
		return nil, err
	}
	return takeInt64s(d, n), nil
}

// ValueInfo is the dtype and shape of the value saved at a step, without reading the value.
func (t *Tensor) ValueInfo(step int64, mode Mode, worker string) (DType, []int64, error) {
	w, err := workerPtr(worker)
	if err != nil {
		return DTypeInvalid, nil, err
	}
	var dt C.smd_dtype
	var d *C.int64_t
	var n C.size_t
	if err := t.call(func(p *C.smd_tensor) *C.smd_error {
		return C.smd_tensor_value_info(p, C.int64_t(step), C.smd_mode(mode), w, &dt, &d, &n)
	}); err != nil {
		return DTypeInvalid, nil, err
	}
	return DType(dt), takeInt64s(d, n), nil
}

// Shapes is the shape of every complete step of mode: steps and shapes in parallel slices.
func (t *Tensor) Shapes(mode Mode, worker string) ([]int64, [][]int64, error) {
	w, err := workerPtr(worker)
	if err != nil {
		return nil, nil, err
	}
	var s, d *C.int64_t
	var off *C.size_t
	var n C.size_t
	if err := t.call(func(p *C.smd_tensor) *C.smd_error {
		return C.smd_tensor_shapes(p, C.smd_mode(mode), w, &s, &off, &d, &n)
	}); err != nil {
		return nil, nil, err
	}
	offs := unsafe.Slice(off, int(n)+1)
	total := int(offs[n])
	var dims []int64
	if total > 0 {
		dims = unsafe.Slice((*int64)(unsafe.Pointer(d)), total)
	}
	shapes := make([][]int64, int(n))
	for i := range shapes {
		shapes[i] = append([]int64{}, dims[offs[i]:offs[i+1]]...)
	}
	C.smd_free(unsafe.Pointer(off))
	C.smd_free(unsafe.Pointer(d))
	return takeInt64s(s, n), shapes, nil
}

// ReductionValue is a reduction ("mean", "abs_l2_norm", ...) at a step, saved or computed from
// the raw value, as a 1-element value.
func (t *Tensor) ReductionValue(step int64, mode Mode, worker, reduction string) (*Value, error) {
	w, err := workerPtr(worker)
	if err != nil {
		return nil, err
	}
	r, err := cstr("reduction", reduction)
	if err != nil {
		return nil, err
	}
	var v *C.smd_value
	if err := t.call(func(p *C.smd_tensor) *C.smd_error {
		return C.smd_tensor_reduction_value(p, C.int64_t(step), C.smd_mode(mode), w, r, &v)
	}); err != nil {
		return nil, err
	}
	return wrapValue(v), nil
}

// ReductionNames lists the reductions saved at a step, sorted.
func (t *Tensor) ReductionNames(step int64, mode Mode, worker string) ([]string, error) {
	w, err := workerPtr(worker)
	if err != nil {
		return nil, err
	}
	var a C.smd_strarray
	if err := t.call(func(p *C.smd_tensor) *C.smd_error {
		return C.smd_tensor_reduction_names(p, C.int64_t(step), C.smd_mode(mode), w, &a)
	}); err != nil {
		return nil, err
	}
	return takeStrArray(&a), nil
}

// ReductionValues returns the reductions saved at a step by name (smdebug's reduction_values()).
func (t *Tensor) ReductionValues(step int64, mode Mode, worker string) (map[string]*Value, error) {
	w, err := workerPtr(worker)
	if err != nil {
		return nil, err
	}
	var a C.smd_strarray
	var vs **C.smd_value
	var n C.size_t
	if err := t.call(func(p *C.smd_tensor) *C.smd_error {
		return C.smd_tensor_reduction_values(p, C.int64_t(step), C.smd_mode(mode), w, &a, &vs, &n)
	}); err != nil {
		return nil, err
	}
	names := takeStrArray(&a)
	vals := takeValues(vs, n)
	out := make(map[string]*Value, len(names))
	for i, name := range names {
		out[name] = vals[i]
	}
	return out, nil
}

// Workers lists the workers that saved anything of this tensor at a step.
func (t *Tensor) Workers(step int64, mode Mode) ([]string, error) {
	var a C.smd_strarray
	if err := t.call(func(p *C.smd_tensor) *C.smd_error {
		return C.smd_tensor_workers(p, C.int64_t(step), C.smd_mode(mode), &a)
	}); err != nil {
		return nil, err
	}
	return takeStrArray(&a), nil
}

// PrevSteps lists the last n complete steps of mode up to and including step (n = 0: all).
func (t *Tensor) PrevSteps(step int64, mode Mode, n int) ([]int64, error) {
	if n < 0 {
		return nil, argErr("PrevSteps: n = %d is negative", n)
	}
	var s *C.int64_t
	var cnt C.size_t
	if err := t.call(func(p *C.smd_tensor) *C.smd_error {
		return C.smd_tensor_prev_steps(p, C.int64_t(step), C.smd_mode(mode), C.size_t(n), &s, &cnt)
	}); err != nil {
		return nil, err
	}
	return takeInt64s(s, cnt), nil
}

// Value is an immutable array read from a trial: dtype, shape and data. Safe for concurrent
// use. It outlives the tensor and trial it came from.
//
// Lifetime of views: Bytes and View return slices that point into smd's own buffer, without a
// copy. They are valid until the Value is closed: do not Close the Value (and keep it reachable,
// e.g. with runtime.KeepAlive(v) after the last use of the view, since a forgotten Value is freed
// by the garbage collector) while a view is in use. Copy and the typed getters (Float32s, ...)
// return Go-owned copies with no such constraint.
type Value struct {
	mu sync.RWMutex
	p  *C.smd_value
}

func wrapValue(p *C.smd_value) *Value {
	v := &Value{p: p}
	runtime.SetFinalizer(v, func(v *Value) {
		if v.p != nil {
			C.smd_value_free(v.p)
		}
	})
	return v
}

// Close drops this reference to the value; views obtained from it become invalid. It may be
// called more than once.
func (v *Value) Close() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.p != nil {
		C.smd_value_free(v.p)
		v.p = nil
		runtime.SetFinalizer(v, nil)
	}
}

// Ref returns another, independent reference to the same value.
func (v *Value) Ref() (*Value, error) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	if v.p == nil {
		return nil, closedErr("Value")
	}
	return wrapValue(C.smd_value_ref(v.p)), nil
}

// DType is the element type (DTypeInvalid when closed).
func (v *Value) DType() DType {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return DType(C.smd_value_dtype(v.p))
}

// Shape is the dimensions (a copy; nil when closed or 0-d).
func (v *Value) Shape() []int64 {
	v.mu.RLock()
	defer v.mu.RUnlock()
	n := int(C.smd_value_ndim(v.p))
	if n == 0 {
		return []int64{}
	}
	return append([]int64{}, unsafe.Slice((*int64)(unsafe.Pointer(C.smd_value_shape(v.p))), n)...)
}

// Len is the number of elements.
func (v *Value) Len() int {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return int(C.smd_value_count(v.p))
}

// Bytes is a view of the raw little-endian data (see the lifetime of views above); nil for
// strings. Errors: ErrClosed.
func (v *Value) Bytes() ([]byte, error) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	if v.p == nil {
		return nil, closedErr("Value")
	}
	n := int(C.smd_value_nbytes(v.p))
	d := C.smd_value_data(v.p)
	if d == nil || n == 0 {
		return []byte{}, nil
	}
	return unsafe.Slice((*byte)(d), n), nil
}

// View returns the elements as a []T pointing into smd's buffer, without a copy (see the
// lifetime of views above). Errors: ErrInvalidArgument if T is not the value's dtype, ErrClosed.
func View[T Elem](v *Value) ([]T, error) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	if v.p == nil {
		return nil, closedErr("Value")
	}
	want := DTypeOf[T]()
	have := DType(C.smd_value_dtype(v.p))
	if want != have {
		return nil, argErr("value of dtype %s read as %s", have, want)
	}
	n := int(C.smd_value_count(v.p))
	d := C.smd_value_data(v.p)
	if d == nil || n == 0 {
		return []T{}, nil
	}
	return unsafe.Slice((*T)(d), n), nil
}

// Copy returns the elements as a Go-owned []T. Errors as View.
func Copy[T Elem](v *Value) ([]T, error) {
	s, err := View[T](v)
	if err != nil {
		return nil, err
	}
	out := append(make([]T, 0, len(s)), s...)
	runtime.KeepAlive(v)
	return out, nil
}

// Float32s returns a copy of a float32 value's elements.
func (v *Value) Float32s() ([]float32, error) { return Copy[float32](v) }

// Float64s returns a copy of a float64 value's elements.
func (v *Value) Float64s() ([]float64, error) { return Copy[float64](v) }

// Int64s returns a copy of an int64 value's elements.
func (v *Value) Int64s() ([]int64, error) { return Copy[int64](v) }

// Int32s returns a copy of an int32 value's elements.
func (v *Value) Int32s() ([]int32, error) { return Copy[int32](v) }

// Bools returns a copy of a bool value's elements.
func (v *Value) Bools() ([]bool, error) { return Copy[bool](v) }

// At returns element i converted to float64 (bool 0/1; float16 and bfloat16 widened).
// Errors: ErrInvalidArgument (out of range), ErrUnsupported (strings, complex).
func (v *Value) At(i int) (float64, error) {
	if i < 0 {
		return 0, argErr("element index %d is negative", i)
	}
	v.mu.RLock()
	defer v.mu.RUnlock()
	if v.p == nil {
		return 0, closedErr("Value")
	}
	var out C.double
	if err := takeErr(C.smd_value_double_at(v.p, C.size_t(i), &out)); err != nil {
		return 0, err
	}
	return float64(out), nil
}

// Strings returns a copy of a string value's elements. Errors: ErrInvalidArgument (not a
// string value).
func (v *Value) Strings() ([]string, error) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	if v.p == nil {
		return nil, closedErr("Value")
	}
	if d := DType(C.smd_value_dtype(v.p)); d != DTypeString {
		return nil, argErr("value of dtype %s read as strings", d)
	}
	n := int(C.smd_value_count(v.p))
	out := make([]string, n)
	for i := range out {
		var s *C.char
		var l C.size_t
		if err := takeErr(C.smd_value_string(v.p, C.size_t(i), &s, &l)); err != nil {
			return nil, err
		}
		out[i] = C.GoStringN(s, C.int(l))
	}
	return out, nil
}
