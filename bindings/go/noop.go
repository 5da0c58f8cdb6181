package smd

/*
static void smdgo_noop(void) {}
*/
import "C"

// cgoNoop is an empty cgo call: the benchmarks print its cost next to smd's calls.
func cgoNoop() { C.smdgo_noop() }
