package kvbench

import (
	"flag"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// rateList is a comma-separated list of operations per second.
type rateList []int

func rateFlag(name, def, usage string) *rateList {
	l := &rateList{}
	if err := l.Set(def); err != nil {
		panic(err)
	}
	flag.Var(l, name, usage)
	return l
}

func (l *rateList) String() string {
	s := make([]string, len(*l))
	for i, v := range *l {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ",")
}

func (l *rateList) Set(v string) error {
	var out rateList
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

// maxRate bounds every rate flag: far above what one machine serves, low
// enough that a typo does not schedule billions of operations.
const maxRate = 100_000_000

// fprList is a list of Bloom filter false-positive rates; 0 is "off".
type fprList []float64

func fprFlag(name, def, usage string) *fprList {
	l := &fprList{}
	if err := l.Set(def); err != nil {
		panic(err)
	}
	flag.Var(l, name, usage)
	return l
}

func (l *fprList) String() string {
	s := make([]string, len(*l))
	for i, v := range *l {
		s[i] = fprName(v)
	}
	return strings.Join(s, ",")
}

func (l *fprList) Set(v string) error {
	var out fprList
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

func fprName(p float64) string {
	if p == 0 {
		return "off"
	}
	return strconv.FormatFloat(p, 'g', -1, 64)
}

// validateLoadFlags checks the load flags without touching the disk.
func validateLoadFlags() []error {
	var errs []error
	if r := *flagWriteRate; r < 1 || r > maxRate {
		errs = append(errs, flagError("write_rate", r, fmt.Sprintf("must be from 1 to %d operations per second", maxRate)))
	}
	for name, d := range map[string]time.Duration{"load_time": *flagLoadTime, "knee_time": *flagKneeTime} {
		if d < time.Millisecond || d > 24*time.Hour {
			errs = append(errs, flagError(name, d, "must be from 1ms to 24h"))
		}
	}
	if w := *flagLoadWorkers; w < 1 || w > 4096 {
		errs = append(errs, flagError("load_workers", w, "must be from 1 to 4096"))
	}
	if s := *flagSLO; s <= 0 || s > time.Hour {
		errs = append(errs, flagError("slo", s, "must be more than 0 and at most 1h"))
	}
	if r := *flagKneeStart; r < 1 || r > maxRate {
		errs = append(errs, flagError("knee_start", r, fmt.Sprintf("must be from 1 to %d operations per second", maxRate)))
	}
	if s := *flagKneeSteps; s < 0 || s > 20 {
		errs = append(errs, flagError("knee_steps", s, "must be from 0 to 20"))
	}
	if n := *flagSSTTables; n < 1 || n > 10_000 {
		errs = append(errs, flagError("sst_tables", n, "must be from 1 to 10000"))
	} else if uint64(n) > uint64(math.Round(*flagKeysMil*1e6)) {
		errs = append(errs, flagError("sst_tables", n, "must not exceed the number of keys (-keys_mil)"))
	}
	if d := *flagLatencyDir; d != "" {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			errs = append(errs, flagError("latency_dir", d, "must be an existing directory"))
		} else if err := syscall.Access(d, 2 /* W_OK */); err != nil {
			errs = append(errs, flagError("latency_dir", d, "is not writable: "+err.Error()))
		}
	}
	return errs
}

// printLoadConfig echoes the load flags as configuration lines.
func printLoadConfig(line func(string, any)) {
	line("rates", flagRate.String())
	line("write-rate", *flagWriteRate)
	line("load-time", *flagLoadTime)
	line("load-workers", *flagLoadWorkers)
	line("load-latency", "HDR histogram of every operation, ns from its intended start (open loop, coordinated omission corrected)")
	line("slo-p99", *flagSLO)
	line("knee", fmt.Sprintf("from %d ops/s doubling, then %d bisection steps, %s per trial, sustained = achieved >= %g%% of target and p99 <= slo", *flagKneeStart, *flagKneeSteps, *flagKneeTime, 100*kneeTolerance))
	line("sst-tables", *flagSSTTables)
	line("bloom-fpr", flagBloomFPR.String())
	if *flagLatencyDir != "" {
		line("latency-dir", *flagLatencyDir)
	}
}
