package bench

import (
	"flag"
	"testing"
)

// setBenchtime makes testing.Benchmark run a fixed count (or time) until
// the test ends, as -benchtime does on the command line: testing offers
// no other way to choose b.N. Workload bodies never read it. (No test of
// this package runs in parallel.)
func setBenchtime(t *testing.T, v string) {
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
