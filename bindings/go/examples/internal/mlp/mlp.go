// Package mlp is the training loop of the train_mlp example (the C demo's two-layer perceptron),
// instrumented with smd's hook; it is a package so that the examples' test can run it.
package mlp

import (
	"fmt"
	"io"
	"math"

	smd "github.com/smd-project/smd/bindings/go"
)

const (
	nIn    = 8
	nHid   = 16
	nTrain = 512
	nEval  = 128
	batch  = 32
)

// Config is the example's command line.
type Config struct {
	OutDir      string
	Steps       int
	LR, Init    float64
	Seed        uint64
	TensorBoard bool
}

type rng struct{ s uint64 }

func (r *rng) uniform() float64 { // xorshift64
	r.s ^= r.s << 13
	r.s ^= r.s >> 7
	r.s ^= r.s << 17
	return float64(r.s>>11) / 9007199254740992.0
}

func (r *rng) normal() float64 {
	u, v := r.uniform()+1e-12, r.uniform()
	return math.Sqrt(-2*math.Log(u)) * math.Cos(2*math.Pi*v)
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

type params struct {
	w1     [nHid * nIn]float32
	b1, w2 [nHid]float32
	b2     float32
}

// run does the forward pass over rows [from, from+n); it accumulates gradients into g if not nil.
func run(m *params, x [][nIn]float32, y []float32, from, n int, g *params) (loss, acc float64) {
	correct := 0
	if g != nil {
		*g = params{}
	}
	for r := from; r < from+n; r++ {
		var h [nHid]float64
		z2 := float64(m.b2)
		for j := 0; j < nHid; j++ {
			z := float64(m.b1[j])
			for i := 0; i < nIn; i++ {
				z += float64(m.w1[j*nIn+i]) * float64(x[r][i])
			}
			h[j] = sigmoid(z)
			z2 += float64(m.w2[j]) * h[j]
		}
		p := sigmoid(z2)
		pc := math.Min(math.Max(p, 1e-7), 1-1e-7)
		loss -= float64(y[r])*math.Log(pc) + (1-float64(y[r]))*math.Log(1-pc)
		if (p > 0.5) == (y[r] > 0.5) {
			correct++
		}
		if g != nil {
			d2 := (p - float64(y[r])) / float64(n)
			g.b2 += float32(d2)
			for j := 0; j < nHid; j++ {
				g.w2[j] += float32(d2 * h[j])
				d1 := d2 * float64(m.w2[j]) * h[j] * (1 - h[j])
				g.b1[j] += float32(d1)
				for i := 0; i < nIn; i++ {
					g.w1[j*nIn+i] += float32(d1 * float64(x[r][i]))
				}
			}
		}
	}
	return loss / float64(n), float64(correct) / float64(n)
}

// Train trains the model and writes the trial to cfg.OutDir, printing progress to out.
func Train(cfg Config, out io.Writer) error {
	if cfg.Steps <= 0 {
		cfg.Steps = 200
	}
	r := &rng{s: 88172645463325252 ^ cfg.Seed*0x9E3779B97F4A7C15}
	// Synthetic data: the label is 1 when a fixed linear score of the inputs is positive.
	var trueW [nIn]float64
	for i := range trueW {
		trueW[i] = r.normal()
	}
	x := make([][nIn]float32, nTrain+nEval)
	y := make([]float32, nTrain+nEval)
	for row := range x {
		s := 0.0
		for i := 0; i < nIn; i++ {
			x[row][i] = float32(r.normal())
			s += trueW[i] * float64(x[row][i])
		}
		if s > 0 {
			y[row] = 1
		}
	}
	var m params
	for j := 0; j < nHid; j++ {
		for i := 0; i < nIn; i++ {
			m.w1[j*nIn+i] = float32(cfg.Init * r.normal())
		}
		m.w2[j] = float32(0.5 * r.normal())
	}

	// The hook: weights/biases/gradients every 10 steps, losses every step.
	opts, err := smd.NewHookOptions()
	if err != nil {
		return err
	}
	defer opts.Close()
	every10, err := smd.NewSaveConfig()
	if err != nil {
		return err
	}
	defer every10.Close()
	if err := every10.Set(smd.ModeAll, 10, 0, -1); err != nil {
		return err
	}
	if err := opts.SetSaveConfig(every10); err != nil {
		return err
	}
	for _, c := range []string{"weights", "biases", "gradients"} {
		if err := opts.AddIncludeCollection(c); err != nil {
			return err
		}
	}
	if cfg.TensorBoard {
		if err := opts.SetExportTensorBoard(true); err != nil {
			return err
		}
	}
	hook, err := smd.NewHook(cfg.OutDir, opts)
	if err != nil {
		return err
	}
	defer hook.Close()
	grads, err := hook.Collection("gradients")
	if err != nil {
		return err
	}
	defer grads.Close()
	red, err := smd.ParseReductionConfig("mean,abs_mean,max,min,l2_norm")
	if err != nil {
		return err
	}
	defer red.Close()
	if err := grads.SetReductionConfig(red); err != nil {
		return err
	}
	losses, err := hook.Collection("losses")
	if err != nil {
		return err
	}
	defer losses.Close()
	every1, err := smd.NewSaveConfig()
	if err != nil {
		return err
	}
	defer every1.Close()
	if err := every1.Set(smd.ModeAll, 1, 0, -1); err != nil {
		return err
	}
	if err := losses.SetSaveConfig(every1); err != nil {
		return err
	}

	var g params
	for step := 0; step < cfg.Steps; step++ {
		if stop, err := hook.StopRequested(); err != nil {
			return err
		} else if stop {
			fmt.Fprintf(out, "step %4d  a rule asked to stop the training\n", step)
			break
		}
		if err := hook.SetMode(smd.ModeTrain); err != nil {
			return err
		}
		if err := hook.BeginStep(); err != nil {
			return err
		}
		loss, acc := run(&m, x, y, (step*batch)%nTrain, batch, &g)
		saves := []struct {
			name  string
			shape []int64
			data  []float32
		}{
			{"fc1.weight", []int64{nHid, nIn}, m.w1[:]},
			{"fc1.bias", []int64{nHid}, m.b1[:]},
			{"fc2.weight", []int64{nHid}, m.w2[:]},
			{"fc2.bias", []int64{1}, []float32{m.b2}},
			{"gradient/fc1.weight", []int64{nHid, nIn}, g.w1[:]},
			{"gradient/fc1.bias", []int64{nHid}, g.b1[:]},
			{"gradient/fc2.weight", []int64{nHid}, g.w2[:]},
			{"loss", []int64{1}, []float32{float32(loss)}},
		}
		for _, s := range saves {
			if err := smd.Save(hook, s.name, s.shape, s.data); err != nil {
				return err
			}
		}
		if err := hook.SaveScalar("train_accuracy", acc); err != nil {
			return err
		}
		// SGD
		lr := float32(cfg.LR)
		for k := range m.w1 {
			m.w1[k] -= lr * g.w1[k]
		}
		for j := 0; j < nHid; j++ {
			m.b1[j] -= lr * g.b1[j]
			m.w2[j] -= lr * g.w2[j]
		}
		m.b2 -= lr * g.b2

		if (step+1)%25 == 0 {
			if err := hook.SetMode(smd.ModeEval); err != nil {
				return err
			}
			if err := hook.BeginStep(); err != nil {
				return err
			}
			evalLoss, evalAcc := run(&m, x, y, nTrain, nEval, nil)
			if err := smd.Save(hook, "loss", []int64{1}, []float32{float32(evalLoss)}); err != nil {
				return err
			}
			if err := hook.SaveScalar("eval_accuracy", evalAcc); err != nil {
				return err
			}
			fmt.Fprintf(out, "step %4d  train loss %.4f  eval loss %.4f  eval accuracy %.3f\n", step+1, loss, evalLoss, evalAcc)
		}
	}
	if err := hook.Close(); err != nil {
		return err
	}
	fmt.Fprintf(out, "wrote %s\n", cfg.OutDir)
	return nil
}
