package main

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestFlagsBeforeOrAfterRefs: a flag means the same wherever it stands,
// before the refs, between them or after them.
func TestFlagsBeforeOrAfterRefs(t *testing.T) {
	want, err := parseCompare([]string{"main", "HEAD", "-mode", "sim", "-count", "12", "-threads", "4", "-allow_removed"})
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"-mode", "sim", "-count", "12", "-threads", "4", "-allow_removed", "main", "HEAD"},
		{"-mode=sim", "main", "-count=12", "HEAD", "-threads=4", "-allow_removed"},
		{"--mode", "sim", "main", "HEAD", "--count", "12", "-threads", "4", "-allow_removed"},
	} {
		got, err := parseCompare(args)
		if err != nil {
			t.Errorf("%q: %v", args, err)
			continue
		}
		if got.base != "main" || got.head != "HEAD" || got.mode != "sim" || got.count != 12 || !got.gate.AllowRemoved || !reflect.DeepEqual(got.suite, want.suite) {
			t.Errorf("%q parsed as %+v, want %+v", args, got, want)
		}
	}
	// A flag before the refs once ran the wrong comparison: it must never
	// be taken for a ref or a module version.
	a, err := parseCompare([]string{"-module", "go.etcd.io/bbolt", "-mode", "sim", "v1.4.3", "v1.5.0"})
	if err != nil {
		t.Fatal(err)
	}
	if a.module != "go.etcd.io/bbolt" || a.base != "v1.4.3" || a.head != "v1.5.0" || a.mode != "sim" {
		t.Errorf("-module first: %+v", a)
	}
}

// TestSuiteFlagsForwarded: the suite's flags go to both binaries after
// compare's defaults (the binary keeps the last value, so the user's
// wins), go test's under their -test. names, in the order given.
func TestSuiteFlagsForwarded(t *testing.T) {
	a, err := parseCompare([]string{"-keys_mil", "0.05", "main", "HEAD", "-sync", "-cpu", "2", "-bolt_get=cursor", "-benchmem"})
	if err != nil {
		t.Fatal(err)
	}
	want := append(slices.Clone(defaultSuiteArgs), "-keys_mil=0.05", "-sync=true", "-test.cpu=2", "-bolt_get=cursor", "-test.benchmem=true")
	if !reflect.DeepEqual(a.suite, want) {
		t.Errorf("forwarded %q, want %q", a.suite, want)
	}
}

func TestCompareDefaults(t *testing.T) {
	a, err := parseCompare([]string{"main", "HEAD"})
	if err != nil {
		t.Fatal(err)
	}
	if a.mode != "time" || a.rounds("time") != 20 || a.rounds("sim") != 9 || a.timeBench != "0.05s" || a.simBench != defaultSimBenchtime || a.out != "results/compare" {
		t.Errorf("defaults: %+v", a)
	}
	if a, _ := parseCompare([]string{"main", "HEAD", "-mode", "sim", "-benchtime", "100x"}); a.simBench != "100x" || a.timeBench != defaultTimeBenchtime {
		t.Errorf("-mode sim -benchtime 100x: sim %q, time %q", a.simBench, a.timeBench)
	}
	if a, _ := parseCompare([]string{"main", "HEAD", "-mode", "both", "-benchtime", "0.1s"}); a.timeBench != "0.1s" || a.simBench != defaultSimBenchtime || !reflect.DeepEqual(a.modes(), []string{"time", "sim"}) {
		t.Errorf("-mode both -benchtime 0.1s: %+v", a)
	}
}

// TestCompareUsageErrors: each mistake is refused with a message that
// names it, before anything runs.
func TestCompareUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "missing BASE and HEAD"},
		{[]string{"main"}, "missing HEAD after BASE main"},
		{[]string{"-mode", "sim", "main"}, "missing HEAD after BASE main"},
		{[]string{"main", "HEAD", "extra"}, `unexpected argument "extra"`},
		{[]string{"main", "HEAD", "-no_such_flag"}, "flag provided but not defined: -no_such_flag"},
		{[]string{"-nosuch", "main", "HEAD"}, "flag provided but not defined: -nosuch"},
		{[]string{"main", "HEAD", "-mode", "fast"}, "-mode fast: must be time, sim or both"},
		{[]string{"main", "HEAD", "-count", "0"}, "-count 0: must be a whole number"},
		{[]string{"main", "HEAD", "-count", "3"}, "-count 3: the gate's signed-rank test needs at least 5 paired time rounds"},
		{[]string{"main", "HEAD", "-alpha", "1.5"}, "-alpha 1.5: must be more than 0 and less than 1"},
		{[]string{"main", "HEAD", "-units", "("}, "-units ("},
		{[]string{"main", "HEAD", "-module", ""}, "-module needs a module path"},
		{[]string{"main", "HEAD", "-mode", "sim", "-sim_benchtime", "1s"}, `"1s" must be a count of iterations`},
	} {
		_, err := parseCompare(c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one containing %q", c.args, err, c.want)
		}
	}
}
