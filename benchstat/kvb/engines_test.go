package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/engine"
)

// TestModuleDefaultBench: with -module the default benchmarks are the
// named module's engine's reads, found through the engine registry.
func TestModuleDefaultBench(t *testing.T) {
	if b, err := defaultBenchFor(""); err != nil || b != defaultBench {
		t.Errorf("no module: %q, %v", b, err)
	}
	if b, err := defaultBenchFor("go.etcd.io/bbolt"); err != nil || b != "^BenchmarkReadRandom(Bolt)$" {
		t.Errorf("bbolt: %q, %v", b, err)
	}
	for _, info := range engine.All() {
		if info.Reference {
			continue
		}
		b, err := defaultBenchFor(info.Module)
		if err != nil {
			t.Errorf("%s: %v", info.Module, err)
			continue
		}
		re := regexp.MustCompile(b)
		for _, other := range engine.All() {
			if got, want := re.MatchString("BenchmarkReadRandom"+other.Title), other.Module == info.Module; got != want {
				t.Errorf("-module %s: default %q matches BenchmarkReadRandom%s: %v, want %v", info.Module, b, other.Title, got, want)
			}
		}
	}
	if _, err := defaultBenchFor("golang.org/x/sys"); err == nil || !strings.Contains(err.Error(), "no engine of this suite is built on it") {
		t.Errorf("a module of no engine: %v", err)
	}
}
