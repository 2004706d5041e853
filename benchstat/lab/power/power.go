// Package power is kvb power: it measures the regression gate on this
// machine: how often an A/A comparison (the same binary on both sides)
// fails it, and how often a known slowdown of one engine's reads is
// caught. It builds the suite twice, once with a calibrated busy loop per
// read laid over its tree (slowdown/, through go test -overlay; on the
// compared head side only, so that binary runs on both sides), then runs
// kvb compare on prebuilt binaries at its defaults, rounds of every kind
// interleaved so that the machine's drift over the hour hits every kind
// alike.
//
//	results/kvb-lab power [-mode time|sim] [-aa 20] [-runs 10] [-slowdowns 2,5,10] [-slowed_bench REGEX] [-o results/power] [-- kvb compare flags]
//
// In time mode each slowed run slows one engine, the next engine each run:
// per read, by the given share of that engine's cpu-ns/op in the first A/A
// run (a calibrated busy loop). In sim mode (kvb compare -mode sim) each
// slowed run slows every engine at once, each by the given share of its
// own instr/op, with a countdown of exactly that many instructions; every
// engine's series is gated on its own, so each run is one trial per
// engine. It writes runs.tsv (one line per engine per comparison),
// power.md (the table) and power.svg (the chart) into -o.
package power

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/aclements/go-moremath/stats"

	"github.com/kvbench/kvbench/benchstat/internal/cli"
)

// Command is kvb power.
var Command = cli.New(cli.Spec[*options]{
	Name:    "power",
	Summary: "the gate's false-alarm rate and power on this machine, through kvb compare",
	Usage:   usage,
	Flags:   flags,
	Leading: true,
	Run:     run,
})

const usage = `usage: kvb power [-mode time|sim] [-aa 20] [-runs 10] [-slowdowns 2,5,10] [-slowed_bench REGEX] [-o results/power] [-- kvb compare flags]

Runs A/A comparisons and comparisons with a known slowdown of one
engine's reads (sim mode: every engine's), interleaved, and writes how
often the gate failed each into -o: runs.tsv, power.md, power.svg, and
rounds.md (time) or spread.md, thresholds.md, injected.md (sim)
(docs/gating.md). Flags after -- go to every kvb compare. Exit status: 0
done, 2 bad usage or a failed step.

`

// options are power's flags, checked.
type options struct {
	aa, runs                       int
	slowdowns, out, tags, mode     string
	resampleOnly, simTablesOnly    bool
	simThresholds, slowedBench     string
	pcts, thresholds               []float64
	runsAt                         map[float64]int
	compareArgs, slowedCompareArgs []string
}

func flags(fs *flag.FlagSet) *options {
	o := &options{}
	fs.IntVar(&o.aa, "aa", 20, "A/A comparisons")
	fs.IntVar(&o.runs, "runs", 10, "comparisons per slowdown")
	fs.StringVar(&o.slowdowns, "slowdowns", "2,5,10", "comma-separated slowdowns per read, in percent of the engine's cpu-ns/op (instr/op in sim mode); p:n runs n comparisons at p instead of -runs")
	fs.StringVar(&o.out, "o", "results/power", "output directory")
	fs.StringVar(&o.tags, "tags", defaultTags(), "build tags of both binaries")
	fs.BoolVar(&o.resampleOnly, "resample_only", false, "only resample the A/A rounds already in -o (rounds.md)")
	fs.StringVar(&o.mode, "mode", "time", "time: slow by cpu-ns/op; sim: kvb compare -mode sim, slow by instr/op")
	fs.BoolVar(&o.simTablesOnly, "sim_tables_only", false, "only write spread.md and thresholds.md from the sim-mode comparisons already in -o")
	fs.StringVar(&o.simThresholds, "sim_thresholds", "0.25,0.5,1,2", "comma-separated sim thresholds, in percent, that thresholds.md tries")
	fs.StringVar(&o.slowedBench, "slowed_bench", "", "the -bench of the slowed comparisons (default: kvb compare's, as in the A/A ones)")
	return o
}

func run(c cli.Call, o *options, rest []string) int {
	if err := o.check(rest); err != nil {
		return c.Usage("%v", err)
	}
	if err := measure(o, c.Stdout, c.Stderr); err != nil {
		fmt.Fprintln(c.Stderr, "kvb power:", err)
		return 2
	}
	return 0
}

// check reads the lists among the flags and the compare flags after
// them.
func (o *options) check(rest []string) error {
	if o.mode != "time" && o.mode != "sim" {
		return fmt.Errorf("-mode %s: must be time or sim", o.mode)
	}
	o.compareArgs = rest
	if o.mode == "sim" {
		o.compareArgs = append([]string{"-mode", "sim"}, rest...)
	}
	o.slowedCompareArgs = o.compareArgs
	if o.slowedBench != "" {
		o.slowedCompareArgs = append(append([]string{}, o.compareArgs...), "-bench", o.slowedBench)
	}
	o.runsAt = map[float64]int{}
	for _, s := range strings.Split(o.slowdowns, ",") {
		ps, ns, hasN := strings.Cut(s, ":")
		p, err := strconv.ParseFloat(ps, 64)
		n := o.runs
		if hasN {
			n, err = strconv.Atoi(ns)
		}
		if err != nil || p <= 0 || p > 100 || n < 0 {
			return fmt.Errorf("-slowdowns %s: each must be a percent from 0 to 100, optionally :comparisons", o.slowdowns)
		}
		o.pcts = append(o.pcts, p)
		o.runsAt[p] = n
	}
	if o.aa < 1 || o.runs < 0 {
		return fmt.Errorf("-aa must be at least 1 and -runs at least 0")
	}
	for _, f := range strings.Split(o.simThresholds, ",") {
		t, err := strconv.ParseFloat(f, 64)
		if err != nil || t < 0 {
			return fmt.Errorf("-sim_thresholds %s: each must be a percent", o.simThresholds)
		}
		o.thresholds = append(o.thresholds, t)
	}
	return nil
}

// measure runs every comparison, or with -resample_only or
// -sim_tables_only only rewrites the tables from those in -o.
func measure(o *options, stdout, stderr io.Writer) error {
	unit := map[string]string{"time": "cpu-ns/op", "sim": "instr/op"}[o.mode]
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	dir, err := filepath.Abs(o.out)
	if err != nil {
		return err
	}
	if o.resampleOnly {
		return resample(dir, stdout)
	}
	if o.simTablesOnly {
		return writeSimTables(dir, o.thresholds, stdout)
	}
	m := &comparisons{dir: dir, kvb: filepath.Join(dir, "kvb"), stderr: stderr}
	base, slow := filepath.Join(dir, "base.test"), filepath.Join(dir, "slow.test")
	if err := m.buildKvb(); err != nil {
		return err
	}
	if err := m.buildSuite(base, o.tags, ""); err != nil {
		return err
	}
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	overlay, err := writeSlowdownOverlay(root, dir)
	if err != nil {
		return err
	}
	if err := m.buildSuite(slow, strings.TrimSpace(o.tags+" "+slowdownTag), overlay); err != nil {
		return err
	}

	tsv, err := os.Create(filepath.Join(dir, "runs.tsv"))
	if err != nil {
		return err
	}
	defer tsv.Close()
	fmt.Fprintf(tsv, "round\tslowdown-%%\tengine\tdelay\tgate-exit\tcaught\tfailed-elsewhere\tmeasured-%s-change-%%\tload1\n", strings.TrimSuffix(unit, "/op"))
	var cal map[string]float64 // engine title -> unit per read
	var titles []string
	tally := map[float64]*count{0: {}}
	perEngine := map[float64]map[string]*count{}
	for _, p := range o.pcts {
		tally[p] = &count{}
		perEngine[p] = map[string]*count{}
	}
	most := o.runs
	for _, n := range o.runsAt {
		most = max(most, n)
	}
	for r := 1; r <= max(o.aa, most); r++ {
		if r <= o.aa {
			res, err := m.compare(fmt.Sprintf("aa-%02d", r), base, base, nil, o.compareArgs)
			if err != nil {
				return err
			}
			if cal == nil {
				if cal, err = perRead(filepath.Join(res.dir, "base.txt"), unit); err != nil {
					return err
				}
				for t := range cal {
					titles = append(titles, t)
				}
				sort.Strings(titles)
				if len(titles) == 0 {
					return fmt.Errorf("no %s in %s: the comparison must run ReadRandom", unit, res.dir)
				}
			}
			tally[0].add(res.exit == 1, 0)
			fmt.Fprintf(tsv, "%d\t0\t-\t-\t%d\t-\t%s\t-\t%s\n", r, res.exit, strings.Join(res.failed, ","), res.load)
		}
		for i, p := range o.pcts {
			if r > o.runsAt[p] {
				continue
			}
			slowed := []string{titles[(r+i)%len(titles)]}
			if o.mode == "sim" {
				slowed = titles
			}
			var spec []string
			what := map[string]string{}
			for _, eng := range slowed {
				if o.mode == "sim" {
					what[eng] = fmt.Sprintf("%dinstr", int(p/100*cal[eng]+0.5))
				} else {
					what[eng] = strconv.FormatFloat(p/100*cal[eng], 'f', 2, 64) + "ns"
				}
				spec = append(spec, strings.ToLower(eng)+"="+what[eng])
			}
			env := []string{"KVBENCH_SLOWDOWN=" + strings.Join(spec, ",")}
			// The same binary on both sides: only the loop differs.
			res, err := m.compare(fmt.Sprintf("slow%g-%02d", p, r), slow, slow, env, o.slowedCompareArgs)
			if err != nil {
				return err
			}
			for _, eng := range slowed {
				caught, elsewhere := false, []string{}
				for _, f := range res.failed {
					if strings.HasPrefix(f, "ReadRandom"+eng+"/") {
						caught = true
					} else if !slowedRead(f, slowed) {
						elsewhere = append(elsewhere, f)
					}
				}
				change, err := unitChange(res.dir, eng, unit)
				if err != nil {
					return err
				}
				tally[p].add(caught && res.exit == 1, change)
				if perEngine[p][eng] == nil {
					perEngine[p][eng] = &count{}
				}
				perEngine[p][eng].add(caught && res.exit == 1, change)
				fmt.Fprintf(tsv, "%d\t%g\t%s\t%s\t%d\t%v\t%s\t%.2f\t%s\n", r, p, eng, what[eng], res.exit, caught, strings.Join(elsewhere, ","), change, res.load)
			}
		}
	}
	if err := writeTable(filepath.Join(dir, "power.md"), tally, perEngine, o.pcts, titles, unit, stdout); err != nil {
		return err
	}
	if err := chart(filepath.Join(dir, "power.svg"), tally, o.pcts, unit); err != nil {
		return fmt.Errorf("chart: %v", err)
	}
	if o.mode == "time" {
		err = resample(dir, stdout)
	} else {
		err = writeSimTables(dir, o.thresholds, stdout)
	}
	if err != nil {
		return err
	}
	if err := tsv.Close(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "kvb power: wrote %s/{runs.tsv,power.md,power.svg,rounds.md}\n", dir)
	return nil
}

// resample writes rounds.md from the A/A comparisons in dir.
func resample(dir string, stdout io.Writer) error {
	pool, meta, err := pooledRounds(dir)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	var engines []string
	for k := range pool[0].base {
		if m := readRandom.FindStringSubmatch(k.Name); m != nil && !seen[m[1]] {
			seen[m[1]] = true
			engines = append(engines, m[1])
		}
	}
	sort.Strings(engines)
	if err := writeRoundsTable(filepath.Join(dir, "rounds.md"), pool, meta, engines, stdout); err != nil {
		return err
	}
	return writeUnitsTable(filepath.Join(dir, "units.md"), dir, engines, stdout)
}

type count struct {
	n, failed int
	changes   []float64
}

func (c *count) add(failed bool, change float64) {
	c.n++
	if failed {
		c.failed++
	}
	c.changes = append(c.changes, change)
}

func (c *count) rate() float64 { return float64(c.failed) / float64(max(c.n, 1)) }

func writeTable(path string, tally map[float64]*count, perEngine map[float64]map[string]*count, pcts []float64, titles []string, unit string, stdout io.Writer) error {
	var b strings.Builder
	a := tally[0]
	fmt.Fprintf(&b, "| injected slowdown per read | trials | gate failed | rate | measured %s change (median) |", unit)
	for _, t := range titles {
		fmt.Fprintf(&b, " %s caught |", t)
	}
	fmt.Fprintf(&b, "\n|--:|--:|--:|--:|--:|%s\n", strings.Repeat("--:|", len(titles)))
	fmt.Fprintf(&b, "| none (A/A) | %d | %d | %.0f%% | |%s\n", a.n, a.failed, 100*a.rate(), strings.Repeat(" |", len(titles)))
	for _, p := range pcts {
		c := tally[p]
		fmt.Fprintf(&b, "| %g%% | %d | %d | %.0f%% | %+.2f%% |", p, c.n, c.failed, 100*c.rate(), stats.Sample{Xs: c.changes}.Quantile(0.5))
		for _, t := range titles {
			if e := perEngine[p][t]; e != nil {
				fmt.Fprintf(&b, " %d/%d |", e.failed, e.n)
			} else {
				fmt.Fprint(&b, " |")
			}
		}
		fmt.Fprintln(&b)
	}
	return writeTo(path, b.String(), stdout)
}

func defaultTags() string {
	if _, err := os.Stat("/usr/include/rocksdb/c.h"); err == nil {
		return "rocksdb"
	}
	return ""
}

func load1() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}
