package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/benchstat/internal/cli"
	"github.com/kvbench/kvbench/benchstat/internal/flagargs"
	"github.com/kvbench/kvbench/benchstat/internal/sides"
	"github.com/kvbench/kvbench/internal/memlimit"
)

// parseBench reads kvb bench's command line.
func parseBench(args []string) (*benchConfig, error) {
	fs := cli.NewFlagSet("bench")
	c := benchFlags(fs)
	pos, err := flagargs.Parse(fs, args)
	if err != nil {
		return nil, err
	}
	return c, c.check(pos)
}

// parseDefaults is kvb bench SET with the Makefile's defaults on a
// machine of 2 CPUs (THREADS 1,2, OVERSUB 16), whatever this one has.
func parseDefaults(t *testing.T, set string) *benchConfig {
	t.Helper()
	t.Setenv("TAGS", "rocksdb")
	c, err := parseBench([]string{set, "-threads", "1,2", "-oversub", "16"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func argsOf(steps []task) [][]string {
	var out [][]string
	for _, s := range steps {
		if s.args != nil {
			out = append(out, s.args)
		}
	}
	return out
}

// TestBenchArgumentsAsTheMakefileHad pins the commands of make bench's
// rows at its default variables to those the Makefile's bench-run
// recipe ran (make -n bench-run before the rows moved to Go, written out
// by hand): a change to a row shows here.
func TestBenchArgumentsAsTheMakefileHad(t *testing.T) {
	c := parseDefaults(t, "bench")
	stores := "(" + storeTitles() + ")$" // every store the registry has
	run := []string{"results/kvbench.test", "-test.run", "^$", "-test.count", "3", "-keys_mil", "0.1", "-valsz", "1024"}
	row := func(more ...string) []string { return append(append([]string(nil), run...), more...) }
	want := [][]string{
		{goTool(), "test", "-c", "-tags", "rocksdb", "-o", "results/kvbench.test", "."},
		row("-test.bench", "^BenchmarkPopulate"+stores+"/valsz/batch/sync=false", "-test.benchtime", "1x"),
		row("-test.bench", "^BenchmarkReadRandom"+stores, "-test.benchtime", "0.3s", "-cache", "warm", "-threads", "1,2,16", "-block_size", "4KiB"),
		row("-test.bench", "^BenchmarkReadRandom(Badger|Goleveldb|Pebble|RocksDB)$", "-test.benchtime", "0.3s", "-cache", "warm", "-threads", "1", "-block_size", "32KiB"),
		row("-test.bench", "^BenchmarkScan"+stores, "-test.benchtime", "0.3s", "-cache", "warm", "-threads", "1", "-block_size", "4KiB,32KiB"),
		row("-test.bench", "^BenchmarkOpen"+stores, "-test.benchtime", "10x", "-cache", "cold"),
		row("-test.bench", "^BenchmarkDisk$/op=randread-4k", "-test.benchtime", "0.3s", "-threads", "1"),
		row("-test.bench", "^BenchmarkYCSB"+stores, "-test.benchtime", "60000x", "-ycsb", "A", "-dist", "zipf", "-threads", "2", "-block_size", "4KiB", "-latency_dir", "results/timeline", "-interval", "25ms"),
		row("-test.bench", "^BenchmarkYCSB"+stores, "-test.benchtime", "0.3s", "-ycsb", "C", "-dist", "zipf", "-threads", "2", "-block_size", "4KiB"),
		row("-test.bench", "^BenchmarkOverwrite"+stores, "-test.benchtime", "1x", "-overwrite_passes", "2", "-memtable_mb", "4", "-latency_dir", "results/timeline", "-interval", "500ms"),
		row("-test.bench", "^BenchmarkCommit"+stores, "-test.benchtime", "200x", "-commit_writers", "1,8x", "-block_size", "4KiB", "-latency_dir", "results/timeline", "-interval", "20ms"),
	}
	steps := c.steps()
	got := argsOf(steps)
	if len(got) != len(want) {
		t.Fatalf("%d commands, want %d:\n%q", len(got), len(want), got)
	}
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Errorf("command %d:\n got %q\nwant %q", i, got[i], want[i])
		}
	}
	// Before the rows, the timeline directory emptied of an earlier run's.
	if show := steps[1].show; !slices.Equal(show, []string{"mkdir -p results/timeline", "rm -f results/timeline/*.tsv"}) {
		t.Errorf("step 1: %q; want the timeline directory made and emptied", show)
	}
	for i, s := range steps[2:12] {
		if s.out != "results/bench.txt" || s.append != (i > 0) || !s.live {
			t.Errorf("row %d: into %q (append %v, live %v); want the first to replace results/bench.txt, the rest to add to it", i, s.out, s.append, s.live)
		}
	}

	// The memory-budget row: bench-mem with MEM_WORKLOADS=readrandom,
	// COUNT=MEM_COUNT, MEM_BENCHTIME=BENCHTIME, MEM_BLOCKS=BLOCKS and
	// MEM_DIST=uniform,zipf; the LSMs at each block size, each round a
	// process of its own.
	var mem []string
	for _, g := range c.memGroups("readrandom", c.benchtime, c.blocks, "uniform,zipf") {
		mem = append(mem, strings.Join(g.args, " "))
	}
	memRun := func(engine, block string) string {
		s := "results/kvbench.test -test.run ^$ -test.bench ^BenchmarkReadRandom" + engine + "$/valsz/mem/cache=warm -test.benchtime 0.3s" +
			" -keys_mil 0.1 -valsz 1024 -mem_limit 26MiB -readahead off -threads 1 -hit_rate 1 -cache warm -dist uniform,zipf"
		if block != "" {
			s += " -block_size " + block
		}
		return s
	}
	wantMem := []string{memRun("Badger", "4KiB"), memRun("Badger", "32KiB"), memRun("Bolt", ""),
		memRun("Goleveldb", "4KiB"), memRun("Goleveldb", "32KiB"), memRun("Lmdb", ""), memRun("Memory", ""),
		memRun("Pebble", "4KiB"), memRun("Pebble", "32KiB"), memRun("RocksDB", "4KiB"), memRun("RocksDB", "32KiB")}
	if !slices.Equal(mem, wantMem) {
		t.Errorf("the memory-budget row:\n got %q\nwant %q", mem, wantMem)
	}

	// Then the summary and the report, in that order.
	var rest []string
	for _, s := range steps[12:] {
		rest = append(rest, s.show...)
	}
	if len(rest) != 2*len(wantMem)+3 || !strings.HasPrefix(rest[len(rest)-4], "timeout 180 ") ||
		rest[len(rest)-3] != "echo" || !strings.Contains(rest[len(rest)-2], "-o results/summary.txt results/bench.txt") ||
		!strings.Contains(rest[len(rest)-1], "-o results/report.html results/bench.txt") {
		t.Errorf("after the rows: %q", rest)
	}
}

// TestBenchRefusesBadInput: bad input is refused before any work.
func TestBenchRefusesBadInput(t *testing.T) {
	for _, args := range [][]string{{"nosuch"}, {"bench", "full"}, {"-count", "0"}, {"-mem_timeout", "0"}, {"mem", "-mem_workloads", "nosuch"}, {"-bogus"}} {
		var errb bytes.Buffer
		if code := benchCommand.Run(args, io.Discard, &errb); code != 2 {
			t.Errorf("kvb bench %q: exit %d, want 2 (%s)", args, code, errb.String())
		}
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{"-test.count": "-test.count", "^$": "'^$'", "a b": "'a b'", "it's": `'it'\''s'`, "4KiB,32KiB": "4KiB,32KiB"} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

// The tests that run kvb bench on a tiny data set, make test's smoke-paths
// job (pathTests): they build the suite's test binary, from the
// repository's root.

// TestPathMissingDir: kvb bench with a -dir that does not exist stops
// with the suite's own error (docs/reliability.md: errors reach the user),
// not with a failure of its own or none.
func TestPathMissingDir(t *testing.T) {
	t.Chdir("../..")
	d := t.TempDir()
	missing := filepath.Join(d, "missing")
	var out bytes.Buffer
	code := benchCommand.Run([]string{"-tags", sides.DefaultTags(), "-keys_mil", "0.002", "-count", "1", "-results", d, "-dir", missing}, &out, &out)
	if want := "-dir " + missing + ": does not exist"; code == 0 || !strings.Contains(out.String(), want) {
		t.Errorf("kvb bench with a missing -dir did not stop with the suite's error (%q), exit %d:\n%s", want, code, out.String())
	}
}

// TestPathMemoryBudget runs the memory-limited row on a tiny data set.
// Where this machine can make the budget, every engine of the build must
// leave a result; elsewhere the row must say why it skipped.
func TestPathMemoryBudget(t *testing.T) {
	t.Chdir("../..")
	d := t.TempDir()
	const limit = "24MiB"
	tags, results := sides.DefaultTags(), filepath.Join(d, "results")
	args := []string{"mem", "-tags", tags, "-keys_mil", "0.002", "-valsz", "256", "-mem_limit", limit, "-mem_benchtime", "100x",
		"-count", "1", "-results", results, "-dir", d}
	var out, errb bytes.Buffer
	if code := benchCommand.Run(args, &out, io.MultiWriter(&out, &errb)); code != 0 {
		t.Fatalf("kvb bench %s: exit %d:\n%s", strings.Join(args, " "), code, out.String())
	}
	n, _ := memlimit.ParseSize(limit)
	p, noBudget := memlimit.Find()
	if noBudget == nil {
		noBudget = p.Check(n)
	}
	if noBudget != nil {
		if !strings.Contains(errb.String(), "skipping the memory-limited row") {
			t.Errorf("this machine cannot make a budget (%v), and the row did not say it skipped:\n%s", noBudget, out.String())
		}
		return
	}
	cfg, err := parseBench(args)
	if err != nil {
		t.Fatal(err)
	}
	bench, err := os.ReadFile(filepath.Join(results, "bench.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	for _, g := range cfg.memGroups(cfg.memWorkloads, cfg.memBenchtime, cfg.memBlocks, cfg.memDist) {
		if g.info.Reference || g.info.Missing != "" && !sides.HasTag(tags, g.info.Name) {
			continue // not a store, or not in this build
		}
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(g.target) + `/\S+\s+\d+\s`).Match(bench) {
			missing = append(missing, g.target)
		}
	}
	if len(missing) > 0 {
		t.Errorf("no result inside the %s budget from %s (killed, stopped or skipped):\n%s", limit, strings.Join(missing, ", "), out.String())
	}
}
