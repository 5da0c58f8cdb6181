package smd

import (
	"bytes"
	"os"
	"path/filepath"
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
			due, value, err := h.DueReductions("g")
			must(t, err)
			if value || len(due) != 5 || due[0] != "min" || due[4] != "abs_max" {
				t.Fatalf("due %q value %v", due, value)
			}
			must(t, h.SaveReductions("g", DTypeFloat32, []int64{2, 2}, []ReductionValue{
				{"max", false, 3}, {"min", false, -4}, {"sum", false, -2}, {"l1", false, 10},
				{"max", true, 4}}))
			err = h.SaveReductions("g2", DTypeFloat32, []int64{4}, []ReductionValue{{"min", false, 1}})
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
