package engine_test

import (
	"slices"
	"testing"

	"github.com/kvbench/kvbench/internal/engine"
)

// TestModuleEngines: the engines of a module, which kvb versions and kvb
// compare -module choose their benchmarks by.
func TestModuleEngines(t *testing.T) {
	for module, want := range map[string][]string{
		"go.etcd.io/bbolt":                 {"Bolt"},
		"github.com/dgraph-io/badger/v4":   {"Badger"},
		"github.com/cockroachdb/pebble/v2": {"Pebble"},
		"golang.org/x/perf":                nil,
		"(reference)":                      nil, // the Memory rail is no engine module
	} {
		got, modules := engine.ModuleEngines(module)
		if !slices.Equal(got, want) {
			t.Errorf("engines of %s: %q, want %q", module, got, want)
		}
		if !slices.Contains(modules, "go.etcd.io/bbolt") || slices.Contains(modules, "(reference)") {
			t.Errorf("the engines' modules: %q, want bbolt's and not the reference rail's", modules)
		}
	}
}
