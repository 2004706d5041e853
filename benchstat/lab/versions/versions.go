// Package versions is kvb versions, the release matrix: this tree's suite
// against several versions of one engine module, each version's results
// file labelled a point of the module's release series for the history
// store (docs/history.md, "Release matrix").
package versions

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/benchstat/internal/sides"
	"github.com/kvbench/kvbench/internal/benchpattern"
)

var versionsCommand = sides.SuiteCommand[versionsArgs]{
	Name:     "versions",
	Summary:  "the release matrix: this tree's suite against several versions of one engine module",
	Usage:    versionsUsage,
	Where:    "kvb help versions lists versions' flags; the suite's are in docs/flags.md",
	Defaults: defaultVersionsSuiteArgs,
	Flags:    versionsFlags,
	Check:    checkVersionsArgs,
	Run:      runVersions,
}

// Command is kvb versions.
var Command = versionsCommand.Command()

// The release matrix's defaults (docs/history.md, "Release matrix").
const (
	defaultVersionsRounds    = 10
	defaultVersionsBenchtime = "0.2s"
	defaultVersionsOut       = "results/versions"
)

// defaultVersionsSuiteArgs go to every run before the user's flags, which
// override them.
var defaultVersionsSuiteArgs = []string{"-keys_mil=0.05", "-valsz=256"}

const versionsExample = "e.g. kvb versions -module go.etcd.io/bbolt v1.4.0 v1.4.3 v1.5.0"

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

// versionsFlags declares versions' own flags.
func versionsFlags(fs *flag.FlagSet, a *versionsArgs) *[]string {
	moduleSet := false
	// -module may be given once: a second would silently compare another
	// module's versions.
	fs.Func("module", "the engine `module` whose versions are compared (required)", func(s string) error {
		if moduleSet {
			return fmt.Errorf("given twice (%s, then %s): one module a run", a.module, s)
		}
		a.module, moduleSet = s, true
		return nil
	})
	fs.StringVar(&a.bench, "bench", "", "benchmarks to run, warm on one thread (default: warm random reads and a populate of the module's engines)")
	fs.StringVar(&a.benchtime, "benchtime", defaultVersionsBenchtime, "run length of the reads (or of -bench) in a round")
	fs.IntVar(&a.count, "count", defaultVersionsRounds, "rounds")
	fs.StringVar(&a.out, "o", defaultVersionsOut, "directory of the results")
	fs.BoolVar(&a.buildOnly, "build_only", false, "stop after the builds")
	fs.StringVar(&a.tags, "tags", sides.DefaultTags(), "build tags of every version: rocksdb when its headers are installed, unless $TAGS is set")
	return &a.suite
}

// checkVersionsArgs reads the versions and checks the flags' values.
func checkVersionsArgs(a *versionsArgs, fs *flag.FlagSet, pos []string) error {
	switch {
	case !sides.IsSet(fs, "module"):
		return errors.New("-module MODULE is required, then two versions or more; " + versionsExample)
	case a.module == "":
		return errors.New("-module needs a module path; " + versionsExample)
	case strings.HasPrefix(a.module, "-"):
		return fmt.Errorf("-module needs a module path, not the flag %s; %s", a.module, versionsExample)
	case len(pos) < 2:
		got := fmt.Sprintf("got %d", len(pos))
		if len(pos) > 0 {
			got += " (" + strings.Join(pos, " ") + ")"
		}
		return fmt.Errorf("-module %s needs two versions or more to compare, %s; %s", a.module, got, versionsExample)
	case a.count < 1:
		return fmt.Errorf("-count %d: must be a whole number of rounds", a.count)
	}
	a.specs = pos
	// Refuse now what go test would refuse after every build.
	if !validBenchtime(a.benchtime) {
		return fmt.Errorf("-benchtime %s: a duration (0.2s) or a number of iterations (2000x)", a.benchtime)
	}
	for _, alt := range benchpattern.Split(a.bench) {
		for _, level := range alt {
			if _, err := regexp.Compile(level); err != nil {
				return fmt.Errorf("-bench %s: %v", a.bench, err)
			}
		}
	}
	return nil
}

func validBenchtime(s string) bool {
	if n, ok := strings.CutSuffix(s, "x"); ok {
		v, err := strconv.Atoi(n)
		return err == nil && v > 0
	}
	d, err := time.ParseDuration(s)
	return err == nil && d > 0
}

type matrix struct {
	sides.Builder
	args        *versionsArgs
	stdout      io.Writer
	versions    []*sides.Side // in the order given; the first is benchstat's baseline
	steps       []step
	what        string // the workload, in words
	suiteCommit string // the commit this tree is at, read once
	commitDate  string
	dirtyTree   bool // the suite built has uncommitted changes
}

// runVersions is the versions command: exit 0 done, 2 bad usage, a
// version that does not build, or a run that fails.
func runVersions(a *versionsArgs, stdout, stderr io.Writer) int {
	m := &matrix{Builder: sides.Builder{Prog: "kvb versions", Stderr: stderr, Module: a.module, Tags: a.tags}, args: a, stdout: stdout}
	return m.UntilInterrupted(m.run)
}

func (m *matrix) run(ctx context.Context) error {
	if err := sides.InOrder(ctx, m.check, m.buildAll); err != nil || m.args.buildOnly {
		return err
	}
	return sides.InOrder(ctx, m.warmUp, m.MkdirOut, m.rounds, m.table)
}

// check does everything that needs no build, so a bad version stops the
// run before minutes of building.
func (m *matrix) check(ctx context.Context) error {
	a := m.args
	err := m.Locate(ctx, &a.out)
	if err != nil {
		return err
	}
	if _, _, err := sides.Output(ctx, m.Repo, sides.GoEnv, "go", "list", "-m", a.module); err != nil {
		return fmt.Errorf("-module %s: not a module this suite builds on (see go.mod): %w", a.module, err)
	}
	if m.steps, m.what, err = workload(a); err != nil {
		return err
	}
	// The suite's commit, read once: a commit made while the rounds run
	// must not relabel them.
	m.suiteCommit = sides.CommitOf(ctx, m.Repo, "HEAD")
	m.commitDate, _ = sides.Git(ctx, m.Repo, "show", "-s", "--format=%cI", m.suiteCommit)
	if m.dirtyTree = m.Dirty(ctx); m.dirtyTree {
		m.Logf("each version is built with this tree's suite, uncommitted changes included (its files say dirty: true)")
	}
	if why := sides.WithoutRocksDB(a.tags); why != "" {
		m.Logf("running without RocksDB: %s; its benchmarks skip", why)
	}
	return m.resolve(ctx)
}

// resolve checks that every version exists and no two are the same.
func (m *matrix) resolve(ctx context.Context) error {
	seen := map[string]string{}
	for i, spec := range m.args.specs {
		s, err := m.Resolve(ctx, fmt.Sprintf("version %d", i+1), spec)
		if err != nil {
			return err
		}
		if s.Kind == sides.Version && s.Label != spec {
			m.Logf("%s %s is %s", m.Module, spec, s.Label)
		}
		if first, dup := seen[s.Label]; dup {
			return fmt.Errorf("%s: %s %s is listed twice (first as %s)", spec, m.Module, s.Label, first)
		}
		seen[s.Label] = spec
		m.versions = append(m.versions, s)
	}
	return nil
}

// labels are the versions as results and fixtures name them.
func (m *matrix) labels() []string {
	var l []string
	for _, v := range m.versions {
		l = append(l, v.Label)
	}
	return l
}

// file is a version's results file: DIR/<version>.txt, the label with
// any character a file name should not hold replaced.
func (m *matrix) file(v *sides.Side) string {
	return filepath.Join(m.args.out, notFileName.ReplaceAllString(v.Label, "_")+".txt")
}

var notFileName = regexp.MustCompile(`[^A-Za-z0-9._+-]`)

// step is one benchmark pattern every version runs in each round, with
// its own flags, given before the user's so theirs win.
type step struct {
	bench, benchtime string
	flags            []string
}

// warmOneThread are the reads' own flags: a warm cache, one thread.
var warmOneThread = []string{"-cache=warm", "-threads=1"}

// workload is what every version runs each round, and how the summary
// line says it.
func workload(a *versionsArgs) ([]step, string, error) {
	if a.bench != "" {
		return []step{{a.bench, a.benchtime, warmOneThread}}, fmt.Sprintf("-bench '%s' -benchtime %s", a.bench, a.benchtime), nil
	}
	t, err := sides.ModuleTitles(a.module, "run")
	if err != nil {
		return nil, "", err
	}
	return []step{
			{"^BenchmarkReadRandom(" + t + ")$", a.benchtime, warmOneThread},
			{"^BenchmarkPopulate(" + t + ")$/valsz/batch/sync=false", "1x", nil},
		},
		fmt.Sprintf("warm random reads (one thread, %s) and a populate (sync off) of %s", a.benchtime, t), nil
}

// buildAll builds every version's test binary; the run stops after them
// all, naming each that failed and why in one line.
func (m *matrix) buildAll(ctx context.Context) error {
	if err := m.Scratch(); err != nil {
		return err
	}
	var broken []string
	for _, v := range m.versions {
		err := m.Build(ctx, v)
		switch be, isBuild := errors.AsType[*sides.BuildError](err); {
		case isBuild && ctx.Err() == nil:
			broken = append(broken, fmt.Sprintf("%s %s: %s", m.Module, v.Label, reasonOf(be)))
		case err != nil:
			return err
		}
	}
	if len(broken) > 0 {
		at := sides.ShortCommit(m.suiteCommit)
		if m.dirtyTree {
			at += " with uncommitted changes"
		}
		// A line each, the last as the run's error.
		for _, b := range broken[:len(broken)-1] {
			m.Logf("the suite at %s does not build with %s", at, b)
		}
		return fmt.Errorf("the suite at %s does not build with %s", at, broken[len(broken)-1])
	}
	m.Logf("every version builds: %s %s", m.Module, strings.Join(m.labels(), " "))
	return nil
}

// reasonOf is why a version did not build, in one line: the version go
// would build instead, or the build's first error.
func reasonOf(be *sides.BuildError) string {
	if be.Reason != "" {
		return be.Reason
	}
	return firstError(be.Log)
}

// compileError is a compiler's error line: file.go:line[:col]: message.
var compileError = regexp.MustCompile(`(?m)^[^ #][^ :]*\.go:[0-9]+(:[0-9]+)?: .*$`)

// firstError is the first error in a go build's standard error: the
// compiler's first, else the first line that is not progress.
func firstError(log string) string {
	if m := compileError.FindString(log); m != "" {
		return m
	}
	for _, l := range strings.Split(log, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "go: downloading ") || strings.HasPrefix(l, "go: finding ") || strings.HasPrefix(l, "go: found ") {
			continue
		}
		return l
	}
	return "(no output)"
}

// stepCmd runs step s of version v once at benchtime into stdout.
func (m *matrix) stepCmd(ctx context.Context, v *sides.Side, s step, benchtime string, stdout io.Writer) *exec.Cmd {
	args := append(sides.TestArgs(s.bench, s.flags...), m.args.suite...)
	cmd := exec.CommandContext(ctx, v.Binary, append(args, "-test.benchtime="+benchtime)...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = m.Repo, stdout, m.Stderr
	return cmd
}

// warmUp runs every step of every version once at one iteration
// (warmRun).
func (m *matrix) warmUp(ctx context.Context) error {
	for _, v := range m.versions {
		for _, s := range m.steps {
			if err := sides.WarmRun(m.stepCmd(ctx, v, s, "1x", nil), m.Stderr, v.Name(m.Module)+" fails its warm-up run of -bench '"+s.bench+"'",
				"-bench '"+s.bench+"': no benchmark of this suite matches (with "+v.Name(m.Module)+")"); err != nil {
				return err
			}
		}
	}
	return nil
}

// rounds runs -count interleaved rounds into DIR/<version>.txt after its
// header, the order into DIR/order.txt.
func (m *matrix) rounds(ctx context.Context) error {
	var lanes []sides.Lane
	for _, v := range m.versions {
		lanes = append(lanes, sides.Lane{Name: v.Label, Who: v.Name(m.Module), File: m.file(v), Header: m.header(v)})
	}
	return m.Interleaved(ctx, "", m.args.count, lanes, filepath.Join(m.args.out, "order.txt"), func(ctx context.Context, i int, out io.Writer) error {
		for _, s := range m.steps {
			if err := m.stepCmd(ctx, m.versions[i], s, s.benchtime, out).Run(); err != nil {
				return err
			}
		}
		return nil
	})
}

// table prints what ran and benchstat's table across the versions, the
// first given the baseline, and keeps both in DIR/benchstat.txt.
func (m *matrix) table(ctx context.Context) error {
	var all bytes.Buffer
	w := io.MultiWriter(m.stdout, &all)
	fmt.Fprintf(w, "kvb versions: %s %s, %d rounds interleaved, %s, %s\n",
		m.Module, strings.Join(m.labels(), " "), m.args.count, m.what, strings.Join(m.args.suite, " "))
	var cols []string
	for _, v := range m.versions {
		cols = append(cols, v.Label+"="+m.file(v))
	}
	if err := sides.BenchstatTable(ctx, m.Repo, 0.05, cols, w); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(m.args.out, "benchstat.txt"), all.Bytes(), 0o644)
}

// header is the configuration lines a version's file starts with, which
// the lab's kvb history add keeps as the run's labels (docs/history.md,
// "Release matrix").
func (m *matrix) header(v *sides.Side) string {
	var h strings.Builder
	for _, kv := range [][2]string{{"role", "versions"}, {"series", "release"}, {"module", m.Module}, {"version", v.Label},
		{"commit", m.suiteCommit}, {"commit-date", m.commitDate}, {"dirty", map[bool]string{true: "true"}[m.dirtyTree]}} {
		if kv[1] != "" {
			fmt.Fprintf(&h, "%s: %s\n", kv[0], kv[1])
		}
	}
	return h.String()
}
