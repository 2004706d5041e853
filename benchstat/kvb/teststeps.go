package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
)

// testConfig is what shapes make test's steps.
type testConfig struct {
	tags        string
	verbose     bool   // the smoke run prints its results (SMOKE_V)
	staticcheck string // the staticcheck module, at a version
	actionlint  string // the actionlint module, at a version
	dry         bool   // print the commands, run nothing (-n)
}

// testCmd is one command of a job: a go command, or a check this process
// runs (do), shown to -n as show.
type testCmd struct {
	args []string
	env  []string
	show string
	do   func(ctx context.Context, stdout, stderr io.Writer) error
}

// testJob is commands run in order; the first that fails ends the job.
// after names a job whose first command this one waits for when both
// run: a build whose packages this job's own build would otherwise
// compile again side by side (Go's build cache does not share work in
// progress between go commands).
type testJob struct {
	name  string
	cmds  []testCmd
	after string
}

// testStep is jobs run side by side, each job's output printed whole
// when it ends.
type testStep struct {
	name string
	jobs []string
}

// testSteps are the steps kvb test runs by name; make test runs vet,
// unit, smoke and report-test, their jobs in one pool (runPool), the
// longest first (longestFirst). A job is a step of its own too.
var testSteps = []testStep{
	{name: "vet", jobs: []string{"vet"}},
	// unit-race, every package under internal/ under -race but
	// notRaced, internal/workload's tests split between it and
	// unit-race-workload (the package's tests run one at a time, and
	// whole they are the longest run of make test); unit-side, the runs
	// without -race.
	{name: "unit", jobs: []string{"unit-race", "unit-race-workload", "unit-side"}},
	// The main package's tests (child processes that wait on timers and
	// the disk); make bench's error path, the memory budget's path and
	// the workflows' lint; the gate's end-to-end tests, the sim-mode one
	// (its two comparisons side by side under callgrind) apart.
	{name: "smoke", jobs: []string{"smoke-tests", "smoke-paths", "e2e-sim", "e2e"}},
	{name: "report-test", jobs: []string{"report-test"}},
}

const (
	// unitFirst: the package whose tests start first, the longest;
	// unit-race-workload runs its tests that workloadHalf matches,
	// unit-race the others.
	unitFirst    = "./internal/workload"
	workloadHalf = "^Test(Twin|YCSB|Delete|Bloom)"
	// e2e: the end-to-end tests of kvb compare and kvb versions
	// (benchstat/e2e_test.go), every test of e2ePkg; e2eSim, the one
	// under callgrind.
	e2e    = "^TestE2E"
	e2eSim = "^TestE2EModuleCopySim$"
	e2ePkg = "./benchstat"
)

// notRaced are the packages under internal/ whose tests unit-side runs
// without -race, and unit-race leaves out: their own code starts no
// goroutine and their tests call it from one, so -race would check none
// of the suite's code there. internal/engine's adapters are called side
// by side by the workloads, whose tests run under -race, and so is the
// harness (internal/core) internal/workload/embedded's workloads run in;
// internal/spin and internal/valgrind count under callgrind, which a
// -race binary cannot run.
var notRaced = []string{"./internal/engine", "./internal/workload/embedded", "./internal/spin", "./internal/valgrind",
	"./internal/benchpattern", "./internal/families", "./internal/flagreg", "./internal/records"}

// raceOnly are the packages under benchstat/ whose own code starts
// goroutines, whose tests run under -race only; the others' tests run
// without -race, which would build them and what they import a second
// time to check code with none.
var raceOnly = []string{"./benchstat/internal/progress"}

// The packages whose results go test may take from its cache, "(cached)"
// (no -count 1): their tests start no process, open no engine, read
// nothing of the kernel's and no file but the tree's, so their outcome
// is a function of what go test keys a result by: the test binary (the
// package's code and every dependency's), the flags, and the files and
// environment variables the run read (docs/testing.md, "Results go test
// keeps"). Every other package's tests run each time. cachedRaced run
// under -race (unit-race); cachedUnraced, of notRaced, with the build's
// tags, and cachedBenchstat without (unit-side).
var (
	cachedRaced     = []string{"./internal/keydist", "./internal/load"}
	cachedUnraced   = []string{"./internal/benchpattern", "./internal/families", "./internal/flagreg", "./internal/records"}
	cachedBenchstat = []string{
		"./benchstat/internal/charts", "./benchstat/internal/cli", "./benchstat/internal/engname",
		"./benchstat/internal/flagargs", "./benchstat/internal/gate", "./benchstat/internal/results",
		"./benchstat/internal/summary", "./benchstat/report", "./benchstat/sim"}
)

// packagesBut are the packages of pattern (./dir/...), as go list expands
// it, but those in the lists given (pattern whole when go list fails: the
// run then says why).
func packagesBut(pattern string, but ...[]string) []string {
	const module = "github.com/kvbench/kvbench/"
	out, err := exec.Command(goTool(), "list", module+strings.TrimPrefix(pattern, "./")).Output()
	if err != nil {
		return []string{pattern}
	}
	var pkgs []string
	for _, p := range strings.Fields(string(out)) {
		rel := "./" + strings.TrimPrefix(p, module)
		if !slices.ContainsFunc(but, func(l []string) bool { return slices.Contains(l, rel) }) {
			pkgs = append(pkgs, rel)
		}
	}
	return pkgs
}

// racedInternal is ./internal/... but unitFirst, notRaced and cachedRaced;
// sideBenchstat, ./benchstat/... but e2ePkg (the e2e jobs'), raceOnly
// and cachedBenchstat;
// sideInternal, notRaced but cachedUnraced: the packages whose tests run
// each time, read once a process.
var (
	racedInternal = sync.OnceValue(func() []string { return packagesBut("./internal/...", []string{unitFirst}, notRaced, cachedRaced) })
	sideBenchstat = sync.OnceValue(func() []string {
		return packagesBut("./benchstat/...", []string{e2ePkg}, raceOnly, cachedBenchstat)
	})
	sideInternal = slices.DeleteFunc(slices.Clone(notRaced), func(p string) bool { return slices.Contains(cachedUnraced, p) })
)

// raceEnv: a race-built process sleeps a second at exit by default, and
// the twin, overwrite and memory-budget tests start some; the report's
// browser test is report-test's.
var raceEnv = []string{"GORACE=atexit_sleep_ms=0", "KVBENCH_CHROMIUM=skip"}

// The race builds take Pebble's pure-Go zstd
// (pebblegozstd) in place of its cgo binding, DataDog/zstd, whose C
// library is 40 CPU-seconds to compile under -race, code the race
// detector does not see and no test runs (every test's engines store
// blocks uncompressed). The race builds are make test's alone, so no
// other build's cache is split by it. raceFlags are every race
// command's: one list, so that no command builds without the tag and
// compiles the whole race build again.
var raceFlags = []string{"-race", "-tags", "pebblegozstd"}

// raceTest is a go test command's arguments under raceFlags.
func raceTest(args ...string) []string {
	return append(append([]string{"test"}, raceFlags...), args...)
}

// smokeFlags are the smoke run's: every test of the main package, and
// every benchmark once on a tiny data set (TestEveryBenchmarkWritesOnlyUnderDir's
// child, given these flags), short windows and few tables for the
// fixed-rate, knee, HTTP and Bloom benchmarks. That child runs outside the
// module, where the cold start skips its minimal child, whose build
// compiles Go's runtime into a cache under -dir (15 CPU-s): that child is
// TestMinimalColdChild's. Memtables of 4 MiB, which the tiny data set
// fills no more than 64 MiB ones: Badger and goleveldb allocate
// and clear the whole memtable at every open, which cost the child a
// third of its CPU at 64 (50 CPU-seconds against 32, 2026-11-28).
var smokeFlags = []string{"-run", ".",
	"-keys_mil", "0.002", "-valsz", "256", "-threads", "1,4", "-hit_rate", "0,0.63,1", "-prefetch_traces", "2", "-embed_records", "2000",
	"-memtable_mb", "4"}

// loadSmokeFlags: windows of 10 ms (20 operations at 2,000/s; a
// closed-loop Bloom leaf reads for the whole window on every core) and
// knee searches from 64,000/s, where the reads' searches would otherwise
// spend six doublings below every engine's read knee (an upsert search
// may stop at its first rate: the smoke runs the path, not a figure):
// together a quarter of the child's CPU (17.5 CPU-s against 23.6,
// 2026-11-29).
var loadSmokeFlags = []string{"-load_time", "10ms", "-knee_time", "20ms", "-knee_max_time", "20ms", "-knee_start", "64000", "-knee_steps", "1",
	"-rate", "2000", "-write_rate", "200", "-sst_tables", "4"}

// jobs are every job of the steps, by name.
func (c *testConfig) jobs() map[string]testJob {
	goCmd := func(env []string, args ...string) testCmd {
		return testCmd{env: env, args: append([]string{goTool()}, args...)}
	}
	rocksdb := hasTag(c.tags, "rocksdb")
	var vet, side []testCmd
	// Build tags select files in internal/engine only: vet and
	// staticcheck with the build's tags, whose packages the tests compile
	// too, then staticcheck over LMDB's other binding and RocksDB's absence
	// (rocksdb_off.go). Not vet: given other tags, go vet derives every
	// dependency's facts again (-tags is one of its analyzers' flags, so
	// part of each result's key), for two small files.
	vet = append(vet, testCmd{show: "kvb: no tracked file is a compiled one", do: checkNoTrackedBinaries},
		goCmd(nil, "vet", "-tags", c.tags, "./..."),
		goCmd(nil, "run", c.staticcheck, "-tags", c.tags, "./..."),
		goCmd(nil, "run", c.staticcheck, "-tags", "lmdb_bmatsuo", "./internal/engine"))

	side = append(side,
		// the tooling's packages, the end-to-end tests' aside (e2e,
		// e2e-sim), then those go test may take from its cache
		goCmd([]string{"KVBENCH_CHROMIUM=skip"}, append([]string{"test", "-count", "1"}, sideBenchstat()...)...),
		goCmd([]string{"KVBENCH_CHROMIUM=skip"}, append([]string{"test"}, cachedBenchstat...)...),
		// notRaced, every engine of the build; the canonical reads
		// (TestPointReadsCallTheEnginesGet) count under callgrind
		goCmd(nil, append([]string{"test", "-count", "1", "-tags", c.tags}, sideInternal...)...),
		goCmd(nil, append([]string{"test", "-tags", c.tags}, cachedUnraced...)...))
	if rocksdb {
		// the core's tests that open every LSM: RocksDB's, which
		// unit-race's build has not
		side = append(side, goCmd(nil, "test", "-count", "1", "-tags", c.tags, "-run", "TestDamagedFixtureIsRebuilt/rocksdb|TestBudgetRuleReachesEveryLSM/rocksdb", "./internal/core"))
	}
	// LMDB's other binding changes the lmdb adapter only: of the tests
	// that run every engine, its subtests (the tests of one setting run
	// whole); not the canonical reads, whose count proves that lmdb.go
	// calls Txn.Get, the same call in both bindings
	side = append(side, goCmd(nil, "test", "-count", "1", "-tags", "lmdb_bmatsuo", "-run", "/lmdb", "-skip", "TestPointReadsCallTheEnginesGet", "./internal/engine"))

	smoke := []string{"test", "-count", "1", "-tags", c.tags}
	if c.verbose {
		smoke = append(smoke, "-v")
	}
	smoke = append(append(append(smoke, smokeFlags...), "-dir", "$TMP"), loadSmokeFlags...)
	smoke = append(smoke, ".")

	lint := []testCmd{goCmd(nil, "run", c.actionlint, ".github/workflows/bench.yml", ".github/workflows/engine-gate.yml"),
		{show: "kvb: kvb compare refuses too few rounds before any build", do: tooFewRoundsRefused}}
	// a slower commit fails the gate, a release is recorded; a slower
	// module copy fails it and an unmodified copy passes (in sim mode
	// where valgrind is): at their smallest size
	e2eRest := goCmd(nil, "test", "-count", "1", "-run", e2e, "-skip", e2eSim, e2ePkg)
	e2eSimRun := goCmd(nil, "test", "-count", "1", "-run", e2eSim, e2ePkg)

	return map[string]testJob{
		"vet": {name: "vet", cmds: vet},
		// the race build of unitFirst's test binary and every engine
		// first, which unit-race-workload waits for: make test's largest
		// build
		"unit-race": {name: "unit-race", cmds: []testCmd{goCmd(nil, raceTest("-c", "-o", os.DevNull, unitFirst)...),
			goCmd(raceEnv, raceTest("-count", "1", "-skip", workloadHalf, unitFirst)...),
			goCmd(raceEnv, raceTest(append(append([]string{"-count", "1"}, racedInternal()...), raceOnly...)...)...),
			goCmd(raceEnv, raceTest(cachedRaced...)...)}},
		"unit-race-workload": {name: "unit-race-workload", after: "unit-race",
			cmds: []testCmd{goCmd(raceEnv, raceTest("-count", "1", "-run", workloadHalf, unitFirst)...)}},
		"unit-side": {name: "unit-side", cmds: side},
		// every test of the main package, every benchmark once on a tiny
		// data set in a directory of its own; TestEveryBenchmarkWritesOnlyUnderDir
		// checks that nothing is written outside -dir.
		"smoke-tests": {name: "smoke-tests", cmds: []testCmd{withTempDir(goCmd(nil, smoke...))}},
		"smoke-paths": {name: "smoke-paths", cmds: append([]testCmd{
			{show: "kvb: kvb bench with a missing -dir stops with the suite's error", do: c.missingDirStops},
			{show: "kvb: kvb bench mem, the memory budget's path, on a tiny data set", do: c.budgetPathRuns},
		}, lint...)},
		"e2e":        {name: "e2e", cmds: []testCmd{e2eRest}},
		"e2e-sim":    {name: "e2e-sim", cmds: []testCmd{e2eSimRun}},
		"gate-smoke": {name: "gate-smoke", cmds: append(lint, goCmd(nil, "test", "-count", "1", "-run", e2e, "./benchstat"))},
		"report-test": {name: "report-test", cmds: []testCmd{
			{show: "kvb deps chromium", do: installChromium},
			goCmd([]string{"KVBENCH_CHROMIUM=required"}, "test", "-count", "1", "-run", "TestPage", "./benchstat/report"),
		}},
	}
}

// installChromium is make report-deps: the report test needs chromium.
func installChromium(_ context.Context, _, stderr io.Writer) error {
	d := deps["chromium"]
	if code := install(d, false, stderr); code != 0 {
		return &stepError{name: "kvb deps chromium", err: errNoChromium, code: code}
	}
	return nil
}

// withTempDir runs cmd with each "$TMP" argument a new directory, removed
// when it ends.
func withTempDir(cmd testCmd) testCmd {
	show := shellJoin(cmd.args)
	args := cmd.args
	cmd.show = show
	cmd.do = func(ctx context.Context, stdout, stderr io.Writer) error {
		d, err := os.MkdirTemp("", "kvbench-smoke-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		a := append([]string(nil), args...)
		for i := range a {
			if a[i] == "$TMP" {
				a[i] = d
			}
		}
		return runTestCmd(ctx, testCmd{args: a, env: cmd.env}, stdout, stderr)
	}
	cmd.args = nil
	return cmd
}
