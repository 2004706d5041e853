package kvbench

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
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
	line("knee", fmt.Sprintf("from %d ops/s doubling, then %d bisection steps, %s per trial, sustained = achieved >= %g%% of target and p99 <= slo, failed = %d trials in a row not sustained", *flagKneeStart, *flagKneeSteps, *flagKneeTime, 100*kneeTolerance, kneeTrials))
	line("sst-tables", *flagSSTTables)
	line("bloom-fpr", flagBloomFPR.String())
	if *flagLatencyDir != "" {
		line("latency-dir", *flagLatencyDir)
	}
}

func TestLoadFlagsFailBeforeAnyWork(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary")
	}
	dir := t.TempDir()
	before := treeState(t, dir)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-rate", "0"}, "-rate"},
		{[]string{"-rate", "10,x"}, "-rate"},
		{[]string{"-write_rate", "0"}, "-write_rate 0: must be from 1"},
		{[]string{"-load_time", "0s"}, "-load_time 0s: must be from 1ms"},
		{[]string{"-knee_time", "-1s"}, "-knee_time -1s: must be from 1ms"},
		{[]string{"-load_workers", "0"}, "-load_workers 0: must be from 1"},
		{[]string{"-slo", "0s"}, "-slo 0s: must be more than 0"},
		{[]string{"-knee_start", "0"}, "-knee_start 0: must be from 1"},
		{[]string{"-knee_steps", "21"}, "-knee_steps 21: must be from 0 to 20"},
		{[]string{"-sst_tables", "0"}, "-sst_tables 0: must be from 1"},
		{[]string{"-sst_tables", "200", "-keys_mil", "0.0001"}, "-sst_tables 200: must not exceed the number of keys"},
		{[]string{"-bloom_fpr", "off,1.5"}, "-bloom_fpr"},
		{[]string{"-latency_dir", filepath.Join(dir, "missing")}, "-latency_dir " + filepath.Join(dir, "missing") + ": must be an existing directory"},
	} {
		out, code := runSelf(t, append([]string{"-test.bench=BenchmarkKneeBolt", "-dir", dir}, c.args...)...)
		if code == 0 || !strings.Contains(out, c.want) {
			t.Errorf("%v: exit %d, output %q; want an error containing %q", c.args, code, out, c.want)
		}
	}
	if after := treeState(t, dir); !reflect.DeepEqual(before, after) {
		t.Errorf("bad flags changed -dir")
	}
}

// TestLatencySpectrumFile: -latency_dir gets one HdrHistogram spectrum per
// fixed-rate sub-benchmark, named after it, with every operation in it.
func TestLatencySpectrumFile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary")
	}
	dir := t.TempDir()
	out, code := runSelf(t, "-test.bench=BenchmarkLoadMemory/op=get-hit", "-test.benchtime=1x",
		"-keys_mil", "0.001", "-rate", "2000", "-load_time", "100ms", "-latency_dir", dir)
	if code != 0 || !strings.Contains(out, "achieved-ops/s") || !strings.Contains(out, "p9999-ns") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "BenchmarkLoadMemory_op=get-hit_rate=2000.hgrm"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if !strings.Contains(s, "Percentile") || !strings.Contains(s, "1/(1-Percentile)") {
		t.Fatalf("not a percentile spectrum:\n%s", s)
	}
	// 100ms at 2000/s is 200 operations (a busy machine may leave the last
	// few untaken); the footer counts them.
	_, tail, _ := strings.Cut(s, "Total count")
	var n int
	if _, err := fmt.Sscanf(strings.TrimLeft(tail, " ="), "%d", &n); err != nil || n < 100 || n > 200 {
		t.Errorf("spectrum holds %d operations (%v), want up to 200:\n%s", n, err, s[max(0, len(s)-300):])
	}
}
