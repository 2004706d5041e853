// Command power measures the regression gate on this machine: how often
// an A/A comparison (the same binary on both sides) fails it, and how
// often a known slowdown of one engine's reads is caught. It builds the
// suite twice, once with the kvbench_slowdown tag (a calibrated busy loop
// per read, internal/engine/zz_slowdown.go, on the compared head side
// only, so that binary runs on both sides), then runs kvb compare
// (benchstat/kvb) on prebuilt binaries at its defaults, rounds of every kind interleaved
// so that the machine's drift over the hour hits every kind alike.
//
//	go run ./benchstat/power [-mode time|sim] [-aa 20] [-runs 10] [-slowdowns 2,5,10] [-slowed_bench REGEX] [-o results/power] [-- kvb compare flags]
//
// In time mode each slowed run slows one engine, the next engine each run:
// per read, by the given share of that engine's cpu-ns/op in the first A/A
// run (a calibrated busy loop). In sim mode (kvb compare -mode sim) each
// slowed run slows every engine at once, each by the given share of its
// own instr/op, with a countdown of exactly that many instructions; every
// engine's series is gated on its own, so each run is one trial per
// engine. It writes runs.tsv (one line per engine per comparison),
// power.md (the table) and power.svg (the chart) into -o.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aclements/go-moremath/stats"

	"github.com/kvbench/kvbench/benchstat/internal/gate"
)

func main() {
	aa := flag.Int("aa", 20, "A/A comparisons")
	runs := flag.Int("runs", 10, "comparisons per slowdown")
	slowdowns := flag.String("slowdowns", "2,5,10", "comma-separated slowdowns per read, in percent of the engine's cpu-ns/op (instr/op in sim mode); p:n runs n comparisons at p instead of -runs")
	out := flag.String("o", "results/power", "output directory")
	tags := flag.String("tags", defaultTags(), "build tags of both binaries")
	resampleOnly := flag.Bool("resample_only", false, "only resample the A/A rounds already in -o (rounds.md)")
	mode := flag.String("mode", "time", "time: slow by cpu-ns/op; sim: kvb compare -mode sim, slow by instr/op")
	simTablesOnly := flag.Bool("sim_tables_only", false, "only write spread.md and thresholds.md from the sim-mode comparisons already in -o")
	simThresholds := flag.String("sim_thresholds", "0.25,0.5,1,2", "comma-separated sim thresholds, in percent, that thresholds.md tries")
	slowedBench := flag.String("slowed_bench", "", "the -bench of the slowed comparisons (default: kvb compare's, as in the A/A ones)")
	flag.Parse()
	if *mode != "time" && *mode != "sim" {
		fatalf("-mode %s: must be time or sim", *mode)
	}
	unit := map[string]string{"time": "cpu-ns/op", "sim": "instr/op"}[*mode]
	args := flag.Args()
	if *mode == "sim" {
		args = append([]string{"-mode", "sim"}, args...)
	}
	slowArgs := args
	if *slowedBench != "" {
		slowArgs = append(append([]string{}, args...), "-bench", *slowedBench)
	}
	var pcts []float64
	runsAt := map[float64]int{}
	for _, s := range strings.Split(*slowdowns, ",") {
		ps, ns, hasN := strings.Cut(s, ":")
		p, err := strconv.ParseFloat(ps, 64)
		n := *runs
		if hasN {
			n, err = strconv.Atoi(ns)
		}
		if err != nil || p <= 0 || p > 100 || n < 0 {
			fatalf("-slowdowns %s: each must be a percent from 0 to 100, optionally :comparisons", *slowdowns)
		}
		pcts = append(pcts, p)
		runsAt[p] = n
	}
	if *aa < 1 || *runs < 0 {
		fatalf("-aa must be at least 1 and -runs at least 0")
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fatalf("%v", err)
	}
	dir, err := filepath.Abs(*out)
	if err != nil {
		fatalf("%v", err)
	}
	var thrs []float64
	for _, f := range strings.Split(*simThresholds, ",") {
		t, err := strconv.ParseFloat(f, 64)
		if err != nil || t < 0 {
			fatalf("-sim_thresholds %s: each must be a percent", *simThresholds)
		}
		thrs = append(thrs, t)
	}
	if *resampleOnly {
		resample(dir)
		return
	}
	if *simTablesOnly {
		writeSimTables(dir, thrs)
		return
	}
	base, slow := filepath.Join(dir, "base.test"), filepath.Join(dir, "slow.test")
	kvbBin = filepath.Join(dir, "kvb")
	if out, err := exec.Command("go", "build", "-o", kvbBin, "./benchstat/kvb").CombinedOutput(); err != nil {
		fatalf("build kvb: %v\n%s", err, out)
	}
	build(base, *tags)
	build(slow, strings.TrimSpace(*tags+" kvbench_slowdown"))

	tsv, err := os.Create(filepath.Join(dir, "runs.tsv"))
	if err != nil {
		fatalf("%v", err)
	}
	defer tsv.Close()
	fmt.Fprintf(tsv, "round\tslowdown-%%\tengine\tdelay\tgate-exit\tcaught\tfailed-elsewhere\tmeasured-%s-change-%%\tload1\n", strings.TrimSuffix(unit, "/op"))
	var cal map[string]float64 // engine title -> unit per read
	var titles []string
	tally := map[float64]*count{0: {}}
	perEngine := map[float64]map[string]*count{}
	for _, p := range pcts {
		tally[p] = &count{}
		perEngine[p] = map[string]*count{}
	}
	most := *runs
	for _, n := range runsAt {
		most = max(most, n)
	}
	for r := 1; r <= max(*aa, most); r++ {
		if r <= *aa {
			res := compare(dir, fmt.Sprintf("aa-%02d", r), base, base, nil, args)
			if cal == nil {
				cal = perRead(filepath.Join(res.dir, "base.txt"), unit)
				for t := range cal {
					titles = append(titles, t)
				}
				sort.Strings(titles)
				if len(titles) == 0 {
					fatalf("no %s in %s: the comparison must run ReadRandom", unit, res.dir)
				}
			}
			tally[0].add(res.exit == 1, 0)
			fmt.Fprintf(tsv, "%d\t0\t-\t-\t%d\t-\t%s\t-\t%s\n", r, res.exit, strings.Join(res.failed, ","), res.load)
		}
		for i, p := range pcts {
			if r > runsAt[p] {
				continue
			}
			slowed := []string{titles[(r+i)%len(titles)]}
			if *mode == "sim" {
				slowed = titles
			}
			var spec []string
			what := map[string]string{}
			for _, eng := range slowed {
				if *mode == "sim" {
					what[eng] = fmt.Sprintf("%dinstr", int(p/100*cal[eng]+0.5))
				} else {
					what[eng] = time.Duration(p / 100 * cal[eng]).String()
				}
				spec = append(spec, strings.ToLower(eng)+"="+what[eng])
			}
			env := []string{"KVBENCH_SLOWDOWN=" + strings.Join(spec, ",")}
			// The same binary on both sides: only the loop differs.
			res := compare(dir, fmt.Sprintf("slow%g-%02d", p, r), slow, slow, env, slowArgs)
			for _, eng := range slowed {
				caught, elsewhere := false, []string{}
				for _, f := range res.failed {
					if strings.HasPrefix(f, "ReadRandom"+eng+"/") {
						caught = true
					} else if !slowedRead(f, slowed) {
						elsewhere = append(elsewhere, f)
					}
				}
				change := unitChange(res.dir, eng, unit)
				tally[p].add(caught && res.exit == 1, change)
				if perEngine[p][eng] == nil {
					perEngine[p][eng] = &count{}
				}
				perEngine[p][eng].add(caught && res.exit == 1, change)
				fmt.Fprintf(tsv, "%d\t%g\t%s\t%s\t%d\t%v\t%s\t%.2f\t%s\n", r, p, eng, what[eng], res.exit, caught, strings.Join(elsewhere, ","), change, res.load)
			}
		}
	}
	writeTable(filepath.Join(dir, "power.md"), tally, perEngine, pcts, titles, unit)
	if err := chart(filepath.Join(dir, "power.svg"), tally, pcts, unit); err != nil {
		fatalf("chart: %v", err)
	}
	if *mode == "time" {
		resample(dir)
	} else {
		writeSimTables(dir, thrs)
	}
	fmt.Printf("power: wrote %s/{runs.tsv,power.md,power.svg,rounds.md}\n", dir)
}

// resample writes rounds.md from the A/A comparisons in dir.
func resample(dir string) {
	pool, meta, err := pooledRounds(dir)
	if err != nil {
		fatalf("%v", err)
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
	writeRoundsTable(filepath.Join(dir, "rounds.md"), pool, meta, engines)
	writeUnitsTable(filepath.Join(dir, "units.md"), dir, engines)
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

func writeTable(path string, tally map[float64]*count, perEngine map[float64]map[string]*count, pcts []float64, titles []string, unit string) {
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
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		fatalf("%v", err)
	}
	fmt.Print(b.String())
}

// kvbBin is the suite's tooling (benchstat/kvb), whose compare runs every
// comparison.
var kvbBin string

type result struct {
	dir    string
	exit   int
	failed []string // benchmark unit of each REGRESSION or MISSING row
	load   string
}

// failedRows reads gate.json (gate.Report): "benchmark unit" of each
// series that failed the gate in any mode.
func failedRows(r io.Reader) ([]string, error) {
	var rep gate.Report
	if err := json.NewDecoder(r).Decode(&rep); err != nil {
		return nil, fmt.Errorf("gate.json: %w", err)
	}
	var out []string
	for _, m := range rep.Modes {
		for _, f := range m.Failures {
			out = append(out, f.Name+" "+f.Unit)
		}
	}
	return out, nil
}

// slowedRead reports whether a failed series is the read of an engine
// this run slowed on purpose.
func slowedRead(failed string, slowed []string) bool {
	for _, eng := range slowed {
		if strings.HasPrefix(failed, "ReadRandom"+eng+"/") {
			return true
		}
	}
	return false
}

// compare runs kvb compare on two prebuilt binaries.
func compare(dir, name, base, head string, env, args []string) result {
	res := result{dir: filepath.Join(dir, name), load: load1()}
	cmd := exec.Command(kvbBin, append([]string{"compare", base, head, "-o", res.dir, "-no-history"}, args...)...)
	// Dozens of comparisons of one binary: kept out of the history store.
	cmd.Env = append(append(os.Environ(), "HISTORY=off"), env...)
	log, _ := os.Create(filepath.Join(dir, name+".log"))
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	start := time.Now()
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		res.exit = ee.ExitCode()
	} else if err != nil {
		fatalf("%s: %v", name, err)
	}
	if res.exit != 0 && res.exit != 1 {
		fatalf("%s: kvb compare exit %d; see %s.log", name, res.exit, filepath.Join(dir, name))
	}
	j, err := os.Open(filepath.Join(res.dir, "gate.json"))
	if err != nil {
		fatalf("%s: %v", name, err)
	}
	defer j.Close()
	if res.failed, err = failedRows(j); err != nil {
		fatalf("%s: %v", name, err)
	}
	fmt.Fprintf(os.Stderr, "power: %s: gate exit %d in %.0fs, load %s %v\n", name, res.exit, time.Since(start).Seconds(), res.load, res.failed)
	return res
}

// series reads the values of unit by benchmark name, in file order, as
// the gate reads them.
func series(path, unit string) map[string][]float64 {
	set, err := gate.ReadFiles(path)
	if err != nil {
		fatalf("%v", err)
	}
	out := map[string][]float64{}
	for k, v := range set.Values {
		if k.Unit == unit {
			out[k.Name] = v
		}
	}
	return out
}

var readRandom = regexp.MustCompile(`^ReadRandom([A-Za-z]+)/`)

// perRead is each engine's median unit per read in a results file.
func perRead(path, unit string) map[string]float64 {
	out := map[string]float64{}
	for name, v := range series(path, unit) {
		if m := readRandom.FindStringSubmatch(name); m != nil {
			out[m[1]] = stats.Sample{Xs: v}.Quantile(0.5)
		}
	}
	return out
}

// unitChange is the median per-round change of eng's unit, in percent.
func unitChange(dir, eng, unit string) float64 {
	b, h := series(filepath.Join(dir, "base.txt"), unit), series(filepath.Join(dir, "head.txt"), unit)
	var ratios []float64
	for name, bv := range b {
		if m := readRandom.FindStringSubmatch(name); m == nil || m[1] != eng {
			continue
		}
		for i := 0; i < min(len(bv), len(h[name])); i++ {
			ratios = append(ratios, h[name][i]/bv[i])
		}
	}
	if len(ratios) == 0 {
		return 0
	}
	return 100 * (stats.Sample{Xs: ratios}.Quantile(0.5) - 1)
}

func build(out, tags string) {
	fmt.Fprintf(os.Stderr, "power: building %s (tags %q)\n", filepath.Base(out), tags)
	cmd := exec.Command("go", "test", "-c", "-tags", tags, "-o", out, ".")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fatalf("build %s: %v", out, err)
	}
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

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "power: "+format+"\n", args...)
	os.Exit(2)
}
