package core

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Setup is everything between flag parsing and the first benchmark:
// validate the configuration, plan the run from the -bench pattern, check
// -dir and the memory budget, print the configuration, build (or reuse)
// every fixture the plan declares, and enter the budget. Nothing is
// written before the configuration, -dir and the budget are found good.
func Setup(c Config, pattern string, out, log io.Writer) (*Env, error) {
	e, err := NewEnv(c, out, log)
	if err != nil {
		return nil, err
	}
	plan, err := e.NewPlan(pattern)
	if err != nil {
		return nil, err
	}
	e.plan = plan
	if err := e.checkBudget(plan); err != nil {
		return nil, err
	}
	if plan.TouchesDisk() {
		if err := e.openDir(plan); err != nil {
			return nil, err
		}
	}
	if pattern != "" {
		e.EchoConfig(out)
	}
	if plan.TouchesDisk() {
		for _, d := range staleScratch(e.Root.Sub("scratch")) {
			if err := e.Root.RemoveAll(d); err == nil {
				e.Logf("removed scratch %s left by a run that died", filepath.Base(d))
			}
		}
	}
	// Each fixture's lock is held to the end (dataset.Ensure): taken in
	// one order, two runs never wait for each other.
	fixtures := slices.SortedFunc(slices.Values(plan.Fixtures), func(a, b *Fixture) int {
		return strings.Compare(a.Params.Name(), b.Params.Name())
	})
	for _, f := range fixtures {
		if err := e.ensure(f); err != nil {
			return nil, err
		}
	}
	if err := e.enterBudget(plan); err != nil {
		return nil, err
	}
	e.Running.Store(true)
	return e, nil
}

// Main is the root package's TestMain: Setup from the parsed flags, run,
// leave the budget. gates names the units the gate judges each workload
// on, its results' "gate" line (internal/families). A bad configuration or
// a failed build exits 2 before any benchmark, ErrMachine 3.
func Main(run func() int, c Config, pattern string, gates func(workload string) []string) {
	c.SetExplicit(flag.CommandLine)
	e, err := Setup(c, pattern, os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "[kvbench] error: %v\n", err)
		if errors.Is(err, ErrMachine) {
			os.Exit(3)
		}
		os.Exit(2)
	}
	e.Gates = gates
	current = e
	code := run()
	e.FlushLog()
	if err := e.closeBudget(); err != nil {
		fmt.Fprintf(os.Stderr, "[kvbench] error: %v\n", err)
		code = max(code, 1)
	}
	os.Exit(code)
}

var current *Env

// Current is the Env Main set up; the generated wrappers pass it to Run.
func Current() *Env { return current }
