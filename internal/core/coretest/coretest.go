// Package coretest holds what the tests of the core and of the workload
// packages share. It does not import the core, whose tests use it.
package coretest

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/measure"
)

// InMemory says whether dir is on tmpfs or ramfs, where nothing can be
// evicted and no write reaches a device: there a cold read is warm and
// the process's written bytes count nothing.
func InMemory(t testing.TB, dir string) bool {
	t.Helper()
	mem, err := measure.InMemory(dir)
	if err != nil {
		t.Fatal(err)
	}
	return mem
}

// SetBenchtime sets -test.benchtime until the test ends: the only way to
// choose testing.Benchmark's b.N. Tests that call it are not parallel.
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

// ConfigLines is the configuration lines e (a core.Env) prints.
func ConfigLines(e interface{ EchoConfig(io.Writer) }) string {
	var out strings.Builder
	e.EchoConfig(&out)
	return out.String()
}
