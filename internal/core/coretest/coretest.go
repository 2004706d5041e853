// Package coretest holds what the tests of the core and of the workload
// packages share: a fixed b.N for testing.Benchmark, an engine by name,
// the keys a body reads. It does not import the core, so the
// core's own tests can use it; only tests import it.
package coretest

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/engine"
)

// SetBenchtime makes testing.Benchmark run a fixed count (or time) until
// the test ends, as -benchtime does on the command line: testing offers
// no other way to choose b.N. Workload bodies never read it. (Tests that
// call it do not run in parallel.)
func SetBenchtime(t *testing.T, v string) {
	t.Helper()
	bt := flag.Lookup("test.benchtime")
	if bt == nil {
		t.Fatal("no -test.benchtime flag")
	}
	saved := bt.Value.String()
	if err := bt.Value.Set(v); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bt.Value.Set(saved) })
}

// Engine is the registered engine of that name.
func Engine(t *testing.T, name string) engine.Info {
	t.Helper()
	info, ok := engine.Lookup(name)
	if !ok {
		t.Fatalf("no engine %s", name)
	}
	return info
}

// ConfigLines is the configuration lines a run of e prints before its
// results (core.Env's EchoConfig).
func ConfigLines(e interface{ EchoConfig(io.Writer) }) string {
	var out strings.Builder
	e.EchoConfig(&out)
	return out.String()
}
