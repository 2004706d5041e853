package core

import (
	"errors"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"

	"github.com/kvbench/kvbench/internal/memlimit"
)

// ByteSize is a size flag: bytes, or a whole number of KiB, MiB, GiB or
// TiB ("64MiB", "1GiB"). Zero is unset.
type ByteSize int64

func (s *ByteSize) String() string {
	if s == nil || *s == 0 {
		return ""
	}
	return memlimit.FormatSize(int64(*s))
}

func (s *ByteSize) Set(v string) error {
	n, err := memlimit.ParseSize(v)
	if err != nil {
		return err
	}
	*s = ByteSize(n)
	return nil
}

// heapAllowanceMB is what -mem_limit keeps for memory other than block
// caches and memtables (the Go runtime, the harness, indexes, filters and
// iterators outside a cache, C allocators' slack), so the page cache gets
// some of the budget.
const heapAllowanceMB = 16

// validateMemLimit checks -mem_limit against the floor and the engines'
// own memory under the budget rule plus heapAllowanceMB.
func (c *Config) validateMemLimit() error {
	n := int64(c.MemLimit)
	if n == 0 {
		return nil
	}
	if n < memlimit.Floor {
		return FlagError("mem_limit", memlimit.FormatSize(n), fmt.Sprintf("is below the floor of %s", memlimit.FormatSize(memlimit.Floor)))
	}
	r, _ := c.budget()
	if need := int64(r.CacheMB+r.InFlight*r.MemtableMB+heapAllowanceMB) << 20; need >= n {
		return FlagError("mem_limit", memlimit.FormatSize(n), fmt.Sprintf(
			"the engines' own memory does not fit: block cache %d MiB + %d memtables in flight x %d MiB + %d MiB heap allowance = %d MiB, which must be below the budget (%d MiB); lower -cache_mb or -memtable_mb, or raise -mem_limit",
			r.CacheMB, r.InFlight, r.MemtableMB, heapAllowanceMB, need>>20, n>>20))
	}
	return nil
}

// findParent locates the cgroup the budget is made under (tests' stand-in).
var findParent = memlimit.Find

// checkBudget refuses a -mem_limit this machine cannot give, before any
// work. A run without benchmarks has none.
func (e *Env) checkBudget(plan *Plan) error {
	if e.Cfg.MemLimit == 0 || plan.Pattern == "" {
		return nil
	}
	p, err := findParent()
	if err == nil {
		err = p.Check(int64(e.Cfg.MemLimit))
	}
	if err != nil {
		return machineErr{err}
	}
	return nil
}

// machineErr is an error that Is ErrMachine, worded as the error it wraps.
type machineErr struct{ error }

func (machineErr) Is(target error) bool { return target == ErrMachine }
func (m machineErr) Unwrap() error      { return m.error }

// ErrMachine marks a setting this machine cannot give the run (no memory
// controller, no right to make a cgroup): Main exits 3, not 2 as for a bad
// value.
var ErrMachine = errors.New("not on this machine")

// enterBudget evicts every fixture (its pages are charged outside the
// budget) and moves the process into its budget.
func (e *Env) enterBudget(plan *Plan) error {
	if e.Cfg.MemLimit == 0 || plan.Pattern == "" {
		return nil
	}
	e.mu.Lock()
	var dirs []string
	for _, name := range slices.Sorted(maps.Keys(e.fixtures)) { // Setup built them all
		dirs = append(dirs, e.fixtures[name].dir)
	}
	e.mu.Unlock()
	for _, dir := range dirs {
		if _, err := e.Evict(dir); err != nil {
			return err
		}
	}
	p, err := findParent()
	if err != nil {
		return err
	}
	// Its watcher, outside, reports what the budget held should it kill
	// the run.
	b, err := p.EnterWatched(int64(e.Cfg.MemLimit))
	if err != nil {
		return err
	}
	e.budget = b
	// The Go heap (Badger's tables and memtables) shares the budget: a
	// soft limit keeps the collector inside its share rather than grow
	// the heap to twice its live size and be killed.
	r, _ := e.Cfg.budget()
	debug.SetMemoryLimit(r.GoLimit)
	e.Logf("memory budget %s; %s resident before entering stays charged outside it; Go memory limit %s (%d/%d of the budget)",
		b, Human(b.Resident), memlimit.FormatSize(r.GoLimit), budgetGoNum, budgetGoDen)
	return nil
}

// Budget is the memory cgroup the benchmarks run in (-mem_limit), or nil.
func (e *Env) Budget() *memlimit.Budget { return e.budget }

// WatchLeaf names the benchmark about to run to the budget's watcher,
// before its set-up opens anything: Handle.Run does it for its leaves, a
// workload that opens its own databases calls it.
func (e *Env) WatchLeaf(name string) {
	if b := e.budget; b != nil {
		b.Leaf(name)
	}
}

// closeBudget reports what the budget charged and removes it.
func (e *Env) closeBudget() error {
	b := e.budget
	if b == nil {
		return nil
	}
	e.budget = nil
	if s, err := b.Stats(); err == nil {
		e.Logf("memory budget %s at exit: %s charged (peak %s): %s page cache, %s anonymous; limit reached %d times, %d major faults, %d OOM kills",
			memlimit.FormatSize(b.Limit), Human(s.Usage), Human(s.Peak), Human(s.Cache), Human(s.Anon), s.LimitHits, s.MajorFaults, s.OOMKills)
	}
	return b.Close()
}
