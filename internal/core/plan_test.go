package core

import (
	"io"
	"reflect"
	"testing"
)

func planFor(t *testing.T, pattern string) *Plan {
	t.Helper()
	c := Default()
	c.KeysMil = 0.001
	e, err := NewEnv(c, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.NewPlan(pattern)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func targetNames(p *Plan) []string {
	var n []string
	for _, t := range p.Targets {
		n = append(n, t.Name())
	}
	return n
}

func TestPlanFollowsTheBenchPattern(t *testing.T) {
	p := planFor(t, "BenchmarkProbeBadger")
	if got := targetNames(p); !reflect.DeepEqual(got, []string{"BenchmarkProbeBadger"}) {
		t.Fatalf("targets %v", got)
	}
	if len(p.Fixtures) != 1 || p.Fixtures[0].Engine.Name != "badger" {
		t.Fatalf("fixtures %+v", p.Fixtures)
	}
	// The rail has no fixture; a pattern that matches nothing plans nothing.
	for _, pat := range []string{"", "BenchmarkNothing", "BenchmarkProbeMemory"} {
		if p := planFor(t, pat); p.TouchesDisk() {
			t.Errorf("%q plans disk work: %+v", pat, p.Fixtures)
		}
	}
	// A sub-benchmark part does not hide the top level, and an
	// alternative after it is planned too.
	p = planFor(t, "ProbeBolt$/threads=1|ProbeLmdb")
	if got := targetNames(p); !reflect.DeepEqual(got, []string{"BenchmarkProbeBolt", "BenchmarkProbeLmdb"}) {
		t.Fatalf("targets %v", got)
	}
	if len(p.Fixtures) != 2 {
		t.Fatalf("fixtures %+v", p.Fixtures)
	}
}

func TestBadPatternIsAnError(t *testing.T) {
	e, err := NewEnv(Default(), io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.NewPlan("Read(Random"); err == nil {
		t.Fatal("no error for a pattern that does not compile")
	}
}
