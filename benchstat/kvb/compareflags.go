package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/kvbench/kvbench/benchstat/internal/cli"
	"github.com/kvbench/kvbench/benchstat/internal/flagargs"
	"github.com/kvbench/kvbench/benchstat/internal/gate"
	"github.com/kvbench/kvbench/benchstat/sim"
)

// compare's defaults, measured on this suite (docs/gating.md, "The
// defaults, and why"): timed rounds need 20 on a shared machine, counted
// ones only what the signed-rank test needs.
const (
	defaultTimeRounds    = 20
	defaultSimRounds     = 9
	defaultTimeBenchtime = "0.05s"
	defaultSimBenchtime  = sim.DefaultIterations
	defaultBench         = "BenchmarkReadRandom"
	defaultOut           = "results/compare"
)

// defaultSuiteArgs go to both binaries before the user's flags, which
// override them: warm reads on one thread of 10,000 keys of 256 B.
var defaultSuiteArgs = []string{"-threads=1", "-cache=warm", "-keys_mil=0.01", "-valsz=256"}

// compareArgs is a parsed compare command line.
type compareArgs struct {
	base, head string
	module     string
	mode       string // time, sim or both
	bench      string // "" until defaults: every engine, or -module's
	count      int    // 0: each mode's default
	out        string
	tags       string
	timeBench  string // -test.benchtime of timed rounds
	simBench   string // kvb sim's -benchtime
	gate       gate.Options
	suite      []string // forwarded to both binaries, defaults first
}

const compareUsage = `usage: kvb compare BASE HEAD [-module M] [-mode time|sim|both] [-bench RE] [-count N] [-o DIR] [suite flags]

Builds two test binaries of the suite once and runs them in paired rounds,
alternating which goes first, then gates head against base and writes
DIR/base.txt, DIR/head.txt, DIR/benchstat.txt, DIR/gate.md (the report)
and DIR/gate.json (the verdicts, and what each side is); with -mode both
also DIR/sim-base.txt and DIR/sim-head.txt. Flags may come before or
after BASE and HEAD.

BASE and HEAD are git refs of this repository (their committed code is
built in temporary worktrees) or test binaries already built. With
-module M they are versions of the engine module M (v1.4.0, or a query
such as latest) or directories holding a copy of it, and both sides are
this tree's suite built with M replaced, on copies of go.mod (-modfile);
the default benchmarks are then M's engine's ReadRandom.

The lab's kvb history keeps the sides' results over time
(docs/history.md). Other flags go to both binaries: the suite's (-dir,
-keys_mil, -threads, ...) and go test's -cpu, -timeout, -benchmem,
-short, -v. Exit status: 0 pass, 1 regression or a gated series missing
from head, 2 bad usage or a step that failed.

`

// rawFlags are compare's flags that parseCompare turns into compareArgs.
type rawFlags struct {
	benchtime, simBench, units string
	threshold, simThreshold    float64
}

// compareFlags is compare's flag set: its own flags, then the suite's,
// forwarded into a.suite.
func compareFlags(a *compareArgs) (*flag.FlagSet, *rawFlags) {
	r := &rawFlags{}
	fs := cli.NewFlagSet("compare") // errors are returned, usage printed by the caller
	fs.StringVar(&a.module, "module", "", "compare two versions of this engine module (BASE and HEAD are its versions or directories)")
	fs.StringVar(&a.mode, "mode", "time", "time: timed rounds; sim: counted under callgrind (kvb sim); both: time rounds, then sim rounds")
	fs.StringVar(&a.bench, "bench", "", "benchmarks to run (default "+defaultBench+", or with -module its engine's)")
	fs.IntVar(&a.count, "count", 0, fmt.Sprintf("paired rounds (default %d timed, %d counted)", defaultTimeRounds, defaultSimRounds))
	fs.StringVar(&a.out, "o", defaultOut, "directory of the results and the gate's report")
	fs.StringVar(&a.tags, "tags", defaultTags(), "build tags of both binaries: rocksdb when its headers are installed, unless $TAGS is set")
	fs.StringVar(&r.benchtime, "benchtime", "", "run length of a timed round (default "+defaultTimeBenchtime+"); with -mode sim, the iterations counted")
	fs.StringVar(&r.simBench, "sim_benchtime", "", "iterations counted in a sim round, a default and overrides by family (default "+defaultSimBenchtime+")")
	fs.Float64Var(&a.gate.Alpha, "alpha", 0.05, "the gate's significance level")
	fs.Float64Var(&r.threshold, "threshold", 100*gate.DefaultThreshold, "percent: the median worsening a timed series must pass to fail")
	fs.Float64Var(&r.simThreshold, "sim_threshold", 100*gate.DefaultSimThreshold, "percent: the same for counted series")
	fs.BoolVar(&a.gate.Holm, "holm", true, "Holm-Bonferroni correction across the tested series")
	fs.StringVar(&r.units, "units", "", "regular expression: gate exactly these units (default: each family's own)")
	fs.BoolVar(&a.gate.AllowRemoved, "allow_removed", false, "a gated series in base only passes")
	defineSuiteFlags(fs, &a.suite)
	return fs, r
}

// printCompareHelp writes the usage and compare's own flags (the suite's
// are many, and documented with the suite).
func printCompareHelp(w io.Writer) {
	fmt.Fprint(w, compareUsage)
	fs, _ := compareFlags(&compareArgs{})
	printOwnFlags(w, fs)
}

// parseCompare reads a compare command line: flags, then positional
// arguments, then flags again, until none is left ("--" ends the flags).
func parseCompare(args []string) (*compareArgs, error) {
	a := &compareArgs{suite: append([]string(nil), defaultSuiteArgs...)}
	fs, r := compareFlags(a)
	pos, err := flagargs.Parse(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("%v (kvb help compare lists compare's flags; the suite's are in README.md#flags)", err)
	}
	switch len(pos) {
	case 0:
		return nil, errors.New("missing BASE and HEAD: give two git refs or test binaries, or with -module two versions or directories of the module")
	case 1:
		return nil, fmt.Errorf("missing HEAD after BASE %s", pos[0])
	case 2:
		a.base, a.head = pos[0], pos[1]
	default:
		return nil, fmt.Errorf("unexpected argument %q after BASE %s and HEAD %s", pos[2], pos[0], pos[1])
	}
	if a.mode != "time" && a.mode != "sim" && a.mode != "both" {
		return nil, fmt.Errorf("-mode %s: must be time, sim or both", a.mode)
	}
	if set(fs, "count") && a.count < 1 {
		return nil, fmt.Errorf("-count %d: must be a whole number of rounds", a.count)
	}
	if set(fs, "module") && a.module == "" {
		return nil, errors.New("-module needs a module path, e.g. go.etcd.io/bbolt")
	}
	a.gate.Threshold, a.gate.SimThreshold = r.threshold/100, r.simThreshold/100
	if err := a.gate.Validate(); err != nil {
		return nil, err
	}
	if r.units != "" {
		re, err := regexp.Compile(r.units)
		if err != nil {
			return nil, fmt.Errorf("-units %s: %v", r.units, err)
		}
		a.gate.Units = re
	}
	a.timeBench, a.simBench = defaultTimeBenchtime, defaultSimBenchtime
	if r.benchtime != "" {
		if a.mode == "sim" {
			a.simBench = r.benchtime
		} else {
			a.timeBench = r.benchtime
		}
	}
	if r.simBench != "" {
		a.simBench = r.simBench
	}
	if a.mode != "time" {
		if _, err := sim.ParseIterations(a.simBench); err != nil {
			return nil, err
		}
	}
	// The signed-rank test needs 2^-n < alpha: fewer rounds could never
	// fail. Holm's stricter need depends on how many series move, so the
	// gate checks that after the run.
	need := gate.MinRounds(a.gate, 1)
	for _, m := range a.modes() {
		if n := a.rounds(m); n < need {
			return nil, fmt.Errorf("-count %d: the gate's signed-rank test needs at least %d paired %s rounds to reject anything at alpha %g", n, need, m, a.gate.Alpha)
		}
	}
	return a, nil
}

// modes are the kinds of rounds run, in order.
func (a *compareArgs) modes() []string {
	if a.mode == "both" {
		return []string{"time", "sim"}
	}
	return []string{a.mode}
}

// rounds is -count, or mode's default.
func (a *compareArgs) rounds(mode string) int {
	switch {
	case a.count > 0:
		return a.count
	case mode == "sim":
		return defaultSimRounds
	}
	return defaultTimeRounds
}

func set(fs *flag.FlagSet, name string) bool {
	found := false
	fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}

// defaultTags are the Makefile's: RocksDB when its headers are there,
// unless $TAGS says otherwise.
func defaultTags() string {
	if t, ok := os.LookupEnv("TAGS"); ok {
		return t
	}
	if _, err := os.Stat(rocksdbHeader); err == nil {
		return "rocksdb"
	}
	return ""
}

// rocksdbHeader is what the Makefile tests for before it builds RocksDB in.
const rocksdbHeader = "/usr/include/rocksdb/c.h"

// withoutRocksDB says why tags leave RocksDB out ("" when they do not).
func withoutRocksDB(tags string) string {
	if hasTag(tags, "rocksdb") {
		return ""
	}
	if _, err := os.Stat(rocksdbHeader); err == nil {
		return "-tags leaves it out"
	}
	return rocksdbHeader + " is missing (sudo apt-get install librocksdb-dev)"
}

func hasTag(tags, tag string) bool {
	for _, t := range strings.FieldsFunc(tags, func(r rune) bool { return r == ',' || r == ' ' }) {
		if t == tag {
			return true
		}
	}
	return false
}
