package bench

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// LoadConfig is the part of the run configuration of the fixed-rate
// workloads: open-loop load, the knee, HTTP and many-table Bloom filters.
type LoadConfig struct {
	Rates       RateList      // -rate
	WriteRate   int           // -write_rate
	LoadTime    time.Duration // -load_time
	LoadWorkers int           // -load_workers
	SLO         time.Duration // -slo
	KneeTime    time.Duration // -knee_time
	KneeFlushes int           // -knee_flushes
	KneeMaxTime time.Duration // -knee_max_time
	KneeStart   int           // -knee_start
	KneeSteps   int           // -knee_steps
	LatencyDir  string        // -latency_dir
	SSTTables   int           // -sst_tables
	BloomFPR    FPRList       // -bloom_fpr
}

func (c *LoadConfig) defaults() {
	*c = LoadConfig{
		Rates: RateList{10000}, WriteRate: 1000, LoadTime: 5 * time.Second, LoadWorkers: 4,
		SLO: 10 * time.Millisecond, KneeTime: 2 * time.Second, KneeFlushes: 5, KneeMaxTime: 20 * time.Second,
		KneeStart: 1000, KneeSteps: 4,
		SSTTables: 100, BloomFPR: FPRList{0, 0.01, 0.03, 0.5},
	}
}

func (c *LoadConfig) bind(fs *flag.FlagSet) {
	fs.Var(&c.Rates, "rate", "comma-separated target rates in operations per second, one rate=N sub-benchmark each (open loop)")
	fs.IntVar(&c.WriteRate, "write_rate", c.WriteRate, "the writer's rate in operations per second in op=readwhilewriting")
	fs.DurationVar(&c.LoadTime, "load_time", c.LoadTime, "measured window of one fixed-rate run (one b.N iteration): every operation due in it runs; the backlog may run up to one more window")
	fs.IntVar(&c.LoadWorkers, "load_workers", c.LoadWorkers, "goroutines (HTTP: keep-alive connections) that take operations off the fixed-rate schedule")
	fs.DurationVar(&c.SLO, "slo", c.SLO, "p99 latency a rate must stay under to count as sustained in BenchmarkKnee")
	fs.DurationVar(&c.KneeTime, "knee_time", c.KneeTime, "measured window of each trial rate in BenchmarkKnee (its backlog may run up to one more window); upserts on an LSM may run longer (-knee_flushes)")
	fs.IntVar(&c.KneeFlushes, "knee_flushes", c.KneeFlushes, "how many memtable fills (N) each BenchmarkKnee upsert trial on an LSM spans, so that every trial holds its flushes and a level-0 compaction rather than by chance (5: a level-0 compaction comes every 4 flushes in Pebble and RocksDB, every 5 in Badger): at rate R a trial lasts max(-knee_time, N × memtable ÷ (R × (key + value bytes))), at most -knee_max_time; 0: -knee_time (B-trees and gets always run -knee_time)")
	fs.DurationVar(&c.KneeMaxTime, "knee_max_time", c.KneeMaxTime, "longest BenchmarkKnee upsert trial on an LSM (at least -knee_time); below -knee_flushes × memtable ÷ (this × (key + value bytes)) upserts/s a trial spans fewer than -knee_flushes fills: 16,132/s at the defaults (5 fills of 64 MiB memtables, 16-byte keys, 1 KiB values, 20s)")
	fs.IntVar(&c.KneeStart, "knee_start", c.KneeStart, "first rate BenchmarkKnee tries, in operations per second; it doubles from there")
	fs.IntVar(&c.KneeSteps, "knee_steps", c.KneeSteps, "bisection steps BenchmarkKnee takes between the last sustained and the first failed rate")
	fs.StringVar(&c.LatencyDir, "latency_dir", c.LatencyDir, "existing directory to write each fixed-rate sub-benchmark's full HDR percentile spectrum into (one .hgrm file each)")
	fs.IntVar(&c.SSTTables, "sst_tables", c.SSTTables, "unmerged tables in BenchmarkBloom's fixtures (Badger, RocksDB, Pebble; compactions off)")
	fs.Var(&c.BloomFPR, "bloom_fpr", "comma-separated Bloom filter false-positive rates for BenchmarkBloom (off: no filter), one bloom= sub-benchmark each")
}

// validate checks the load settings without writing anything; keys is
// the number of distinct keys of the run.
func (c *LoadConfig) validate(keys uint64) []error {
	var errs []error
	if len(c.Rates) == 0 {
		errs = append(errs, flagError("rate", "", "must list at least one rate"))
	}
	if r := c.WriteRate; r < 1 || r > maxRate {
		errs = append(errs, flagError("write_rate", r, fmt.Sprintf("must be from 1 to %d operations per second", maxRate)))
	}
	for _, d := range []struct {
		name string
		d    time.Duration
	}{{"load_time", c.LoadTime}, {"knee_time", c.KneeTime}} {
		if d.d < time.Millisecond || d.d > 24*time.Hour {
			errs = append(errs, flagError(d.name, d.d, "must be from 1ms to 24h"))
		}
	}
	if w := c.LoadWorkers; w < 1 || w > 4096 {
		errs = append(errs, flagError("load_workers", w, "must be from 1 to 4096"))
	}
	if s := c.SLO; s <= 0 || s > time.Hour {
		errs = append(errs, flagError("slo", s, "must be more than 0 and at most 1h"))
	}
	if r := c.KneeStart; r < 1 || r > maxRate {
		errs = append(errs, flagError("knee_start", r, fmt.Sprintf("must be from 1 to %d operations per second", maxRate)))
	}
	if n := c.KneeFlushes; n < 0 || n > 100 {
		errs = append(errs, flagError("knee_flushes", n, "must be from 0 to 100"))
	}
	if d := c.KneeMaxTime; d < c.KneeTime {
		errs = append(errs, flagError("knee_max_time", d, fmt.Sprintf("must be at least -knee_time (%v)", c.KneeTime)))
	} else if d > 24*time.Hour {
		errs = append(errs, flagError("knee_max_time", d, "must be at most 24h"))
	}
	if s := c.KneeSteps; s < 0 || s > 20 {
		errs = append(errs, flagError("knee_steps", s, "must be from 0 to 20"))
	}
	if n := c.SSTTables; n < 1 || n > 10_000 {
		errs = append(errs, flagError("sst_tables", n, "must be from 1 to 10000"))
	} else if uint64(n) > keys {
		errs = append(errs, flagError("sst_tables", n, "must not exceed the number of keys (-keys_mil)"))
	}
	if len(c.BloomFPR) == 0 {
		errs = append(errs, flagError("bloom_fpr", "", "must list at least one rate"))
	}
	if d := c.LatencyDir; d != "" {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			errs = append(errs, flagError("latency_dir", d, "must be an existing directory"))
		} else if err := syscall.Access(d, 2 /* W_OK */); err != nil {
			errs = append(errs, flagError("latency_dir", d, "is not writable: "+err.Error()))
		}
	}
	return errs
}

// echo writes the load settings as configuration lines.
func (c *LoadConfig) echo(e *Env, line func(string, any)) {
	line("rates", c.Rates.String())
	line("write-rate", c.WriteRate)
	line("load-time", c.LoadTime)
	line("load-workers", c.LoadWorkers)
	line("load-latency", "HDR histogram of every operation due in the window, ns from its intended start (open loop, coordinated omission corrected); the backlog runs after the window for up to one more window, then any operation not started counts as unrun at its wait so far")
	line("slo-p99", c.SLO)
	line("knee", fmt.Sprintf("from %d ops/s doubling, then %d bisection steps, %s, sustained = every operation due in the window done and p99 of all of them <= slo in each of %d trials (the first failed trial fails the rate)", c.KneeStart, c.KneeSteps, c.kneeTrialRule(), kneeTrials))
	line("sst-tables", c.SSTTables)
	line("bloom-fpr", c.BloomFPR.String())
	if c.LatencyDir != "" {
		line("latency-dir", c.LatencyDir)
	}
}

// kneeTrialRule states how long a knee trial lasts.
func (c *LoadConfig) kneeTrialRule() string {
	if c.KneeFlushes == 0 {
		return fmt.Sprintf("%v per trial", c.KneeTime)
	}
	return fmt.Sprintf("%v per trial (upserts on an LSM: long enough to fill %d memtables, at most %v)", c.KneeTime, c.KneeFlushes, c.KneeMaxTime)
}

// init derives what the workloads need once per run, after validation.
func (c *LoadConfig) init(e *Env) error { return nil }

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
