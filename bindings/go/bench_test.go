package smd

import (
	"path/filepath"
	"testing"
)

// BenchmarkCgoEmptyCall is the cost of one cgo call into an empty C function: the floor of every
// call of this binding.
func BenchmarkCgoEmptyCall(b *testing.B) {
	for i := 0; i < b.N; i++ {
		cgoNoop()
	}
}

func benchHook(b *testing.B, interval int64) (*Hook, string) {
	o, err := NewHookOptions()
	if err != nil {
		b.Fatal(err)
	}
	defer o.Close()
	sc, _ := NewSaveConfig()
	defer sc.Close()
	if err := sc.Set(ModeAll, interval, 0, -1); err != nil {
		b.Fatal(err)
	}
	if err := o.SetSaveConfig(sc); err != nil {
		b.Fatal(err)
	}
	if err := o.SetSaveAll(true); err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(b.TempDir(), "bench")
	h, err := NewHook(dir, o)
	if err != nil {
		b.Fatal(err)
	}
	return h, dir
}

// BenchmarkSaveTensorNotDue is Save of a small tensor at a step where nothing is due.
func BenchmarkSaveTensorNotDue(b *testing.B) {
	h, _ := benchHook(b, 1000000)
	defer h.Close()
	h.BeginStep()
	h.BeginStep() // step 1: nothing is due
	data := []float32{1, 2, 3, 4}
	shape := []int64{4}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := Save(h, "fc1.weight", shape, data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSaveTensor4MiB is Save of a 4 MiB float32 tensor that is due, one per step (the
// BeginStep is included; smd copies the data once, the binding not at all).
func BenchmarkSaveTensor4MiB(b *testing.B) {
	h, _ := benchHook(b, 1)
	defer h.Close()
	data := make([]float32, 1<<20)
	for i := range data {
		data[i] = float32(i)
	}
	shape := []int64{1024, 1024}
	b.SetBytes(4 << 20)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := h.BeginStep(); err != nil {
			b.Fatal(err)
		}
		if err := Save(h, "big", shape, data); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if err := h.Close(); err != nil {
		b.Fatal(err)
	}
}

func benchTensor(b *testing.B) (*Trial, *Tensor) {
	h, dir := benchHook(b, 1)
	h.BeginStep()
	Save(h, "w", []int64{4}, []float32{1, 2, 3, 4})
	if err := h.Close(); err != nil {
		b.Fatal(err)
	}
	tr, err := OpenTrial(dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	ts, err := tr.Tensor("w")
	if err != nil {
		b.Fatal(err)
	}
	return tr, ts
}

// BenchmarkReadValueFromC is the same read made from C in a loop, the binding's baseline.
func BenchmarkReadValueFromC(b *testing.B) {
	tr, ts := benchTensor(b)
	defer tr.Close()
	defer ts.Close()
	b.ResetTimer()
	if err := benchReadFromC(ts, b.N); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkReadValue is one per-value read of a cached value (Tensor.Value + Value.At + Close).
func BenchmarkReadValue(b *testing.B) {
	tr, ts := benchTensor(b)
	defer tr.Close()
	defer ts.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v, err := ts.Value(0, ModeGlobal, "")
		if err != nil {
			b.Fatal(err)
		}
		if x, err := v.At(1); err != nil || x != 2 {
			b.Fatal(x, err)
		}
		v.Close()
	}
}

// BenchmarkSaveTensorNotDueFromC is the same save made from C in a loop: the difference with
// BenchmarkSaveTensorNotDue is the binding's cost (cgo call included).
func BenchmarkSaveTensorNotDueFromC(b *testing.B) {
	h, _ := benchHook(b, 1000000)
	defer h.Close()
	h.BeginStep()
	h.BeginStep()
	b.ResetTimer()
	if err := benchSaveFromC(h, b.N); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkSaveTensor4MiBFromC is BenchmarkSaveTensor4MiB's loop made from C: the baseline of
// the 4 MiB save.
func BenchmarkSaveTensor4MiBFromC(b *testing.B) {
	h, _ := benchHook(b, 1)
	defer h.Close()
	data := make([]float32, 1<<20)
	for i := range data {
		data[i] = float32(i)
	}
	b.SetBytes(4 << 20)
	b.ResetTimer()
	if err := benchSaveBigFromC(h, data, b.N); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if err := h.Close(); err != nil {
		b.Fatal(err)
	}
}
