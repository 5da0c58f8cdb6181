package smd

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func mustCode(t *testing.T, err error, sentinel error) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %v", sentinel)
	}
	if !errors.Is(err, sentinel) {
		t.Fatalf("error %v does not match %v", err, sentinel)
	}
}

func TestVersionDTypesModesCodes(t *testing.T) {
	maj, min, pat := Version()
	if maj < 0 || min < 0 || pat < 0 || VersionString() == "" {
		t.Fatalf("bad version %d.%d.%d %q", maj, min, pat, VersionString())
	}
	if !strings.HasPrefix(VersionString(), strings.Join([]string{itoa(maj), itoa(min)}, ".")) {
		t.Fatalf("version string %q does not start with %d.%d", VersionString(), maj, min)
	}
	if DTypeFloat32.Size() != 4 || DTypeComplex128.Size() != 16 || DTypeString.Size() != 0 {
		t.Fatal("dtype sizes")
	}
	if DTypeFloat32.String() != "float32" || DTypeBool.String() != "bool" || DType(99).String() != "DType(99)" {
		t.Fatal("dtype names")
	}
	d, err := ParseDType("int16")
	must(t, err)
	if d != DTypeInt16 {
		t.Fatalf("ParseDType int16 = %v", d)
	}
	_, err = ParseDType("float128")
	mustCode(t, err, ErrInvalidArgument)
	_, err = ParseDType("a\x00b")
	mustCode(t, err, ErrInvalidArgument)
	m, err := ParseMode("eval")
	must(t, err)
	if m != ModeEval || m.String() != "EVAL" || ModeAll.String() != "ALL" {
		t.Fatal("modes")
	}
	_, err = ParseMode("training")
	mustCode(t, err, ErrInvalidArgument)
	if CodeNotFound.String() != "SMD_E_NOT_FOUND" || CodeAuth.String() != "SMD_E_AUTH" || Code(99).String() != "Code(99)" {
		t.Fatal("code names")
	}
	for c := Code(0); c <= CodeAuth+1; c++ {
		want := c == CodeTensorUnavailableForStep || c == CodeTensorUnavailable || c == CodeStepUnavailable
		if c.SkipsRuleStep() != want {
			t.Fatalf("%v.SkipsRuleStep() = %v", c, !want)
		}
	}
	names, err := ReductionNames()
	must(t, err)
	if !contains(names, "l2_norm") || !contains(names, "mean") {
		t.Fatalf("reduction names %v", names)
	}
	for _, c := range []struct {
		dt DType
		f  func() DType
	}{{DTypeFloat64, DTypeOf[float64]}, {DTypeUint32, DTypeOf[uint32]}, {DTypeBool, DTypeOf[bool]},
		{DTypeComplex64, DTypeOf[complex64]}, {DTypeInt8, DTypeOf[int8]}, {DTypeFloat32, DTypeOf[celsius]}} {
		if c.f() != c.dt {
			t.Fatalf("DTypeOf = %v, want %v", c.f(), c.dt)
		}
	}
}

type celsius float32

func itoa(i int) string   { return strconv.Itoa(i) }
func fmtInt(i int) string { return strconv.Itoa(i) }

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func TestSaveConfigAndReductionConfig(t *testing.T) {
	sc, err := NewSaveConfig()
	must(t, err)
	defer sc.Close()
	must(t, sc.Set(ModeTrain, 3, 1, 10, 20))
	for step, want := range map[int64]bool{0: false, 1: false, 3: true, 6: true, 12: false, 20: true} {
		got, err := sc.ShouldSave(step, ModeTrain)
		must(t, err)
		if got != want {
			t.Fatalf("ShouldSave(%d) = %v, want %v", step, got, want)
		}
	}
	mustCode(t, sc.Set(ModeTrain, 0, 0, -1), ErrInvalidArgument)
	mustCode(t, sc.Set(Mode(42), 1, 0, -1), ErrInvalidArgument)
	c2, err := sc.Clone()
	must(t, err)
	must(t, sc.Unset(ModeTrain))
	got, _ := sc.ShouldSave(500, ModeTrain) // default interval 500
	got2, _ := c2.ShouldSave(500, ModeTrain)
	if !got || got2 {
		t.Fatalf("unset/clone: %v %v", got, got2)
	}
	must(t, c2.SetInterval(ModeEval, 7))
	ok, _ := c2.ShouldSave(14, ModeEval)
	if !ok {
		t.Fatal("SetInterval")
	}
	c2.Close()
	c2.Close()
	mustCode(t, c2.SetInterval(ModeEval, 7), ErrClosed)
	_, err = c2.Clone()
	mustCode(t, err, ErrInvalidState)

	rc, err := ParseReductionConfig("min, abs_mean,l2_norm")
	must(t, err)
	must(t, rc.SetSaveShape(true))
	must(t, rc.SetSaveRawTensor(true))
	must(t, rc.Add("max"))
	mustCode(t, rc.Add("maximum"), ErrInvalidArgument)
	s := rc.String()
	for _, want := range []string{"min", "abs_mean", "max"} {
		if !strings.Contains(s, want) {
			t.Fatalf("ReductionConfig.String() = %q lacks %q", s, want)
		}
	}
	rc2, err := rc.Clone()
	must(t, err)
	if rc2.String() != s {
		t.Fatalf("clone %q != %q", rc2.String(), s)
	}
	_, err = ParseReductionConfig("min,bogus")
	mustCode(t, err, ErrInvalidArgument)
	e, err := NewReductionConfig()
	must(t, err)
	e.Close()
	if e.String() != "<closed>" {
		t.Fatal("closed reduction config string")
	}
}

// writeTrial writes a small trial with every numeric dtype, strings, scalars and reductions.
type written struct {
	f32  []float32
	f64  []float64
	i8   []int8
	i16  []int16
	i32  []int32
	i64  []int64
	u8   []uint8
	u16  []uint16
	u32  []uint32
	u64  []uint64
	b    []bool
	c64  []complex64
	c128 []complex128
	strs []string
}

func sample(step int) written {
	s := float32(step)
	return written{
		f32:  []float32{1.5 + s, -2.25, 3, 4, float32(math.Inf(1)), 6},
		f64:  []float64{math.Pi * float64(step+1), -1e300, 0.5},
		i8:   []int8{-128, 127, int8(step)},
		i16:  []int16{-32768, 32767, int16(step)},
		i32:  []int32{math.MinInt32, math.MaxInt32, int32(step)},
		i64:  []int64{math.MinInt64, math.MaxInt64, int64(step)},
		u8:   []uint8{0, 255, uint8(step)},
		u16:  []uint16{0, 65535, uint16(step)},
		u32:  []uint32{0, math.MaxUint32, uint32(step)},
		u64:  []uint64{0, math.MaxUint64, uint64(step)},
		b:    []bool{true, false, step%2 == 0},
		c64:  []complex64{complex(1, -2), complex(s, 0.5)},
		c128: []complex128{complex(3, 4), complex(float64(step), -1)},
		strs: []string{"alpha", "", "üñí", "step" + fmtInt(step)},
	}
}

func writeTrial(t *testing.T, dir string, steps int) {
	t.Helper()
	opts, err := NewHookOptions()
	must(t, err)
	defer opts.Close()
	sc, err := NewSaveConfig()
	must(t, err)
	must(t, sc.Set(ModeAll, 1, 0, -1))
	must(t, opts.SetSaveConfig(sc))
	must(t, opts.SetWorker("worker_0"))
	must(t, opts.SetNumWorkers(1))
	must(t, opts.AddIncludeRegex("^t_"))
	must(t, opts.SetMemoryBudget(64<<20))
	must(t, opts.SetMaxPendingSteps(-1))
	must(t, opts.SetWallTimeBase(1.7e9))
	h, err := NewHook(dir, opts)
	must(t, err)
	defer h.Close()
	must(t, h.IncludeCollection("gradients"))
	grads, err := h.Collection("gradients")
	must(t, err)
	defer grads.Close()
	rc, err := ParseReductionConfig("mean,abs_mean,max,l2")
	must(t, err)
	must(t, grads.SetReductionConfig(rc))
	must(t, grads.SetSaveHistogram(false))
	mine, err := h.Collection("mine")
	must(t, err)
	must(t, mine.AddTensorName("t_f32"))
	must(t, mine.AddIncludeRegex("^t_f"))
	must(t, h.IncludeCollection("mine"))
	if mine.Name() != "mine" {
		t.Fatalf("collection name %q", mine.Name())
	}
	must(t, h.SetMode(ModeTrain))
	if h.GlobalStep() != -1 {
		t.Fatalf("global step before first step %d", h.GlobalStep())
	}
	for step := 0; step < steps; step++ {
		must(t, h.BeginStep())
		if h.GlobalStep() != int64(step) || h.ModeStep() != int64(step) || h.Mode() != ModeTrain {
			t.Fatalf("step %d: hook at %d/%d %v", step, h.GlobalStep(), h.ModeStep(), h.Mode())
		}
		if !h.AnyDue() || !h.IsDue("t_f32") {
			t.Fatal("nothing due with save interval 1")
		}
		w := sample(step)
		must(t, Save(h, "t_f32", []int64{2, 3}, w.f32, "extra"))
		must(t, Save(h, "t_f64", []int64{3}, w.f64))
		must(t, Save(h, "t_i8", []int64{3}, w.i8))
		must(t, Save(h, "t_i16", []int64{3}, w.i16))
		must(t, Save(h, "t_i32", []int64{3}, w.i32))
		must(t, Save(h, "t_i64", []int64{3}, w.i64))
		must(t, Save(h, "t_u8", []int64{3}, w.u8))
		must(t, Save(h, "t_u16", []int64{3}, w.u16))
		must(t, Save(h, "t_u32", []int64{3}, w.u32))
		must(t, Save(h, "t_u64", []int64{1, 3}, w.u64))
		must(t, Save(h, "t_bool", []int64{3}, w.b))
		must(t, Save(h, "t_c64", []int64{2}, w.c64))
		must(t, Save(h, "t_c128", []int64{2}, w.c128))
		must(t, Save(h, "t_scalar0d", nil, []float64{float64(step) / 4}))
		// float16 raw bytes: 1.0 = 0x3c00, -2.0 = 0xc000
		must(t, h.SaveTensor("t_f16", DTypeFloat16, []int64{2}, []byte{0x00, 0x3c, 0x00, 0xc0}))
		must(t, h.SaveStrings("t_str", w.strs))
		grad := []float32{float32(step) + 1, -2, 3, -4}
		must(t, Save(h, "gradient/fc1", []int64{4}, grad))
		must(t, Save(h, "zeros", []int64{3}, []float32{0, 0, float32(step % 2)}, "zeros"))
		must(t, h.SaveScalar("loss_value", 1/float64(step+1)))
		must(t, SaveScalarOf(h, "count", int64(step*10)))
		must(t, SaveScalarOf(h, "flag", step%2 == 1))
		must(t, SaveScalarOf(h, "acc", float32(step)/8))
		stop, err := h.StopRequested()
		must(t, err)
		if stop {
			t.Fatal("stop requested without a rule")
		}
	}
	must(t, h.SetMode(ModeEval))
	must(t, h.BeginStep())
	must(t, Save(h, "t_f32", []int64{6}, sample(100).f32))
	must(t, h.Flush())
	st, err := h.Stats()
	must(t, err)
	if st.Records == 0 || st.Bytes == 0 {
		t.Fatalf("stats after flush: %+v", st)
	}
	names, err := h.CollectionNames()
	must(t, err)
	for _, want := range []string{"gradients", "mine", "extra", "zeros", "losses"} {
		if !contains(names, want) {
			t.Fatalf("collections %v lack %q", names, want)
		}
	}
	tn, err := mine.TensorNames()
	must(t, err)
	if !contains(tn, "t_f32") || !contains(tn, "t_f64") {
		t.Fatalf("mine holds %v", tn)
	}
	if h.Worker() != "worker_0" {
		t.Fatalf("worker %q", h.Worker())
	}
	must(t, h.Close())
	must(t, h.Close()) // second close: nil
	// A closed hook refuses everything with ErrClosed, and its collections refuse changes.
	mustCode(t, h.BeginStep(), ErrClosed)
	mustCode(t, Save(h, "x", []int64{1}, []float32{1}), ErrClosed)
	mustCode(t, h.SaveScalar("x", 1), ErrClosed)
	mustCode(t, h.SaveStrings("x", []string{"a"}), ErrClosed)
	mustCode(t, mine.AddTensorName("later"), ErrInvalidState)
	if h.IsDue("t_f32") || h.AnyDue() || h.GlobalStep() != -1 || h.Worker() != "" {
		t.Fatal("closed hook answers queries")
	}
	_, err = h.Stats()
	mustCode(t, err, ErrClosed)
}

func checkValue[T Elem](t *testing.T, tr *Trial, name string, step int64, want []T, shape []int64) {
	t.Helper()
	ts, err := tr.Tensor(name)
	must(t, err)
	defer ts.Close()
	v, err := ts.Value(step, ModeTrain, "")
	must(t, err)
	defer v.Close()
	got, err := Copy[T](v)
	must(t, err)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s step %d: got %v, want %v", name, step, got, want)
	}
	view, err := View[T](v)
	must(t, err)
	if !reflect.DeepEqual(view, want) {
		t.Fatalf("%s view: got %v, want %v", name, view, want)
	}
	if !reflect.DeepEqual(v.Shape(), shape) || v.Len() != len(want) || v.DType() != DTypeOf[T]() {
		t.Fatalf("%s: shape %v len %d dtype %v", name, v.Shape(), v.Len(), v.DType())
	}
	dt, dims, err := ts.ValueInfo(step, ModeTrain, "")
	must(t, err)
	if dt != DTypeOf[T]() || !reflect.DeepEqual(dims, shape) {
		t.Fatalf("%s ValueInfo %v %v", name, dt, dims)
	}
}

func TestHookTrialRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	writeTrial(t, dir, 3)
	tr, err := OpenTrial(dir, &TrialOptions{CacheBytes: 1 << 20, CollectionWait: time.Second})
	must(t, err)
	defer tr.Close()
	if tr.Path() != dir || tr.NumWorkers() != 1 {
		t.Fatalf("path %q workers %d", tr.Path(), tr.NumWorkers())
	}
	cursor, err := tr.IndexCursor()
	must(t, err)
	// writeTrial's last step is 3 (the one after its loop).
	if tr.LastCompleteStep() != 3 || cursor != "index/000000000/000000000003_worker_0.json" {
		t.Fatalf("last complete step %d, index cursor %q", tr.LastCompleteStep(), cursor)
	}
	if !tr.LoadedAllSteps() {
		t.Fatal("a trial opened after its job ended has not loaded all steps")
	}
	ended, err := tr.HasEnded()
	must(t, err)
	if !ended {
		t.Fatal("closed hook's trial has not ended")
	}
	for step := 0; step < 3; step++ {
		w := sample(step)
		s := int64(step)
		checkValue(t, tr, "t_f32", s, w.f32, []int64{2, 3})
		checkValue(t, tr, "t_f64", s, w.f64, []int64{3})
		checkValue(t, tr, "t_i8", s, w.i8, []int64{3})
		checkValue(t, tr, "t_i16", s, w.i16, []int64{3})
		checkValue(t, tr, "t_i32", s, w.i32, []int64{3})
		checkValue(t, tr, "t_i64", s, w.i64, []int64{3})
		checkValue(t, tr, "t_u8", s, w.u8, []int64{3})
		checkValue(t, tr, "t_u16", s, w.u16, []int64{3})
		checkValue(t, tr, "t_u32", s, w.u32, []int64{3})
		checkValue(t, tr, "t_u64", s, w.u64, []int64{1, 3})
		checkValue(t, tr, "t_bool", s, w.b, []int64{3})
		checkValue(t, tr, "t_c64", s, w.c64, []int64{2})
		checkValue(t, tr, "t_c128", s, w.c128, []int64{2})
		checkValue(t, tr, "t_scalar0d", s, []float64{float64(step) / 4}, []int64{})
		checkValue(t, tr, "scalar/loss_value", s, []float64{1 / float64(step+1)}, []int64{1})
		checkValue(t, tr, "scalar/count", s, []int64{int64(step * 10)}, []int64{1})
		checkValue(t, tr, "scalar/flag", s, []bool{step%2 == 1}, []int64{1})
		checkValue(t, tr, "scalar/acc", s, []float32{float32(step) / 8}, []int64{1})
		ts, err := tr.Tensor("t_str")
		must(t, err)
		v, err := ts.Value(s, ModeTrain, "")
		must(t, err)
		strs, err := v.Strings()
		must(t, err)
		if !reflect.DeepEqual(strs, w.strs) || v.DType() != DTypeString {
			t.Fatalf("strings %q, want %q", strs, w.strs)
		}
		_, err = v.Float32s()
		mustCode(t, err, ErrInvalidArgument)
		_, err = v.At(0)
		mustCode(t, err, ErrUnsupported)
	}
	// float16 through At (widened) and Bytes.
	f16, err := tr.Tensor("t_f16")
	must(t, err)
	v16, err := f16.Value(1, ModeTrain, "")
	must(t, err)
	a, err := v16.At(0)
	must(t, err)
	b, err := v16.At(1)
	must(t, err)
	raw, err := v16.Bytes()
	must(t, err)
	if a != 1 || b != -2 || !reflect.DeepEqual(raw, []byte{0, 0x3c, 0, 0xc0}) || v16.DType() != DTypeFloat16 {
		t.Fatalf("float16: %v %v %v", a, b, raw)
	}
	_, err = v16.At(2)
	mustCode(t, err, ErrInvalidArgument)
	_, err = v16.At(-1)
	mustCode(t, err, ErrInvalidArgument)
	_, err = View[uint16](v16) // the Go type of the elements must match the dtype
	mustCode(t, err, ErrInvalidArgument)

	// Steps, modes, mode/global step maps.
	steps, err := tr.Steps(ModeTrain, false)
	must(t, err)
	if !reflect.DeepEqual(steps, []int64{0, 1, 2}) {
		t.Fatalf("train steps %v", steps)
	}
	gsteps, err := tr.Steps(ModeGlobal, true)
	must(t, err)
	if !reflect.DeepEqual(gsteps, []int64{0, 1, 2, 3}) {
		t.Fatalf("global steps %v", gsteps)
	}
	modes, err := tr.Modes()
	must(t, err)
	if !reflect.DeepEqual(modes, []Mode{ModeTrain, ModeEval}) {
		t.Fatalf("modes %v", modes)
	}
	m, err := tr.Mode(3)
	must(t, err)
	ms, err := tr.ModeStep(3)
	must(t, err)
	g, err := tr.GlobalStep(0, ModeEval)
	must(t, err)
	if m != ModeEval || ms != 0 || g != 3 {
		t.Fatalf("step maps: %v %d %d", m, ms, g)
	}
	_, err = tr.Mode(99)
	mustCode(t, err, ErrNotFound)
	st, err := tr.HasPassedStep(1, ModeTrain)
	must(t, err)
	if st != StepAvailable {
		t.Fatalf("HasPassedStep = %v", st)
	}
	st, err = tr.HasPassedStep(50, ModeTrain)
	must(t, err)
	if st != StepUnavailable {
		t.Fatalf("HasPassedStep(50) of an ended job = %v", st)
	}
	workers, err := tr.Workers()
	must(t, err)
	if !reflect.DeepEqual(workers, []string{"worker_0"}) {
		t.Fatalf("workers %v", workers)
	}
	warns, err := tr.Warnings()
	must(t, err)
	if len(warns) != 0 {
		t.Fatalf("warnings %v", warns)
	}
	must(t, tr.Refresh())
	if !tr.AutoRefresh() {
		t.Fatal("auto refresh was off by default")
	}

	// Tensor names and filters.
	all, err := tr.TensorNames(nil)
	must(t, err)
	for _, want := range []string{"t_f32", "t_str", "gradient/fc1", "scalar/loss_value", "zeros"} {
		if !contains(all, want) {
			t.Fatalf("tensor names %v lack %q", all, want)
		}
	}
	step3 := int64(0)
	evalOnly, err := tr.TensorNames(&TensorFilter{Step: &step3, Mode: ModeEval})
	must(t, err)
	if !reflect.DeepEqual(evalOnly, []string{"t_f32"}) {
		t.Fatalf("eval step 0 tensors %v", evalOnly)
	}
	byRegex, err := tr.TensorNames(&TensorFilter{Regexes: []string{"^t_i(8|16)$"}})
	must(t, err)
	if !reflect.DeepEqual(byRegex, []string{"t_i16", "t_i8"}) {
		t.Fatalf("regex filter %v", byRegex)
	}
	byColl, err := tr.TensorNames(&TensorFilter{Collection: "extra"})
	must(t, err)
	if !reflect.DeepEqual(byColl, []string{"t_f32"}) {
		t.Fatalf("collection filter %v", byColl)
	}
	_, err = tr.TensorNames(&TensorFilter{Regexes: []string{"("}})
	mustCode(t, err, ErrInvalidArgument)
	has, err := tr.HasTensor("t_u64")
	must(t, err)
	hasNot, err := tr.HasTensor("nope")
	must(t, err)
	if !has || hasNot {
		t.Fatal("HasTensor")
	}
	_, err = tr.Tensor("nope")
	mustCode(t, err, ErrTensorUnavailable)

	// Collections of the trial.
	cn, err := tr.CollectionNames()
	must(t, err)
	if !contains(cn, "gradients") || !contains(cn, "mine") {
		t.Fatalf("trial collections %v", cn)
	}
	ci, err := tr.Collection("gradients")
	must(t, err)
	if ci.Name != "gradients" || !strings.Contains(ci.Reductions, "abs_mean") || ci.SaveHistogram ||
		!contains(ci.TensorNames, "gradient/fc1") || len(ci.IncludeRegex) == 0 {
		t.Fatalf("gradients collection %+v", ci)
	}
	_, err = tr.Collection("nope")
	mustCode(t, err, ErrNotFound)

	// Reductions of a gradient (saved: mean, abs_mean, max, l2; no raw value).
	gr, err := tr.Tensor("gradient/fc1")
	must(t, err)
	if gr.Name() != "gradient/fc1" {
		t.Fatal("tensor name")
	}
	rn, err := gr.ReductionNames(2, ModeTrain, "")
	must(t, err)
	if !reflect.DeepEqual(rn, []string{"abs_mean", "l2", "max", "mean"}) {
		t.Fatalf("reduction names %v", rn)
	}
	rv, err := gr.ReductionValue(2, ModeTrain, "", "abs_mean")
	must(t, err)
	am, err := rv.At(0)
	must(t, err)
	if math.Abs(am-(3+2+3+4)/4.0) > 1e-6 {
		t.Fatalf("abs_mean %v", am)
	}
	rvs, err := gr.ReductionValues(2, ModeTrain, "")
	must(t, err)
	mx, err := rvs["max"].At(0)
	must(t, err)
	if len(rvs) != 4 || mx != 3 {
		t.Fatalf("reduction values %v max %v", rvs, mx)
	}
	_, err = gr.Value(2, ModeTrain, "")
	mustCode(t, err, ErrTensorUnavailableForStep)
	_, err = gr.ReductionValue(2, ModeTrain, "", "median") // no raw value to compute it from
	if err == nil {
		t.Fatal("median of a reduction-only tensor")
	}
	// Computed reduction of a raw tensor.
	f64, err := tr.Tensor("t_f64")
	must(t, err)
	mn, err := f64.ReductionValue(0, ModeTrain, "", "min")
	must(t, err)
	mnv, _ := mn.At(0)
	if mnv != -1e300 {
		t.Fatalf("computed min %v", mnv)
	}
	_, err = f64.Value(7, ModeTrain, "")
	if err == nil {
		t.Fatal("value of a step past the end")
	}
	_, err = f64.Value(0, ModeTrain, "worker_9")
	mustCode(t, err, ErrInvalidWorker)

	// Values, shapes, workers, previous steps.
	ts, err := tr.Tensor("t_i32")
	must(t, err)
	vsteps, vals, err := ts.Values(ModeTrain, "")
	must(t, err)
	if !reflect.DeepEqual(vsteps, []int64{0, 1, 2}) || len(vals) != 3 {
		t.Fatalf("values steps %v", vsteps)
	}
	last, err := vals[2].Int32s()
	must(t, err)
	if last[2] != 2 {
		t.Fatalf("values[2] = %v", last)
	}
	shp, err := ts.Shape(1, ModeTrain, "")
	must(t, err)
	if !reflect.DeepEqual(shp, []int64{3}) {
		t.Fatalf("shape %v", shp)
	}
	ss, shapes, err := ts.Shapes(ModeTrain, "")
	must(t, err)
	if !reflect.DeepEqual(ss, []int64{0, 1, 2}) || !reflect.DeepEqual(shapes, [][]int64{{3}, {3}, {3}}) {
		t.Fatalf("shapes %v %v", ss, shapes)
	}
	tw, err := ts.Workers(1, ModeTrain)
	must(t, err)
	if !reflect.DeepEqual(tw, []string{"worker_0"}) {
		t.Fatalf("tensor workers %v", tw)
	}
	prev, err := ts.PrevSteps(2, ModeTrain, 2)
	must(t, err)
	if !reflect.DeepEqual(prev, []int64{1, 2}) {
		t.Fatalf("prev steps %v", prev)
	}
	_, err = ts.PrevSteps(2, ModeTrain, -1)
	mustCode(t, err, ErrInvalidArgument)
	tsteps, err := ts.Steps(ModeTrain, false)
	must(t, err)
	if !reflect.DeepEqual(tsteps, []int64{0, 1, 2}) {
		t.Fatalf("tensor steps %v", tsteps)
	}

	// A value outlives its tensor and trial; Ref is an independent reference.
	v, err := ts.Value(1, ModeTrain, "")
	must(t, err)
	r, err := v.Ref()
	must(t, err)
	ts.Close()
	tr.Close()
	v.Close()
	got, err := r.Int32s()
	must(t, err)
	if got[2] != 1 {
		t.Fatalf("value after its trial closed: %v", got)
	}
	r.Close()
	_, err = r.Int32s()
	mustCode(t, err, ErrClosed)
	_, err = r.Bytes()
	mustCode(t, err, ErrClosed)
	_, err = r.Strings()
	mustCode(t, err, ErrClosed)
	_, err = r.Ref()
	mustCode(t, err, ErrClosed)
	if r.Len() != 0 || r.DType() != DTypeInvalid || len(r.Shape()) != 0 {
		t.Fatal("closed value answers")
	}
	_, err = ts.Value(1, ModeTrain, "")
	mustCode(t, err, ErrClosed)
	_, err = tr.Steps(ModeTrain, false)
	mustCode(t, err, ErrClosed)
	_, err = tr.Tensor("t_f32")
	mustCode(t, err, ErrClosed)
	_, err = tr.IndexCursor()
	mustCode(t, err, ErrClosed)
	if tr.Path() != "" || tr.NumWorkers() != 0 || tr.LastCompleteStep() != -1 || ts.Name() != "" ||
		tr.LoadedAllSteps() {
		t.Fatal("closed trial answers")
	}
}

// The reader's position: the last step every worker wrote and the index file after which the
// next refresh lists new ones (smdebug's last_complete_step and last_index_token).
func TestLastCompleteStepAndIndexCursor(t *testing.T) {
	fixtures := filepath.Join("..", "..", "tests", "data", "trials")
	for _, c := range []struct {
		name   string
		last   int64
		cursor string
	}{
		{"workers3_running", 3, "index/000000000/000000000003_worker_2.json"}, // 3 workers, all wrote steps 0-3
		{"modes_reentry", 9, "index/000000000/000000000009_worker_0.json"},
	} {
		tr, err := OpenTrial(filepath.Join(fixtures, c.name), nil)
		must(t, err)
		cursor, err := tr.IndexCursor()
		must(t, err)
		if tr.LastCompleteStep() != c.last || cursor != c.cursor {
			t.Errorf("%s: last complete step %d, index cursor %q", c.name, tr.LastCompleteStep(), cursor)
		}
		tr.Close()
	}

	// Before any step is complete (worker_1 of 2 has written nothing): -1 and "".
	dir := filepath.Join(t.TempDir(), "partial")
	o, err := NewHookOptions()
	must(t, err)
	defer o.Close()
	sc, err := NewSaveConfig()
	must(t, err)
	must(t, sc.Set(ModeAll, 1, 0, -1))
	must(t, o.SetSaveConfig(sc))
	must(t, o.SetSaveAll(true))
	must(t, o.SetIncludeWorkers(IncludeWorkersAll))
	must(t, o.SetNumWorkers(2))
	must(t, o.SetWriteEndMarker(false))
	h, err := NewHook(dir, o)
	must(t, err)
	must(t, h.BeginStep())
	must(t, Save(h, "w", []int64{1}, []float32{1}))
	must(t, h.Close())
	tr, err := OpenTrial(dir, nil)
	must(t, err)
	defer tr.Close()
	steps, err := tr.Steps(ModeGlobal, true)
	must(t, err)
	cursor, err := tr.IndexCursor()
	must(t, err)
	if tr.LoadedAllSteps() {
		t.Fatal("a running job's trial has loaded all steps")
	}
	if tr.NumWorkers() != 2 || !reflect.DeepEqual(steps, []int64{0}) || tr.LastCompleteStep() != -1 || cursor != "" {
		t.Fatalf("workers %d, steps %v, last complete step %d, index cursor %q", tr.NumWorkers(), steps, tr.LastCompleteStep(), cursor)
	}
}

func TestBadInput(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bad")
	h, err := NewHook(dir, nil)
	must(t, err)
	defer h.Close()
	must(t, h.BeginStep())
	mustCode(t, Save(h, "a", []int64{2, 2}, []float32{1, 2, 3}), ErrInvalidArgument)
	mustCode(t, Save(h, "a", []int64{-1}, []float32{}), ErrInvalidArgument)
	mustCode(t, h.SaveTensor("a", DTypeFloat32, []int64{2}, []byte{1, 2, 3}), ErrInvalidArgument)
	mustCode(t, h.SaveTensor("a", DTypeString, []int64{1}, []byte{1}), ErrInvalidArgument)
	mustCode(t, h.SaveTensor("a", DType(77), []int64{1}, []byte{1}), ErrInvalidArgument)
	mustCode(t, Save(h, "a\x00b", []int64{1}, []float32{1}), ErrInvalidArgument)
	mustCode(t, Save(h, "a", []int64{1}, []float32{1}, ""), ErrInvalidArgument)
	mustCode(t, Save(h, "a", []int64{1}, []float32{1}, "x\x00"), ErrInvalidArgument)
	mustCode(t, h.SaveScalar("a\x00", 1), ErrInvalidArgument)
	mustCode(t, h.SetMode(Mode(9)), ErrInvalidArgument)
	_, err = h.Collection("")
	mustCode(t, err, ErrInvalidArgument)
	c, err := h.Collection("c")
	must(t, err)
	mustCode(t, c.AddIncludeRegex("(unclosed"), ErrInvalidArgument)
	c.Close()
	c.Close()
	mustCode(t, c.AddTensorName("x"), ErrClosed)
	_, err = c.TensorNames()
	mustCode(t, err, ErrClosed)
	if c.Name() != "" {
		t.Fatal("closed collection has a name")
	}
	// Closed configuration objects are refused where they are passed.
	sc, _ := NewSaveConfig()
	sc.Close()
	c2, _ := h.Collection("c2")
	mustCode(t, c2.SetSaveConfig(sc), ErrClosed)
	must(t, c2.SetSaveConfig(nil))
	must(t, c2.SetReductionConfig(nil))
	o, _ := NewHookOptions()
	mustCode(t, o.SetSaveConfig(sc), ErrClosed)
	o.Close()
	mustCode(t, o.SetDryRun(true), ErrClosed)
	_, err = NewHook(filepath.Join(t.TempDir(), "x"), o)
	mustCode(t, err, ErrClosed)
	_, err = NewHook("", nil)
	mustCode(t, err, ErrInvalidArgument)
	_, err = NewHookFromJSON([]byte("{not json"), nil)
	mustCode(t, err, ErrInvalidArgument)
	_, err = NewHookFromJSONFile(filepath.Join(t.TempDir(), "missing.json"), nil)
	mustCode(t, err, ErrNotFound)
	// Trials.
	_, err = OpenTrial(filepath.Join(t.TempDir(), "none"), nil)
	mustCode(t, err, ErrNotFound)
	_, err = OpenTrial("", nil)
	mustCode(t, err, ErrInvalidArgument)
	_, err = OpenTrial(t.TempDir(), &TrialOptions{RangeBegin: 5, RangeEnd: 2})
	mustCode(t, err, ErrInvalidArgument)
	_, err = OpenTrial(t.TempDir(), nil) // an empty folder: no collections file
	mustCode(t, err, ErrMissingCollectionFiles)
	// Rules on nil or closed trials.
	_, err = NewBuiltinRule("VanishingGradient", nil, nil, nil)
	mustCode(t, err, ErrInvalidArgument)
	_, err = NewRule("r", nil, nil, func(*RuleContext, int64) (bool, error) { return false, nil }, nil)
	mustCode(t, err, ErrInvalidArgument)
	// A closed TensorBoard writer.
	w, err := NewTensorBoardWriter(t.TempDir())
	must(t, err)
	must(t, w.Close())
	mustCode(t, w.AddScalar(0, ModeTrain, time.Time{}, "x", 1), ErrClosed)
	_, err = NewTensorBoardWriter("")
	mustCode(t, err, ErrInvalidArgument)
	// Error text names the code and the message.
	var se *Error
	if !errors.As(err, &se) || se.Code != CodeInvalidArgument || !strings.Contains(err.Error(), "SMD_E_INVALID_ARGUMENT") {
		t.Fatalf("error value %#v", err)
	}
	if errors.Is(err, ErrNotFound) || errors.Is(err, ErrClosed) {
		t.Fatal("error matches the wrong sentinels")
	}
}

func TestHookFromJSONAndDryRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "json")
	js := `{"LocalPath": "` + dir + `", "HookParameters": {"save_interval": "2"},
		"CollectionConfigurations": [{"CollectionName": "weights"}]}`
	h, err := NewHookFromJSON([]byte(js), nil)
	must(t, err)
	for step := 0; step < 3; step++ {
		must(t, h.BeginStep())
		must(t, Save(h, "fc.weight", []int64{2}, []float64{float64(step), 1}))
	}
	must(t, h.Close())
	tr, err := OpenTrial(dir, nil)
	must(t, err)
	defer tr.Close()
	ws, err := tr.Tensor("fc.weight")
	must(t, err)
	steps, err := ws.Steps(ModeGlobal, false)
	must(t, err)
	if !reflect.DeepEqual(steps, []int64{0, 2}) {
		t.Fatalf("save_interval 2 from JSON saved %v", steps)
	}
	p := filepath.Join(t.TempDir(), "cfg.json")
	dir2 := filepath.Join(t.TempDir(), "json2")
	must(t, os.WriteFile(p, []byte(`{"LocalPath": "`+dir2+`"}`), 0o644))
	h2, err := NewHookFromJSONFile(p, nil)
	must(t, err)
	must(t, h2.Close())
	if _, err := os.Stat(filepath.Join(dir2, "training_job_end.ts")); err != nil {
		t.Fatalf("hook from JSON file wrote no end marker: %v", err)
	}
	// Dry run: nothing on disk; no end marker option.
	o, _ := NewHookOptions()
	must(t, o.SetDryRun(true))
	dry := filepath.Join(t.TempDir(), "dry")
	h3, err := NewHook(dry, o)
	must(t, err)
	must(t, h3.BeginStep())
	must(t, Save(h3, "w", []int64{1}, []float32{1}))
	must(t, h3.Close())
	if _, err := os.Stat(filepath.Join(dry, "events")); err == nil {
		t.Fatal("dry run wrote events")
	}
	o2, _ := NewHookOptions()
	must(t, o2.SetWriteEndMarker(false))
	must(t, o2.SetSaveAll(true))
	must(t, o2.SetIncludeWorkers(IncludeWorkersAll))
	must(t, o2.SetRealPayloadCRC(false))
	must(t, o2.AddIncludeCollection("weights"))
	noEnd := filepath.Join(t.TempDir(), "noend")
	h4, err := NewHook(noEnd, o2)
	must(t, err)
	must(t, h4.BeginStep())
	must(t, Save(h4, "anything", []int64{1}, []float32{1}))
	must(t, h4.Close())
	if _, err := os.Stat(filepath.Join(noEnd, "training_job_end.ts")); err == nil {
		t.Fatal("end marker written although disabled")
	}
	tr4, err := OpenTrial(noEnd, nil)
	must(t, err)
	ok, err := tr4.HasTensor("anything")
	must(t, err)
	if !ok {
		t.Fatal("save_all did not save")
	}
	tr4.Close()
}

func TestConcurrentSaves(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "conc")
	o, _ := NewHookOptions()
	sc, _ := NewSaveConfig()
	must(t, sc.Set(ModeAll, 1, 0, -1))
	must(t, o.SetSaveConfig(sc))
	must(t, o.SetSaveAll(true))
	h, err := NewHook(dir, o)
	must(t, err)
	must(t, h.BeginStep())
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				if err := Save(h, "g"+fmtInt(g)+"_"+fmtInt(i), []int64{1}, []float32{float32(g*100 + i)}); err != nil {
					t.Error(err)
					return
				}
			}
		}(g)
	}
	// Close races with the saves: every save either succeeds or fails with ErrClosed.
	wg.Wait()
	var wg2 sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg2.Add(1)
		go func() {
			defer wg2.Done()
			for i := 0; i < 200; i++ {
				if err := Save(h, "late", []int64{1}, []float32{1}); err != nil && !errors.Is(err, ErrClosed) {
					t.Error(err)
					return
				}
			}
		}()
	}
	must(t, h.Close())
	wg2.Wait()
	tr, err := OpenTrial(dir, nil)
	must(t, err)
	defer tr.Close()
	names, err := tr.TensorNames(&TensorFilter{Regexes: []string{"^g[0-9]+_"}})
	must(t, err)
	if len(names) != 400 {
		t.Fatalf("%d tensors saved concurrently, want 400", len(names))
	}
}

func TestForgottenHandlesAreCleanedUp(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gc")
	writeTrial(t, dir, 1)
	for i := 0; i < 50; i++ {
		tr, err := OpenTrial(dir, nil)
		must(t, err)
		ts, err := tr.Tensor("t_f32")
		must(t, err)
		v, err := ts.Value(0, ModeTrain, "")
		must(t, err)
		_ = v
		sc, _ := NewSaveConfig()
		_ = sc
	}
	// The finalizers free the C objects; a use-after-free or double free would crash here
	// (and under the sanitizer builds).
	runtime.GC()
	runtime.GC()
	time.Sleep(10 * time.Millisecond)
	runtime.GC()
}

func TestWaitForStepsLiveJob(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "live")
	o, _ := NewHookOptions()
	sc, _ := NewSaveConfig()
	must(t, sc.Set(ModeAll, 1, 0, -1))
	must(t, o.SetSaveConfig(sc))
	must(t, o.SetMaxPendingSteps(0))
	must(t, o.SetSaveAll(true))
	h, err := NewHook(dir, o)
	must(t, err)
	defer h.Close()
	must(t, h.SetMode(ModeTrain))
	must(t, h.BeginStep())
	must(t, Save(h, "w_weight", []int64{1}, []float32{0}))
	must(t, h.BeginStep()) // completes step 0
	must(t, Save(h, "w_weight", []int64{1}, []float32{1}))
	must(t, h.Flush())
	tr, err := OpenTrial(dir, &TrialOptions{CollectionWait: 5 * time.Second})
	must(t, err)
	defer tr.Close()
	must(t, tr.WaitForSteps(context.Background(), []int64{0}, ModeTrain))
	// Step 5 is not written yet: a context deadline ends the wait.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = tr.WaitForSteps(ctx, []int64{5}, ModeTrain)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrStepNotYetAvailable) {
		t.Fatalf("wait with a deadline: %v", err)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Fatalf("wait overran its deadline: %v", el)
	}
	// The job writes the step while we wait.
	done := make(chan error, 1)
	go func() { done <- tr.WaitForSteps(context.Background(), []int64{3}, ModeTrain) }()
	for i := 0; i < 3; i++ {
		must(t, h.BeginStep())
		must(t, Save(h, "w_weight", []int64{1}, []float32{float32(i + 2)}))
	}
	must(t, h.BeginStep())
	select {
	case err := <-done:
		must(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("WaitForSteps did not see step 3")
	}
	must(t, h.Close())
	err = tr.WaitForSteps(context.Background(), []int64{99}, ModeTrain)
	mustCode(t, err, ErrNoMoreData)
}

func TestRules(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rules")
	writeTrial(t, dir, 4)
	tr, err := OpenTrial(dir, nil)
	must(t, err)
	defer tr.Close()

	names, err := BuiltinRuleNames()
	must(t, err)
	if !contains(names, "VanishingGradient") || !contains(names, "AllZero") {
		t.Fatalf("built-in rules %v", names)
	}
	params, err := BuiltinRuleParams("VanishingGradient")
	must(t, err)
	if len(params) != 1 || params[0].Name != "threshold" || params[0].Default != "0.0000001" || params[0].Help == "" {
		t.Fatalf("VanishingGradient params %+v", params)
	}
	// The name is case-insensitive; a parameter without a default has Default "".
	params, err = BuiltinRuleParams("tensorvariance")
	must(t, err)
	if len(params) != 4 || params[2].Name != "max_threshold" || params[2].Default != "" || params[2].Help == "" {
		t.Fatalf("TensorVariance params %+v", params)
	}
	for _, p := range params {
		if p.Help == "" {
			t.Fatalf("TensorVariance parameter %q has no help", p.Name)
		}
	}
	_, err = BuiltinRuleParams("NoSuchRule")
	mustCode(t, err, ErrInvalidArgument)
	if BuiltinRuleSummary("AllZero") == "" || BuiltinRuleSummary("NoSuchRule") != "" {
		t.Fatal("summaries")
	}

	// Built-in: AllZero fires at the even steps, where "zeros" is all zeros.
	az, err := NewBuiltinRule("AllZero", tr, nil, map[string]string{"tensor_regex": "^zeros$"})
	must(t, err)
	defer az.Close()
	if az.Name() != "AllZero" || az.StopTraining() {
		t.Fatal("rule name / stop training")
	}
	var seen []Finding
	var progress int
	msgFile := filepath.Join(t.TempDir(), "messages.txt")
	must(t, az.Invoke(context.Background(), 0, -1, false, &InvokeOptions{
		OnFinding:   func(f Finding) error { seen = append(seen, f); return nil },
		OnProgress:  func(rule string, step int64, o RuleOutcome) { progress++ },
		MessageFile: msgFile,
	}))
	fs := az.Findings()
	if len(fs) != 2 || fs[0].Step != 0 || fs[1].Step != 2 || fs[0].Tensor != "zeros" || fs[0].Rule != "AllZero" ||
		!strings.Contains(fs[0].Line, "SMDebugRule:AllZero fired") || !reflect.DeepEqual(fs, seen) {
		t.Fatalf("AllZero findings %+v (callback saw %+v)", fs, seen)
	}
	if progress < 4 {
		t.Fatalf("progress called %d times", progress)
	}
	msg, err := os.ReadFile(msgFile)
	must(t, err)
	if strings.Count(string(msg), "SMDebugRule:AllZero fired") != 2 {
		t.Fatalf("message file %q", msg)
	}
	st := az.Stats()
	if st.StepsEvaluated != 5 || st.ConditionsMet != 2 || st.LastStep != 4 || az.EndReason() != RuleEndNoMoreData || az.FailedStep() != -1 {
		t.Fatalf("stats %+v end %v failed step %d", st, az.EndReason(), az.FailedStep())
	}
	az.ClearFindings()
	if len(az.Findings()) != 0 || az.Stats().ConditionsMet != 2 {
		t.Fatal("ClearFindings")
	}
	// raise_eval_cond: the first met condition is an error.
	err = az.Invoke(context.Background(), 0, -1, true, nil)
	mustCode(t, err, ErrRuleEvaluationConditionMet)
	if az.EndReason() != RuleEndConditionMet {
		t.Fatalf("end reason %v", az.EndReason())
	}
	// A finding callback error cancels and is returned.
	stop := errors.New("enough")
	err = az.Invoke(context.Background(), 0, -1, false, &InvokeOptions{OnFinding: func(Finding) error { return stop }})
	if !errors.Is(err, stop) || !errors.Is(err, ErrCancelled) {
		t.Fatalf("finding callback error: %v", err)
	}
	must(t, az.SetStopTraining(true))
	if !az.StopTraining() {
		t.Fatal("SetStopTraining")
	}
	_, err = NewBuiltinRule("AllZero", tr, nil, nil)
	mustCode(t, err, ErrInvalidArgument)
	_, err = NewBuiltinRule("VanishingGradient", tr, nil, map[string]string{"treshold": "1"})
	mustCode(t, err, ErrInvalidArgument)

	// Custom rule: fires when the loss scalar is below 0.3, reading it through the context.
	var invoked []int64
	custom, err := NewRule("LowLoss", tr, nil, func(ctx *RuleContext, step int64) (bool, error) {
		invoked = append(invoked, step)
		if ctx.RuleName() != "LowLoss" || ctx.TrialCount() != 1 {
			return false, errors.New("bad context")
		}
		tt, err := ctx.Trial(0)
		if err != nil {
			return false, err
		}
		ts, err := tt.Tensor("scalar/loss_value")
		if err != nil {
			return false, err
		}
		defer ts.Close()
		v, err := ts.Value(step, ModeGlobal, "")
		if err != nil {
			return false, err // a step without the scalar (EVAL) is skipped
		}
		loss, err := v.At(0)
		if err != nil {
			return false, err
		}
		if loss < 0.3 {
			return true, ctx.Report(0, "scalar/loss_value", "loss is low")
		}
		return false, nil
	}, func(ctx *RuleContext, step int64) error {
		return ctx.RequireTensor(0, "scalar/loss_value", false, step)
	})
	must(t, err)
	defer custom.Close()
	must(t, custom.Invoke(context.Background(), 0, -1, false, nil))
	cf := custom.Findings()
	if len(cf) != 1 || cf[0].Step != 3 || cf[0].Message != "loss is low" || cf[0].Tensor != "scalar/loss_value" {
		t.Fatalf("custom findings %+v (invoked at %v)", cf, invoked)
	}
	cs := custom.Stats()
	if cs.StepsEvaluated != 4 || cs.StepsSkipped != 1 {
		t.Fatalf("custom rule stats %+v (invoked at %v)", cs, invoked)
	}
	// Both rules at once over one trial.
	az.ClearFindings()
	custom.ClearFindings()
	must(t, InvokeMany(context.Background(), []*Rule{az, custom}, 0, 3, false, nil))
	if len(az.Findings()) != 2 || len(custom.Findings()) != 0 || az.EndReason() != RuleEndStep {
		t.Fatalf("InvokeMany: %d %d %v", len(az.Findings()), len(custom.Findings()), az.EndReason())
	}
	err = InvokeMany(context.Background(), []*Rule{az, az}, 0, 3, false, nil)
	mustCode(t, err, ErrInvalidArgument)
	err = InvokeMany(context.Background(), nil, 0, 3, false, nil)
	mustCode(t, err, ErrInvalidArgument)

	// A Go error from a rule ends the invocation with its code; a panic becomes an error.
	failing, err := NewRule("Failing", tr, nil, func(ctx *RuleContext, step int64) (bool, error) {
		return false, &Error{Code: CodeCorrupt, Message: "made-up corruption"}
	}, nil)
	must(t, err)
	defer failing.Close()
	err = failing.Invoke(context.Background(), 0, -1, false, nil)
	mustCode(t, err, ErrCorrupt)
	if !strings.Contains(err.Error(), "made-up corruption") || failing.EndReason() != RuleEndError || failing.FailedStep() != 0 {
		t.Fatalf("failed rule: error %v, end %v at step %d", err, failing.EndReason(), failing.FailedStep())
	}
	var leaked *RuleContext
	panicky, err := NewRule("Panicky", tr, nil, func(ctx *RuleContext, step int64) (bool, error) {
		leaked = ctx
		panic("boom")
	}, nil)
	must(t, err)
	err = panicky.Invoke(context.Background(), 0, -1, false, nil)
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("panicking rule: %v", err)
	}
	// The context is dead after its callback.
	mustCode(t, leaked.Report(0, "", "late"), ErrClosed)
	if leaked.RuleName() != "" || leaked.TrialCount() != 0 {
		t.Fatal("stale context answers")
	}
	panicky.Close()
	panicky.Close()
	mustCode(t, panicky.Invoke(context.Background(), 0, -1, false, nil), ErrClosed)
	if panicky.Name() != "" || panicky.Findings() != nil {
		t.Fatal("closed rule answers")
	}
	_, err = NewRule("x", tr, nil, nil, nil)
	mustCode(t, err, ErrInvalidArgument)
}

func TestRuleInvokeCancelledByContext(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cancel")
	h, err := NewHook(dir, nil)
	must(t, err)
	defer h.Close()
	must(t, h.BeginStep())
	must(t, Save(h, "gradient/x", []int64{1}, []float32{1}, "gradients"))
	must(t, h.BeginStep())
	must(t, h.Flush())
	tr, err := OpenTrial(dir, &TrialOptions{CollectionWait: 5 * time.Second})
	must(t, err)
	defer tr.Close()
	r, err := NewBuiltinRule("VanishingGradient", tr, nil, nil)
	must(t, err)
	defer r.Close()
	// The job keeps running: an open-ended invocation waits until the context ends it.
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = r.Invoke(ctx, 0, -1, false, nil)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrCancelled) {
		t.Fatalf("cancelled invocation: %v", err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("cancellation took %v", el)
	}
	// A per-step wait timeout instead.
	err = r.Invoke(context.Background(), 0, -1, false, &InvokeOptions{WaitTimeout: 200 * time.Millisecond})
	mustCode(t, err, ErrStepNotYetAvailable)
	must(t, r.Invoke(context.Background(), 0, 1, false, &InvokeOptions{NoWait: true, StopAtFirst: true, NoCollectFindings: true,
		StopTraining: true}))
}

func TestTensorBoardWriter(t *testing.T) {
	dir := t.TempDir()
	w, err := NewTensorBoardWriter(dir)
	must(t, err)
	must(t, w.AddScalar(0, ModeTrain, time.Unix(1700000000, 0), "loss", 0.5))
	ok, err := AddHistogram(w, 0, ModeTrain, time.Time{}, "weights/fc1", []float32{1, 2, 3, -1})
	must(t, err)
	if !ok {
		t.Fatal("histogram not written")
	}
	ok, err = AddHistogram(w, 1, ModeTrain, time.Time{}, "nan", []float64{math.NaN()})
	must(t, err)
	if ok {
		t.Fatal("histogram of NaN written")
	}
	_, err = AddHistogram(w, 1, ModeTrain, time.Time{}, "empty", []float32{})
	mustCode(t, err, ErrInvalidArgument)
	_, err = AddHistogram(w, 1, ModeTrain, time.Time{}, "bools", []bool{true})
	mustCode(t, err, ErrInvalidArgument)
	mustCode(t, w.AddScalar(1, Mode(8), time.Time{}, "x", 1), ErrInvalidArgument)
	must(t, w.AddScalar(1, ModeEval, time.Time{}, "acc", 0.9))
	must(t, w.Flush())
	must(t, w.Close())
	must(t, w.Close())
	for _, mode := range []string{"TRAIN", "EVAL"} {
		files, _ := filepath.Glob(filepath.Join(dir, mode, "*.tfevents"))
		if len(files) == 0 {
			t.Fatalf("no %s event files", mode)
		}
	}
	if py := python(t); py != "" {
		out, err := exec.Command(py, "-c", `
import sys, glob
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
acc = EventAccumulator(sys.argv[1] + "/TRAIN"); acc.Reload()
s = acc.Scalars("loss"); h = acc.Histograms("weights/fc1")
print(s[0].step, s[0].value, h[0].histogram_value.num, h[0].histogram_value.min, h[0].histogram_value.max)
`, dir).CombinedOutput()
		if err != nil {
			t.Fatalf("tensorboard could not read the logs: %v\n%s", err, out)
		}
		if strings.TrimSpace(string(out)) != "0 0.5 4.0 -1.0 3.0" {
			t.Fatalf("tensorboard read %q", out)
		}
	}
}

// python finds the Python with the real smdebug: $SMD_PYTHON, else the repository's .venv.
// SMD_PYTHON=none turns the cross-checks off explicitly.
func python(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("SMD_PYTHON"); p != "" {
		if p == "none" {
			return ""
		}
		return p
	}
	p, _ := filepath.Abs("../../.venv/bin/python")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("no Python with smdebug at %s: run scripts/setup.sh, or set SMD_PYTHON (SMD_PYTHON=none skips the cross-checks)", p)
	}
	return p
}

func TestRealSmdebugReadsGoTrial(t *testing.T) {
	py := python(t)
	if py == "" {
		t.Skip("SMD_PYTHON=none")
	}
	dir := filepath.Join(t.TempDir(), "forsmdebug")
	writeTrial(t, dir, 2)
	script := `
import sys, json
import numpy as np
from smdebug.trials import create_trial
tr = create_trial(sys.argv[1])
out = {}
# The dtypes smdebug 1.0.34 can read (its reader has no int16, uint16/32/64 or complex64).
for name in ["t_f32", "t_f64", "t_f16", "t_i32", "t_i64", "t_u8", "t_bool", "t_c128", "t_str", "scalar/count", "scalar/flag"]:
    v = tr.tensor(name).value(1)
    if np.iscomplexobj(v):
        out[name] = [str(v.dtype), list(v.shape), [[float(x.real), float(x.imag)] for x in v.ravel()]]
    elif v.dtype.kind in "US":
        out[name] = [str(v.dtype.kind), list(v.shape), [str(x) for x in v.ravel()]]
    else:
        out[name] = [str(v.dtype), list(v.shape), [repr(x.item()) for x in v.ravel()]]
out["abs_mean"] = float(tr.tensor("gradient/fc1").reduction_value(1, "mean", abs=True))
out["steps"] = tr.steps()
out["mine"] = sorted(tr.collection("mine").tensor_names)
print(json.dumps(out))
`
	out, err := exec.Command(py, "-c", script, dir).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("smdebug failed: %v\n%s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	got := string(out)
	w := sample(1)
	for _, want := range []string{
		`"t_f32": ["float32", [2, 3], ["2.5", "-2.25", "3.0", "4.0", "inf", "6.0"]]`,
		`"t_i32": ["int32", [3], ["-2147483648", "2147483647", "1"]]`,
		`"t_u8": ["uint8", [3], ["0", "255", "1"]]`,
		`"t_f16": ["float16", [2], ["1.0", "-2.0"]]`,
		`"t_i64": ["int64", [3], ["-9223372036854775808", "9223372036854775807", "1"]]`,
		`"t_bool": ["bool", [3], ["True", "False", "False"]]`,
		`"t_c128": ["complex128", [2], [[3.0, 4.0], [1.0, -1.0]]]`,
		`"t_str": ["U", [4], ["alpha", "", "\u00fc\u00f1\u00ed", "step1"]]`,
		`"scalar/count": ["int64", [1], ["10"]]`,
		`"scalar/flag": ["bool", [1], ["True"]]`,
		`"abs_mean": 2.75`,
		`"steps": [0, 1, 2]`,
		`"mine": [`,
		`"t_f64": ["float64", [3], ["` + strconv.FormatFloat(w.f64[0], 'f', -1, 64) + `", "-1e+300", "0.5"]]`,
	} {
		if !strings.Contains(got, want) {
			t.Fatalf("smdebug read\n%s\nwhich lacks\n%s", got, want)
		}
	}
}

func TestTrialOptions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "opts")
	writeTrial(t, dir, 4)
	tr, err := OpenTrial(dir, &TrialOptions{RangeBegin: 1, RangeEnd: 3, NoAutoRefresh: true, CacheBytes: -1})
	must(t, err)
	defer tr.Close()
	steps, err := tr.Steps(ModeGlobal, false)
	must(t, err)
	if !reflect.DeepEqual(steps, []int64{1, 2}) {
		t.Fatalf("range_steps [1, 3) loaded %v", steps)
	}
	if tr.AutoRefresh() {
		t.Fatal("NoAutoRefresh left automatic refresh on")
	}
	must(t, tr.WithAutoRefresh(true, func() error {
		if !tr.AutoRefresh() {
			t.Error("WithAutoRefresh(true) on a trial opened without automatic refresh")
		}
		return nil
	}))
	if tr.AutoRefresh() {
		t.Fatal("WithAutoRefresh(true) outlived its block")
	}
	ts, err := tr.Tensor("t_f64")
	must(t, err)
	v, err := ts.Value(2, ModeTrain, "")
	must(t, err)
	got, err := v.Float64s()
	must(t, err)
	if !reflect.DeepEqual(got, sample(2).f64) {
		t.Fatalf("value without a cache: %v", got)
	}
	_, err = ts.Value(0, ModeTrain, "") // outside the range
	if err == nil {
		t.Fatal("a step outside range_steps was read")
	}
}

// A NUL would end the C string: "a\x00b" would name "a", "<dir>\x00x" would write into <dir>.
// Every name and path is refused, as is a \u0000 in a JSON configuration's strings; a worker
// name that cannot fit a file name is refused when given.
func TestNamesAndPathsWithNulOrTooLongAreRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	_, err := NewHook(dir+"\x00x", nil)
	mustCode(t, err, ErrInvalidArgument)
	_, err = OpenTrial(dir+"\x00x", nil)
	mustCode(t, err, ErrInvalidArgument)
	_, err = NewHookFromJSON([]byte(`{"LocalPath": "`+dir+`\u0000x"}`), nil)
	mustCode(t, err, ErrInvalidArgument)
	if err != nil && !strings.Contains(err.Error(), "NUL") {
		t.Errorf("message does not name the NUL: %v", err)
	}
	if _, serr := os.Stat(dir); serr == nil {
		t.Fatalf("a hook wrote into %s, the folder named before the NUL", dir)
	}
	_, err = NewHook(" "+dir, nil)
	mustCode(t, err, ErrInvalidArgument)
	o, err := NewHookOptions()
	must(t, err)
	defer o.Close()
	mustCode(t, o.SetWorker("worker_0\x00x"), ErrInvalidArgument)
	err = o.SetWorker(strings.Repeat("w", 10000))
	mustCode(t, err, ErrInvalidArgument)
	if err != nil && !strings.Contains(err.Error(), "at most 221") {
		t.Errorf("message does not give the limit: %v", err)
	}
	mustCode(t, o.AddIncludeCollection("c\x00d"), ErrInvalidArgument)
	h, err := NewHook(dir, nil)
	must(t, err)
	must(t, h.BeginStep())
	_, err = h.Collection("c\x00d")
	mustCode(t, err, ErrInvalidArgument)
	mustCode(t, h.IncludeCollection("c\x00d"), ErrInvalidArgument)
	mustCode(t, Save(h, "a\x00b", []int64{1}, []float32{0}, "default"), ErrInvalidArgument)
	must(t, Save(h, "a", []int64{1}, []float32{7}, "default"))
	must(t, h.Close())
	tr, err := OpenTrial(dir, nil)
	must(t, err)
	defer tr.Close()
	names, err := tr.TensorNames(nil)
	must(t, err)
	if len(names) != 1 || names[0] != "a" {
		t.Errorf("tensor names %q, want [a]", names)
	}
}

// A scalar's timestamp is its record's wall time; a scalar saved before the first step is kept
// and written into step 0 (as smdebug writes it in its next step).
func TestScalarTimestampAndSaveBeforeTheFirstStep(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ts")
	h, err := NewHook(dir, nil)
	must(t, err)
	must(t, SaveScalarAt(h, "early", float64(2.5), 1234.5))
	mustCode(t, SaveScalarAt(h, "bad", int32(1), math.NaN()), ErrInvalidArgument)
	must(t, h.SetMode(ModeTrain))
	must(t, h.BeginStep())
	must(t, h.Close())
	ev, err := os.ReadFile(filepath.Join(dir, "events/000000000000/000000000000_worker_0.tfevents"))
	must(t, err)
	want := make([]byte, 9)
	want[0] = 0x09 // Event.wall_time: field 1, fixed64
	bits := math.Float64bits(1234.5)
	for i := 0; i < 8; i++ {
		want[1+i] = byte(bits >> (8 * i))
	}
	if !strings.Contains(string(ev), string(want)) {
		t.Fatal("the event's wall_time is not the timestamp")
	}
	tr, err := OpenTrial(dir, nil)
	must(t, err)
	defer tr.Close()
	checkValue(t, tr, "scalar/early", 0, []float64{2.5}, []int64{1})
}

// EndStep completes the step's files while the hook stays open (a trial sees the step); a save
// made after it is kept for the step Close begins.
func TestEndStepLeavesTheHookOpen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "endstep")
	h, err := NewHook(dir, nil)
	must(t, err)
	must(t, h.SetMode(ModeTrain))
	must(t, h.BeginStep())
	must(t, SaveScalarOf(h, "loss", float64(0.5)))
	must(t, h.EndStep())
	must(t, h.Flush())
	if h.GlobalStep() != 0 {
		t.Fatalf("global step after EndStep: %d", h.GlobalStep())
	}
	tr, err := OpenTrial(dir, nil)
	must(t, err)
	st, err := tr.HasPassedStep(0, ModeGlobal)
	must(t, err)
	if st != StepAvailable {
		t.Fatalf("step 0 after EndStep: %v", st)
	}
	tr.Close()
	must(t, SaveScalarOf(h, "after", float64(2)))
	must(t, h.Close())
	mustCode(t, h.EndStep(), ErrInvalidState)
	tr, err = OpenTrial(dir, nil)
	must(t, err)
	defer tr.Close()
	checkValue(t, tr, "scalar/after", 1, []float64{2}, []int64{1})
}

// MakeDue saves an included collection for the rest of the step whatever its save configuration
// says; the next step is back to the configuration.
func TestMakeDueSavesACollectionForTheRestOfTheStep(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "makedue")
	opts, err := NewHookOptions()
	must(t, err)
	defer opts.Close()
	sc, err := NewSaveConfig()
	must(t, err)
	must(t, sc.Set(ModeAll, 100, 0, -1))
	must(t, opts.SetSaveConfig(sc))
	must(t, opts.AddIncludeCollection("metrics"))
	h, err := NewHook(dir, opts)
	must(t, err)
	metrics, err := h.Collection("metrics")
	must(t, err)
	must(t, metrics.AddTensorName("acc"))
	metrics.Close()
	mustCode(t, h.MakeDue("metrics"), ErrInvalidState)
	must(t, h.SetMode(ModeTrain))
	must(t, h.BeginStep())
	must(t, h.BeginStep())
	if h.IsDue("acc") {
		t.Fatal("acc due at step 1 with interval 100")
	}
	mustCode(t, h.MakeDue("nope"), ErrNotFound)
	must(t, h.MakeDue("metrics"))
	if !h.IsDue("acc") {
		t.Fatal("acc not due after MakeDue")
	}
	must(t, Save(h, "acc", []int64{1}, []float64{0.5}))
	must(t, h.BeginStep())
	if h.IsDue("acc") {
		t.Fatal("MakeDue outlived its step")
	}
	must(t, h.Close())
	tr, err := OpenTrial(dir, nil)
	must(t, err)
	defer tr.Close()
	checkValue(t, tr, "acc", 1, []float64{0.5}, []int64{1})
}

// MaySave answers, whatever the step, whether a name (or a numbered family of names) can belong
// to an included collection; CollectionsVersion changes when the collections do.
func TestMaySaveFollowsTheIncludedCollections(t *testing.T) {
	opts, err := NewHookOptions()
	must(t, err)
	defer opts.Close()
	sc, err := NewSaveConfig()
	must(t, err)
	defer sc.Close()
	must(t, sc.Set(ModeAll, 1, 0, -1))
	must(t, opts.SetSaveConfig(sc))
	h, err := NewHook(filepath.Join(t.TempDir(), "maysave"), opts)
	must(t, err)
	defer h.Close()
	// by default only losses is saved
	if !h.MaySave("CrossEntropyLoss_output_", true) {
		t.Fatal("the loss module's outputs may not be saved")
	}
	if h.MaySave("layer1.0.conv1_output_", true) || h.MaySave("gradient/Net_fc.weight", false) {
		t.Fatal("a tensor of no included collection may be saved")
	}
	if h.MaySave("loss\x00", false) {
		t.Fatal("a name with a NUL byte may be saved")
	}
	v0 := h.CollectionsVersion()
	if h.CollectionsVersion() != v0 {
		t.Fatal("reading the version changed it")
	}
	must(t, h.IncludeCollection("gradients"))
	if h.CollectionsVersion() == v0 {
		t.Fatal("including a collection left the version as it was")
	}
	if !h.MaySave("gradient/Net_fc.weight", false) {
		t.Fatal("a gradient may not be saved once gradients is included")
	}
	acts, err := h.Collection("acts")
	must(t, err)
	must(t, acts.AddTensorName("relu_output_3"))
	acts.Close()
	must(t, h.IncludeCollection("acts"))
	if !h.MaySave("relu_output_", true) {
		t.Fatal("relu_output_<n> may not be saved though relu_output_3 is in acts")
	}
	if h.MaySave("relu_", true) {
		t.Fatal("relu_<n> may be saved: \"output_3\" is no index")
	}
	must(t, h.Close())
	if h.MaySave("relu_output_", true) || h.MaySave("CrossEntropyLoss_output_", true) {
		t.Fatal("a closed hook may save")
	}
	if h.CollectionsVersion() != 0 {
		t.Fatal("a closed hook has a collections version")
	}
}

// ClearIncludeRegex takes out the built-in pattern too; the names added stay.
func TestClearIncludeRegex(t *testing.T) {
	opts, err := NewHookOptions()
	must(t, err)
	defer opts.Close()
	must(t, opts.AddIncludeCollection("weights"))
	h, err := NewHook(filepath.Join(t.TempDir(), "clear"), opts)
	must(t, err)
	defer h.Close()
	w, err := h.Collection("weights")
	must(t, err)
	defer w.Close()
	must(t, h.BeginStep())
	if !h.IsDue("fc.weight") {
		t.Fatal("the built-in weights pattern does not match fc.weight")
	}
	must(t, w.AddTensorName("kernel"))
	must(t, w.ClearIncludeRegex())
	if h.IsDue("conv.weight") || !h.IsDue("kernel") {
		t.Fatal("after ClearIncludeRegex: the pattern still matches, or the name added was dropped")
	}
}

// WithAutoRefresh is smdebug's no_refresh / refresh block for the calling goroutine only: a step
// a running job writes after a no-refresh block began stays unseen inside it, while another
// goroutine (one that did not lock its thread, here one started inside the block) still refreshes.
func TestWithAutoRefreshIsPerGoroutine(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "live")
	h, err := NewHook(dir, nil)
	must(t, err)
	defer h.Close()
	must(t, h.SetMode(ModeTrain))
	writeStep := func(loss float64) {
		t.Helper()
		must(t, h.BeginStep())
		must(t, SaveScalarOf(h, "loss", loss))
		must(t, h.EndStep())
		must(t, h.Flush())
	}
	writeStep(0)
	tr, err := OpenTrial(dir, &TrialOptions{CollectionWait: 5 * time.Second})
	must(t, err)
	defer tr.Close()
	ts, err := tr.Tensor("scalar/loss")
	must(t, err)
	defer ts.Close()
	expectSteps := func(who string, want ...int64) {
		t.Helper()
		got, err := tr.Steps(ModeGlobal, true)
		must(t, err)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: trial steps %v, want %v", who, got, want)
		}
	}
	expectSteps("before any block", 0)
	if !tr.AutoRefresh() {
		t.Fatal("automatic refresh is off by default")
	}
	type probe struct {
		steps []int64
		auto  bool
		err   error
	}
	// elsewhere reads the trial from a new goroutine, which is not in this goroutine's block.
	elsewhere := func() probe {
		ch := make(chan probe)
		go func() {
			s, err := tr.Steps(ModeGlobal, true)
			ch <- probe{s, tr.AutoRefresh(), err}
		}()
		return <-ch
	}

	must(t, tr.WithAutoRefresh(false, func() error {
		if tr.AutoRefresh() {
			t.Fatal("AutoRefresh inside WithAutoRefresh(false)")
		}
		writeStep(1)
		expectSteps("no-refresh block", 0)
		ps, err := ts.Steps(ModeGlobal, true)
		must(t, err)
		if !reflect.DeepEqual(ps, []int64{0}) {
			t.Fatalf("no-refresh block: the tensor refreshed (steps %v)", ps)
		}
		// Another goroutine refreshes, and what it loads is the trial's: this goroutine sees
		// step 1 afterwards without refreshing itself.
		if p := elsewhere(); p.err != nil || !p.auto || !reflect.DeepEqual(p.steps, []int64{0, 1}) {
			t.Fatalf("another goroutine during the block: steps %v auto %v err %v", p.steps, p.auto, p.err)
		}
		expectSteps("no-refresh block after another goroutine refreshed", 0, 1)
		writeStep(2)
		expectSteps("no-refresh block", 0, 1)
		// Blocks nest: the innermost wins, and its end brings the outer one back.
		must(t, tr.WithAutoRefresh(true, func() error {
			if !tr.AutoRefresh() {
				t.Fatal("AutoRefresh inside WithAutoRefresh(true) inside WithAutoRefresh(false)")
			}
			expectSteps("refresh block inside a no-refresh block", 0, 1, 2)
			return nil
		}))
		if tr.AutoRefresh() {
			t.Fatal("the outer no-refresh block did not come back after the inner block")
		}
		writeStep(3)
		expectSteps("no-refresh block after the inner refresh block", 0, 1, 2)
		return nil
	}))
	if !tr.AutoRefresh() {
		t.Fatal("WithAutoRefresh(false) outlived its block")
	}
	expectSteps("after the block", 0, 1, 2, 3)

	// fn's error comes back; a panic ends the block too.
	sentinel := errors.New("from fn")
	if err := tr.WithAutoRefresh(false, func() error { return sentinel }); err != sentinel {
		t.Fatalf("WithAutoRefresh returned %v, want fn's error", err)
	}
	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Fatalf("recovered %v", p)
			}
		}()
		_ = tr.WithAutoRefresh(false, func() error { panic("boom") })
	}()
	if !tr.AutoRefresh() {
		t.Fatal("a panicking fn left the no-refresh block in place")
	}
	writeStep(4)
	expectSteps("after a panicking block", 0, 1, 2, 3, 4)
	mustCode(t, tr.WithAutoRefresh(false, nil), ErrInvalidArgument)

	// A trial opened without automatic refresh refreshes inside WithAutoRefresh(true); a block
	// outlives a Close made inside it.
	manual, err := OpenTrial(dir, &TrialOptions{NoAutoRefresh: true})
	must(t, err)
	writeStep(5)
	steps, err := manual.Steps(ModeGlobal, true)
	must(t, err)
	if len(steps) != 5 || manual.AutoRefresh() {
		t.Fatalf("trial opened without automatic refresh: steps %v, auto %v", steps, manual.AutoRefresh())
	}
	must(t, manual.WithAutoRefresh(true, func() error {
		steps, err := manual.Steps(ModeGlobal, true)
		if err != nil || len(steps) != 6 {
			t.Fatalf("refresh block of a trial opened without automatic refresh: steps %v err %v", steps, err)
		}
		manual.Close()
		return nil
	}))
	called := false
	mustCode(t, manual.WithAutoRefresh(true, func() error { called = true; return nil }), ErrClosed)
	if called || manual.AutoRefresh() {
		t.Fatal("WithAutoRefresh on a closed trial ran fn")
	}
}

// A rule's failure is the error of its invocation: the failed rule ends with RuleEndError at the
// step, the others stop unfinished (RuleEndStopped, no failed step).
func TestInvokeManyOneRuleFails(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fails")
	writeTrial(t, dir, 4)
	tr, err := OpenTrial(dir, nil)
	must(t, err)
	defer tr.Close()
	var okSteps []int64
	ok, err := NewRule("Fine", tr, nil, func(ctx *RuleContext, step int64) (bool, error) {
		okSteps = append(okSteps, step)
		return false, nil
	}, nil)
	must(t, err)
	defer ok.Close()
	autoInRule := true
	bad, err := NewRule("Breaks", tr, nil, func(ctx *RuleContext, step int64) (bool, error) {
		// While a rule evaluates a step, its trials do not refresh on the invoking thread.
		if tt, err := ctx.Trial(0); err == nil {
			autoInRule = tt.AutoRefresh()
		}
		if step == 2 {
			return false, &Error{Code: CodeCorrupt, Message: "broken at two"}
		}
		return false, nil
	}, nil)
	must(t, err)
	defer bad.Close()
	if ok.EndReason() != RuleEndNone || ok.FailedStep() != -1 {
		t.Fatalf("before any invocation: end %v failed step %d", ok.EndReason(), ok.FailedStep())
	}
	err = InvokeMany(context.Background(), []*Rule{bad, ok}, 0, -1, false, nil)
	mustCode(t, err, ErrCorrupt)
	if !strings.Contains(err.Error(), "broken at two") {
		t.Fatalf("the invocation's error is not the rule's failure: %v", err)
	}
	if bad.EndReason() != RuleEndError || bad.FailedStep() != 2 {
		t.Fatalf("failed rule: end %v, failed step %d", bad.EndReason(), bad.FailedStep())
	}
	if ok.EndReason() != RuleEndStopped || ok.FailedStep() != -1 {
		t.Fatalf("the other rule: end %v, failed step %d", ok.EndReason(), ok.FailedStep())
	}
	if !reflect.DeepEqual(okSteps, []int64{0, 1}) {
		t.Fatalf("the other rule was evaluated at %v, want [0 1] (stopped at the failing step)", okSteps)
	}
	if autoInRule {
		t.Fatal("automatic refresh was on inside a rule callback")
	}
	// The next invocation starts afresh: no failure left behind.
	must(t, InvokeMany(context.Background(), []*Rule{bad, ok}, 0, 2, false, nil))
	if bad.EndReason() != RuleEndStep || bad.FailedStep() != -1 || ok.EndReason() != RuleEndStep {
		t.Fatalf("after a clean invocation: %v %d %v", bad.EndReason(), bad.FailedStep(), ok.EndReason())
	}
	bad.Close()
	if bad.FailedStep() != -1 {
		t.Fatal("closed rule's failed step")
	}
}

// smdebug's Tensor.original_name: the shape entries' "originalname"; none for a tensor saved
// without its shape.
func TestTensorOriginalName(t *testing.T) {
	fixtures := filepath.Join("..", "..", "tests", "data", "trials")
	tr, err := OpenTrial(filepath.Join(fixtures, "shapes"), nil)
	must(t, err)
	defer tr.Close()
	ts, err := tr.Tensor("sh_4d")
	must(t, err)
	defer ts.Close()
	name, ok, err := ts.OriginalName()
	must(t, err)
	if !ok || name != "sh_4d" {
		t.Fatalf("original name %q %v", name, ok)
	}
	m, err := OpenTrial(filepath.Join(fixtures, "modes_reentry"), nil)
	must(t, err)
	defer m.Close()
	loss, err := m.Tensor("loss")
	must(t, err)
	defer loss.Close()
	name, ok, err = loss.OriginalName()
	must(t, err)
	if ok || name != "" {
		t.Fatalf("a tensor saved without its shape has original name %q %v", name, ok)
	}
	loss.Close()
	_, _, err = loss.OriginalName()
	mustCode(t, err, ErrClosed)
}

// The invocation's callbacks may read the rules it runs (they used to deadlock on the rule's lock,
// which the invocation held); what would change a rule is refused there, and Close there frees
// the rule once the invocation returns.
func TestRuleCallbacksReadTheRuleTheyRunIn(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rules")
	writeTrial(t, dir, 4)
	tr, err := OpenTrial(dir, nil)
	must(t, err)
	defer tr.Close()
	az, err := NewBuiltinRule("AllZero", tr, nil, map[string]string{"tensor_regex": "^zeros$"})
	must(t, err)
	defer az.Close()
	var evaluated []int64
	var names []string
	var changeErr, invokeErr error
	done := make(chan error, 1)
	go func() {
		done <- az.Invoke(context.Background(), 0, -1, false, &InvokeOptions{
			OnProgress: func(rule string, step int64, o RuleOutcome) {
				evaluated = append(evaluated, az.Stats().StepsEvaluated)
				names = append(names, az.Name())
				changeErr = az.SetStopTraining(true)
				invokeErr = az.Invoke(context.Background(), 0, 1, false, nil)
			},
			OnFinding: func(f Finding) error {
				if n := len(az.Findings()); n == 0 {
					return fmt.Errorf("the finding callback sees %d findings", n)
				}
				return nil
			},
		})
	}()
	select {
	case err := <-done:
		must(t, err)
	case <-time.After(60 * time.Second):
		t.Fatal("Invoke did not return: a callback reading its rule is blocked")
	}
	if !reflect.DeepEqual(evaluated, []int64{1, 2, 3, 4, 5}) || names[0] != "AllZero" {
		t.Fatalf("steps evaluated seen from the progress callback %v, names %v", evaluated, names)
	}
	mustCode(t, changeErr, ErrInvalidState)
	mustCode(t, invokeErr, ErrInvalidState)
	if az.StopTraining() {
		t.Fatal("SetStopTraining from a callback changed the rule")
	}

	// A custom rule's function reads its own rule; Close from a callback frees it afterwards.
	var custom *Rule
	var seen []int64
	custom, err = NewRule("Reads", tr, nil, func(ctx *RuleContext, step int64) (bool, error) {
		seen = append(seen, custom.Stats().StepsEvaluated)
		return false, nil
	}, nil)
	must(t, err)
	must(t, custom.Invoke(context.Background(), 0, 3, false, nil))
	if !reflect.DeepEqual(seen, []int64{0, 1, 2}) {
		t.Fatalf("a custom rule reading its own stats saw %v", seen)
	}
	seen = nil
	closed := false
	must(t, custom.Invoke(context.Background(), 0, 3, false, &InvokeOptions{
		OnProgress: func(string, int64, RuleOutcome) {
			if !closed {
				custom.Close()
				closed = true
			}
			if custom.Name() != "" {
				t.Error("a rule closed during its invocation still answers")
			}
		},
	}))
	if !reflect.DeepEqual(seen, []int64{3, 0, 0}) { // closed from step 0's progress: then it answers nothing
		t.Fatalf("a custom rule reading its own stats, closed during its invocation, saw %v", seen)
	}
	if custom.Name() != "" || custom.Stats().LastStep != -1 {
		t.Fatal("Close during the invocation did not free the rule once it returned")
	}
	mustCode(t, custom.Invoke(context.Background(), 0, 1, false, nil), ErrClosed)
}

// A HookOptions whose last use is NewHook is not freed by its finalizer during the call (it was:
// hooks made from freed options, about 1 in 3,000 with the collector running). Probabilistic: a
// regression shows as an error here in some runs.
func TestHookOptionsOutliveNewHook(t *testing.T) {
	root := t.TempDir()
	var stop atomic.Bool
	go func() {
		for !stop.Load() {
			runtime.GC()
		}
	}()
	defer stop.Store(true)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 250; i++ {
				o, err := NewHookOptions()
				if err != nil {
					errs <- err
					return
				}
				for k := 0; k < 20; k++ {
					if err := o.AddIncludeRegex(fmt.Sprintf("^layer_%04d_[a-z]+_with_a_longer_pattern$", k)); err != nil {
						errs <- err
						return
					}
				}
				h, err := NewHook(filepath.Join(root, fmt.Sprintf("r%d_%d", g, i)), o) // the options' last use
				if err != nil {
					errs <- fmt.Errorf("iteration %d: %w", i, err)
					return
				}
				lost := !h.MaySave("layer_0019_x_with_a_longer_pattern", false)
				h.Close()
				if lost {
					errs <- fmt.Errorf("iteration %d: the hook lost its include regexes", i)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// A trial's collection carries its save configuration: per mode as the hook wrote it, nil when
// the collections file has none, unset modes where the file leaves them null.
func TestCollectionSaveConfig(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	opts, err := NewHookOptions()
	must(t, err)
	defer opts.Close()
	hookSC, err := NewSaveConfig()
	must(t, err)
	must(t, hookSC.Set(ModeAll, 3, 0, -1))
	must(t, opts.SetSaveConfig(hookSC))
	h, err := NewHook(dir, opts)
	must(t, err)
	defer h.Close()
	c, err := h.Collection("mine")
	must(t, err)
	must(t, c.AddIncludeRegex("^mine/"))
	sc, err := NewSaveConfig()
	must(t, err)
	must(t, sc.Set(ModeTrain, 2, 1, 9, 4, 11))
	must(t, c.SetSaveConfig(sc))
	must(t, h.IncludeCollection("mine"))
	must(t, h.BeginStep())
	must(t, h.SaveScalar("mine/x", 1))
	must(t, h.Close())

	tr, err := OpenTrial(dir, nil)
	must(t, err)
	defer tr.Close()
	ci, err := tr.Collection("mine")
	must(t, err)
	if ci.SaveConfig == nil {
		t.Fatal("no save configuration")
	}
	got, set, err := ci.SaveConfig.Settings(ModeTrain)
	must(t, err)
	if want := (SaveConfigMode{2, 1, 9, []int64{4, 11}}); !set || !reflect.DeepEqual(got, want) {
		t.Fatalf("TRAIN: %+v %v", got, set)
	}
	got, set, err = ci.SaveConfig.Settings(ModeEval) // the hook's, as the file holds it
	must(t, err)
	if want := (SaveConfigMode{3, 0, -1, []int64{}}); !set || !reflect.DeepEqual(got, want) {
		t.Fatalf("EVAL: %+v %v", got, set)
	}
	due, err := ci.SaveConfig.ShouldSave(4, ModeTrain)
	must(t, err)
	if !due {
		t.Fatal("step 4 of TRAIN not saved")
	}
	_, _, err = ci.SaveConfig.Settings(ModeAll)
	mustCode(t, err, ErrInvalidArgument)

	// A collections file written by hand.
	byHand := filepath.Join(t.TempDir(), "by_hand")
	must(t, os.MkdirAll(filepath.Join(byHand, "collections", "000000000"), 0o755))
	must(t, os.WriteFile(filepath.Join(byHand, "collections", "000000000", "worker_0_collections.json"),
		[]byte(`{"collections": {"none": {"name": "none", "save_config": null},
		 "partial": {"name": "partial", "save_config": {"TRAIN": {"save_interval": 4}, "EVAL": null}}},
		 "_meta": {"num_workers": 1}}`), 0o644))
	must(t, os.WriteFile(filepath.Join(byHand, "training_job_end.ts"), nil, 0o644))
	tr2, err := OpenTrial(byHand, nil)
	must(t, err)
	defer tr2.Close()
	ci, err = tr2.Collection("none")
	must(t, err)
	if ci.SaveConfig != nil {
		t.Fatal("a null save_config gave a configuration")
	}
	ci, err = tr2.Collection("partial")
	must(t, err)
	got, set, err = ci.SaveConfig.Settings(ModeTrain)
	must(t, err)
	if want := (SaveConfigMode{4, 0, -1, []int64{}}); !set || !reflect.DeepEqual(got, want) {
		t.Fatalf("partial TRAIN: %+v %v", got, set)
	}
	got, set, err = ci.SaveConfig.Settings(ModeEval)
	must(t, err)
	if want := (SaveConfigMode{500, 0, -1, []int64{}}); set || !reflect.DeepEqual(got, want) {
		t.Fatalf("partial EVAL (unset): %+v %v", got, set)
	}
}
