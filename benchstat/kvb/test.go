package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kvbench/kvbench/benchstat/internal/cli"
)

func init() {
	register(cli.Command{
		Name:    "test",
		Summary: "make test's steps (vet, unit, smoke, report-test), each timed, the times slowest first",
		Help:    printTestHelp,
		Run:     runTest,
	})
}

func testFlags(c *testConfig, dry *bool, fs *flag.FlagSet) {
	fs.StringVar(&c.tags, "tags", defaultTags(), "build tags (TAGS): rocksdb when its headers are installed, unless $TAGS is set; without it every step runs without RocksDB")
	fs.BoolVar(&c.verbose, "v", false, "the smoke run prints its results (SMOKE_V=-v)")
	fs.StringVar(&c.staticcheck, "staticcheck", "honnef.co/go/tools/cmd/staticcheck@v0.6.1", "the staticcheck vet runs (STATICCHECK)")
	fs.StringVar(&c.actionlint, "actionlint", "github.com/rhysd/actionlint/cmd/actionlint@v1.7.7", "the actionlint the gate's smoke test runs (ACTIONLINT)")
	fs.BoolVar(dry, "n", false, "print the commands each step would run, and run nothing")
}

func printTestHelp(w io.Writer) {
	fmt.Fprint(w, `usage: kvb test [flags] STEP...

Runs the jobs of the steps named, one per CPU at a time (at least two),
the longest first, so that no core idles while a short job waits for a
long one; a failed job does not stop the others, and the run fails when
one did. Each job's output is printed whole when it ends; with more than
one job it prints where the time went, slowest first.

steps:
`)
	jobs := (&testConfig{}).jobs()
	for _, s := range testSteps {
		fmt.Fprintf(w, "  %-12s %s\n", s.name, strings.Join(s.jobs, " beside "))
	}
	var names []string
	for n := range jobs {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintf(w, "  and each job alone: %s\n\nflags:\n", strings.Join(names, ", "))
	fs := flag.NewFlagSet("kvb test", flag.ContinueOnError)
	fs.SetOutput(w)
	testFlags(&testConfig{}, new(bool), fs)
	fs.PrintDefaults()
}

// runTest is the test command: exit 0 every step passed, 1 one failed,
// 2 bad usage.
func runTest(args []string, stdout, stderr io.Writer) int {
	c := &testConfig{}
	var dry bool
	fs := cli.NewFlagSet("test")
	testFlags(c, &dry, fs)
	names, status, ok := cli.Parse(fs, args, printTestHelp, stdout, stderr)
	if !ok {
		return status
	}
	if len(names) == 0 {
		return cli.Usage(stderr, "test", printTestHelp, "name the steps (make test runs vet unit smoke report-test)")
	}
	jobs := c.jobs()
	var steps []testStep
	for _, n := range names {
		s, ok := stepNamed(n, jobs)
		if !ok {
			return cli.Usage(stderr, "test", printTestHelp, "unknown step %q", n)
		}
		steps = append(steps, s)
	}
	os.Setenv("GOFLAGS", trimpathFlags(os.Getenv("GOFLAGS")))
	if dry {
		fmt.Fprintf(stdout, "# every go command with GOFLAGS=%s\n", os.Getenv("GOFLAGS"))
		printTestSteps(steps, jobs, stdout)
		return 0
	}
	start := time.Now()
	if !hasTag(c.tags, "rocksdb") {
		why := "its headers are missing (sudo apt-get install librocksdb-dev)"
		if _, err := os.Stat(rocksdbHeader); err == nil {
			why = "the build tags (TAGS, -tags) leave it out"
		}
		fmt.Fprintf(stderr, "kvbench: RocksDB skipped: %s; every other test runs\n", why)
	}
	var order []testJob
	seen := map[string]bool{}
	for _, st := range steps {
		for _, j := range st.jobs {
			if !seen[j] {
				seen[j] = true
				order = append(order, jobs[j])
			}
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return jobRank(order[i].name) < jobRank(order[j].name) })
	times, err := runPool(context.Background(), order, max(2, runtime.NumCPU()), stdout)
	if err != nil {
		fmt.Fprintf(stderr, "kvb test: failed: %v\n", err)
		return 1
	}
	if len(times) > 1 {
		sort.SliceStable(times, func(i, j int) bool { return times[i].d > times[j].d })
		fmt.Fprintf(stdout, "== make test: where the time went (%.1f s in all; jobs %d at a time) ==\n", time.Since(start).Seconds(), max(2, runtime.NumCPU()))
		for _, t := range times {
			fmt.Fprintf(stdout, "%6.1f s  make %s\n", t.d.Seconds(), t.name)
		}
	}
	return 0
}

// trimpathFlags are GOFLAGS with -trimpath: every build of make test,
// the go commands its tests start included, leaves the checkout's path
// out, as the gate's sides do (side.go). Go keys a package built with its
// path by that path, so a fresh clone would compile every package of the
// suite again, in each of the tests' builds (plain, -race, each tag).
func trimpathFlags(goflags string) string {
	if slices.Contains(strings.Fields(goflags), "-trimpath") {
		return goflags
	}
	return strings.TrimSpace(goflags + " -trimpath")
}

// longestFirst are make test's jobs, longest first as make test measured
// them (docs/targets.md): the pool starts them in this order, so the
// short ones fill the cores at the end. A job not listed goes last.
var longestFirst = []string{"unit-race", "unit-side", "smoke-tests", "e2e-sim", "e2e", "smoke-paths", "report-test", "vet"}

func jobRank(name string) int {
	if i := slices.Index(longestFirst, name); i >= 0 {
		return i
	}
	return len(longestFirst)
}

// stepNamed is a step of testSteps, or a job as a step of its own.
func stepNamed(name string, jobs map[string]testJob) (testStep, bool) {
	for _, s := range testSteps {
		if s.name == name {
			return s, true
		}
	}
	if _, ok := jobs[name]; ok {
		return testStep{name: name, jobs: []string{name}}, true
	}
	return testStep{}, false
}

func printTestSteps(steps []testStep, jobs map[string]testJob, w io.Writer) {
	for _, s := range steps {
		fmt.Fprintf(w, "# %s\n", s.name)
		for _, n := range s.jobs {
			if len(s.jobs) > 1 {
				fmt.Fprintf(w, "# %s, beside %s\n", n, strings.Join(others(s.jobs, n), ", "))
			}
			for _, c := range jobs[n].cmds {
				if c.args != nil {
					fmt.Fprintln(w, task{args: c.args, env: c.env}.commandLine())
				} else {
					fmt.Fprintln(w, c.show)
				}
			}
		}
	}
}

func others(all []string, not string) []string {
	var o []string
	for _, s := range all {
		if s != not {
			o = append(o, s)
		}
	}
	return o
}
