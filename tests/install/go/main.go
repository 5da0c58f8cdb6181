// The Go program of the README's "Use smd from your program" (the same as app.c): writes a trial
// with the hook, reads a value back, runs a built-in rule.
package main

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/smd-project/smd/bindings/go"
)

func main() {
	dir := os.Args[1]
	everyStep, err := smd.NewSaveConfig()
	check(err)
	check(everyStep.Set(smd.ModeAll, 1, 0, -1))
	opts, err := smd.NewHookOptions()
	check(err)
	check(opts.SetSaveConfig(everyStep))
	check(opts.AddIncludeCollection("weights"))
	h, err := smd.NewHook(dir, opts)
	check(err)
	for step := 0; step < 3; step++ {
		w := []float32{0, float32(step), float32(2 * step), float32(3 * step)} // all zero at step 0
		check(h.BeginStep())
		check(smd.Save(h, "fc.weight", []int64{4}, w))
	}
	check(h.Close())

	tr, err := smd.OpenTrial(dir, nil)
	check(err)
	defer tr.Close()
	t, err := tr.Tensor("fc.weight")
	check(err)
	v, err := t.Value(2, smd.ModeGlobal, "")
	check(err)
	x, err := v.At(1)
	check(err)
	rule, err := smd.NewBuiltinRule("AllZero", tr, nil, map[string]string{"tensor_regex": `fc\..*`})
	check(err)
	defer rule.Close()
	check(rule.Invoke(context.Background(), 0, -1, false, nil))
	fmt.Printf("go: fc.weight at step 2: %g; AllZero conditions met: %d\n", x, rule.Stats().ConditionsMet)
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
