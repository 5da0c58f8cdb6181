// crossdump: the cross-language test's canonical dump of a trial ("smd-cross/1", described in
// tests/cross/CrossDump.java), read through the Go binding.
//
//	go run ./examples/crossdump TRIAL
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	smd "github.com/smd-project/smd/bindings/go"
)

func shape(s []int64) string {
	p := make([]string, len(s))
	for i, d := range s {
		p[i] = strconv.FormatInt(d, 10)
	}
	return strings.Join(p, ",")
}

func run(path string, w *bufio.Writer) error {
	t, err := smd.OpenTrial(path, nil)
	if err != nil {
		return err
	}
	defer t.Close()
	names, err := t.TensorNames(nil)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "smd-cross/1")
	for _, name := range names {
		x, err := t.Tensor(name)
		if err != nil {
			return err
		}
		steps, err := x.Steps(smd.ModeGlobal, false)
		if err != nil {
			return err
		}
		for _, g := range steps {
			mode, err := t.Mode(g)
			if err != nil {
				return err
			}
			ms, err := t.ModeStep(g)
			if err != nil {
				return err
			}
			dtype, sh, data := "-", "-", "-"
			v, err := x.Value(g, smd.ModeGlobal, "")
			switch {
			case err == nil:
				dtype = v.DType().String()
				sh = shape(v.Shape())
				if v.DType() == smd.DTypeString {
					ss, err := v.Strings()
					if err != nil {
						return err
					}
					parts := make([]string, len(ss))
					for i, s := range ss {
						parts[i] = hex.EncodeToString([]byte(s))
					}
					data = strings.Join(parts, ",")
				} else {
					b, err := v.Bytes()
					if err != nil {
						return err
					}
					data = hex.EncodeToString(b)
				}
				v.Close()
			case errors.Is(err, smd.ErrTensorUnavailableForStep):
				if s, err := x.Shape(g, smd.ModeGlobal, ""); err == nil {
					sh = shape(s)
				} else if !errors.Is(err, smd.ErrShapeUnavailableForStep) && !errors.Is(err, smd.ErrTensorUnavailableForStep) {
					return err
				}
			default:
				return err
			}
			fmt.Fprintf(w, "T\t%s\t%d\t%s\t%d\t%s\t%s\t%s\n", name, g, mode, ms, dtype, sh, data)
			red, err := x.ReductionValues(g, smd.ModeGlobal, "")
			if err != nil {
				return err
			}
			if len(red) > 0 {
				keys := make([]string, 0, len(red))
				for k := range red {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				parts := make([]string, len(keys))
				for i, k := range keys {
					f, err := red[k].At(0)
					if err != nil {
						return err
					}
					var b [8]byte
					binary.LittleEndian.PutUint64(b[:], math.Float64bits(f))
					parts[i] = k + "=" + hex.EncodeToString(b[:])
					red[k].Close()
				}
				fmt.Fprintf(w, "R\t%s\t%d\t%s\n", name, g, strings.Join(parts, ","))
			}
		}
		x.Close()
	}
	return nil
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: crossdump TRIAL")
		os.Exit(2)
	}
	w := bufio.NewWriter(os.Stdout)
	if err := run(os.Args[1], w); err != nil {
		w.Flush()
		fmt.Fprintln(os.Stderr, "crossdump:", err)
		os.Exit(1)
	}
	w.Flush()
}
