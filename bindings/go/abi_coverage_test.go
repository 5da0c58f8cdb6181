package smd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"testing"
)

// notBound are the C functions the Go binding deliberately does not call, each with its reason.
// cgo compiles every call against the headers, so signatures cannot drift; what this test guards
// is coverage: a function added to the C ABI must be bound here or listed with a reason.
var notBound = map[string]string{
	"smd_hook_save_dlpack":         "Go has no DLPack producers; Save/SaveTensor take slices without a copy",
	"smd_hook_save_dlpack_managed": "Go has no DLPack producers",
	"smd_value_to_dlpack":          "Go has no DLPack consumers; View[T] gives the zero-copy view",
	"smd_rule_invoke":              "Invoke calls smd_rule_invoke_many (one rule is a list of one)",
	"smd_rule_context_fail":        "Go rule callbacks fail through smd_rule_context_fail_with (code + message)",
	"smd_s3_uploads_in_progress":   "an S3 housekeeping task for the smd tool (smd uploads), not part of reading or writing trials",
}

func TestEveryCFunctionIsBound(t *testing.T) {
	// capi/api.json describes the public C API (scripts/gen-api.py; ctest abi.api proves it
	// equal to the headers): no header parsing here.
	b, err := os.ReadFile(filepath.Join("..", "..", "capi", "api.json"))
	if err != nil {
		t.Fatalf("capi/api.json not found beside the binding: %v", err)
	}
	var api struct {
		Functions []struct {
			Name string `json:"name"`
		} `json:"functions"`
	}
	must(t, json.Unmarshal(b, &api))
	declared := map[string]bool{}
	for _, f := range api.Functions {
		declared[f.Name] = true
	}
	if len(declared) < 150 {
		t.Fatalf("api.json lists only %d functions", len(declared))
	}
	sources, err := filepath.Glob("*.go")
	must(t, err)
	use := regexp.MustCompile(`C\.(smd_[a-z0-9_]+)`)
	called := map[string]bool{}
	for _, f := range sources {
		if filepath.Base(f) == "abi_coverage_test.go" {
			continue
		}
		b, err := os.ReadFile(f)
		must(t, err)
		for _, m := range use.FindAllSubmatch(b, -1) {
			called[string(m[1])] = true
		}
	}
	var missing, stale []string
	for fn := range declared {
		if !called[fn] && notBound[fn] == "" {
			missing = append(missing, fn)
		}
	}
	for fn := range notBound {
		if !declared[fn] || called[fn] {
			stale = append(stale, fn)
		}
	}
	sort.Strings(missing)
	sort.Strings(stale)
	if len(missing) > 0 {
		t.Errorf("C functions the Go binding neither calls nor lists in notBound: %v", missing)
	}
	if len(stale) > 0 {
		t.Errorf("notBound entries that are not declared any more, or are called after all: %v", stale)
	}
}
