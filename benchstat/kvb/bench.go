package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/kvbench/kvbench/benchstat/internal/cli"
	"github.com/kvbench/kvbench/benchstat/internal/sides"
	"github.com/kvbench/kvbench/internal/families"
)

var benchCommand = cli.New(cli.Spec[*benchConfig]{
	Name:    "bench",
	Summary: "make bench's rows (or another set: full, mem, sim, prefetch, seed003, seed004), then the summary and the report",
	Usage:   benchUsage(),
	Flags:   benchFlags,
	Run:     func(call cli.Call, c *benchConfig, pos []string) int { return c.run(call, pos) },
})

func init() {
	register(benchCommand)
	register(cli.New(cli.Spec[*benchConfig]{
		Name:    "build",
		Summary: "build the suite's test binary, the one every make target with results runs",
		Usage:   "usage: kvb build [-tags TAGS] [-o BIN]\n\nBuilds the root package's test binary (go test -c).\n\n",
		Flags: func(fs *flag.FlagSet) *benchConfig {
			c := &benchConfig{}
			fs.StringVar(&c.tags, "tags", sides.DefaultTags(), "build tags (TAGS): rocksdb when its headers are installed, unless $TAGS is set")
			fs.StringVar(&c.results, "o", filepath.Join("results", "kvbench.test"), "the binary to write; its directory is made")
			return c
		},
		Run: func(call cli.Call, c *benchConfig, rest []string) int {
			if len(rest) > 0 {
				return call.Usage("unexpected argument %q", rest[0])
			}
			return runSteps(call, "build", filepath.Dir(c.results), false, "", []task{buildStep(c.tags, c.results)})
		},
	}))
}

// benchConfig is one kvb bench: the set it runs and the Makefile's
// variables, each a flag of the same meaning.
type benchConfig struct {
	set                                           string
	tags, results, dir, keysMil, valsz            string
	count, memCount, memTimeout                   int
	benchtime, threads, oversub, blocks           string
	ycsbBenchtime, ycsbBlock, openBenchtime       string
	overwritePasses, overwriteMemtable            string
	commitBenchtime                               string
	memLimit, memBenchtime, memWorkloads, memDist string
	memBlocks, simBenchtime, prefetchTraces       string
	dryRun                                        bool
}

// benchSet is a set kvb bench runs: its name, what it is, and its steps
// in order.
type benchSet struct {
	name, what string
	steps      func(*benchConfig) []task
}

var benchSets = []benchSet{
	{"bench", "make bench: populate, warm reads, scans, open, the disk, YCSB A and C, overwrite, reads in a memory budget; then the summary and the report", (*benchConfig).benchSteps},
	{"full", "make bench-full: every benchmark of both steps, the harness alone, the memory budget for reads and populate; summary, report", (*benchConfig).fullSteps},
	{"mem", "make bench-mem: the memory-limited row, each round a process of its own, added to RESULTS/bench.txt", func(c *benchConfig) []task {
		return []task{c.build(), c.memRow(c.memWorkloads, c.count, c.memBenchtime, c.memBlocks, c.memDist)}
	}},
	{"scale", "make bench-scale: the main questions at the user's size (KEYS_MIL, DIR): warm reads, YCSB A and C, durable commits; RESULTS/scale.txt, its summary", (*benchConfig).scaleSteps},
	{"sim", "make bench-sim: make bench's warm reads and scans as instruction counts under callgrind, RESULTS/bench-sim.txt", (*benchConfig).simSteps},
	{"prefetch", "make prefetch: seed 000's prefix lookups on every engine", (*benchConfig).prefetchSteps},
	{"seed003", "make seed003: seed 003's fixed-rate, knee, Bloom and HTTP runs", (*benchConfig).seed003Steps},
	{"seed004", "make seed004: seed 004's benchmarks on the cdb the test binary embeds", (*benchConfig).seed004Steps},
}

// defaultThreads are make bench's goroutine counts: one, and one per CPU.
func defaultThreads() string {
	if n := runtime.NumCPU(); n > 1 {
		return fmt.Sprintf("1,%d", n)
	}
	return "1"
}

func benchFlags(fs *flag.FlagSet) *benchConfig {
	c := &benchConfig{}
	fs.StringVar(&c.tags, "tags", sides.DefaultTags(), "build tags of the test binary (TAGS): rocksdb when its headers are installed, unless $TAGS is set")
	fs.StringVar(&c.results, "results", "results", "where the results go (RESULTS)")
	fs.StringVar(&c.dir, "dir", "", "where the fixtures go, -dir of the suite (DIR); empty: the suite's default")
	fs.StringVar(&c.keysMil, "keys_mil", "0.1", "keys in millions (KEYS_MIL)")
	fs.StringVar(&c.valsz, "valsz", "1024", "value size in bytes (VALSZ)")
	fs.IntVar(&c.count, "count", 3, "rounds of each benchmark (COUNT; make bench-full's FULL_COUNT, make bench-sim's SIM_COUNT)")
	fs.StringVar(&c.benchtime, "benchtime", "0.3s", "time of each timed row (BENCHTIME)")
	fs.StringVar(&c.threads, "threads", defaultThreads(), "goroutines of the warm reads, the last of them the YCSB mixes' (THREADS)")
	fs.StringVar(&c.oversub, "oversub", fmt.Sprint(8*runtime.NumCPU()), "the warm reads' oversubscribed row, 8 per CPU (OVERSUB)")
	fs.StringVar(&c.blocks, "blocks", "4KiB,32KiB", "the LSMs' block sizes of the reads, scans and the budget row (BLOCKS)")
	fs.StringVar(&c.ycsbBenchtime, "ycsb_benchtime", "60000x", "YCSB A's operations per round (YCSB_BENCHTIME)")
	fs.StringVar(&c.ycsbBlock, "ycsb_block", "4KiB", "the LSMs' block size of the YCSB rows (YCSB_BLOCK)")
	fs.StringVar(&c.overwritePasses, "overwrite_passes", "2", "the overwrite row's steady-state pass (OVERWRITE_PASS)")
	fs.StringVar(&c.overwriteMemtable, "overwrite_memtable", "4", "the overwrite row's memtable MiB (OVERWRITE_MEMTABLE)")
	fs.StringVar(&c.openBenchtime, "open_benchtime", "10x", "opens per round of the open row (OPEN_BENCHTIME)")
	fs.StringVar(&c.commitBenchtime, "commit_benchtime", "200x", "durable commits per round of the commit row (COMMIT_BENCHTIME)")
	fs.IntVar(&c.memCount, "mem_count", 1, "rounds of make bench's memory-budget row (MEM_COUNT)")
	fs.StringVar(&c.memLimit, "mem_limit", "26MiB", "the memory budget (MEM_LIMIT)")
	fs.StringVar(&c.memBenchtime, "mem_benchtime", "1s", "time of each budget round of sets full and mem (MEM_BENCHTIME; make bench's row runs -benchtime)")
	fs.IntVar(&c.memTimeout, "mem_timeout", 180, "seconds a budget round may take before it is stopped (MEM_TIMEOUT)")
	fs.StringVar(&c.memWorkloads, "mem_workloads", "readrandom populate", "the workloads of the budget row of sets full and mem (MEM_WORKLOADS)")
	fs.StringVar(&c.memDist, "mem_dist", "", "the budget reads' key distributions, -dist, of set mem (MEM_DIST); empty: uniform")
	fs.StringVar(&c.memBlocks, "mem_blocks", "", "the LSMs' block sizes of set mem's budget row (MEM_BLOCKS); empty: the suite's default")
	fs.StringVar(&c.simBenchtime, "sim_benchtime", "2000x,Scan=50x", "set sim's iterations per count (SIM_BENCHTIME)")
	fs.StringVar(&c.prefetchTraces, "prefetch_traces", "600", "set prefetch's trace IDs (PREFETCH_TRACES)")
	fs.BoolVar(&c.dryRun, "n", false, "print the commands the run would run, and run nothing")
	return c
}

func benchUsage() string {
	var b strings.Builder
	b.WriteString(`usage: kvb bench [SET] [flags]

Runs one set of the suite's benchmarks through one test binary built
with -tags, writes the raw results under -results (the lab's kvb
record keeps them in the history store: docs/history.md), and for bench
and full writes the summary and the report page. Every command is
printed before it runs;
-n prints them and runs nothing. The flags are the Makefile's variables
(in parentheses) and have their defaults.

sets:
`)
	for _, s := range benchSets {
		fmt.Fprintf(&b, "  %-9s %s\n", s.name, s.what)
	}
	b.WriteString("\nflags:\n")
	return b.String()
}

// check reads the set from pos and refuses bad input before any work.
func (c *benchConfig) check(pos []string) error {
	if len(pos) > 1 {
		return fmt.Errorf("one set at a time, not %q", pos)
	}
	c.set = "bench"
	if len(pos) == 1 {
		c.set = pos[0]
	}
	if !slices.ContainsFunc(benchSets, func(s benchSet) bool { return s.name == c.set }) {
		return fmt.Errorf("unknown set %q (kvb help bench lists them)", c.set)
	}
	if c.count < 1 || c.memCount < 1 {
		return fmt.Errorf("-count %d, -mem_count %d: at least one round", c.count, c.memCount)
	}
	if c.memTimeout < 1 {
		return fmt.Errorf("-mem_timeout %d: at least a second", c.memTimeout)
	}
	if c.results == "" {
		return errors.New("-results: name the directory the results go to")
	}
	for _, w := range strings.Fields(c.memWorkloads) {
		if len(families.StepTargets(w)) == 0 {
			return fmt.Errorf("-mem_workloads: no workload %q", w)
		}
	}
	return nil
}

func (c *benchConfig) run(call cli.Call, pos []string) int {
	if err := c.check(pos); err != nil {
		return call.Usage("%v", err)
	}
	if c.set == "sim" && !c.dryRun {
		if _, err := exec.LookPath("valgrind"); err != nil {
			fmt.Fprintln(call.Stderr, "kvb bench sim: needs valgrind (kvb deps valgrind, make valgrind-deps: as root or with sudo)")
			return 2
		}
	}
	return runSteps(call, "bench", c.results, c.dryRun, "kvb bench "+c.set, c.steps())
}

// runSteps is kvb name running steps after making dir (unless dry): exit
// 0, 1 when dir cannot be made, else the failed step's status. A run with
// a title ends with where its time went.
func runSteps(call cli.Call, name, dir string, dry bool, title string, steps []task) int {
	r := &runner{stdout: call.Stdout, stderr: call.Stderr, dry: dry}
	if !dry && dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			fmt.Fprintf(call.Stderr, "kvb %s: %v\n", name, err)
			return 1
		}
	}
	err := r.run(context.Background(), steps)
	if !dry && title != "" {
		fmt.Fprint(call.Stderr, r.timeTable(title))
	}
	if err != nil {
		fmt.Fprintf(call.Stderr, "kvb %s: %v\n", name, err)
		return statusOf(err)
	}
	return 0
}

func (c *benchConfig) steps() []task {
	i := slices.IndexFunc(benchSets, func(s benchSet) bool { return s.name == c.set })
	return benchSets[max(i, 0)].steps(c)
}

// binary is the test binary every row of a set runs.
func (c *benchConfig) binary() string { return filepath.Join(c.results, "kvbench.test") }

func (c *benchConfig) resultsFile(name string) string { return filepath.Join(c.results, name) }

// suiteFlags are the data set's flags every row passes (BENCH_FLAGS).
func (c *benchConfig) suiteFlags() []string {
	return append([]string{"-keys_mil", c.keysMil, "-valsz", c.valsz}, c.dirFlag()...)
}

// build is the test binary, built once for every row of a set.
func (c *benchConfig) build() task { return buildStep(c.tags, c.binary()) }

// buildStep builds the root package's test binary bin with tags.
func buildStep(tags, bin string) task {
	return task{args: []string{goTool(), "test", "-c", "-tags", tags, "-o", bin, "."}}
}

// summaryAndReport are make summary and make report of the set's results.
func (c *benchConfig) summaryAndReport(in string) []task {
	blank := task{show: []string{"echo"}, do: func(_ context.Context, r *runner) error {
		fmt.Fprintln(r.stdout)
		return nil
	}}
	return []task{
		blank,
		inProcess("summary", []string{"-o", c.resultsFile("summary.txt"), in}, ""),
		inProcess("report", []string{"-o", c.resultsFile("report.html"), in}, ""),
	}
}
