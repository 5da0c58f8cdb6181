// Package smd is the Go binding of smd, a C++ library that reads and writes SageMaker Debugger
// (smdebug) trials. It calls the public C API (smd/smd.h) through cgo; the C library is found
// with pkg-config (package "smd").
//
// Handles (Hook, Trial, Tensor, Value, Rule, ...) own a C object. Close releases it at once;
// a handle that is dropped without Close is released by a runtime cleanup when the garbage
// collector finds it, but calling Close (or defer x.Close()) is the normal way. Using a handle
// after Close returns an error that matches ErrClosed (and ErrInvalidState); it never crashes.
//
// Errors are values of type *Error carrying the C library's code and message; errors.Is
// matches them against the sentinel errors ErrNotFound, ErrTensorUnavailableForStep, ... (one
// per code).
package smd

/*
#cgo pkg-config: smd
#include <stdlib.h>
#include "smd/smd.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"strings"
	"unsafe"
)

// Code is the stable error code of the C library (smd_code).
type Code int

// The codes, with the C library's values.
const (
	CodeOK                         Code = C.SMD_OK
	CodeInternal                   Code = C.SMD_E_INTERNAL
	CodeInvalidArgument            Code = C.SMD_E_INVALID_ARGUMENT
	CodeNotFound                   Code = C.SMD_E_NOT_FOUND
	CodeIO                         Code = C.SMD_E_IO
	CodeCorrupt                    Code = C.SMD_E_CORRUPT
	CodeOutOfMemory                Code = C.SMD_E_OUT_OF_MEMORY
	CodeUnsupported                Code = C.SMD_E_UNSUPPORTED
	CodeInvalidState               Code = C.SMD_E_INVALID_STATE
	CodeAlreadyExists              Code = C.SMD_E_ALREADY_EXISTS
	CodeCancelled                  Code = C.SMD_E_CANCELLED
	CodeTensorUnavailableForStep   Code = C.SMD_E_TENSOR_UNAVAILABLE_FOR_STEP
	CodeTensorUnavailable          Code = C.SMD_E_TENSOR_UNAVAILABLE
	CodeStepUnavailable            Code = C.SMD_E_STEP_UNAVAILABLE
	CodeStepNotYetAvailable        Code = C.SMD_E_STEP_NOT_YET_AVAILABLE
	CodeNoMoreData                 Code = C.SMD_E_NO_MORE_DATA
	CodeMissingCollectionFiles     Code = C.SMD_E_MISSING_COLLECTION_FILES
	CodeShapeUnavailableForStep    Code = C.SMD_E_SHAPE_UNAVAILABLE_FOR_STEP
	CodeInvalidWorker              Code = C.SMD_E_INVALID_WORKER
	CodeRuleEvaluationConditionMet Code = C.SMD_E_RULE_CONDITION_MET
	CodeHTTP                       Code = C.SMD_E_HTTP
	CodeAuth                       Code = C.SMD_E_AUTH
)

// String is the code's stable name, e.g. "SMD_E_NOT_FOUND", or "Code(n)" for a code the library
// does not know.
func (c Code) String() string {
	p := C.smd_code_name(C.smd_code(c))
	if p == nil {
		return fmt.Sprintf("Code(%d)", int(c))
	}
	return C.GoString(p)
}

// SkipsRuleStep reports whether a custom rule failing with this code skips the step (the data is
// absent: CodeTensorUnavailableForStep, CodeTensorUnavailable, CodeStepUnavailable) instead of
// ending the invocation; the C library's policy.
func (c Code) SkipsRuleStep() bool { return bool(C.smd_code_skips_rule_step(C.smd_code(c))) }

// Error is an error reported by smd: a code and a message naming what was wrong.
type Error struct {
	Code    Code
	Message string
	closed  bool
}

func (e *Error) Error() string { return "smd: " + e.Code.String() + ": " + e.Message }

// Is makes errors.Is(err, ErrNotFound) (and every other sentinel) true for errors of that code.
func (e *Error) Is(target error) bool {
	s, ok := target.(*sentinel)
	if !ok {
		return false
	}
	if s.closed {
		return e.closed
	}
	return s.code == e.Code
}

type sentinel struct {
	code   Code
	closed bool
	text   string
}

func (s *sentinel) Error() string { return "smd: " + s.text }

func newSentinel(c Code, text string) error { return &sentinel{code: c, text: text} }

// Sentinel errors, one per code, for errors.Is. The names of smdebug's exceptions are kept.
var (
	ErrInternal                   = newSentinel(CodeInternal, "internal error")
	ErrInvalidArgument            = newSentinel(CodeInvalidArgument, "invalid argument")
	ErrNotFound                   = newSentinel(CodeNotFound, "not found")
	ErrIO                         = newSentinel(CodeIO, "I/O error")
	ErrCorrupt                    = newSentinel(CodeCorrupt, "corrupt data")
	ErrOutOfMemory                = newSentinel(CodeOutOfMemory, "out of memory")
	ErrUnsupported                = newSentinel(CodeUnsupported, "unsupported")
	ErrInvalidState               = newSentinel(CodeInvalidState, "invalid state")
	ErrAlreadyExists              = newSentinel(CodeAlreadyExists, "already exists")
	ErrCancelled                  = newSentinel(CodeCancelled, "cancelled")
	ErrTensorUnavailableForStep   = newSentinel(CodeTensorUnavailableForStep, "tensor unavailable for step")
	ErrTensorUnavailable          = newSentinel(CodeTensorUnavailable, "tensor unavailable")
	ErrStepUnavailable            = newSentinel(CodeStepUnavailable, "step unavailable")
	ErrStepNotYetAvailable        = newSentinel(CodeStepNotYetAvailable, "step not yet available")
	ErrNoMoreData                 = newSentinel(CodeNoMoreData, "no more data")
	ErrMissingCollectionFiles     = newSentinel(CodeMissingCollectionFiles, "missing collection files")
	ErrShapeUnavailableForStep    = newSentinel(CodeShapeUnavailableForStep, "shape unavailable for step")
	ErrInvalidWorker              = newSentinel(CodeInvalidWorker, "invalid worker")
	ErrRuleEvaluationConditionMet = newSentinel(CodeRuleEvaluationConditionMet, "rule evaluation condition met")
	ErrHTTP                       = newSentinel(CodeHTTP, "HTTP error")
	ErrAuth                       = newSentinel(CodeAuth, "authentication error")
	// ErrClosed matches the error of a call on a handle that was closed (its code is
	// CodeInvalidState, so ErrInvalidState matches it too).
	ErrClosed error = &sentinel{code: CodeInvalidState, closed: true, text: "handle is closed"}
)

// takeErr converts and frees a C error; nil for success.
func takeErr(e *C.smd_error) error {
	if e == nil {
		return nil
	}
	err := &Error{Code: Code(C.smd_error_code(e)), Message: C.GoString(C.smd_error_message(e))}
	C.smd_error_free(e)
	return err
}

func argErr(format string, args ...any) error {
	return &Error{Code: CodeInvalidArgument, Message: fmt.Sprintf(format, args...)}
}

func closedErr(what string) error {
	return &Error{Code: CodeInvalidState, Message: what + " is closed", closed: true}
}

// cstr returns a NUL-terminated copy of s in Go memory, valid while the caller uses it in a C
// call (cgo keeps call arguments alive). Strings with NUL bytes are refused.
func cstr(what, s string) (*C.char, error) {
	if strings.IndexByte(s, 0) >= 0 {
		return nil, argErr("%s %q contains a NUL byte", what, s)
	}
	b := make([]byte, len(s)+1)
	copy(b, s)
	return (*C.char)(unsafe.Pointer(&b[0])), nil
}

// cstrArray builds a C array of C strings (C memory); free it with freeCStrArray.
func cstrArray(what string, ss []string) (**C.char, func(), error) {
	if len(ss) == 0 {
		return nil, func() {}, nil
	}
	for _, s := range ss {
		if strings.IndexByte(s, 0) >= 0 {
			return nil, nil, argErr("%s %q contains a NUL byte", what, s)
		}
	}
	arr := (*[1 << 28]*C.char)(C.malloc(C.size_t(len(ss)) * C.size_t(unsafe.Sizeof((*C.char)(nil)))))[:len(ss):len(ss)]
	for i, s := range ss {
		arr[i] = C.CString(s)
	}
	free := func() {
		for _, p := range arr {
			C.free(unsafe.Pointer(p))
		}
		C.free(unsafe.Pointer(&arr[0]))
	}
	return &arr[0], free, nil
}

// takeStrArray converts and frees an smd_strarray.
func takeStrArray(a *C.smd_strarray) []string {
	out := make([]string, 0, int(a.count))
	if a.count > 0 {
		ss := unsafe.Slice(a.strings, int(a.count))
		for _, s := range ss {
			out = append(out, C.GoString(s))
		}
	}
	C.smd_strarray_free(a)
	return out
}

func takeInt64s(p *C.int64_t, n C.size_t) []int64 {
	out := make([]int64, int(n))
	if n > 0 {
		copy(out, unsafe.Slice((*int64)(unsafe.Pointer(p)), int(n)))
	}
	C.smd_free(unsafe.Pointer(p))
	return out
}

func int64Ptr(s []int64) *C.int64_t {
	if len(s) == 0 {
		return nil
	}
	return (*C.int64_t)(unsafe.Pointer(&s[0]))
}

// DType is a tensor's element type (TensorFlow's DataType numbers, as the files store them).
type DType int

// The data types.
const (
	DTypeInvalid    DType = C.SMD_DTYPE_INVALID
	DTypeFloat32    DType = C.SMD_DTYPE_FLOAT32
	DTypeFloat64    DType = C.SMD_DTYPE_FLOAT64
	DTypeInt32      DType = C.SMD_DTYPE_INT32
	DTypeUint8      DType = C.SMD_DTYPE_UINT8
	DTypeInt16      DType = C.SMD_DTYPE_INT16
	DTypeInt8       DType = C.SMD_DTYPE_INT8
	DTypeString     DType = C.SMD_DTYPE_STRING
	DTypeComplex64  DType = C.SMD_DTYPE_COMPLEX64
	DTypeInt64      DType = C.SMD_DTYPE_INT64
	DTypeBool       DType = C.SMD_DTYPE_BOOL
	DTypeBfloat16   DType = C.SMD_DTYPE_BFLOAT16
	DTypeUint16     DType = C.SMD_DTYPE_UINT16
	DTypeComplex128 DType = C.SMD_DTYPE_COMPLEX128
	DTypeFloat16    DType = C.SMD_DTYPE_FLOAT16
	DTypeUint32     DType = C.SMD_DTYPE_UINT32
	DTypeUint64     DType = C.SMD_DTYPE_UINT64
)

// Size is the bytes per element (0 for strings and unknown types).
func (d DType) Size() int { return int(C.smd_dtype_size(C.smd_dtype(d))) }

// String is numpy's name ("float32", "bool", "str"), or "DType(n)" for unknown values.
func (d DType) String() string {
	p := C.smd_dtype_name(C.smd_dtype(d))
	if p == nil {
		return fmt.Sprintf("DType(%d)", int(d))
	}
	return C.GoString(p)
}

// ParseDType parses a numpy-style name ("float32").
func ParseDType(name string) (DType, error) {
	cs, err := cstr("dtype name", name)
	if err != nil {
		return DTypeInvalid, err
	}
	var out C.smd_dtype
	if err := takeErr(C.smd_dtype_from_name(cs, &out)); err != nil {
		return DTypeInvalid, err
	}
	return DType(out), nil
}

// Mode is smdebug's mode (ModeKeys).
type Mode int

// The modes. ModeAll is only for save-configuration setters.
const (
	ModeAll     Mode = C.SMD_MODE_ALL
	ModeTrain   Mode = C.SMD_MODE_TRAIN
	ModeEval    Mode = C.SMD_MODE_EVAL
	ModePredict Mode = C.SMD_MODE_PREDICT
	ModeGlobal  Mode = C.SMD_MODE_GLOBAL
)

// String is "TRAIN", "EVAL", "PREDICT", "GLOBAL" (or "ALL"/"Mode(n)").
func (m Mode) String() string {
	p := C.smd_mode_name(C.smd_mode(m))
	if p == nil {
		if m == ModeAll {
			return "ALL"
		}
		return fmt.Sprintf("Mode(%d)", int(m))
	}
	return C.GoString(p)
}

// ParseMode parses a mode name, case-insensitive.
func ParseMode(name string) (Mode, error) {
	cs, err := cstr("mode name", name)
	if err != nil {
		return ModeGlobal, err
	}
	var out C.smd_mode
	if err := takeErr(C.smd_mode_from_name(cs, &out)); err != nil {
		return ModeGlobal, err
	}
	return Mode(out), nil
}

// Version is the C library's version (major, minor, patch).
func Version() (major, minor, patch int) {
	var a, b, c C.int32_t
	C.smd_version(&a, &b, &c)
	return int(a), int(b), int(c)
}

// VersionString is the C library's version as text.
func VersionString() string { return C.GoString(C.smd_version_string()) }

// ReductionNames lists every reduction name the library accepts (without the "abs_" prefix).
func ReductionNames() ([]string, error) {
	var a C.smd_strarray
	if err := takeErr(C.smd_reduction_names(&a)); err != nil {
		return nil, err
	}
	return takeStrArray(&a), nil
}

// errorsIs is errors.Is, kept here so files need not import errors only for it.
var errorsIs = errors.Is
