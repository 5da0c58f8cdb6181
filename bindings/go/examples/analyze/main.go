// analyze: opens a trial (e.g. one written by train_mlp) and runs the VanishingGradient built-in
// rule and a custom rule written in Go.
//
//	go run ./examples/analyze TRIAL_DIR
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/smd-project/smd/bindings/go/examples/internal/analysis"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: analyze TRIAL_DIR")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if _, err := analysis.Analyze(ctx, os.Args[1], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "analyze:", err)
		os.Exit(1)
	}
}
