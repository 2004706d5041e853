package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kvbench/kvbench/benchstat/internal/cli"
	"github.com/kvbench/kvbench/benchstat/internal/sides"
)

var testCommand = cli.New(cli.Spec[*testConfig]{
	Name:    "test",
	Summary: "make test's steps (vet, unit, smoke, report-test), each timed, the times slowest first",
	Help:    printTestHelp,
	Flags:   testFlags,
	Run:     runTest,
})

func init() { register(testCommand) }

func testFlags(fs *flag.FlagSet) *testConfig {
	c := &testConfig{}
	fs.StringVar(&c.tags, "tags", sides.DefaultTags(), "build tags (TAGS): rocksdb when its headers are installed, unless $TAGS is set; without it every step runs without RocksDB")
	fs.BoolVar(&c.verbose, "v", false, "the smoke run prints its results (SMOKE_V=-v)")
	fs.StringVar(&c.staticcheck, "staticcheck", "honnef.co/go/tools/cmd/staticcheck@v0.6.1", "the staticcheck vet runs (STATICCHECK)")
	fs.StringVar(&c.actionlint, "actionlint", "github.com/rhysd/actionlint/cmd/actionlint@v1.7.7", "the actionlint the gate's smoke test runs (ACTIONLINT)")
	fs.BoolVar(&c.dry, "n", false, "print the commands each step would run, and run nothing")
	return c
}

func printTestHelp(w io.Writer) {
	fmt.Fprint(w, `usage: kvb test [flags] STEP...

Runs the jobs of the steps named, one more than the CPUs at a time (at
least three), the longest first, so that no core idles while a short job
waits for a long one or a job waits on the disk; a failed job does not stop the others, and the run fails when
one did. Each job's output is printed whole when it ends; with more than
one job it prints where the time went, slowest first.

steps:
`)
	jobs := (&testConfig{}).jobs()
	for _, s := range testSteps {
		fmt.Fprintf(w, "  %-12s %s\n", s.name, strings.Join(s.jobs, " beside "))
	}
	fmt.Fprintf(w, "  and each job alone: %s\n\nflags:\n", strings.Join(slices.Sorted(maps.Keys(jobs)), ", "))
	fs := flag.NewFlagSet("kvb test", flag.ContinueOnError)
	fs.SetOutput(w)
	testFlags(fs)
	fs.PrintDefaults()
}

// runTest is the test command: exit 0 every step passed, 1 one failed,
// 2 bad usage.
func runTest(call cli.Call, c *testConfig, names []string) int {
	stdout, stderr := call.Stdout, call.Stderr
	if len(names) == 0 {
		return call.Usage("name the steps (make test runs vet unit smoke report-test)")
	}
	jobs := c.jobs()
	var steps []testStep
	for _, n := range names {
		s, ok := stepNamed(n, jobs)
		if !ok {
			return call.Usage("unknown step %q", n)
		}
		steps = append(steps, s)
	}
	os.Setenv("GOFLAGS", testGoFlags(os.Getenv("GOFLAGS")))
	if os.Getenv("CGO_CFLAGS") == "" {
		os.Setenv("CGO_CFLAGS", testCFlags)
	}
	if c.dry {
		fmt.Fprintf(stdout, "# every go command with GOFLAGS=%s CGO_CFLAGS=%s\n", os.Getenv("GOFLAGS"), os.Getenv("CGO_CFLAGS"))
		printTestSteps(steps, jobs, stdout)
		return 0
	}
	start := time.Now()
	if !sides.HasTag(c.tags, "rocksdb") {
		why := "its headers are missing (sudo apt-get install librocksdb-dev)"
		if sides.HaveRocksDBHeader() {
			why = "the build tags (TAGS, -tags) leave it out"
		}
		fmt.Fprintf(stderr, "kvbench: RocksDB skipped: %s; every other test runs\n", why)
	}
	var order []testJob
	for _, st := range steps {
		for _, j := range st.jobs {
			if !slices.ContainsFunc(order, func(o testJob) bool { return o.name == j }) {
				order = append(order, jobs[j])
			}
		}
	}
	slices.SortStableFunc(order, func(a, b testJob) int { return jobRank(a.name) - jobRank(b.name) })
	times, err := runPool(context.Background(), order, testSlots(), stdout)
	if err != nil {
		fmt.Fprintf(stderr, "kvb test: failed: %v\n", err)
		return 1
	}
	if len(times) > 1 {
		slices.SortStableFunc(times, func(a, b stepTime) int { return cmp.Compare(b.d, a.d) })
		fmt.Fprintf(stdout, "== make test: where the time went (%.1f s in all; jobs %d at a time) ==\n", time.Since(start).Seconds(), testSlots())
		for _, t := range times {
			fmt.Fprintf(stdout, "%6.1f s  make %s\n", t.d.Seconds(), t.name)
		}
	}
	return 0
}

// testBuildFlags are added to GOFLAGS for every build of make test, the
// go commands its tests start included, unless GOFLAGS sets that flag.
// -trimpath: Go keys a package built with its path by that path, so a
// fresh clone would compile everything again. No DWARF, which only a
// debugger reads: a sixth of a compile and a third of a link. -vet=off:
// the vet job vets the same packages whole, and go test's vet derives
// every dependency's facts again for each command's flags and tags.
var testBuildFlags = []string{"-trimpath", "-gcflags=all=-dwarf=false", "-ldflags=-w", "-vet=off"}

// testCFlags, unless CGO_CFLAGS is set, are every make test build's (and
// the Makefile's KVB_CGO): Go's -O2 -g without the C's debug information
// (docs/testing.md), a third of DataDog/zstd's compile.
const testCFlags = "-O2"

// testGoFlags are goflags with testBuildFlags.
func testGoFlags(goflags string) string {
	have := strings.Fields(goflags)
	for _, f := range testBuildFlags {
		name, _, _ := strings.Cut(f, "=")
		if !slices.ContainsFunc(have, func(h string) bool { return h == name || strings.HasPrefix(h, name+"=") }) {
			have = append(have, f)
		}
	}
	return strings.Join(have, " ")
}

// testSlots is how many jobs make test runs at a time: one more than the
// CPUs, so a job waiting on the disk, a timer or a child leaves no core
// idle; at least three.
func testSlots() int { return max(3, runtime.NumCPU()+1) }

// longestFirst are make test's jobs, longest first as measured
// (docs/targets.md), the order the pool starts them in; others go last.
var longestFirst = []string{"unit-side", "unit-race", "smoke-tests", "e2e-sim", "unit-race-workload", "e2e", "smoke-paths", "vet", "report-test"}

func jobRank(name string) int {
	if i := slices.Index(longestFirst, name); i >= 0 {
		return i
	}
	return len(longestFirst)
}

// stepNamed is a step of testSteps, or a job as a step of its own.
func stepNamed(name string, jobs map[string]testJob) (testStep, bool) {
	if i := slices.IndexFunc(testSteps, func(s testStep) bool { return s.name == name }); i >= 0 {
		return testSteps[i], true
	}
	_, ok := jobs[name]
	return testStep{name: name, jobs: []string{name}}, ok
}

func printTestSteps(steps []testStep, jobs map[string]testJob, w io.Writer) {
	dry := &runner{stdout: w, dry: true}
	for _, s := range steps {
		fmt.Fprintf(w, "# %s\n", s.name)
		for _, n := range s.jobs {
			if len(s.jobs) > 1 {
				others := slices.DeleteFunc(slices.Clone(s.jobs), func(j string) bool { return j == n })
				fmt.Fprintf(w, "# %s, beside %s\n", n, strings.Join(others, ", "))
			}
			if a := jobs[n].after; a != "" {
				fmt.Fprintf(w, "# %s starts after %s's first command, when both run\n", n, a)
			}
			for _, c := range jobs[n].cmds {
				dry.one(context.Background(), c)
			}
		}
	}
}

var errNoChromium = errors.New("chromium is missing")

// runJob runs a job's commands in order and stops at the first failure,
// which it reports in the job's output w. first is closed when the first
// command ends.
func runJob(ctx context.Context, j testJob, w io.Writer, first chan struct{}) error {
	r := &runner{stdout: w, stderr: w, job: true}
	err := r.one(ctx, j.cmds[0])
	close(first)
	if err == nil {
		err = r.run(ctx, j.cmds[1:])
	}
	if err != nil {
		fmt.Fprintf(w, "kvb test: %s: %v\n", j.name, err)
	}
	return err
}

// runPool runs jobs, at most workers at a time, in the order given, a job
// whose after comes before it once that one's first command ended. A
// failed job does not stop the others (make -k). Each job's output is
// printed whole when it ends, after a line naming it.
func runPool(ctx context.Context, order []testJob, workers int, stdout io.Writer) ([]stepTime, error) {
	var (
		mu    sync.Mutex
		errs  = make([]error, len(order))
		times = make([]stepTime, len(order))
		next  = make(chan int)
		wg    sync.WaitGroup
		first = map[string]chan struct{}{} // closed when a job's first command ends
		index = map[string]int{}
	)
	for i, j := range order {
		first[j.name], index[j.name] = make(chan struct{}), i
	}
	for range max(1, workers) {
		wg.Go(func() {
			for i := range next {
				// only for a job taken before, which no wait holds back
				if a, ok := index[order[i].after]; ok && a < i {
					<-first[order[i].after]
				}
				// One writer for a command's standard output and error:
				// exec then copies both through one pipe, one Write at a time.
				var all bytes.Buffer
				start := time.Now()
				errs[i] = runJob(ctx, order[i], &all, first[order[i].name])
				times[i] = stepTime{order[i].name, time.Since(start)}
				mu.Lock()
				fmt.Fprintf(stdout, "== %s (%.1f s) ==\n", order[i].name, times[i].d.Seconds())
				stdout.Write(all.Bytes())
				mu.Unlock()
			}
		})
	}
	for i := range order {
		next <- i
	}
	close(next)
	wg.Wait()
	return times, errors.Join(errs...)
}
