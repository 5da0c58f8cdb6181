// train_mlp: the C demo's small training loop (examples/train_mlp.c) in Go, instrumented with
// smd's hook.
//
//	go run ./examples/train_mlp [-steps N] [-lr RATE] [-init SCALE] [-seed S] [-tensorboard] OUT_DIR
//
// With -lr 1000 the first layer's gradients vanish and the VanishingGradient rule fires
// (go run ./examples/analyze OUT_DIR).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/smd-project/smd/bindings/go/examples/internal/mlp"
)

func main() {
	var cfg mlp.Config
	flag.IntVar(&cfg.Steps, "steps", 200, "training steps")
	flag.Float64Var(&cfg.LR, "lr", 1.0, "learning rate")
	flag.Float64Var(&cfg.Init, "init", 0.5, "scale of the initial first-layer weights")
	flag.Uint64Var(&cfg.Seed, "seed", 0, "random seed")
	flag.BoolVar(&cfg.TensorBoard, "tensorboard", false, "also write TensorBoard logs into OUT_DIR/tensorboard")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: train_mlp [flags] OUT_DIR")
		os.Exit(2)
	}
	cfg.OutDir = flag.Arg(0)
	if err := mlp.Train(cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "train_mlp:", err)
		os.Exit(1)
	}
}
