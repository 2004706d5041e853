package main

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

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
// from the engine registry, the reference rail left out; with lsm, only
// those with data blocks (the LSMs).
func storeTitles(lsm ...bool) string {
	var t []string
	for _, info := range engine.All() {
		if !info.Reference && (len(lsm) == 0 || info.DataBlocks) {
			t = append(t, info.Title)
		}
	}
	return strings.Join(t, "|")
}

// ofStores selects workload's benchmark of every store.
func ofStores(workload string) string { return "^Benchmark" + workload + "(" + storeTitles() + ")$" }

// benchRows are make bench's rows; the memory-budget row follows them
// (memRow).
func (c *benchConfig) benchRows() []benchRow {
	// The warm point reads run at every thread count at the first of
	// BLOCKS, the LSMs' on one thread at the rest: the block size's trade
	// is a single reader's.
	first, rest, _ := strings.Cut(c.blocks, ",")
	of := ofStores
	rows := []benchRow{
		{of("Populate") + "/valsz/batch/sync=false", "1x", nil},
		{of("ReadRandom"), c.benchtime, []string{"-cache", "warm", "-threads", c.threads + "," + c.oversub, "-block_size", first}},
		{of("Scan"), c.benchtime, []string{"-cache", "warm", "-threads", "1", "-block_size", c.blocks}},
		{of("Open"), c.openBenchtime, []string{"-cache", "cold"}},
		{"^BenchmarkDisk$/op=randread-4k", c.benchtime, []string{"-threads", "1"}},
		{of("YCSB"), c.ycsbBenchtime, []string{"-ycsb", "A", "-dist", "zipf", "-threads", c.mixThreads(), "-block_size", c.ycsbBlock, "-latency_dir", c.timelineDir(), "-interval", "25ms"}},
		{of("YCSB"), c.benchtime, []string{"-ycsb", "C", "-dist", "zipf", "-threads", c.mixThreads(), "-block_size", c.ycsbBlock}},
		{of("Overwrite"), "1x", []string{"-overwrite_passes", c.overwritePasses, "-memtable_mb", c.overwriteMemtable, "-latency_dir", c.timelineDir(), "-interval", "500ms"}},
		{of("Commit"), c.commitBenchtime, []string{"-commit_writers", "1,8x", "-block_size", c.ycsbBlock, "-latency_dir", c.timelineDir(), "-interval", "20ms"}},
	}
	// The B-trees, which have no block, ran in the row above.
	if rest != "" {
		row := benchRow{"^BenchmarkReadRandom(" + storeTitles(true) + ")$", c.benchtime, []string{"-cache", "warm", "-threads", "1", "-block_size", rest}}
		rows = slices.Insert(rows, 2, row)
	}
	return rows
}

// mixThreads is the last of THREADS (one per CPU by default), the
// goroutines of the YCSB mixes.
func (c *benchConfig) mixThreads() string { return c.threads[strings.LastIndex(c.threads, ",")+1:] }

// timelineDir is where the rows that can stall write their throughput
// over time, one .tsv a leaf, for the report (charts.Timelines).
func (c *benchConfig) timelineDir() string {
	if c.set == "scale" {
		return c.resultsFile("scale-timeline") // make bench's stay for its report
	}
	return c.resultsFile("timeline")
}

// freshTimelineDir empties the timeline directory of an earlier run's
// .tsv files.
func (c *benchConfig) freshTimelineDir() task {
	dir := c.timelineDir()
	return task{show: []string{"mkdir -p " + shellQuote(dir), "rm -f " + shellQuote(dir) + "/*.tsv"},
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

// benchSteps are make bench's: the rows into RESULTS/bench.txt, the
// memory-budget row of random reads, the summary and the report.
func (c *benchConfig) benchSteps() []task {
	out := c.resultsFile("bench.txt")
	steps := append(c.rowSteps(out, c.benchRows()), c.memRow("readrandom", c.memCount, c.benchtime, c.blocks, "uniform,zipf"))
	return append(steps, c.summaryAndReport(out)...)
}

// rowSteps build the test binary, empty the timeline directory and run
// rows into out (the first replaces it), extra after the count.
func (c *benchConfig) rowSteps(out string, rows []benchRow, extra ...string) []task {
	steps := []task{c.build(), c.freshTimelineDir()}
	for i, row := range rows {
		args := append(append([]string{c.binary(), "-test.run", "^$", "-test.count", strconv.Itoa(c.count)}, extra...), c.suiteFlags()...)
		args = append(append(args, "-test.bench", row.bench, "-test.benchtime", row.benchtime), row.flags...)
		steps = append(steps, task{args: args, out: out, append: i > 0, live: true})
	}
	return steps
}

// scaleSteps are make bench-scale's (docs/benchmarks.md, "At your own
// size"), into RESULTS/scale.txt; its summary.
func (c *benchConfig) scaleSteps() []task {
	out := c.resultsFile("scale.txt")
	n, of := c.mixThreads(), ofStores
	rows := []benchRow{
		{of("ReadRandom"), c.benchtime, []string{"-cache", "warm", "-threads", c.threads}},
		{of("YCSB"), c.ycsbBenchtime, []string{"-ycsb", "A", "-dist", "zipf", "-threads", n, "-latency_dir", c.timelineDir()}},
		{of("YCSB"), c.benchtime, []string{"-ycsb", "C", "-dist", "zipf", "-threads", n}},
		{of("Commit"), c.commitBenchtime, []string{"-commit_writers", "1,8x", "-latency_dir", c.timelineDir(), "-interval", "20ms"}},
	}
	return append(c.rowSteps(out, rows, "-test.timeout", "0"), inProcess("summary", []string{"-o", c.resultsFile("scale-summary.txt"), out}, ""))
}

// fullSteps are make bench-full's: every benchmark of the write and the
// read step, the harness alone, the memory budget, summary and report.
func (c *benchConfig) fullSteps() []task {
	out := c.resultsFile("bench.txt")
	count := strconv.Itoa(c.count)
	step := func(family, benchtime string, more ...string) []string {
		return slices.Concat([]string{c.binary(), "-test.run", "^$", "-test.bench", families.Pattern(family), "-test.benchtime", benchtime, "-test.count", count}, c.suiteFlags(), more)
	}
	steps := []task{
		c.build(),
		{args: step("write", "1x"), out: out, live: true},
		{args: step("read", "1s", "-threads", c.threads, "-block_size", c.blocks), out: out, append: true, live: true},
		{args: []string{goTool(), "test", "-run", "^$", "-bench", "BenchmarkHarness", "-count", count, "./internal/dataset"}, out: out, append: true},
		c.memRow(c.memWorkloads, c.count, c.memBenchtime, c.blocks, c.memDist),
	}
	return append(steps, c.summaryAndReport(out)...)
}

// simSteps are make bench-sim's: warm point reads and scans under
// callgrind (benchstat/sim), into RESULTS/bench-sim.txt.
func (c *benchConfig) simSteps() []task {
	out := c.resultsFile("bench-sim.txt")
	args := []string{"-benchtime", c.simBenchtime, c.binary(), "-test.run", "^$",
		"-test.bench", "^Benchmark(ReadRandom|Scan)(" + storeTitles() + ")$", "-test.count", strconv.Itoa(c.count), "-test.cpu", "1",
		"-threads", "1", "-cache", "warm", "-keys_mil", "0.01", "-valsz", "256"}
	return []task{c.build(), inProcess("sim", append(args, c.dirFlag()...), out)}
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
// engine, then Badger with its values in the value log.
func (c *benchConfig) prefetchSteps() []task {
	out, vlog := c.resultsFile("prefetch.txt"), c.resultsFile("prefetch-badger-vlog.txt")
	common := func(bench, benchtime string, more ...string) []string {
		a := []string{"-run", "^$", "-timeout", "0", "-bench", bench, "-benchtime", benchtime, "-count", strconv.Itoa(c.count), "-prefetch_traces", c.prefetchTraces}
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

// seed003Steps are make seed003's: fixed rate, the knee (about 5 minutes
// an LSM: no test timeout), Bloom filters and HTTP, spectra in RESULTS/hgrm.
func (c *benchConfig) seed003Steps() []task {
	hgrm := c.resultsFile("hgrm")
	// run is bench into RESULTS/file: its flags, the data set's, then after.
	run := func(file, bench string, flags []string, after ...string) task {
		return c.goTest(c.resultsFile(file), false, slices.Concat([]string{"-run", "^$", "-bench", bench, "-benchtime", "1x", "-count", strconv.Itoa(c.count)}, flags, c.suiteFlags(), after)...)
	}
	return []task{
		{show: []string{"mkdir -p " + shellQuote(hgrm)}, do: func(context.Context, *runner) error { return os.MkdirAll(hgrm, 0o755) }},
		run("load.txt", "BenchmarkLoad", []string{"-rate", "10000"}),
		run("knee.txt", "BenchmarkKnee", []string{"-timeout", "0"}),
		run("bloom.txt", "BenchmarkBloom", []string{"-rate", "5000,20000"}, "-latency_dir", hgrm),
		run("http.txt", "BenchmarkHTTP", []string{"-rate", "5000,20000"}, "-latency_dir", hgrm),
	}
}

// embedOverlay is the overlay make embed-data writes, to embed the
// generated cdb alone.
const embedOverlay = "testdata/embed-generated.overlay.json"

// seed004Steps are make seed004's, on the records the test binary embeds.
func (c *benchConfig) seed004Steps() []task {
	out := c.resultsFile("embed.txt")
	var overlay []string
	if _, err := os.Stat(embedOverlay); err == nil {
		overlay = []string{"-overlay", embedOverlay}
	}
	args := append(overlay, "-run", "^$", "-timeout", "0", "-bench", "BenchmarkEmbed", "-count", strconv.Itoa(c.count))
	return []task{c.goTest(out, false, append(args, c.dirFlag()...)...)}
}

// memGroup is one benchmark of the memory-limited row (docs/methodology.md,
// "A memory budget") at one block size, and its rounds' command: each
// round a process, so a round its budget kills costs no other result.
type memGroup struct {
	target, sub, block string
	info               engine.Info
	args               []string
}

// Exit statuses of a budget round, as a shell reports them.
const (
	noBudget    = 3   // the suite could not make a memory cgroup
	roundKilled = 137 // SIGKILL: the out-of-memory killer
	roundTimout = 124 // stopped at -mem_timeout (timeout(1)'s status)
)

// memGroups lists the row's benchmarks: each top-level benchmark of each
// workload, at each of blocks on an engine with data blocks.
func (c *benchConfig) memGroups(workloads, benchtime, blocks, dist string) []memGroup {
	flags := []string{"-mem_limit", c.memLimit, "-readahead", "off", "-threads", "1", "-hit_rate", "1", "-cache", "warm"}
	if dist != "" {
		flags = append(flags, "-dist", dist)
	}
	var out []memGroup
	for _, w := range strings.FieldsFunc(workloads, func(r rune) bool { return r == ' ' || r == ',' }) {
		for _, t := range families.StepTargets(w) {
			sub, bt := "/valsz/mem/cache=warm", benchtime
			if strings.Contains(t.Name(), "Populate") {
				sub, bt = "/valsz/mem/batch/sync=false", "1x"
			}
			sizes := []string{""}
			if t.Info.DataBlocks && blocks != "" {
				sizes = strings.Split(blocks, ",")
			}
			for _, bs := range sizes {
				args := append([]string{c.binary(), "-test.run", "^$", "-test.bench", "^" + t.Name() + "$" + sub, "-test.benchtime", bt}, c.suiteFlags()...)
				args = append(args, flags...)
				if bs != "" {
					args = append(args, "-block_size", bs)
				}
				out = append(out, memGroup{target: t.Name(), sub: sub, block: bs, info: t.Info, args: args})
			}
		}
	}
	return out
}

// memRow is the row as a step: count rounds of each group, added to
// RESULTS/bench.txt.
func (c *benchConfig) memRow(workloads string, count int, benchtime, blocks, dist string) task {
	groups := c.memGroups(workloads, benchtime, blocks, dist)
	out := c.resultsFile("bench.txt")
	var show []string
	for _, g := range groups {
		show = append(show, "echo "+shellQuote(g.say(c.memLimit))+" >&2")
		for range count {
			show = append(show, fmt.Sprintf("timeout %d %s >> %s 2>&1", c.memTimeout, shellJoin(g.args), shellQuote(out)))
		}
	}
	return task{
		name: fmt.Sprintf("the memory budget: %d runs of the test binary under -mem_limit %s", len(groups)*count, c.memLimit),
		show: show,
		do: func(ctx context.Context, r *runner) error {
			for _, g := range groups {
				fmt.Fprintln(r.stderr, g.say(c.memLimit))
				for range count {
					skip, err := c.memRound(ctx, g, out, r)
					if skip || err != nil {
						return err
					}
				}
			}
			return nil
		},
	}
}

func (g memGroup) say(limit string) string {
	s := "kvbench: " + g.target + g.sub
	if g.block != "" {
		s += " -block_size " + g.block
	}
	return s + " under -mem_limit " + limit
}

// memRound runs one round and keeps its result lines; skip says the
// machine cannot make a budget (the row ends).
func (c *benchConfig) memRound(ctx context.Context, g memGroup, results string, r *runner) (skip bool, err error) {
	rc, output := runRound(ctx, g.args, time.Duration(c.memTimeout)*time.Second)
	if rc == roundTimout {
		output = stoppedToTimeout.ReplaceAll(output, []byte("$1 cause=timeout "))
	}
	kept, shown, report := sortRoundLines(output)
	f, err := openResults(results, true)
	if err != nil {
		return false, err
	}
	_, err = f.Write(kept)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, err
	}
	r.stdout.Write(shown)
	report = cmp.Or(report, "its watcher left no report")
	switch {
	case rc == noBudget:
		fmt.Fprintf(r.stderr, "kvbench: skipping the memory-limited row, this machine cannot make a memory budget: %s\n", roundError.Find(output))
		return true, nil
	case rc == roundKilled || bytes.Contains(output, []byte("signal: killed")):
		fmt.Fprintf(r.stderr, "kvbench: %s was killed inside its %s budget: %s\n", g.target, c.memLimit, report)
	case rc == roundTimout:
		fmt.Fprintf(r.stderr, "kvbench: %s did not finish a round in %d s inside its %s budget; stopped (MEM_TIMEOUT): %s\n", g.target, c.memTimeout, c.memLimit, report)
	case rc != 0:
		r.stderr.Write(output)
		return false, &stepError{name: g.target, err: fmt.Errorf("exit status %d", rc), code: rc}
	}
	return false, nil
}

// runRound runs a round's command, standard output and error together,
// and stops it (SIGTERM) after timeout; it returns the status a shell
// would see, roundTimout when it was stopped. The output ends when the
// budget's watcher, which reports after the round, has gone too.
func runRound(ctx context.Context, args []string, timeout time.Duration) (int, []byte) {
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(&out, "%v\n", err)
		return 127, out.Bytes()
	}
	var stopped atomic.Bool
	timer := time.AfterFunc(timeout, func() {
		stopped.Store(true)
		cmd.Process.Signal(syscall.SIGTERM)
	})
	err := cmd.Wait()
	timer.Stop()
	if stopped.Load() {
		return roundTimout, out.Bytes()
	}
	return exitCode(err), out.Bytes()
}

var (
	stoppedToTimeout = regexp.MustCompile(`(?m)^(\[kvbench-kill\] [^ ]*) cause=stopped `)
	// Lines of a round that are not results: the fixture's log, go test's
	// verdict, and a benchmark's name printed before a result that never came.
	roundNoise   = regexp.MustCompile(`^(\[kvbench\] building|\[kvbench\] fixture|PASS$|ok |Benchmark\S+\s*$)`)
	roundShown   = regexp.MustCompile(`^Benchmark|error`)
	budgetReport = regexp.MustCompile(`^\[kvbench\] .* inside its -mem_limit .* budget; at the last sample`)
	roundError   = regexp.MustCompile(`(?m)^.*error:.*$`) // its first line is why there is no budget
)

// sortRoundLines splits a round's output into the lines kept in the
// results, the lines shown (results and errors) and the watcher's report.
func sortRoundLines(output []byte) (kept, shown []byte, report string) {
	var reports []string
	for l := range strings.Lines(string(output)) {
		line := strings.TrimSuffix(l, "\n")
		l = line + "\n"
		if !roundNoise.MatchString(line) {
			kept = append(kept, l...)
		}
		if roundShown.MatchString(line) {
			shown = append(shown, l...)
		}
		if budgetReport.MatchString(line) {
			reports = append(reports, line)
		}
	}
	return kept, shown, strings.Join(reports, "\n")
}
