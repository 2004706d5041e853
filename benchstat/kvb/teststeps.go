package main

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"

	"github.com/kvbench/kvbench/benchstat/internal/sides"
)

// testConfig is what shapes make test's steps.
type testConfig struct {
	tags        string
	verbose     bool   // the smoke run prints its results (SMOKE_V)
	staticcheck string // the staticcheck module, at a version
	actionlint  string // the actionlint module, at a version
	dry         bool   // print the commands, run nothing (-n)
}

// testJob is commands run in order, go commands or checks this process
// runs (a task's do); the first that fails ends the job.
// after names a job whose first command (a build) this one waits for when
// both run: Go's build cache does not share work in progress.
type testJob struct {
	name  string
	cmds  []task
	after string
}

// testStep is jobs run side by side.
type testStep struct {
	name string
	jobs []string
}

// testSteps are the steps kvb test runs by name (a job is a step of its
// own too); make test runs vet, unit, smoke and report-test.
var testSteps = []testStep{
	{name: "vet", jobs: []string{"vet"}},
	// internal/workload's tests, run one at a time and the longest of
	// make test, are split between unit-race and unit-race-workload.
	{name: "unit", jobs: []string{"unit-race", "unit-race-workload", "unit-side"}},
	// The sim-mode end-to-end test (two comparisons under callgrind) apart.
	{name: "smoke", jobs: []string{"smoke-tests", "smoke-paths", "e2e-sim", "e2e"}},
	{name: "report-test", jobs: []string{"report-test"}},
}

const (
	// unitFirst, the longest, starts first; unit-race-workload runs its
	// tests that workloadHalf matches, unit-race the others.
	unitFirst    = "./internal/workload"
	workloadHalf = "^Test(Twin|YCSB|Delete|Bloom)"
	// e2e: kvb compare's end-to-end tests
	// (benchstat/e2e_test.go); e2eSim, the one under callgrind.
	e2e    = "^TestE2E"
	e2eSim = "^TestE2EModuleCopySim$"
	e2ePkg = "./benchstat"
	// pathTests: kvb bench's tests on a tiny data set (bench_test.go), the
	// job smoke-paths, which unit-side's run of benchstat/kvb skips.
	pathTests = "^TestPath"
	kvbPkg    = "./benchstat/kvb"
)

// notRaced are the packages under internal/ whose tests unit-side runs
// without -race: their code starts no goroutine and their tests call it
// from one (internal/engine's adapters are raced through the workloads'
// tests), or they count under callgrind, which a -race binary cannot run.
var notRaced = []string{"./internal/engine", "./internal/workload/embedded", "./internal/spin", "./internal/valgrind",
	"./internal/benchpattern", "./internal/families", "./internal/flagreg", "./internal/records"}

// raceOnly are the packages under benchstat/ whose code starts
// goroutines: their tests run under -race only, the others' without.
var raceOnly = []string{"./benchstat/internal/progress"}

// The packages whose results go test may take from its cache (no -count
// 1): their tests start no process, open no engine and read no file but
// the tree's, so go test's key decides their outcome (docs/testing.md,
// "Results go test keeps"). cachedRaced run under -race (unit-race);
// cachedUnraced, of notRaced, with the build's tags, and cachedBenchstat
// without (unit-side).
var (
	cachedRaced     = []string{"./internal/keydist", "./internal/load"}
	cachedUnraced   = []string{"./internal/benchpattern", "./internal/families", "./internal/flagreg", "./internal/records"}
	cachedBenchstat = []string{
		"./benchstat/internal/charts", "./benchstat/internal/cli", "./benchstat/internal/engname",
		"./benchstat/internal/flagargs", "./benchstat/internal/gate", "./benchstat/internal/results",
		"./benchstat/internal/summary", "./benchstat/report", "./benchstat/sim"}
)

// packagesBut are the packages go list expands pattern (./dir/...) to,
// but those in the lists given; pattern itself when go list fails (the
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

// The packages whose tests run each time, each list read once a process.
var (
	racedInternal = sync.OnceValue(func() []string { return packagesBut("./internal/...", []string{unitFirst}, notRaced, cachedRaced) })
	sideBenchstat = sync.OnceValue(func() []string {
		return packagesBut("./benchstat/...", []string{e2ePkg}, raceOnly, cachedBenchstat)
	})
	sideInternal = slices.DeleteFunc(slices.Clone(notRaced), func(p string) bool { return slices.Contains(cachedUnraced, p) })
)

// raceEnv: a race-built process sleeps a second at exit by default, and
// some tests start many; the report's browser test is report-test's.
var raceEnv = []string{"GORACE=atexit_sleep_ms=0", "KVBENCH_CHROMIUM=skip"}

// raceFlags are every race command's, one list so that none compiles the
// race build again without the tag. pebblegozstd: Pebble's pure-Go zstd
// instead of DataDog/zstd, whose C library is 40 CPU-seconds to compile
// under -race and which no test uses (the tests store blocks uncompressed).
var raceFlags = []string{"-race", "-tags", "pebblegozstd"}

// raceTest is a go test command's arguments under raceFlags.
func raceTest(args ...string) []string {
	return append(append([]string{"test"}, raceFlags...), args...)
}

// smokeFlags are the smoke run's: every test of the main package, and
// every benchmark once on a tiny data set (TestEveryBenchmarkWritesOnlyUnderDir's
// child, run outside the module, where the cold start skips its minimal
// child: TestMinimalColdChild's). Memtables of 4 MiB, which the tiny data
// set fills no more than 64 MiB ones: Badger and goleveldb clear the whole
// memtable at every open, a third of the child's CPU at 64.
var smokeFlags = []string{"-run", ".",
	"-keys_mil", "0.002", "-valsz", "256", "-threads", "1,4", "-hit_rate", "0,0.63,1", "-prefetch_traces", "2", "-embed_records", "2000",
	"-memtable_mb", "4"}

// loadSmokeFlags: the fixed-rate, knee, HTTP and Bloom benchmarks' windows
// of 10 ms and knee searches from 64,000/s (else six doublings below every
// read knee; the smoke runs the path, not a figure): a quarter of the
// child's CPU.
var loadSmokeFlags = []string{"-load_time", "10ms", "-knee_time", "20ms", "-knee_max_time", "20ms", "-knee_start", "64000", "-knee_steps", "1",
	"-rate", "2000", "-write_rate", "200", "-sst_tables", "4"}

// jobs are every job of the steps, by name.
func (c *testConfig) jobs() map[string]testJob {
	goCmd := func(env []string, args ...string) task {
		return task{env: env, args: append([]string{goTool()}, args...)}
	}
	// Build tags select files in internal/engine only: staticcheck, not
	// vet, over LMDB's other binding and RocksDB's absence (go vet given
	// other tags derives every dependency's facts again, for two files).
	vet := []task{goCmd(nil, "vet", "-tags", c.tags, "./..."),
		goCmd(nil, "run", c.staticcheck, "-tags", c.tags, "./..."),
		goCmd(nil, "run", c.staticcheck, "-tags", "lmdb_bmatsuo", "./internal/engine")}

	side := []task{
		goCmd([]string{"KVBENCH_CHROMIUM=skip"}, append([]string{"test", "-count", "1", "-skip", pathTests}, sideBenchstat()...)...),
		goCmd([]string{"KVBENCH_CHROMIUM=skip"}, append([]string{"test"}, cachedBenchstat...)...),
		goCmd(nil, append([]string{"test", "-count", "1", "-tags", c.tags}, sideInternal...)...),
		goCmd(nil, append([]string{"test", "-tags", c.tags}, cachedUnraced...)...)}
	if sides.HasTag(c.tags, "rocksdb") {
		// RocksDB's part of the core's tests that open every LSM, which
		// unit-race's build has not
		side = append(side, goCmd(nil, "test", "-count", "1", "-tags", c.tags, "-run", "TestDamagedFixtureIsRebuilt/rocksdb|TestBudgetRuleReachesEveryLSM/rocksdb", "./internal/core"))
	}
	// LMDB's other binding changes the lmdb adapter only: its subtests,
	// not the canonical reads (the same Txn.Get in both bindings)
	side = append(side, goCmd(nil, "test", "-count", "1", "-tags", "lmdb_bmatsuo", "-run", "/lmdb", "-skip", "TestPointReadsCallTheEnginesGet", "./internal/engine"))

	smoke := []string{"test", "-count", "1", "-tags", c.tags}
	if c.verbose {
		smoke = append(smoke, "-v")
	}
	smoke = slices.Concat(smoke, smokeFlags, []string{"-dir", "$TMP"}, loadSmokeFlags, []string{"."})

	lint := []task{goCmd(nil, "run", c.actionlint, ".github/workflows/bench.yml", ".github/workflows/engine-gate.yml")}

	return map[string]testJob{
		"vet": {name: "vet", cmds: vet},
		// the race build of unitFirst's test binary first, make test's
		// largest, which unit-race-workload waits for
		"unit-race": {name: "unit-race", cmds: []task{goCmd(nil, raceTest("-c", "-o", os.DevNull, unitFirst)...),
			goCmd(raceEnv, raceTest("-count", "1", "-skip", workloadHalf, unitFirst)...),
			goCmd(raceEnv, raceTest(append(append([]string{"-count", "1"}, racedInternal()...), raceOnly...)...)...),
			goCmd(raceEnv, raceTest(cachedRaced...)...)}},
		"unit-race-workload": {name: "unit-race-workload", after: "unit-race",
			cmds: []task{goCmd(raceEnv, raceTest("-count", "1", "-run", workloadHalf, unitFirst)...)}},
		"unit-side":   {name: "unit-side", cmds: side},
		"smoke-tests": {name: "smoke-tests", cmds: []task{withTempDir(goCmd(nil, smoke...))}},
		// after unit-side's first command, which builds kvb's tests too
		"smoke-paths": {name: "smoke-paths", after: "unit-side",
			cmds: append([]task{goCmd([]string{"TAGS=" + c.tags}, "test", "-count", "1", "-run", pathTests, kvbPkg)}, lint...)},
		"e2e":        {name: "e2e", cmds: []task{goCmd(nil, "test", "-count", "1", "-run", e2e, "-skip", e2eSim, e2ePkg)}},
		"e2e-sim":    {name: "e2e-sim", cmds: []task{goCmd(nil, "test", "-count", "1", "-run", e2eSim, e2ePkg)}},
		"gate-smoke": {name: "gate-smoke", cmds: append(lint, goCmd(nil, "test", "-count", "1", "-run", e2e, "./benchstat"))},
		"report-test": {name: "report-test", cmds: []task{
			{show: []string{"kvb deps chromium"}, do: installChromium},
			goCmd([]string{"KVBENCH_CHROMIUM=required"}, "test", "-count", "1", "-run", "TestPage", "./benchstat/report"),
		}},
	}
}

// installChromium is make report-deps: the report test needs chromium.
func installChromium(_ context.Context, r *runner) error {
	if code := install(deps["chromium"], false, r.stderr); code != 0 {
		return &stepError{name: "kvb deps chromium", err: errNoChromium, code: code}
	}
	return nil
}

// withTempDir runs cmd with each "$TMP" argument a new directory, removed
// when it ends.
func withTempDir(cmd task) task {
	return task{show: []string{shellJoin(cmd.args)}, do: func(ctx context.Context, r *runner) error {
		d, err := os.MkdirTemp("", "kvbench-smoke-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		a := slices.Clone(cmd.args)
		for i := range a {
			if a[i] == "$TMP" {
				a[i] = d
			}
		}
		return r.command(ctx, task{args: a, env: cmd.env})
	}}
}
