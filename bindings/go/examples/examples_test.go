package examples

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/smd-project/smd/bindings/go/examples/internal/analysis"
	"github.com/smd-project/smd/bindings/go/examples/internal/mlp"
)

func TestTrainThenAnalyze(t *testing.T) {
	good := filepath.Join(t.TempDir(), "good")
	var out bytes.Buffer
	if err := mlp.Train(mlp.Config{OutDir: good, Steps: 100, LR: 1, Init: 0.5}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "eval accuracy") {
		t.Fatalf("training printed %q", out.String())
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := analysis.Analyze(ctx, good, &out)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.TrainSteps) != 100 || len(res.Losses) != 100 {
		t.Fatalf("%d train steps, %d losses", len(res.TrainSteps), len(res.Losses))
	}
	if !(res.Losses[99] < res.Losses[0]) {
		t.Fatalf("the good run did not learn: loss %v -> %v", res.Losses[0], res.Losses[99])
	}
	if len(res.Vanishing) != 0 {
		t.Fatalf("VanishingGradient fired on the good run: %+v", res.Vanishing)
	}
	// With a huge learning rate the first layer saturates and its gradients vanish.
	bad := filepath.Join(t.TempDir(), "bad")
	if err := mlp.Train(mlp.Config{OutDir: bad, Steps: 60, LR: 1000, Init: 0.5}, &out); err != nil {
		t.Fatal(err)
	}
	res, err = analysis.Analyze(ctx, bad, &out)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Vanishing) == 0 || !strings.HasPrefix(res.Vanishing[0].Tensor, "gradient/fc1") {
		t.Fatalf("VanishingGradient did not fire on the lr=1000 run: %+v\n%s", res.Vanishing, out.String())
	}
}
