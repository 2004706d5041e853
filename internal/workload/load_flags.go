package workload

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kvbench/kvbench/internal/core"
)

// The flags of the fixed-rate workloads (Load, Knee, HTTP, Bloom), which
// all four list: open-loop load, the knee, HTTP and many-table Bloom
// filters.
var loadFlags = []core.Option{rateFlag, writeRateFlag, loadTimeFlag, loadWorkersFlag, sloFlag,
	kneeTimeFlag, kneeFlushesFlag, kneeMaxTimeFlag, kneeStartFlag, kneeStepsFlag, sstTablesFlag, bloomFPRFlag, latencyDirFlag}

var (
	rateFlag = &core.Flag[RateList]{Name: "rate", Default: RateList{10000},
		Usage: "comma-separated target rates in operations per second, one rate=N sub-benchmark each (open loop)",
		Check: func(v RateList, _ *core.Config) error { return nonEmpty(len(v), "rate") },
		Echo:  func(v RateList, _ *core.Config, line func(string, any)) { line("rates", v.String()) }}
	writeRateFlag = &core.Flag[int]{Name: "write_rate", Default: 1000,
		Usage: "the writer's rate in operations per second in op=readwhilewriting",
		Check: rateRange}
	loadTimeFlag = &core.Flag[time.Duration]{Name: "load_time", Default: 5 * time.Second,
		Usage: "measured window of one fixed-rate run (one b.N iteration): every operation due in it runs; the backlog may run up to one more window",
		Check: windowRange}
	loadWorkersFlag = &core.Flag[int]{Name: "load_workers", Default: 4,
		Usage: "goroutines (HTTP: keep-alive connections) that take operations off the fixed-rate schedule",
		Check: func(w int, _ *core.Config) error { return intRange(w, 1, 4096) },
		Echo: func(w int, _ *core.Config, line func(string, any)) {
			line("load-workers", w)
			line("load-latency", "HDR histogram of every operation due in the window, ns from its intended start (open loop, coordinated omission corrected); the backlog runs after the window for up to one more window, then any operation not started counts as unrun at its wait so far")
		}}
	sloFlag = &core.Flag[time.Duration]{Name: "slo", Default: 10 * time.Millisecond,
		Usage: "p99 latency a rate must stay under to count as sustained in BenchmarkKnee",
		Check: func(s time.Duration, _ *core.Config) error {
			if s <= 0 || s > time.Hour {
				return errors.New("must be more than 0 and at most 1h")
			}
			return nil
		},
		Echo: func(s time.Duration, c *core.Config, line func(string, any)) {
			line("slo-p99", s)
			line("knee", kneeRule(c))
		}}
	// The knee's own flags are stated by sloFlag's knee line.
	kneeTimeFlag = &core.Flag[time.Duration]{Name: "knee_time", Default: 2 * time.Second,
		Usage: "measured window of each trial rate in BenchmarkKnee (its backlog may run up to one more window); upserts on an LSM may run longer (-knee_flushes)",
		Check: windowRange, Echo: noLines[time.Duration]}
	kneeFlushesFlag = &core.Flag[int]{Name: "knee_flushes", Default: 5,
		Usage: "how many memtable fills (N) each BenchmarkKnee upsert trial on an LSM spans, so that every trial holds its flushes and a level-0 compaction rather than by chance (5: a level-0 compaction comes every 4 flushes in Pebble and RocksDB, every 5 in Badger): at rate R a trial lasts max(-knee_time, N × memtable ÷ (R × (key + value bytes))), at most -knee_max_time; 0: -knee_time (B-trees and gets always run -knee_time)",
		Check: func(n int, _ *core.Config) error { return intRange(n, 0, 100) }, Echo: noLines[int]}
	kneeMaxTimeFlag = &core.Flag[time.Duration]{Name: "knee_max_time", Default: 20 * time.Second,
		Usage: "longest BenchmarkKnee upsert trial on an LSM (at least -knee_time); below -knee_flushes × memtable ÷ (this × (key + value bytes)) upserts/s a trial spans fewer than -knee_flushes fills: 16,132/s at the defaults (5 fills of 64 MiB memtables, 16-byte keys, 1 KiB values, 20s)",
		Check: func(d time.Duration, c *core.Config) error {
			if kt := kneeTimeFlag.Get(c); d < kt {
				return fmt.Errorf("must be at least -knee_time (%v)", kt)
			} else if d > 24*time.Hour {
				return errors.New("must be at most 24h")
			}
			return nil
		},
		Echo: noLines[time.Duration]}
	kneeStartFlag = &core.Flag[int]{Name: "knee_start", Default: 1000,
		Usage: "first rate BenchmarkKnee tries, in operations per second; it doubles from there",
		Check: rateRange, Echo: noLines[int]}
	kneeStepsFlag = &core.Flag[int]{Name: "knee_steps", Default: 4,
		Usage: "bisection steps BenchmarkKnee takes between the last sustained and the first failed rate",
		Check: func(s int, _ *core.Config) error { return intRange(s, 0, 20) }, Echo: noLines[int]}
	sstTablesFlag = &core.Flag[int]{Name: "sst_tables", Default: 100, Shapes: true,
		Usage: "unmerged tables in BenchmarkBloom's fixtures (Badger, RocksDB, Pebble; compactions off)",
		Check: func(n int, c *core.Config) error {
			if err := intRange(n, 1, 10_000); err != nil {
				return err
			}
			if uint64(n) > c.Keys() {
				return errors.New("must not exceed the number of keys (-keys_mil)")
			}
			return nil
		}}
	bloomFPRFlag = &core.Flag[FPRList]{Name: "bloom_fpr", Default: FPRList{0, 0.01, 0.03, 0.5}, Shapes: true,
		Usage: "comma-separated Bloom filter false-positive rates for BenchmarkBloom (off: no filter), one bloom= sub-benchmark each",
		Check: func(v FPRList, _ *core.Config) error { return nonEmpty(len(v), "rate") }}
	latencyDirFlag = &core.Flag[string]{Name: "latency_dir",
		Usage: "existing directory to write each fixed-rate sub-benchmark's full HDR percentile spectrum into (one .hgrm file each), and each write leaf's throughput over time (Overwrite, YCSB with writes, Commit: one .tsv each)",
		Check: func(d string, _ *core.Config) error {
			if d == "" {
				return nil
			}
			if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
				return errors.New("must be an existing directory")
			} else if err := syscall.Access(d, 2 /* W_OK */); err != nil {
				return errors.New("is not writable: " + err.Error())
			}
			return nil
		},
		Echo: func(d string, _ *core.Config, line func(string, any)) {
			if d != "" {
				line("latency-dir", d)
			}
		}}
)

// loadSettings is the fixed-rate workloads' flags as one value.
type loadSettings struct {
	Rates       RateList
	WriteRate   int
	LoadTime    time.Duration
	LoadWorkers int
	SLO         time.Duration
	KneeTime    time.Duration
	KneeFlushes int
	KneeMaxTime time.Duration
	KneeStart   int
	KneeSteps   int
	LatencyDir  string
	SSTTables   int
	BloomFPR    FPRList
}

// loadOf is the fixed-rate settings of c.
func loadOf(c *core.Config) loadSettings {
	return loadSettings{
		Rates: rateFlag.Get(c), WriteRate: writeRateFlag.Get(c), LoadTime: loadTimeFlag.Get(c), LoadWorkers: loadWorkersFlag.Get(c),
		SLO: sloFlag.Get(c), KneeTime: kneeTimeFlag.Get(c), KneeFlushes: kneeFlushesFlag.Get(c), KneeMaxTime: kneeMaxTimeFlag.Get(c),
		KneeStart: kneeStartFlag.Get(c), KneeSteps: kneeStepsFlag.Get(c), LatencyDir: latencyDirFlag.Get(c),
		SSTTables: sstTablesFlag.Get(c), BloomFPR: bloomFPRFlag.Get(c),
	}
}

// kneeRule states how the knee is searched for: the knee line of the
// configuration.
func kneeRule(c *core.Config) string {
	trial := fmt.Sprintf("%v per trial", kneeTimeFlag.Get(c))
	if n := kneeFlushesFlag.Get(c); n > 0 {
		trial = fmt.Sprintf("%v per trial (upserts on an LSM: long enough to fill %d memtables, at most %v)", kneeTimeFlag.Get(c), n, kneeMaxTimeFlag.Get(c))
	}
	return fmt.Sprintf("from %d ops/s doubling, then %d bisection steps, %s, sustained = every operation due in the window done and p99 of all of them <= slo in each of %d trials (the first failed trial fails the rate)",
		kneeStartFlag.Get(c), kneeStepsFlag.Get(c), trial, kneeTrials)
}

// noLines is the Echo of a flag another flag's lines state.
func noLines[T any](T, *core.Config, func(string, any)) {}

// intRange is the check of a whole number from lo to hi.
func intRange(v, lo, hi int) error {
	if v < lo || v > hi {
		return fmt.Errorf("must be from %d to %d", lo, hi)
	}
	return nil
}

// rateRange is the check of a rate flag.
func rateRange(r int, _ *core.Config) error {
	if r < 1 || r > maxRate {
		return fmt.Errorf("must be from 1 to %d operations per second", maxRate)
	}
	return nil
}

// windowRange is the check of a fixed-rate window.
func windowRange(d time.Duration, _ *core.Config) error {
	if d < time.Millisecond || d > 24*time.Hour {
		return errors.New("must be from 1ms to 24h")
	}
	return nil
}

// nonEmpty is the check of a list flag.
func nonEmpty(n int, what string) error {
	if n == 0 {
		return errors.New("must list at least one " + what)
	}
	return nil
}

// maxRate bounds every rate flag: far above what one machine serves, low
// enough that a typo does not schedule billions of operations.
const maxRate = 100_000_000

// RateList is a comma-separated list of operations per second.
type RateList []int

func (l *RateList) String() string {
	s := make([]string, len(*l))
	for i, v := range *l {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ",")
}

func (l *RateList) Set(v string) error {
	var out RateList
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > maxRate {
			return fmt.Errorf("%q is not a rate from 1 to %d operations per second", f, maxRate)
		}
		out = append(out, n)
	}
	*l = out
	return nil
}

// FPRList is a list of Bloom filter false-positive rates; 0 is "off".
type FPRList []float64

func (l *FPRList) String() string {
	s := make([]string, len(*l))
	for i, v := range *l {
		s[i] = fprName(v)
	}
	return strings.Join(s, ",")
}

func (l *FPRList) Set(v string) error {
	var out FPRList
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		if f == "off" {
			out = append(out, 0)
			continue
		}
		p, err := strconv.ParseFloat(f, 64)
		if err != nil || !(p > 0 && p < 1) {
			return fmt.Errorf("%q is neither off nor a false-positive rate between 0 and 1", f)
		}
		out = append(out, p)
	}
	*l = out
	return nil
}

// fprName is how a false-positive rate appears in names and lines.
func fprName(p float64) string {
	if p == 0 {
		return "off"
	}
	return strconv.FormatFloat(p, 'g', -1, 64)
}
