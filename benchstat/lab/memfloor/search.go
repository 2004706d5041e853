package memfloor

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"syscall"

	"github.com/kvbench/kvbench/internal/memlimit"
)

// outcome is what one budgeted populate run came to.
type outcome int

const (
	pass     outcome = iota // finished within the multiple
	killed                  // SIGKILL inside the budget: the out-of-memory killer
	refused                 // the suite refused the budget as too small (-mem_limit, exit 2)
	tooSlow                 // killed at its deadline, or populate over the multiple
	failed                  // any other failure: the search stops
	noBudget                // exit 3: this machine cannot make a memory budget
)

func (o outcome) String() string {
	return [...]string{"pass", "killed", "refused", "too slow", "error", "no budget"}[o]
}

// exit is how a child process ended, as classify needs it.
type exit struct {
	code     int // exit status; -1 when a signal ended it
	signal   syscall.Signal
	timedOut bool    // killed by this command at its deadline
	stderr   string  // the child's stderr
	nsOp     float64 // populate's ns/op; 0 without a result line
}

// classify applies the rule: a budget passes when the run exits 0 with a
// result whose ns/op is at most limitNs (the multiple times the
// reference ns/op). The deadline comes first: a run this command killed
// ends by SIGKILL too, and is slow, not out of memory.
func classify(e exit, limitNs float64) outcome {
	switch {
	case e.timedOut:
		return tooSlow
	case e.code == 3:
		return noBudget
	case e.signal == syscall.SIGKILL || e.code == 137 || strings.Contains(e.stderr, "signal: killed"):
		return killed
	case e.code == 2 && refusesBudget(e.stderr):
		return refused
	case e.code != 0 || e.nsOp <= 0:
		return failed
	case e.nsOp > limitNs:
		return tooSlow
	}
	return pass
}

// refusesBudget reports whether the suite's configuration error names
// -mem_limit: the engines' own memory does not fit in the budget, which
// is a budget too small, not a broken run.
func refusesBudget(stderr string) bool {
	for line := range strings.Lines(stderr) {
		if strings.HasPrefix(line, "[kvbench] error: ") && strings.Contains(line, memlimit.Flag+" ") {
			return true
		}
	}
	return false
}

// resolution is when bisection stops: the passing budget within pct
// percent of the failing one, or within mib MiB. One MiB always stops it
// (budgets are whole MiB).
type resolution struct {
	pct float64
	mib int
}

func parseResolution(s string) (resolution, error) {
	if p, ok := strings.CutSuffix(strings.TrimSpace(s), "%"); ok {
		v, err := strconv.ParseFloat(p, 64)
		if err != nil || v <= 0 || v > 100 {
			return resolution{}, fmt.Errorf("-resolution %s: a percent must be more than 0 and at most 100", s)
		}
		return resolution{pct: v}, nil
	}
	n, err := memlimit.ParseSize(s)
	if err != nil || n < 1<<20 || n%(1<<20) != 0 {
		return resolution{}, fmt.Errorf("-resolution %s: a percent (10%%) or a whole number of MiB (2MiB)", s)
	}
	return resolution{mib: int(n >> 20)}, nil
}

func (r resolution) String() string {
	if r.pct > 0 {
		return fmt.Sprintf("%g%% (bisection stops when the smallest passing budget is at most %g%% above the largest failing one)", r.pct, r.pct)
	}
	return fmt.Sprintf("%dMiB (bisection stops when the smallest passing budget is at most %d MiB above the largest failing one)", r.mib, r.mib)
}

// done reports whether lo (failing) and hi (passing) are close enough.
func (r resolution) done(lo, hi int) bool {
	if hi-lo <= 1 {
		return true
	}
	if r.pct > 0 {
		return float64(hi) <= float64(lo)*(1+r.pct/100)
	}
	return hi-lo <= r.mib
}

// mid is the next budget to try between lo and hi: the geometric mean for
// a relative resolution (each step halves the ratio), the arithmetic one
// for an absolute one.
func (r resolution) mid(lo, hi int) int {
	m := (lo + hi) / 2
	if r.pct > 0 {
		m = int(math.Round(math.Sqrt(float64(lo) * float64(hi))))
	}
	return min(max(m, lo+1), hi-1)
}

// trial is one budgeted populate run.
type trial struct {
	mib     int
	outcome outcome
	run     *childRun // nil in tests
}

// search is the bisection's record: every trial in order, and the floor,
// the smallest budget that passed (0 when even hi failed).
type search struct {
	trials []trial
	floor  int
	hi     int
}

// stopError is a trial whose outcome ends the whole command.
type stopError struct{ t trial }

func (e stopError) Error() string { return fmt.Sprintf("%dMiB: %v", e.t.mib, e.t.outcome) }

// bisect finds the smallest budget in [lo, hi] MiB that passes, assuming
// that a budget passes when any larger one does. hi is tried first: if it
// fails, the floor is above it and nothing smaller is tried. Then lo, then
// the midpoints of the failing and passing budgets until res says they are
// close enough.
func bisect(lo, hi int, res resolution, try func(mib int) trial) (search, error) {
	s := search{hi: hi}
	run := func(mib int) (bool, error) {
		t := try(mib)
		s.trials = append(s.trials, t)
		if t.outcome == failed || t.outcome == noBudget {
			return false, stopError{t}
		}
		return t.outcome == pass, nil
	}
	ok, err := run(hi)
	if err != nil || !ok {
		return s, err
	}
	s.floor = hi
	if lo >= hi {
		return s, nil
	}
	if ok, err = run(lo); err != nil {
		return s, err
	} else if ok {
		s.floor = lo
		return s, nil
	}
	for !res.done(lo, s.floor) {
		m := res.mid(lo, s.floor)
		ok, err := run(m)
		if err != nil {
			return s, err
		}
		if ok {
			s.floor = m
		} else {
			lo = m
		}
	}
	return s, nil
}

// floorTrial is the passing trial at the floor.
func (s search) floorTrial() (trial, bool) {
	for _, t := range s.trials {
		if t.mib == s.floor && t.outcome == pass {
			return t, true
		}
	}
	return trial{}, false
}
