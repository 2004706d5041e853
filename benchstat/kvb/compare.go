package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/kvbench/kvbench/benchstat/internal/gate"
	"github.com/kvbench/kvbench/benchstat/internal/sides"
	"github.com/kvbench/kvbench/benchstat/sim"
)

var compareCommand = sides.SuiteCommand[compareArgs]{
	Name:     "compare",
	Summary:  "gate HEAD against BASE: two builds, paired rounds, the regression gate",
	Usage:    compareUsage,
	Where:    "kvb help compare lists compare's flags; the suite's are in README.md#flags",
	Defaults: defaultSuiteArgs,
	Flags:    compareFlags,
	Check:    checkCompareArgs,
	Run:      runCompare,
}

func init() { register(compareCommand.Command()) }

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
	units      string // -units, compiled into gate.Units
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

// compareFlags declares compare's own flags; checkCompareArgs applies
// -benchtime's and -sim_benchtime's defaults.
func compareFlags(fs *flag.FlagSet, a *compareArgs) *[]string {
	fs.StringVar(&a.module, "module", "", "compare two versions of this engine module (BASE and HEAD are its versions or directories)")
	fs.StringVar(&a.mode, "mode", "time", "time: timed rounds; sim: counted under callgrind (kvb sim); both: time rounds, then sim rounds")
	fs.StringVar(&a.bench, "bench", "", "benchmarks to run (default "+defaultBench+", or with -module its engine's)")
	fs.IntVar(&a.count, "count", 0, fmt.Sprintf("paired rounds (default %d timed, %d counted)", defaultTimeRounds, defaultSimRounds))
	fs.StringVar(&a.out, "o", defaultOut, "directory of the results and the gate's report")
	fs.StringVar(&a.tags, "tags", sides.DefaultTags(), "build tags of both binaries: rocksdb when its headers are installed, unless $TAGS is set")
	fs.StringVar(&a.timeBench, "benchtime", "", "run length of a timed round (default "+defaultTimeBenchtime+"); with -mode sim, the iterations counted")
	fs.StringVar(&a.simBench, "sim_benchtime", "", "iterations counted in a sim round, a default and overrides by family (default "+defaultSimBenchtime+")")
	fs.Float64Var(&a.gate.Alpha, "alpha", 0.05, "the gate's significance level")
	fs.Float64Var(&a.gate.Threshold, "threshold", 100*gate.DefaultThreshold, "percent: the median worsening a timed series must pass to fail")
	fs.Float64Var(&a.gate.SimThreshold, "sim_threshold", 100*gate.DefaultSimThreshold, "percent: the same for counted series")
	fs.BoolVar(&a.gate.Holm, "holm", true, "Holm-Bonferroni correction across the tested series")
	fs.StringVar(&a.units, "units", "", "regular expression: gate exactly these units (default: each family's own)")
	fs.BoolVar(&a.gate.AllowRemoved, "allow_removed", false, "a gated series in base only passes")
	return &a.suite
}

// checkCompareArgs reads BASE and HEAD and checks the flags' values.
func checkCompareArgs(a *compareArgs, fs *flag.FlagSet, pos []string) (err error) {
	switch len(pos) {
	case 0:
		return errors.New("missing BASE and HEAD: give two git refs or test binaries, or with -module two versions or directories of the module")
	case 1:
		return fmt.Errorf("missing HEAD after BASE %s", pos[0])
	case 2:
		a.base, a.head = pos[0], pos[1]
	default:
		return fmt.Errorf("unexpected argument %q after BASE %s and HEAD %s", pos[2], pos[0], pos[1])
	}
	if a.mode != "time" && a.mode != "sim" && a.mode != "both" {
		return fmt.Errorf("-mode %s: must be time, sim or both", a.mode)
	}
	if sides.IsSet(fs, "count") && a.count < 1 {
		return fmt.Errorf("-count %d: must be a whole number of rounds", a.count)
	}
	if sides.IsSet(fs, "module") && a.module == "" {
		return errors.New("-module needs a module path, e.g. go.etcd.io/bbolt")
	}
	a.gate.Threshold, a.gate.SimThreshold = a.gate.Threshold/100, a.gate.SimThreshold/100
	if err := a.gate.Validate(); err != nil {
		return err
	}
	if a.units != "" {
		if a.gate.Units, err = regexp.Compile(a.units); err != nil {
			return fmt.Errorf("-units %s: %v", a.units, err)
		}
	}
	// -benchtime is the run length of the timed rounds, or with -mode sim
	// the iterations counted, which -sim_benchtime overrides.
	if a.mode == "sim" {
		a.timeBench, a.simBench = "", cmp.Or(a.simBench, a.timeBench)
	}
	a.timeBench, a.simBench = cmp.Or(a.timeBench, defaultTimeBenchtime), cmp.Or(a.simBench, defaultSimBenchtime)
	if a.mode != "time" {
		if _, err := sim.ParseIterations(a.simBench); err != nil {
			return err
		}
	}
	// The signed-rank test needs 2^-n < alpha: fewer rounds could never
	// fail. Holm's stricter need is checked after the run.
	need := gate.MinRounds(a.gate, 1)
	for _, m := range a.modes() {
		if n := a.rounds(m); n < need {
			return fmt.Errorf("-count %d: the gate's signed-rank test needs at least %d paired %s rounds to reject anything at alpha %g", n, need, m, a.gate.Alpha)
		}
	}
	return nil
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

// file is the results file name of mode in DIR: with -mode both the sim
// rounds go to sim-base.txt and sim-head.txt.
func (a *compareArgs) file(mode, name string) string {
	if a.mode == "both" && mode == "sim" {
		name = "sim-" + name
	}
	return filepath.Join(a.out, name)
}

type comparison struct {
	sides.Builder // the sides' builds, its messages
	args          *compareArgs
	stdout        io.Writer
	base, head    *sides.Side
	started       string // when the comparison started (gate.json's date)
	suiteCommit   string // -module: the commit this tree is at
	failed        bool   // the gate failed
}

func (c *comparison) sides() []*sides.Side { return []*sides.Side{c.base, c.head} }

// runCompare is the compare command: exit 0 pass, 1 the gate failed, 2
// bad usage or a step that failed (with that step's own error).
func runCompare(a *compareArgs, stdout, stderr io.Writer) int {
	c := &comparison{
		Builder: sides.Builder{Prog: "kvb compare", Stderr: stderr, Module: a.module, Tags: a.tags},
		args:    a, stdout: stdout, started: time.Now().UTC().Format(time.RFC3339),
	}
	if status := c.UntilInterrupted(c.run); status != 0 || !c.failed {
		return status
	}
	return 1
}

// run is every step in order; the first that fails stops the run.
func (c *comparison) run(ctx context.Context) error {
	if err := sides.InOrder(ctx, c.check, c.buildSides, c.warmUp, c.MkdirOut, c.rounds, c.benchstatTables); err != nil {
		return err
	}
	verdicts, err := c.gateReport()
	if err != nil {
		return err
	}
	c.failed = slices.ContainsFunc(verdicts, func(v gate.ModeVerdict) bool { return v.Failed })
	c.Logf("results, benchstat.txt, gate.md and gate.json in %s", c.args.out)
	return nil
}

// check does everything that needs no build, so a bad ref or version
// stops the run before minutes of building.
func (c *comparison) check(ctx context.Context) error {
	a := c.args
	err := c.Locate(ctx, &a.out)
	if err != nil {
		return err
	}
	if a.bench == "" {
		if a.bench, err = defaultBenchFor(a.module); err != nil {
			return err
		}
	}
	if a.module != "" {
		if _, _, err := sides.Output(ctx, c.Repo, sides.GoEnv, "go", "list", "-m", a.module); err != nil {
			return fmt.Errorf("-module %s: not a module this suite builds on: %w", a.module, err)
		}
		c.suiteCommit = sides.CommitOf(ctx, c.Repo, "HEAD")
		if c.Dirty(ctx) {
			c.Logf("both sides build this tree's suite, uncommitted changes included")
		}
	}
	if a.mode != "time" {
		if _, err := exec.LookPath("valgrind"); err != nil {
			return fmt.Errorf("-mode %s needs valgrind (make valgrind-deps installs it)", a.mode)
		}
	}
	if why := sides.WithoutRocksDB(a.tags); why != "" {
		c.Logf("comparing without RocksDB: %s; its benchmarks skip on both sides", why)
	}
	if c.base, err = c.Resolve(ctx, "base", a.base); err != nil {
		return err
	}
	if c.head, err = c.Resolve(ctx, "head", a.head); err != nil {
		return err
	}
	if head := sides.CommitOf(ctx, c.Repo, "HEAD"); a.module == "" && (c.base.Commit == head || c.head.Commit == head) && c.Dirty(ctx) {
		c.Logf("only committed code is compared: this tree's uncommitted changes are not")
	}
	return nil
}

// defaultBenchFor is the benchmarks compared when -bench is not given:
// every engine's ReadRandom, or with a module only its engines'.
func defaultBenchFor(module string) (string, error) {
	if module == "" {
		return defaultBench, nil
	}
	t, err := sides.ModuleTitles(module, "compare")
	return "^" + defaultBench + "(" + t + ")$", err
}

// buildSides builds both test binaries (one for an A/A comparison).
func (c *comparison) buildSides(ctx context.Context) error {
	if err := c.Scratch(); err != nil {
		return err
	}
	if err := c.Build(ctx, c.base); err != nil {
		return err
	}
	if !c.head.Same(c.base) {
		return c.Build(ctx, c.head)
	}
	c.Logf("base and head are one build (%s): an A/A comparison, one binary on both sides", c.base.Name(c.args.module))
	c.head.Binary = c.base.Binary
	return nil
}

// timeCmd is one timed run of a side's test binary into stdout.
// KVBENCH_SIDE tells the binary its side: the power measurement slows head only.
func (c *comparison) timeCmd(ctx context.Context, s *sides.Side, benchtime string, stdout io.Writer) *exec.Cmd {
	cmd := exec.CommandContext(ctx, s.Binary, append(sides.TestArgs(c.args.bench, c.args.suite...), "-test.benchtime="+benchtime)...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = c.Repo, stdout, c.Stderr
	cmd.Env = append(os.Environ(), "KVBENCH_SIDE="+s.Role)
	return cmd
}

// warmUp runs each side once at one iteration (warmRun): the sides share
// fixtures unless the engine's version differs.
func (c *comparison) warmUp(ctx context.Context) error {
	for _, s := range c.sides() {
		who := s.Role + " " + s.Name(c.args.module)
		if err := sides.WarmRun(c.timeCmd(ctx, s, "1x", nil), c.Stderr, who+" fails its warm-up run", "-bench "+c.args.bench+": no benchmark of "+who+" ran"); err != nil {
			return err
		}
	}
	return nil
}

// rounds runs the paired rounds of each mode into DIR/PREFIXbase.txt
// and PREFIXhead.txt, alternating which goes first, the order into
// PREFIXorder.txt. A sim round counts under callgrind (kvb sim, in process).
func (c *comparison) rounds(ctx context.Context) error {
	for _, mode := range c.args.modes() {
		var lanes []sides.Lane
		for _, s := range c.sides() {
			lanes = append(lanes, sides.Lane{Name: s.Role, Who: s.Role, File: c.args.file(mode, s.Role+".txt")})
		}
		err := c.Interleaved(ctx, mode+" ", c.args.rounds(mode), lanes, c.args.file(mode, "order.txt"), func(ctx context.Context, i int, out io.Writer) error {
			s := c.sides()[i]
			if mode == "sim" {
				test := append(sides.TestArgs(c.args.bench, c.args.suite...), "-test.cpu=1")
				return sim.Count(ctx, sim.Options{Binary: s.Binary, TestArgs: test, Iterations: c.args.simBench, Cache: true,
					Dir: c.Repo, Env: []string{"KVBENCH_SIDE=" + s.Role}}, out, c.Stderr)
			}
			return c.timeCmd(ctx, s, c.args.timeBench, out).Run()
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// benchstatTables prints benchstat's comparison of each mode's rounds, a
// table per unit, and keeps it in DIR/benchstat.txt. Its columns are
// named by the sides' specs when they differ.
func (c *comparison) benchstatTables(ctx context.Context) error {
	var all bytes.Buffer
	w := io.MultiWriter(c.stdout, &all)
	for _, m := range c.args.modes() {
		how := fmt.Sprintf("-bench '%s' %s -benchtime %s", c.args.bench, strings.Join(c.args.suite, " "), c.args.timeBench)
		if m == "sim" {
			how = fmt.Sprintf("-bench '%s' %s, counted under callgrind at -benchtime %s", c.args.bench, strings.Join(c.args.suite, " "), c.args.simBench)
		}
		fmt.Fprintf(w, "kvb compare: base %s, head %s, %d %s rounds alternating, %s\n",
			c.base.Name(c.args.module), c.head.Name(c.args.module), c.args.rounds(m), m, how)
		bl, hl := "base", "head"
		if c.base.Spec != c.head.Spec && !strings.ContainsAny(c.base.Spec+c.head.Spec, "=") {
			bl, hl = c.base.Spec, c.head.Spec
		}
		if err := sides.BenchstatTable(ctx, c.Repo, c.args.gate.Alpha, []string{bl + "=" + c.args.file(m, "base.txt"), hl + "=" + c.args.file(m, "head.txt")}, w); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	return os.WriteFile(filepath.Join(c.args.out, "benchstat.txt"), all.Bytes(), 0o644)
}

// gateReport gates every mode run, writes DIR/gate.md (the report, a
// section per mode with -mode both) and DIR/gate.json (the verdicts), and
// prints the report.
func (c *comparison) gateReport() ([]gate.ModeVerdict, error) {
	baseName, headName := c.base.Name(c.args.module), c.head.Name(c.args.module)
	var md bytes.Buffer
	var all []gate.ModeVerdict
	for _, m := range c.args.modes() {
		if c.args.mode == "both" {
			fmt.Fprintf(&md, "#### %s mode\n\n", m)
		}
		rows, err := gate.Files(c.args.gate, []string{c.args.file(m, "base.txt")}, []string{c.args.file(m, "head.txt")}, baseName, headName, "-count", &md)
		if err != nil {
			return nil, fmt.Errorf("gate: %w", err)
		}
		all = append(all, gate.ModeVerdict{Mode: m, Failed: gate.Failed(rows), Failures: gate.Failures(rows)})
	}
	if err := os.WriteFile(filepath.Join(c.args.out, "gate.md"), md.Bytes(), 0o644); err != nil {
		return nil, err
	}
	sides := map[string]map[string]string{}
	for _, s := range c.sides() {
		sides[s.Role] = c.labels(s)
	}
	j, err := json.MarshalIndent(gate.Report{Base: baseName, Head: headName, Module: c.args.module, Modes: all, Sides: sides}, "", "  ")
	if err == nil {
		err = os.WriteFile(filepath.Join(c.args.out, "gate.json"), append(j, '\n'), 0o644)
	}
	if err != nil {
		return nil, err
	}
	c.stdout.Write(md.Bytes())
	return all, nil
}

// labels say what a side is, as the history store labels its runs: ref,
// commit (else the spec itself), its date, date (when the comparison
// started), and with -module the module and the suite's commit.
func (c *comparison) labels(s *sides.Side) map[string]string {
	l := map[string]string{"ref": s.Spec, "commit": cmp.Or(s.Commit, s.Spec), "date": c.started}
	if s.Commit != "" {
		if d, err := sides.Git(context.Background(), c.Repo, "show", "-s", "--format=%cI", s.Commit); err == nil {
			l["commit-date"] = d
		}
	}
	if c.args.module != "" {
		l["module"] = c.args.module
		if c.suiteCommit != "" {
			l["kvbench-commit"] = c.suiteCommit
		}
	}
	return l
}
