package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/benchstat/internal/gate"
)

func TestSideNames(t *testing.T) {
	const sha = "d1bd8ca0123456789abcdef0123456789abcdef0"
	const bolt = "go.etcd.io/bbolt"
	for _, c := range []struct {
		s    side
		want string
	}{
		{side{kind: refSide, spec: "main", commit: sha}, "main (d1bd8ca)"},
		{side{kind: refSide, spec: "origin/main~2", commit: sha}, "origin/main~2 (d1bd8ca)"},
		{side{kind: refSide, spec: "d1bd8ca01", commit: sha}, "d1bd8ca"},
		{side{kind: versionSide, spec: "v1.5.0", label: "v1.5.0"}, bolt + " v1.5.0"},
		{side{kind: versionSide, spec: "latest", label: "v1.5.0"}, bolt + " v1.5.0 (latest)"},
		{side{kind: dirSide, spec: "../bbolt", label: "local-3f09c1a2b4d5"}, bolt + " local-3f09c1a2b4d5 (../bbolt)"},
		{side{kind: binarySide, spec: "/tmp/x/kvbench.test"}, "/tmp/x/kvbench.test"},
	} {
		module := ""
		if c.s.kind == versionSide || c.s.kind == dirSide {
			module = bolt
		}
		if got := c.s.name(module); got != c.want {
			t.Errorf("%+v: named %q, want %q", c.s, got, c.want)
		}
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
	a, err := parseCompare([]string{"-module", "go.etcd.io/bbolt", "v1.4.3", "../bbolt", "-o", out, "-count", "6"})
	if err != nil {
		t.Fatal(err)
	}
	base := []float64{100, 102, 98, 101, 99, 100}
	head := []float64{130, 131, 129, 133, 128, 130}
	writeRounds(t, filepath.Join(out, "base.txt"), base)
	writeRounds(t, filepath.Join(out, "head.txt"), head)
	var stdout bytes.Buffer
	c := &comparison{args: a, stdout: &stdout, started: "2026-01-02T03:04:05Z",
		base: &side{role: "base", kind: versionSide, spec: "v1.4.3", label: "v1.4.3"},
		head: &side{role: "head", kind: dirSide, spec: "../bbolt", label: "local-0123456789ab"}}
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
	a, err := parseCompare([]string{"main", "HEAD", "-mode", "both", "-o", out, "-count", "6"})
	if err != nil {
		t.Fatal(err)
	}
	same := []float64{100, 102, 98, 101, 99, 100}
	for _, f := range []string{"base.txt", "head.txt", "sim-base.txt", "sim-head.txt"} {
		writeRounds(t, filepath.Join(out, f), same)
	}
	const sha = "0123456789abcdef0123456789abcdef01234567"
	c := &comparison{args: a, stdout: &bytes.Buffer{},
		base: &side{role: "base", kind: refSide, spec: "main", commit: sha},
		head: &side{role: "head", kind: refSide, spec: "HEAD", commit: sha}}
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
