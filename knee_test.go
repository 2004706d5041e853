package kvbench

import (
	"fmt"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/load"
	"github.com/kvbench/kvbench/internal/measure"
)

// kneeTolerance is the share of its target rate a run must achieve to count
// as sustained.
const kneeTolerance = 0.99

// sustained is the knee's pass rule: the rate was achieved and p99 stayed
// under the SLO.
func sustained(res *load.Result) bool {
	return res.Sustained(kneeTolerance) && time.Duration(res.Latency.Percentile(99)) <= *flagSLO
}

// kneeTrials is how many trials in a row must fail a rate before the knee
// search counts it as not sustained: one stall of a shared machine should
// not end the search.
const kneeTrials = 2

// findKnee raises the rate from -knee_start, doubling, until a rate is not
// sustained, then bisects between the last sustained and the first failed
// rate for -knee_steps steps (or until they are within 1%). A rate fails
// when kneeTrials trials in a row fail it. It returns the highest sustained
// rate (0 if even the lowest tried failed) and its passing trial's result.
func findKnee(trial func(rate int) (*load.Result, error)) (int, *load.Result, error) {
	try := func(rate int) (bool, *load.Result, error) {
		for n := 1; ; n++ {
			res, err := trial(rate)
			if err != nil {
				return false, nil, err
			}
			ok := sustained(res)
			verdict := "sustained"
			if !ok {
				verdict = fmt.Sprintf("not sustained (trial %d of %d)", n, kneeTrials)
			}
			logf("knee: %d ops/s: achieved %.0f, p99 %v: %s", rate, res.Achieved(), time.Duration(res.Latency.Percentile(99)), verdict)
			if ok || n == kneeTrials {
				return ok, res, nil
			}
		}
	}
	lo, hi := 0, 0
	var best *load.Result
	for rate := *flagKneeStart; ; rate *= 2 {
		ok, res, err := try(rate)
		if err != nil {
			return 0, nil, err
		}
		if !ok {
			hi = rate
			break
		}
		lo, best = rate, res
		if rate > maxRate/2 {
			return lo, best, nil
		}
	}
	for s := 0; s < *flagKneeSteps && hi-lo > max(1, lo/100); s++ {
		mid := lo + (hi-lo)/2
		ok, res, err := try(mid)
		if err != nil {
			return 0, nil, err
		}
		if ok {
			lo, best = mid, res
		} else {
			hi = mid
		}
	}
	return lo, best, nil
}

// runKnee is the body of BenchmarkKnee<Engine>/op=get|upsert: one knee
// search per b.N iteration (their mean is reported).
func runKnee(b *testing.B, title, op string) {
	db, closeDB := openLoadDB(b, title, op == "upsert")
	defer closeDB()
	ws := newLoadWorkers(db, *flagLoadWorkers, 4000)
	defer closeLoadWorkers(ws)
	upserted := uint64(0)
	trial := func(rate int) (*load.Result, error) {
		c := load.Config{Rate: float64(rate), Duration: *flagKneeTime, Workers: *flagLoadWorkers}
		if op == "get" {
			return load.Run(c, func(w int, _ uint64) error { return ws[w].get(true) })
		}
		base := cfg.gen.Keys + upserted
		r, err := load.Run(c, func(w int, seq uint64) error { return ws[w].put(base + seq) })
		if r != nil {
			upserted += uint64(r.Done) // seq 0..Done-1 were written
		}
		return r, err
	}
	b.ResetTimer()
	var sum, p99 float64
	for n := 0; n < b.N; n++ {
		knee, res, err := findKnee(trial)
		if err != nil {
			b.Fatal(err)
		}
		sum += float64(knee)
		if res != nil {
			p99 += float64(res.Latency.Percentile(99))
		}
	}
	b.StopTimer()
	b.ReportMetric(0, "ns/op") // a search has no per-operation time
	b.ReportMetric(sum/float64(b.N), "knee-ops/s")
	b.ReportMetric(p99/float64(b.N), "knee-p99-ns")
}

func benchKnee(b *testing.B, title string) {
	for _, op := range []string{"get", "upsert"} {
		b.Run(fmt.Sprintf("op=%s/slo=%v", op, *flagSLO), func(b *testing.B) { runKnee(b, title, op) })
	}
}

func BenchmarkKneeBadger(b *testing.B)  { benchKnee(b, "Badger") }
func BenchmarkKneeBolt(b *testing.B)    { benchKnee(b, "Bolt") }
func BenchmarkKneeLmdb(b *testing.B)    { benchKnee(b, "Lmdb") }
func BenchmarkKneeRocksDB(b *testing.B) { benchKnee(b, "RocksDB") }
func BenchmarkKneePebble(b *testing.B)  { benchKnee(b, "Pebble") }
func BenchmarkKneeMemory(b *testing.B)  { benchKnee(b, "Memory") }

// TestFindKnee runs the search against a synthetic engine that serves up
// to capacity operations per second, once stalling on a rate it can
// serve: the stall is retried, and the knee lands just under capacity.
func TestFindKnee(t *testing.T) {
	defer func(start, steps int, slo time.Duration) {
		*flagKneeStart, *flagKneeSteps, *flagSLO = start, steps, slo
	}(*flagKneeStart, *flagKneeSteps, *flagSLO)
	*flagKneeStart, *flagKneeSteps, *flagSLO = 1000, 6, 10*time.Millisecond
	const capacity = 45_000
	var tried []int
	trial := func(rate int) (*load.Result, error) {
		tried = append(tried, rate)
		lat := measure.NewRecorder()
		done := min(rate, capacity)
		p99 := time.Millisecond
		if len(tried) == 3 { // one stall of the machine at a rate it can serve
			p99 = time.Second
		}
		for i := 0; i < 100; i++ {
			lat.Record(p99)
		}
		return &load.Result{Target: float64(rate), Scheduled: int64(rate), Done: int64(done), Elapsed: time.Second, Latency: lat}, nil
	}
	knee, res, err := findKnee(trial)
	if err != nil {
		t.Fatal(err)
	}
	// Doubling: 1k 2k 4k(stall, retried) 4k 8k 16k 32k 64k(x2); then six
	// bisection steps between 32k and 64k.
	if knee > capacity || knee < capacity*95/100 || res == nil || res.Target != float64(knee) {
		t.Fatalf("knee %d (tried %v), want just under %d", knee, tried, capacity)
	}
	if tried[2] != tried[3] {
		t.Errorf("a stalled trial was not retried: %v", tried)
	}
}
