package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/benchstat/internal/cli"
	"github.com/kvbench/kvbench/benchstat/internal/flagargs"
	"github.com/kvbench/kvbench/internal/benchpattern"
)

// The release matrix's defaults (docs/history.md, "Release matrix"): ten
// rounds give benchstat a confidence interval; 50,000 keys build in a
// second and read in 0.2 s a round.
const (
	defaultVersionsRounds    = 10
	defaultVersionsBenchtime = "0.2s"
	defaultVersionsOut       = "results/versions"
)

// defaultVersionsSuiteArgs go to every run before the user's flags, which
// override them.
var defaultVersionsSuiteArgs = []string{"-keys_mil=0.05", "-valsz=256"}

const versionsExample = "e.g. kvb versions -module go.etcd.io/bbolt v1.4.0 v1.4.3 v1.5.0"

// versionsArgs is a parsed versions command line.
type versionsArgs struct {
	module    string
	specs     []string // as given: versions, queries or directories
	bench     string   // "" for the default workload
	benchtime string
	count     int
	out       string
	buildOnly bool
	tags      string
	suite     []string // forwarded to every run, defaults first
}

const versionsUsage = `usage: kvb versions -module MODULE V1 V2 [V3...] [-bench RE] [-benchtime D] [-count N] [-o DIR] [-build_only] [suite flags]

The release matrix: this tree's suite against each listed version of one
engine module. Each V is a version of MODULE on the module proxy (v1.4.3,
or a query such as v1.4 or latest, resolved to the version it names) or a
directory holding a copy of it; each is built into a test binary as kvb
compare -module builds a side. Every version is checked before anything
is built, and a version the suite does not compile against stops the run
(exit 2) before anything runs, naming it and the compiler's first error.

Then each version builds or reuses its fixtures (keyed by the engine's
version), and -count rounds run interleaved: round i runs every version
once, the order rotating by one each round, so a drift of the machine
lands on every version alike. Results go to DIR/<version>.txt, each
starting with configuration lines that make it a point of the module's
release series (role, series, module, version, the suite's commit and
its date, dirty), which the lab's kvb history add keeps as labels
(docs/history.md, "Release matrix"); the order goes to DIR/order.txt,
benchstat's table across the versions (the first is the baseline) to
stdout and DIR/benchstat.txt.

The workload, by default: warm random reads on one thread (-benchtime)
and a populate with sync off (1x) on the engines MODULE backs, 50,000
keys of 256 bytes. -bench RE runs that pattern instead (warm, one
thread, at -benchtime). Other flags go to every run and override these:
the suite's (-dir, -keys_mil, -valsz, -threads, ...) and go test's -cpu,
-timeout, -benchmem, -short, -v. Flags may come before or after the
versions. Exit status: 0 done, 2 bad usage, a version that does not
build, or a run that fails.

`

// onceString is a string flag that may be given once: a second -module
// would silently compare another module's versions.
type onceString struct {
	v   *string
	set bool
}

func (o *onceString) String() string {
	if o.v == nil {
		return ""
	}
	return *o.v
}

func (o *onceString) Set(s string) error {
	if o.set {
		return fmt.Errorf("given twice (%s, then %s): one module a run", *o.v, s)
	}
	*o.v, o.set = s, true
	return nil
}

// versionsFlags is versions' flag set: its own flags, then the suite's,
// forwarded into a.suite.
func versionsFlags(a *versionsArgs) *flag.FlagSet {
	fs := cli.NewFlagSet("versions") // errors are returned, usage printed by the caller
	fs.Var(&onceString{v: &a.module}, "module", "the engine `module` whose versions are compared (required)")
	fs.StringVar(&a.bench, "bench", "", "benchmarks to run, warm on one thread (default: warm random reads and a populate of the module's engines)")
	fs.StringVar(&a.benchtime, "benchtime", defaultVersionsBenchtime, "run length of the reads (or of -bench) in a round")
	fs.IntVar(&a.count, "count", defaultVersionsRounds, "rounds")
	fs.StringVar(&a.out, "o", defaultVersionsOut, "directory of the results")
	fs.BoolVar(&a.buildOnly, "build_only", false, "stop after the builds")
	fs.StringVar(&a.tags, "tags", defaultTags(), "build tags of every version: rocksdb when its headers are installed, unless $TAGS is set")
	defineSuiteFlags(fs, &a.suite)
	return fs
}

func printVersionsHelp(w io.Writer) {
	fmt.Fprint(w, versionsUsage)
	printOwnFlags(w, versionsFlags(&versionsArgs{}))
}

// parseVersions reads a versions command line: flags before, between
// and after the versions ("--" ends the flags).
func parseVersions(args []string) (*versionsArgs, error) {
	a := &versionsArgs{suite: append([]string(nil), defaultVersionsSuiteArgs...)}
	fs := versionsFlags(a)
	pos, err := flagargs.Parse(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("%v (kvb help versions lists versions' flags; the suite's are in docs/flags.md)", err)
	}
	switch {
	case !set(fs, "module"):
		return nil, errors.New("-module MODULE is required, then two versions or more; " + versionsExample)
	case a.module == "":
		return nil, errors.New("-module needs a module path; " + versionsExample)
	case strings.HasPrefix(a.module, "-"):
		return nil, fmt.Errorf("-module needs a module path, not the flag %s; %s", a.module, versionsExample)
	case len(pos) < 2:
		got := fmt.Sprintf("got %d", len(pos))
		if len(pos) > 0 {
			got += " (" + strings.Join(pos, " ") + ")"
		}
		return nil, fmt.Errorf("-module %s needs two versions or more to compare, %s; %s", a.module, got, versionsExample)
	case a.count < 1:
		return nil, fmt.Errorf("-count %d: must be a whole number of rounds", a.count)
	}
	a.specs = pos
	if err := checkBenchtime(a.benchtime); err != nil {
		return nil, err
	}
	if a.bench != "" {
		if err := checkBench(a.bench); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// checkBenchtime refuses what go test's -benchtime would refuse after
// every build: it is a duration or a count of iterations, Nx.
func checkBenchtime(s string) error {
	if n, ok := strings.CutSuffix(s, "x"); ok {
		if v, err := strconv.Atoi(n); err == nil && v > 0 {
			return nil
		}
	} else if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return nil
	}
	return fmt.Errorf("-benchtime %s: a duration (0.2s) or a number of iterations (2000x)", s)
}

// checkBench refuses a pattern go test would refuse, split as it splits
// one.
func checkBench(s string) error {
	for _, alt := range benchpattern.Split(s) {
		for _, level := range alt {
			if _, err := regexp.Compile(level); err != nil {
				return fmt.Errorf("-bench %s: %v", s, err)
			}
		}
	}
	return nil
}
