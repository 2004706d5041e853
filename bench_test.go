// Package kvbench compares embedded key-value stores with go test -bench:
// the same seeded data, the same machine and the same settings for every
// engine. See README.md.
//
// The benchmarks themselves are generated one-line wrappers
// (benchmarks_gen_test.go) over the workloads in internal/bench; this
// package parses the flags and hands over to bench.Main.
package kvbench

//go:generate go run ./internal/cmd/genwrappers -o benchmarks_gen_test.go

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/kvbench/kvbench/internal/bench"
)

// TestMain validates every flag, prints the run's configuration, and
// builds (or reuses) the fixtures the selected benchmarks declare, before
// any benchmark runs.
func TestMain(m *testing.M) {
	if bench.IsColdChild() { // a cold-start child: one read, nothing else
		os.Exit(m.Run())
	}
	flag.Parse()
	bench.Main(m.Run, cfg, benchPattern())
}

func benchPattern() string {
	if f := flag.Lookup("test.bench"); f != nil {
		return f.Value.String()
	}
	return ""
}

// TestGeneratedWrappersAreCurrent fails when an engine or workload was
// added without `go generate`.
func TestGeneratedWrappersAreCurrent(t *testing.T) {
	have, err := os.ReadFile("benchmarks_gen_test.go")
	if err != nil {
		t.Fatal(err)
	}
	if want := bench.Wrappers(); !bytes.Equal(have, want) {
		t.Fatal("benchmarks_gen_test.go is stale: run go generate")
	}
}
