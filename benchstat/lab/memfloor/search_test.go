package memfloor

import (
	"errors"
	"syscall"
	"testing"
)

func TestClassify(t *testing.T) {
	const limit = 3e9 // 3 × a 1 s reference populate
	refusal := "[kvbench] error: -mem_limit 16MiB: the engines' own memory does not fit: ...\n"
	for _, c := range []struct {
		name string
		e    exit
		want outcome
	}{
		{"within the multiple", exit{nsOp: 2e9}, pass},
		{"at the multiple", exit{nsOp: 3e9}, pass},
		{"over the multiple", exit{nsOp: 3.1e9}, tooSlow},
		{"killed at its deadline", exit{code: -1, signal: syscall.SIGKILL, timedOut: true}, tooSlow},
		{"out of memory", exit{code: -1, signal: syscall.SIGKILL, stderr: "kvbench: killed inside its budget\n"}, killed},
		{"137 through a shell", exit{code: 137}, killed},
		{"killed, as go test says it", exit{code: 1, stderr: "signal: killed\n"}, killed},
		{"budget refused", exit{code: 2, stderr: refusal}, refused},
		{"another flag refused", exit{code: 2, stderr: "[kvbench] error: -valsz 0: must be from 1 to 67108864 bytes\n"}, failed},
		{"benchmark failed", exit{code: 1, stderr: "--- FAIL: BenchmarkPopulateBolt\n"}, failed},
		{"exit 0 without a result", exit{}, failed},
		{"no memory cgroup here", exit{code: 3, stderr: "[kvbench] error: -mem_limit 16MiB: no memory controller\n"}, noBudget},
	} {
		if got := classify(c.e, limit); got != c.want {
			t.Errorf("%s: classify = %v, want %v", c.name, got, c.want)
		}
	}
}

// engine is a fake engine: killed below killedBelow MiB, too slow below
// slowBelow, passing from there; it records the budgets tried.
type engine struct {
	killedBelow, slowBelow int
	tried                  []int
}

func (e *engine) try(mib int) trial {
	e.tried = append(e.tried, mib)
	o := pass
	switch {
	case mib < e.killedBelow:
		o = killed
	case mib < e.slowBelow:
		o = tooSlow
	}
	return trial{mib: mib, outcome: o}
}

func mustRes(t *testing.T, s string) resolution {
	t.Helper()
	r, err := parseResolution(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestBisectKilled(t *testing.T) {
	e := &engine{killedBelow: 37}
	s, err := bisect(16, 1000, mustRes(t, "1MiB"), e.try)
	if err != nil {
		t.Fatal(err)
	}
	if s.floor != 37 {
		t.Fatalf("floor %d, want 37 (tried %v)", s.floor, e.tried)
	}
	if e.tried[0] != 1000 || e.tried[1] != 16 {
		t.Errorf("tried %v: want the upper bound, then the lower, first", e.tried)
	}
	if ft, ok := s.floorTrial(); !ok || ft.mib != 37 {
		t.Errorf("floorTrial = %v %v", ft, ok)
	}
	if len(s.trials) != len(e.tried) {
		t.Errorf("%d trials recorded, %d run", len(s.trials), len(e.tried))
	}
}

func TestBisectTooSlow(t *testing.T) {
	// Killed below 30 MiB, slower than the multiple up to 50: the floor is
	// where it is fast enough, not where it survives.
	e := &engine{killedBelow: 30, slowBelow: 50}
	s, err := bisect(16, 400, mustRes(t, "1MiB"), e.try)
	if err != nil {
		t.Fatal(err)
	}
	if s.floor != 50 {
		t.Fatalf("floor %d, want 50 (tried %v)", s.floor, e.tried)
	}
}

func TestBisectAboveData(t *testing.T) {
	e := &engine{killedBelow: 500}
	s, err := bisect(16, 245, mustRes(t, "10%"), e.try)
	if err != nil {
		t.Fatal(err)
	}
	if s.floor != 0 || len(e.tried) != 1 || e.tried[0] != 245 {
		t.Fatalf("floor %d after %v: want none after trying only the upper bound", s.floor, e.tried)
	}
	if _, ok := s.floorTrial(); ok {
		t.Error("floorTrial found a trial without a floor")
	}
}

func TestBisectLowerBoundPasses(t *testing.T) {
	e := &engine{}
	s, err := bisect(16, 245, mustRes(t, "10%"), e.try)
	if err != nil || s.floor != 16 || len(e.tried) != 2 {
		t.Fatalf("floor %d after %v (%v): want 16 after two trials", s.floor, e.tried, err)
	}
	// Data smaller than the suite's smallest budget: one trial decides.
	e = &engine{}
	if s, err = bisect(16, 16, mustRes(t, "10%"), e.try); err != nil || s.floor != 16 || len(e.tried) != 1 {
		t.Fatalf("floor %d after %v (%v): want 16 after one trial", s.floor, e.tried, err)
	}
}

func TestBisectResolution(t *testing.T) {
	for _, c := range []struct {
		res       string
		within    func(fail, pass int) bool
		maxTrials int
	}{
		{"10%", func(f, p int) bool { return float64(p) <= 1.1*float64(f) }, 2 + 7},
		{"2MiB", func(f, p int) bool { return p-f <= 2 }, 2 + 10},
		{"100%", func(f, p int) bool { return p <= 2*f }, 2 + 3},
	} {
		e := &engine{killedBelow: 211}
		s, err := bisect(16, 1024, mustRes(t, c.res), e.try)
		if err != nil {
			t.Fatal(err)
		}
		fail := 0
		for _, tr := range s.trials {
			if tr.outcome != pass {
				fail = max(fail, tr.mib)
			}
		}
		if s.floor < 211 || !c.within(fail, s.floor) {
			t.Errorf("%s: floor %d, largest failing %d (tried %v)", c.res, s.floor, fail, e.tried)
		}
		if len(s.trials) > c.maxTrials {
			t.Errorf("%s: %d trials (%v), want at most %d", c.res, len(s.trials), e.tried, c.maxTrials)
		}
		// The resolution stops it: one fewer step would not have met it.
		prevFail, prevPass := 16, 1024
		for _, tr := range s.trials[:len(s.trials)-1] {
			if tr.outcome == pass {
				prevPass = min(prevPass, tr.mib)
			} else {
				prevFail = max(prevFail, tr.mib)
			}
		}
		if len(s.trials) > 2 && mustRes(t, c.res).done(prevFail, prevPass) {
			t.Errorf("%s: went on after %d..%d was within the resolution (tried %v)", c.res, prevFail, prevPass, e.tried)
		}
	}
}

func TestBisectStops(t *testing.T) {
	for _, o := range []outcome{failed, noBudget} {
		n := 0
		_, err := bisect(16, 1024, mustRes(t, "10%"), func(mib int) trial {
			n++
			if mib < 1024 {
				return trial{mib: mib, outcome: o}
			}
			return trial{mib: mib, outcome: pass}
		})
		var se stopError
		if !errors.As(err, &se) || se.t.outcome != o || n != 2 {
			t.Errorf("%v: err %v after %d trials, want a stop at the second", o, err, n)
		}
	}
}

func TestParseResolution(t *testing.T) {
	for in, want := range map[string]resolution{"10%": {pct: 10}, "2.5%": {pct: 2.5}, "2MiB": {mib: 2}, "1GiB": {mib: 1024}} {
		if got, err := parseResolution(in); err != nil || got != want {
			t.Errorf("parseResolution(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"0%", "200%", "x", "512KiB", "3MB", "1536KiB"} {
		if _, err := parseResolution(in); err == nil {
			t.Errorf("parseResolution(%q) accepted", in)
		}
	}
}

func TestParseShapes(t *testing.T) {
	s, err := parseShapes("0.1x1024, 0.25x128")
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 2 || s[0].keys != 100000 || s[0].valsz != 1024 || s[1].keys != 250000 || s[1].keysMil != "0.25" {
		t.Fatalf("parseShapes = %+v", s)
	}
	if got := s[0].dataBytes(); got != 100000*(16+1024) {
		t.Errorf("dataBytes = %d", got)
	}
	for _, in := range []string{"0.1", "0.1x", "x1024", "0x1024", "0.1x-1"} {
		if _, err := parseShapes(in); err == nil {
			t.Errorf("parseShapes(%q) accepted", in)
		}
	}
}
