package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/benchstat/internal/gate"
	"github.com/kvbench/kvbench/benchstat/internal/sides"
	"github.com/kvbench/kvbench/internal/engine"
)

// TestFlagsBeforeOrAfterRefs: a flag means the same wherever it stands,
// before the refs, between them or after them.
func TestFlagsBeforeOrAfterRefs(t *testing.T) {
	want, err := compareCommand.Parse([]string{"main", "HEAD", "-mode", "sim", "-count", "12", "-threads", "4", "-allow_removed"})
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"-mode", "sim", "-count", "12", "-threads", "4", "-allow_removed", "main", "HEAD"},
		{"-mode=sim", "main", "-count=12", "HEAD", "-threads=4", "-allow_removed"},
		{"--mode", "sim", "main", "HEAD", "--count", "12", "-threads", "4", "-allow_removed"},
	} {
		got, err := compareCommand.Parse(args)
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
	a, err := compareCommand.Parse([]string{"-module", "go.etcd.io/bbolt", "-mode", "sim", "v1.4.3", "v1.5.0"})
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
	a, err := compareCommand.Parse([]string{"-keys_mil", "0.05", "main", "HEAD", "-sync", "-cpu", "2", "-bolt_get=cursor", "-benchmem"})
	if err != nil {
		t.Fatal(err)
	}
	want := append(slices.Clone(defaultSuiteArgs), "-keys_mil=0.05", "-sync=true", "-test.cpu=2", "-bolt_get=cursor", "-test.benchmem=true")
	if !reflect.DeepEqual(a.suite, want) {
		t.Errorf("forwarded %q, want %q", a.suite, want)
	}
}

func TestCompareDefaults(t *testing.T) {
	a, err := compareCommand.Parse([]string{"main", "HEAD"})
	if err != nil {
		t.Fatal(err)
	}
	if a.mode != "time" || a.rounds("time") != 20 || a.rounds("sim") != 9 || a.timeBench != "0.05s" || a.simBench != defaultSimBenchtime || a.out != "results/compare" {
		t.Errorf("defaults: %+v", a)
	}
	if a, _ := compareCommand.Parse([]string{"main", "HEAD", "-mode", "sim", "-benchtime", "100x"}); a.simBench != "100x" || a.timeBench != defaultTimeBenchtime {
		t.Errorf("-mode sim -benchtime 100x: sim %q, time %q", a.simBench, a.timeBench)
	}
	if a, _ := compareCommand.Parse([]string{"main", "HEAD", "-mode", "both", "-benchtime", "0.1s"}); a.timeBench != "0.1s" || a.simBench != defaultSimBenchtime || !reflect.DeepEqual(a.modes(), []string{"time", "sim"}) {
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
		_, err := compareCommand.Parse(c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one containing %q", c.args, err, c.want)
		}
	}
}

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

// rounds writes n rounds of one benchmark at ns, a file as the rounds
// write one.
func writeRounds(t *testing.T, path string, ns []float64) {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("goos: linux\ngate: ns/op\n")
	for _, v := range ns {
		fmt.Fprintf(&b, "BenchmarkReadRandomBolt/valsz=256-2 \t 1000 \t %g ns/op\n", v)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReportNamesSides: the gate's report and gate.json name each side
// by its ref and commit, or by its module version, not by file path;
// a clear slowdown fails and is listed in gate.json.
func TestReportNamesSides(t *testing.T) {
	out := t.TempDir()
	a, err := compareCommand.Parse([]string{"-module", "go.etcd.io/bbolt", "v1.4.3", "../bbolt", "-o", out, "-count", "6"})
	if err != nil {
		t.Fatal(err)
	}
	base := []float64{100, 102, 98, 101, 99, 100}
	head := []float64{130, 131, 129, 133, 128, 130}
	writeRounds(t, filepath.Join(out, "base.txt"), base)
	writeRounds(t, filepath.Join(out, "head.txt"), head)
	var stdout bytes.Buffer
	c := &comparison{args: a, stdout: &stdout, started: "2026-01-02T03:04:05Z",
		base: &sides.Side{Role: "base", Kind: sides.Version, Spec: "v1.4.3", Label: "v1.4.3"},
		head: &sides.Side{Role: "head", Kind: sides.Dir, Spec: "../bbolt", Label: "local-0123456789ab"}}
	vs, err := c.gateReport()
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 1 || !vs[0].Failed {
		t.Fatalf("verdicts %+v: want one failed", vs)
	}
	md, err := os.ReadFile(filepath.Join(out, "gate.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := "Base `go.etcd.io/bbolt v1.4.3`, head `go.etcd.io/bbolt local-0123456789ab (../bbolt)`"
	if !strings.Contains(string(md), want) || !strings.Contains(string(md), "FAIL") {
		t.Errorf("gate.md does not say %q and FAIL:\n%s", want, md)
	}
	if stdout.String() != string(md) {
		t.Errorf("printed report differs from gate.md")
	}
	var j gate.Report
	raw, _ := os.ReadFile(filepath.Join(out, "gate.json"))
	if err := json.Unmarshal(raw, &j); err != nil {
		t.Fatal(err)
	}
	if j.Base != "go.etcd.io/bbolt v1.4.3" || len(j.Modes) != 1 || !j.Modes[0].Failed ||
		len(j.Modes[0].Failures) != 1 || j.Modes[0].Failures[0] != (gate.Failure{Name: "ReadRandomBolt/valsz=256-2", Unit: "ns/op", Verdict: "REGRESSION"}) {
		t.Errorf("gate.json:\n%s", raw)
	}
	// What each side is, as the lab's history labels it.
	wantSides := map[string]map[string]string{
		"base": {"ref": "v1.4.3", "commit": "v1.4.3", "date": "2026-01-02T03:04:05Z", "module": "go.etcd.io/bbolt"},
		"head": {"ref": "../bbolt", "commit": "../bbolt", "date": "2026-01-02T03:04:05Z", "module": "go.etcd.io/bbolt"},
	}
	if !reflect.DeepEqual(j.Sides, wantSides) {
		t.Errorf("gate.json's sides %v, want %v", j.Sides, wantSides)
	}
}

// TestBothModesAndTooFewRounds: -mode both gives the report a section
// per mode, from base.txt/head.txt and sim-base.txt/sim-head.txt; rounds
// too few for the gate to fail anything stop the run with the gate's
// error instead of a pass.
func TestBothModesAndTooFewRounds(t *testing.T) {
	out := t.TempDir()
	a, err := compareCommand.Parse([]string{"main", "HEAD", "-mode", "both", "-o", out, "-count", "6"})
	if err != nil {
		t.Fatal(err)
	}
	same := []float64{100, 102, 98, 101, 99, 100}
	for _, f := range []string{"base.txt", "head.txt", "sim-base.txt", "sim-head.txt"} {
		writeRounds(t, filepath.Join(out, f), same)
	}
	const sha = "0123456789abcdef0123456789abcdef01234567"
	c := &comparison{args: a, stdout: &bytes.Buffer{},
		base: &sides.Side{Role: "base", Kind: sides.Ref, Spec: "main", Commit: sha},
		head: &sides.Side{Role: "head", Kind: sides.Ref, Spec: "HEAD", Commit: sha}}
	vs, err := c.gateReport()
	if err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(out, "gate.md"))
	if len(vs) != 2 || vs[0].Failed || vs[1].Failed || !strings.Contains(string(md), "#### time mode") || !strings.Contains(string(md), "#### sim mode") ||
		strings.Count(string(md), "Base `main (0123456)`, head `HEAD (0123456)`") != 2 {
		t.Errorf("verdicts %+v, gate.md:\n%s", vs, md)
	}
	for _, f := range []string{"base.txt", "head.txt"} {
		writeRounds(t, filepath.Join(out, f), same[:3])
	}
	if _, err := c.gateReport(); err == nil || !strings.Contains(err.Error(), "has 3 paired rounds; the signed-rank test needs at least 5") {
		t.Errorf("3 rounds: %v", err)
	}
}
