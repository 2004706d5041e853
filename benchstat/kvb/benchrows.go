package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/families"
)

// benchRow is one row of make bench (docs/benchmarks.md, "What make
// bench measures"): the benchmarks it selects, its time per round and
// the suite flags that shape it.
type benchRow struct {
	bench, benchtime string
	flags            []string
}

// storeTitles are the stores' names in benchmark names (Badger|Bolt|...),
// from the engine registry: every engine but the reference rail, so a new
// engine needs no edit here.
func storeTitles() string {
	var t []string
	for _, info := range engine.All() {
		if !info.Reference {
			t = append(t, info.Title)
		}
	}
	return strings.Join(t, "|")
}

// lsmTitles are the names of the stores with data blocks (the LSMs).
func lsmTitles() string {
	var t []string
	for _, info := range engine.All() {
		if !info.Reference && info.DataBlocks {
			t = append(t, info.Title)
		}
	}
	return strings.Join(t, "|")
}

// benchRows are make bench's rows: writes (populate, sync off), warm
// point reads at 1, N and 8N goroutines, scans, open (cold), the disk's
// own 4 KiB random reads, YCSB A and C under Zipfian keys, the overwrite
// steady state, durable commits of one key from 1 and 8× the CPUs'
// writers. The memory-budget row follows them (memRow).
func (c *benchConfig) benchRows() []benchRow {
	stores := storeTitles()
	of := func(workload string) string { return "^Benchmark" + workload + "(" + stores + ")$" }
	rows := []benchRow{
		{of("Populate") + "/valsz/batch/sync=false", "1x", nil},
		{of("ReadRandom"), c.benchtime, []string{"-cache", "warm", "-threads", c.threads + "," + c.oversub, "-block_size", c.firstBlock()}},
		{of("Scan"), c.benchtime, []string{"-cache", "warm", "-threads", "1", "-block_size", c.blocks}},
		{of("Open"), c.openBenchtime, []string{"-cache", "cold"}},
		{"^BenchmarkDisk$/op=randread-4k", c.benchtime, []string{"-threads", "1"}},
		{of("YCSB"), c.ycsbBenchtime, []string{"-ycsb", "A", "-dist", "zipf", "-threads", c.mixThreads(), "-block_size", c.ycsbBlock, "-latency_dir", c.timelineDir(), "-interval", "25ms"}},
		{of("YCSB"), c.benchtime, []string{"-ycsb", "C", "-dist", "zipf", "-threads", c.mixThreads(), "-block_size", c.ycsbBlock}},
		{of("Overwrite"), "1x", []string{"-overwrite_passes", c.overwritePasses, "-memtable_mb", c.overwriteMemtable, "-latency_dir", c.timelineDir(), "-interval", "500ms"}},
		{of("Commit"), c.commitBenchtime, []string{"-commit_writers", "1,8x", "-block_size", c.ycsbBlock, "-latency_dir", c.timelineDir(), "-interval", "20ms"}},
	}
	// The LSMs' warm point reads at the other block sizes, on one thread
	// (the B-trees, which have no block, ran in the row above).
	if rest := c.otherBlocks(); rest != "" {
		row := benchRow{"^BenchmarkReadRandom(" + lsmTitles() + ")$", c.benchtime, []string{"-cache", "warm", "-threads", "1", "-block_size", rest}}
		rows = slices.Insert(rows, 2, row)
	}
	return rows
}

// mixThreads is the last of THREADS (one per CPU by default), the
// goroutines of the YCSB mixes: the warm reads show how one goroutine
// compares with N, the mixes how the engines share N between reads and
// writes.
func (c *benchConfig) mixThreads() string { return c.threads[strings.LastIndex(c.threads, ",")+1:] }

// firstBlock is the first of BLOCKS, at which the warm point reads run
// at every thread count; otherBlocks the rest, at which the LSMs' run on
// one thread: the block size's trade is a single reader's, the threads'
// scaling is seen at one size.
func (c *benchConfig) firstBlock() string { return strings.Split(c.blocks, ",")[0] }

func (c *benchConfig) otherBlocks() string {
	_, rest, _ := strings.Cut(c.blocks, ",")
	return rest
}

// timelineDir is where make bench's writes that can stall (YCSB A, the
// overwrite pass) write their throughput over time, one .tsv a leaf, which
// the report draws (benchstat/internal/charts.Timelines).
func (c *benchConfig) timelineDir() string {
	if c.set == "scale" {
		return c.resultsFile("scale-timeline") // make bench's stay for its report
	}
	return c.resultsFile("timeline")
}

// freshTimelineDir empties the timeline directory of the .tsv files a run
// before wrote there, so the report draws this run's alone.
func (c *benchConfig) freshTimelineDir() task {
	dir := c.timelineDir()
	return task{show: func() []string { return []string{"mkdir -p " + shellQuote(dir), "rm -f " + shellQuote(dir) + "/*.tsv"} },
		do: func(context.Context, *runner) error {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			old, _ := filepath.Glob(filepath.Join(dir, "*.tsv"))
			for _, f := range old {
				if err := os.Remove(f); err != nil {
					return err
				}
			}
			return nil
		}}
}

// benchSteps are make bench's: the rows into RESULTS/bench.txt (the
// first replaces it), the memory-budget row of random reads, uniform and
// Zipfian, at make bench's time and block sizes, the summary and the
// report.
func (c *benchConfig) benchSteps() []task {
	out := c.resultsFile("bench.txt")
	steps := []task{c.build(), c.freshTimelineDir()}
	for i, row := range c.benchRows() {
		args := append([]string{c.binary(), "-test.run", "^$", "-test.count", itoa(c.count)}, c.suiteFlags()...)
		args = append(append(args, "-test.bench", row.bench, "-test.benchtime", row.benchtime), row.flags...)
		steps = append(steps, task{args: args, out: out, append: i > 0, live: true})
	}
	steps = append(steps, c.memRow("readrandom", c.memCount, c.benchtime, c.blocks, "uniform,zipf"))
	return append(steps, c.summaryAndReport(out)...)
}

// scaleSteps are make bench-scale's: the questions a service asks first,
// at the size the user gives (KEYS_MIL, DIR), each row at the default
// block size: warm point reads at 1 and N goroutines, YCSB A and C under
// Zipfian keys at N, durable commits at 1 and 8N writers, into
// RESULTS/scale.txt; its summary. The fixtures' builds say
// what they should take and how long is left, and their manifests keep
// each build's time (docs/benchmarks.md, "At your own size").
func (c *benchConfig) scaleSteps() []task {
	out := c.resultsFile("scale.txt")
	n := c.mixThreads()
	of := func(workload string) string { return "^Benchmark" + workload + "(" + storeTitles() + ")$" }
	rows := []benchRow{
		{of("ReadRandom"), c.benchtime, []string{"-cache", "warm", "-threads", c.threads}},
		{of("YCSB"), c.ycsbBenchtime, []string{"-ycsb", "A", "-dist", "zipf", "-threads", n, "-latency_dir", c.timelineDir()}},
		{of("YCSB"), c.benchtime, []string{"-ycsb", "C", "-dist", "zipf", "-threads", n}},
		{of("Commit"), c.commitBenchtime, []string{"-commit_writers", "1,8x", "-latency_dir", c.timelineDir(), "-interval", "20ms"}},
	}
	steps := []task{c.build(), c.freshTimelineDir()}
	for i, row := range rows {
		args := append([]string{c.binary(), "-test.run", "^$", "-test.count", itoa(c.count), "-test.timeout", "0"}, c.suiteFlags()...)
		args = append(append(args, "-test.bench", row.bench, "-test.benchtime", row.benchtime), row.flags...)
		steps = append(steps, task{args: args, out: out, append: i > 0, live: true})
	}
	return append(steps, inProcess("summary", []string{"-o", c.resultsFile("scale-summary.txt"), out}, ""))
}

// fullSteps are make bench-full's: every benchmark of the write step
// and of the read step at 1 s, the harness alone (no engine), the memory
// budget for -mem_workloads, the summary and the report.
func (c *benchConfig) fullSteps() []task {
	out := c.resultsFile("bench.txt")
	count := itoa(c.count)
	write := append([]string{c.binary(), "-test.run", "^$", "-test.bench", families.Pattern("write"), "-test.benchtime", "1x", "-test.count", count}, c.suiteFlags()...)
	read := append([]string{c.binary(), "-test.run", "^$", "-test.bench", families.Pattern("read"), "-test.benchtime", "1s", "-test.count", count}, c.suiteFlags()...)
	read = append(read, "-threads", c.threads, "-block_size", c.blocks)
	steps := []task{
		c.build(),
		{args: write, out: out, live: true},
		{args: read, out: out, append: true, live: true},
		{args: []string{goTool(), "test", "-run", "^$", "-bench", "BenchmarkHarness", "-count", count, "./internal/dataset"}, out: out, append: true},
		c.memRow(c.memWorkloads, c.count, c.memBenchtime, c.blocks, c.memDist),
	}
	return append(steps, c.summaryAndReport(out)...)
}

// simSteps are make bench-sim's: make bench's warm point reads and scans
// on one thread, each count a process of its own under callgrind
// (benchstat/sim), into RESULTS/bench-sim.txt.
func (c *benchConfig) simSteps() []task {
	out := c.resultsFile("bench-sim.txt")
	args := []string{"-benchtime", c.simBenchtime, c.binary(), "-test.run", "^$",
		"-test.bench", "^Benchmark(ReadRandom|Scan)(" + storeTitles() + ")$", "-test.count", itoa(c.count), "-test.cpu", "1",
		"-threads", "1", "-cache", "warm", "-keys_mil", "0.01", "-valsz", "256"}
	if c.dir != "" {
		args = append(args, "-dir", c.dir)
	}
	return []task{c.build(), inProcess("sim", args, out)}
}

// goTest is a go test run of the root package with the set's tags, its
// output copied into out.
func (c *benchConfig) goTest(out string, appendTo bool, args ...string) task {
	return task{args: append([]string{goTool(), "test", "-tags", c.tags}, args...), out: out, append: appendTo}
}

func (c *benchConfig) dirFlag() []string {
	if c.dir == "" {
		return nil
	}
	return []string{"-dir", c.dir}
}

// prefetchSteps are make prefetch's: seed 000's prefix lookups on every
// engine, one sweep over every trace ID per round, then Badger with its
// values in the value log, the seed's layout; no test timeout.
func (c *benchConfig) prefetchSteps() []task {
	out, vlog := c.resultsFile("prefetch.txt"), c.resultsFile("prefetch-badger-vlog.txt")
	common := func(bench, benchtime string, more ...string) []string {
		a := []string{"-run", "^$", "-timeout", "0", "-bench", bench, "-benchtime", benchtime, "-count", itoa(c.count), "-prefetch_traces", c.prefetchTraces}
		return append(append(a, more...), c.dirFlag()...)
	}
	traces := c.prefetchTraces + "x"
	return []task{
		c.goTest(out, false, common("BenchmarkPrefetch/^(prefetch|hit)=", traces)...),
		c.goTest(out, true, common("BenchmarkPrefetch/^open-only", "5x")...),
		{note: "== Badger with values in the value log, the seed's layout =="},
		c.goTest(vlog, false, common("BenchmarkPrefetchBadger/^(prefetch|hit)=", traces, "-badger_vthreshold", "1024")...),
	}
}

// seed003Steps are make seed003's: the fixed-rate workloads, the knee of
// every engine (each upsert search on a fresh copy of the fixture, about
// 5 minutes an LSM: no test timeout), Bloom filters over unmerged tables
// and the HTTP service, full latency spectra in RESULTS/hgrm.
func (c *benchConfig) seed003Steps() []task {
	hgrm := c.resultsFile("hgrm")
	files := []string{c.resultsFile("load.txt"), c.resultsFile("knee.txt"), c.resultsFile("bloom.txt"), c.resultsFile("http.txt")}
	run := func(bench string, more ...string) []string {
		return append([]string{"-run", "^$", "-bench", bench, "-benchtime", "1x", "-count", itoa(c.count)}, more...)
	}
	return []task{
		{show: func() []string { return []string{"mkdir -p " + shellQuote(hgrm)} }, do: mkdirStep(hgrm)},
		c.goTest(files[0], false, append(run("BenchmarkLoad", "-rate", "10000"), c.suiteFlags()...)...),
		c.goTest(files[1], false, append(run("BenchmarkKnee", "-timeout", "0"), c.suiteFlags()...)...),
		c.goTest(files[2], false, append(append(run("BenchmarkBloom", "-rate", "5000,20000"), c.suiteFlags()...), "-latency_dir", hgrm)...),
		c.goTest(files[3], false, append(append(run("BenchmarkHTTP", "-rate", "5000,20000"), c.suiteFlags()...), "-latency_dir", hgrm)...),
	}
}

// embedOverlay is the overlay make embed-data writes: a build that passes
// it embeds the generated cdb alone.
const embedOverlay = "testdata/embed-generated.overlay.json"

// seed004Steps are make seed004's: every source of the records the test
// binary embeds (the committed cdb, or the one make embed-data wrote).
func (c *benchConfig) seed004Steps() []task {
	out := c.resultsFile("embed.txt")
	var overlay []string
	if _, err := os.Stat(embedOverlay); err == nil {
		overlay = []string{"-overlay", embedOverlay}
	}
	args := append(overlay, "-run", "^$", "-timeout", "0", "-bench", "BenchmarkEmbed", "-count", itoa(c.count))
	return []task{c.goTest(out, false, append(args, c.dirFlag()...)...)}
}
