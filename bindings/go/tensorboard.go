package smd

/*
#include "smd/smd.h"
*/
import "C"

import (
	"runtime"
	"sync"
	"time"
	"unsafe"
)

// TensorBoardWriter writes TensorBoard logs (scalars and histograms) the way smdebug exports
// them: <dir>/<MODE>/<step>_<pid>_<host>.tfevents. One goroutine at a time.
type TensorBoardWriter struct {
	mu sync.Mutex
	p  *C.smd_tensorboard_writer
}

// NewTensorBoardWriter creates a writer of the log folder dir (created with the first file), or of
// s3://bucket/prefix (each event file becomes an object when the writer is closed). s3, at most
// one, says how to reach an s3:// folder; without it everything comes from the AWS configuration
// chain. Local folders ignore it.
func NewTensorBoardWriter(dir string, s3 ...S3Settings) (*TensorBoardWriter, error) {
	cs, err := cstr("tensorboard dir", dir)
	if err != nil {
		return nil, err
	}
	var settings *S3Settings
	switch len(s3) {
	case 0:
	case 1:
		settings = &s3[0]
	default:
		return nil, argErr("NewTensorBoardWriter takes at most one S3Settings, got %d", len(s3))
	}
	w := &TensorBoardWriter{}
	if err := withStorage(settings, func(sp *C.smd_storage_options) *C.smd_error {
		return C.smd_tensorboard_writer_create(cs, sp, &w.p)
	}); err != nil {
		return nil, err
	}
	runtime.SetFinalizer(w, func(w *TensorBoardWriter) {
		if w.p != nil {
			C.smd_tensorboard_writer_free(w.p)
		}
	})
	return w, nil
}

func (w *TensorBoardWriter) call(f func(*C.smd_tensorboard_writer) *C.smd_error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.p == nil {
		return closedErr("TensorBoardWriter")
	}
	return takeErr(f(w.p))
}

func wallSeconds(t time.Time) C.double {
	if t.IsZero() {
		return 0
	}
	return C.double(float64(t.UnixNano()) / 1e9)
}

// AddScalar writes a scalar summary at (step, mode); a zero wallTime means now. Write each
// mode's steps (>= 0) in ascending order.
func (w *TensorBoardWriter) AddScalar(step int64, mode Mode, wallTime time.Time, tag string, value float64) error {
	cs, err := cstr("tag", tag)
	if err != nil {
		return err
	}
	return w.call(func(p *C.smd_tensorboard_writer) *C.smd_error {
		return C.smd_tensorboard_writer_add_scalar(p, C.int64_t(step), C.smd_mode(mode), wallSeconds(wallTime), cs, C.double(value))
	})
}

// AddHistogram writes a histogram summary of values at (step, mode), as smdebug computes it. It
// reports false when no value falls in a bucket (nothing is written then).
func AddHistogram[T Elem](w *TensorBoardWriter, step int64, mode Mode, wallTime time.Time, tag string, values []T) (bool, error) {
	cs, err := cstr("tag", tag)
	if err != nil {
		return false, err
	}
	var dp unsafe.Pointer
	if len(values) > 0 {
		dp = unsafe.Pointer(&values[0])
	}
	var z T
	var written C.bool
	err = w.call(func(p *C.smd_tensorboard_writer) *C.smd_error {
		return C.smd_tensorboard_writer_add_histogram(p, C.int64_t(step), C.smd_mode(mode), wallSeconds(wallTime), cs,
			C.smd_dtype(DTypeOf[T]()), dp, C.size_t(len(values)*int(unsafe.Sizeof(z))), &written)
	})
	return bool(written), err
}

// Flush writes out everything buffered, keeping the files open.
func (w *TensorBoardWriter) Flush() error {
	return w.call(func(p *C.smd_tensorboard_writer) *C.smd_error { return C.smd_tensorboard_writer_flush(p) })
}

// Close completes every file, frees the writer and returns the first error met since it was
// created. Later calls return nil.
func (w *TensorBoardWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.p == nil {
		return nil
	}
	err := takeErr(C.smd_tensorboard_writer_close(w.p))
	C.smd_tensorboard_writer_free(w.p)
	w.p = nil
	runtime.SetFinalizer(w, nil)
	return err
}
