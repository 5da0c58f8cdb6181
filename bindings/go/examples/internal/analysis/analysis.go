// Package analysis is the analyze example: it opens a trial, prints what it holds and runs a
// built-in rule (VanishingGradient) and a custom rule written in Go.
package analysis

import (
	"context"
	"fmt"
	"io"

	smd "github.com/smd-project/smd/bindings/go"
)

// Result is what the analysis found.
type Result struct {
	TrainSteps    []int64
	Losses        map[int64]float32 // TRAIN loss by mode step
	Vanishing     []smd.Finding     // VanishingGradient's findings
	LossIncreased []smd.Finding     // the custom rule's findings
}

// Analyze reads the trial in dir and runs the rules.
func Analyze(ctx context.Context, dir string, out io.Writer) (*Result, error) {
	tr, err := smd.OpenTrial(dir, nil)
	if err != nil {
		return nil, err
	}
	defer tr.Close()
	res := &Result{Losses: map[int64]float32{}}
	if res.TrainSteps, err = tr.Steps(smd.ModeTrain, false); err != nil {
		return nil, err
	}
	names, err := tr.TensorNames(nil)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "%s: %d TRAIN steps, tensors %v\n", dir, len(res.TrainSteps), names)
	loss, err := tr.Tensor("loss")
	if err != nil {
		return nil, err
	}
	defer loss.Close()
	steps, values, err := loss.Values(smd.ModeTrain, "")
	if err != nil {
		return nil, err
	}
	for i, v := range values {
		f, err := v.Float32s()
		if err != nil {
			return nil, err
		}
		res.Losses[steps[i]] = f[0]
		v.Close()
	}

	// A built-in rule, by name, with SageMaker's parameters.
	vg, err := smd.NewBuiltinRule("VanishingGradient", tr, nil, map[string]string{"threshold": "0.0000001"})
	if err != nil {
		return nil, err
	}
	defer vg.Close()
	// A custom rule: the TRAIN loss went up by more than 50% since the previous saved step.
	custom, err := smd.NewRule("LossIncreased", tr, nil, func(rc *smd.RuleContext, step int64) (bool, error) {
		t, err := rc.Trial(0)
		if err != nil {
			return false, err
		}
		mode, err := t.Mode(step)
		if err != nil || mode != smd.ModeTrain {
			return false, err
		}
		ms, err := t.ModeStep(step)
		if err != nil {
			return false, err
		}
		lt, err := t.Tensor("loss")
		if err != nil {
			return false, err
		}
		defer lt.Close()
		prev, err := lt.PrevSteps(ms, smd.ModeTrain, 2)
		if err != nil || len(prev) < 2 {
			return false, err
		}
		a, err := lt.Value(prev[0], smd.ModeTrain, "")
		if err != nil {
			return false, err
		}
		defer a.Close()
		b, err := lt.Value(prev[1], smd.ModeTrain, "")
		if err != nil {
			return false, err
		}
		defer b.Close()
		before, _ := a.At(0)
		now, _ := b.At(0)
		if now > 1.5*before {
			return true, rc.Report(0, "loss", fmt.Sprintf("loss rose from %.4g to %.4g", before, now))
		}
		return false, nil
	}, nil)
	if err != nil {
		return nil, err
	}
	defer custom.Close()
	if err := smd.InvokeMany(ctx, []*smd.Rule{vg, custom}, 0, -1, false, &smd.InvokeOptions{
		OnFinding: func(f smd.Finding) error { fmt.Fprintln(out, f.Line); return nil },
	}); err != nil {
		return nil, err
	}
	res.Vanishing, res.LossIncreased = vg.Findings(), custom.Findings()
	fmt.Fprintf(out, "VanishingGradient: %d findings; LossIncreased: %d findings\n", len(res.Vanishing), len(res.LossIncreased))
	return res, nil
}
