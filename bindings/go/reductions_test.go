package smd

import (
	"bytes"
	"encoding/binary"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

// Reductions the caller computed are written byte for byte as the hook writes its own.
func TestSaveReductionsMatchesTheHooksOwn(t *testing.T) {
	data := []float32{1, -2, 3, -4}
	run := func(dir string, given bool) {
		o, err := NewHookOptions()
		must(t, err)
		rc, err := ParseReductionConfig("min,max,sum,l1,abs_max")
		must(t, err)
		must(t, o.SetReductionConfig(rc))
		must(t, o.SetSaveAll(true))
		must(t, o.SetWallTimeBase(100))
		h, err := NewHook(dir, o)
		must(t, err)
		must(t, h.BeginStep())
		if given {
			due, err := h.DueReductions("g")
			must(t, err)
			// no TensorBoard folder: no histogram
			if due.Value || due.Histogram || !reflect.DeepEqual(due.Reductions, []string{"min", "max", "sum", "l1", "abs_max"}) {
				t.Fatalf("due %+v", due)
			}
			must(t, h.SaveReductions("g", DTypeFloat32, []int64{2, 2}, []ReductionValue{
				{"max", false, 3}, {"min", false, -4}, {"sum", false, -2}, {"l1", false, 10},
				{"max", true, 4}}, nil))
			err = h.SaveReductions("g2", DTypeFloat32, []int64{4}, []ReductionValue{{"min", false, 1}}, nil)
			mustCode(t, err, ErrInvalidArgument)
		} else {
			must(t, Save(h, "g", []int64{2, 2}, data))
		}
		must(t, h.Close())
	}
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	run(a, false)
	run(b, true)
	rel := filepath.Join("events", "000000000000", "000000000000_worker_0.tfevents")
	fa, err := os.ReadFile(filepath.Join(a, rel))
	must(t, err)
	fb, err := os.ReadFile(filepath.Join(b, rel))
	must(t, err)
	if !bytes.Equal(fa, fb) {
		t.Fatalf("event files differ (%d and %d bytes)", len(fa), len(fb))
	}
}

// histTensor is a tensor the histogram tests save: its elements as raw bytes and as float64.
type histTensor struct {
	name  string
	dtype DType
	shape []int64
	data  []byte
	xs    []float64
}

func histTensors(step int64) []histTensor {
	k := float64(step + 1)
	f32 := func(name string, xs ...float32) histTensor {
		b := make([]byte, 0, 4*len(xs))
		d := make([]float64, len(xs))
		for i, x := range xs {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
			d[i] = float64(x)
		}
		return histTensor{name, DTypeFloat32, []int64{int64(len(xs))}, b, d}
	}
	f64 := func(name string, xs ...float64) histTensor {
		b := make([]byte, 0, 8*len(xs))
		for _, x := range xs {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
		}
		return histTensor{name, DTypeFloat64, []int64{int64(len(xs))}, b, xs}
	}
	i32 := func(name string, xs ...int32) histTensor {
		b := make([]byte, 0, 4*len(xs))
		d := make([]float64, len(xs))
		for i, x := range xs {
			b = binary.LittleEndian.AppendUint32(b, uint32(x))
			d[i] = float64(x)
		}
		return histTensor{name, DTypeInt32, []int64{int64(len(xs))}, b, d}
	}
	return []histTensor{
		f32("gradient/w", float32(k), -2, 3, float32(-4*k), 0.5, 0),
		// 1e21 is beyond the last edge, -1e-13 between 0 and the edge nearest it
		f64("gradient/far", 0.5, -1e-13, 1e21*k, math.Copysign(0, -1)),
		// in no bucket: no histogram is written
		f32("gradient/out", float32(math.Inf(1)), float32(math.Inf(-1))),
		i32("gradient/i", 1, -2, int32(3*k), 7),
	}
}

// histHook saves the gradients every step as reductions only, with TensorBoard histograms.
func histHook(t *testing.T, dir, tb string) *Hook {
	t.Helper()
	sc, err := NewSaveConfig()
	must(t, err)
	must(t, sc.Set(ModeAll, 1, 0, -1))
	o, err := NewHookOptions()
	must(t, err)
	must(t, o.SetSaveConfig(sc))
	must(t, o.AddIncludeCollection("gradients"))
	must(t, o.SetWallTimeBase(1000))
	must(t, o.SetTensorBoardDir(tb))
	h, err := NewHook(dir, o)
	must(t, err)
	rc, err := ParseReductionConfig("min,max,mean,sum,l2,abs_max,abs_l1")
	must(t, err)
	must(t, rc.SetSaveShape(true))
	g, err := h.Collection("gradients")
	must(t, err)
	must(t, g.SetReductionConfig(rc))
	must(t, g.SetSaveHistogram(true))
	return h
}

// countHistogram counts xs over the bucket edges as smd and numpy do.
func countHistogram(xs []float64) *Histogram {
	edges := HistogramBucketEdges()
	h := &Histogram{Min: math.Inf(1), Max: math.Inf(-1), Counts: make([]uint64, len(edges)-1)}
	nan := false
	for _, x := range xs {
		nan = nan || math.IsNaN(x)
		h.Min = math.Min(h.Min, x)
		h.Max = math.Max(h.Max, x)
		h.Sum += x
		h.SumSquares += x * x
		if math.IsInf(x, 0) || math.IsNaN(x) || x < edges[0] || x > edges[len(edges)-1] {
			continue
		}
		// the bucket i with edges[i] <= x < edges[i+1]; the last one also holds its right edge
		i := sort.Search(len(edges), func(j int) bool { return edges[j] > x }) - 1
		h.Counts[min(i, len(h.Counts)-1)]++
	}
	if nan {
		h.Min, h.Max = math.NaN(), math.NaN()
	}
	return h
}

// filesUnder reads every file under root, by path relative to it.
func filesUnder(t *testing.T, root string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	must(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		out[rel] = b
		return err
	}))
	return out
}

func TestHistogramBucketEdges(t *testing.T) {
	edges := HistogramBucketEdges()
	if len(edges) != 1549 || !slices.IsSorted(edges) || !slices.Contains(edges, 0) || edges[0] > -1e19 || edges[len(edges)-1] < 1e19 {
		t.Fatalf("%d edges from %g to %g", len(edges), edges[0], edges[len(edges)-1])
	}
	if &HistogramBucketEdges()[0] != &edges[0] {
		t.Fatal("the edges are copied at every call")
	}
}

// Histograms the caller computed are written, with the reductions, byte for byte as the hook
// writes its own: the event files and the TensorBoard logs.
func TestSaveReductionsWithHistogramsMatchesTheHooksOwn(t *testing.T) {
	const steps = 2
	root := t.TempDir()
	a, b, tbA, tbB := filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "a_tb"), filepath.Join(root, "b_tb")
	h := histHook(t, a, tbA)
	for s := int64(0); s < steps; s++ {
		must(t, h.BeginStep())
		for _, x := range histTensors(s) {
			must(t, h.SaveTensor(x.name, x.dtype, x.shape, x.data))
		}
	}
	must(t, h.Close())

	trial, err := OpenTrial(a, nil)
	must(t, err)
	defer trial.Close()
	h = histHook(t, b, tbB)
	for s := int64(0); s < steps; s++ {
		must(t, h.BeginStep())
		for _, x := range histTensors(s) {
			due, err := h.DueReductions(x.name)
			must(t, err)
			if due.Value || !due.Histogram || !reflect.DeepEqual(due.Reductions, []string{"min", "max", "mean", "sum", "l2", "abs_max", "abs_l1"}) {
				t.Fatalf("%s: due %+v", x.name, due)
			}
			// the values the first run computed, as the trial reads them back
			tensor, err := trial.Tensor(x.name)
			must(t, err)
			var values []ReductionValue
			for _, r := range due.Reductions {
				v, err := tensor.ReductionValue(s, ModeGlobal, "", r)
				must(t, err)
				f, err := v.At(0)
				must(t, err)
				v.Close()
				base, abs := strings.CutPrefix(r, "abs_")
				values = append(values, ReductionValue{base, abs, f})
			}
			tensor.Close()
			// required when due
			err = h.SaveReductions(x.name, x.dtype, x.shape, values, nil)
			mustCode(t, err, ErrInvalidArgument)
			if !strings.Contains(err.Error(), "histogram") {
				t.Fatalf("error %v does not name the histogram", err)
			}
			must(t, h.SaveReductions(x.name, x.dtype, x.shape, values, countHistogram(x.xs)))
		}
	}
	must(t, h.Close())

	for _, pair := range [][2]string{{a, b}, {tbA, tbB}} {
		fa, fb := filesUnder(t, pair[0]), filesUnder(t, pair[1])
		if len(fa) != len(fb) {
			t.Fatalf("%s holds %d files, %s %d", pair[0], len(fa), pair[1], len(fb))
		}
		for rel, data := range fa {
			if other, ok := fb[rel]; !ok || !bytes.Equal(data, other) {
				t.Fatalf("%s differs between %s and %s (%d and %d bytes)", rel, pair[0], pair[1], len(data), len(other))
			}
		}
	}
	// the TensorBoard logs hold histograms at all (one file a step)
	n := 0
	for rel := range filesUnder(t, tbB) {
		if strings.HasSuffix(rel, ".tfevents") {
			n++
		}
	}
	if n != steps {
		t.Fatalf("%d TensorBoard event files, want %d", n, steps)
	}
}

func TestSaveReductionsHistogramErrors(t *testing.T) {
	root := t.TempDir()
	h := histHook(t, filepath.Join(root, "run"), filepath.Join(root, "tb"))
	defer h.Close()
	must(t, h.BeginStep())
	due, err := h.DueReductions("gradient/x")
	must(t, err)
	want := DueReductions{Reductions: []string{"min", "max", "mean", "sum", "l2", "abs_max", "abs_l1"}, Histogram: true}
	if !reflect.DeepEqual(due, want) {
		t.Fatalf("due %+v, want %+v", due, want)
	}
	var values []ReductionValue
	for _, r := range due.Reductions {
		base, abs := strings.CutPrefix(r, "abs_")
		values = append(values, ReductionValue{base, abs, 1})
	}
	save := func(hist *Histogram) error {
		return h.SaveReductions("gradient/x", DTypeFloat64, []int64{3}, values, hist)
	}
	expect := func(err error, text string) {
		t.Helper()
		mustCode(t, err, ErrInvalidArgument)
		if !strings.Contains(err.Error(), text) {
			t.Fatalf("error %v does not say %q", err, text)
		}
	}
	expect(save(nil), "histogram")
	hist := countHistogram([]float64{1, 2, 3})
	long := *hist
	long.Counts = append(slices.Clone(hist.Counts), 0)
	expect(save(&long), "1548 buckets")
	empty := *hist
	empty.Counts = nil
	expect(save(&empty), "histogram")
	hist.Counts[0] = 5 // more elements than the tensor has
	expect(save(hist), "more than the tensor's 3 elements")
	hist.Counts[0] = 0
	must(t, save(hist))
	// a histogram that is not due is ignored (a tensor of no collection: nothing is due)
	due, err = h.DueReductions("other")
	must(t, err)
	if len(due.Reductions) != 0 || due.Value || due.Histogram {
		t.Fatalf("due %+v for a tensor of no collection", due)
	}
	must(t, h.SaveReductions("other", DTypeFloat64, []int64{3}, nil, hist))
	must(t, h.Close())
}

// SetKeepColonIndex: the reductions of "dense/kernel:0" belong to that name, as in smdebug's
// TensorFlow hooks; without it to "dense/kernel", as in its other hooks.
func TestKeepColonIndexDecidesWhichTensorOwnsTheReductions(t *testing.T) {
	for _, keep := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), "run")
		o, err := NewHookOptions()
		must(t, err)
		rc, err := ParseReductionConfig("max")
		must(t, err)
		must(t, o.SetReductionConfig(rc))
		must(t, o.SetSaveAll(true))
		must(t, o.SetKeepColonIndex(keep))
		h, err := NewHook(dir, o)
		must(t, err)
		must(t, h.BeginStep())
		must(t, Save(h, "dense/kernel:0", []int64{2}, []float32{1, 5}))
		must(t, h.Close())
		trial, err := OpenTrial(dir, nil)
		must(t, err)
		owner, other := "dense/kernel", "dense/kernel:0"
		if keep {
			owner, other = other, owner
		}
		tensor, err := trial.Tensor(owner)
		must(t, err)
		v, err := tensor.ReductionValue(0, ModeGlobal, "", "max")
		must(t, err)
		if f, err := v.At(0); err != nil || f != 5 {
			t.Fatalf("keep=%v: max of %s = %v, %v", keep, owner, f, err)
		}
		if tensor, err := trial.Tensor(other); err == nil {
			if _, err := tensor.ReductionValue(0, ModeGlobal, "", "max"); err == nil {
				t.Fatalf("keep=%v: %s has the reduction too", keep, other)
			}
		}
		trial.Close()
	}
}
