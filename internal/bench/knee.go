package bench

import (
	"fmt"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/load"
)

// Knee: the highest rate an engine sustains under the -slo p99, found by
// a search of fixed-rate trials (gets, or upserts on a copy of the
// fixture).
func init() {
	Register(&Workload{
		Name:     "Knee",
		Engines:  Everything,
		Fixtures: kvFixture,
		Scratch:  loadScratch,
		Units:    []Unit{Higher("knee-ops/s"), Lower("knee-p99-ns")},
		Gate:     []string{"knee-ops/s"},
		Run: func(b *testing.B, e *Env, info engine.Info) {
			h := e.Open(b, e.KVFor(info))
			for _, op := range []string{"get", "upsert"} {
				var up upserts // across every time testing runs the sub-benchmark
				n := fmt.Sprintf("op=%s/slo=%v", op, e.Cfg.Load.SLO)
				e.loadLeaf(b, h, n, op == "upsert", func(b *testing.B, db engine.DB) { runKnee(b, e, db, op, &up) })
			}
		},
	})
}

// kneeTrials is how many trials a rate must pass, every one of them, to
// count as sustained; the first failed trial fails it. Requiring all makes
// the knee a rate the engine held each time it was tried: luck (a trial
// that missed a compaction) cannot raise it, and a stall of a shared
// machine lowers it.
const kneeTrials = 2

// sustained is the knee's pass rule for one trial: every operation due in
// the window ran and is in the histogram (none left unrun at the hard
// stop, none missing), and the p99 of all of them, from their due times,
// is within the SLO. With every operation counted from its due time, that
// p99 also bounds how far the run fell behind the rate.
func (c *LoadConfig) sustained(res *load.Result) bool {
	return res.Complete() && time.Duration(res.Latency.Percentile(99)) <= c.SLO
}

// findKnee raises the rate from -knee_start, doubling, until a rate is not
// sustained, then bisects between the last sustained and the first failed
// rate for -knee_steps steps (or until they are within 1%). A rate is
// sustained when kneeTrials trials in a row sustain it. It returns the
// highest sustained rate (0 if even the lowest tried failed) and, of its
// trials, the one with the higher p99. logf receives one line per trial.
func (c *LoadConfig) findKnee(trial func(rate int) (*load.Result, error), logf func(format string, args ...any)) (int, *load.Result, error) {
	try := func(rate int) (bool, *load.Result, error) {
		var worst *load.Result
		for n := 1; n <= kneeTrials; n++ {
			res, err := trial(rate)
			if err != nil {
				return false, nil, err
			}
			ok := c.sustained(res)
			verdict := fmt.Sprintf("sustained (trial %d of %d)", n, kneeTrials)
			if !ok {
				verdict = fmt.Sprintf("not sustained (trial %d of %d)", n, kneeTrials)
			}
			logf("knee: %d ops/s: achieved %.0f, %d of %d done, p99 %v: %s", rate, res.Achieved(), res.Done, res.Scheduled, time.Duration(res.Latency.Percentile(99)), verdict)
			if !ok {
				return false, res, nil
			}
			if worst == nil || res.Latency.Percentile(99) > worst.Latency.Percentile(99) {
				worst = res
			}
		}
		return true, worst, nil
	}
	lo, hi := 0, 0
	var best *load.Result
	for rate := c.KneeStart; ; rate *= 2 {
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
	for s := 0; s < c.KneeSteps && hi-lo > max(1, lo/100); s++ {
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
// search per b.N iteration (their mean is reported). Each trial is one
// fixed-rate window of -knee_time with load's default drain.
func runKnee(b *testing.B, e *Env, db engine.DB, op string, up *upserts) {
	c := &e.Cfg.Load
	ws := e.newLoadWorkers(db, e.CallStreams(b), c.LoadWorkers, 4000)
	defer closeLoadWorkers(ws)
	trial := func(rate int) (*load.Result, error) {
		lc := load.Config{Rate: float64(rate), Duration: c.KneeTime, Workers: c.LoadWorkers}
		if op == "get" {
			return load.Run(lc, func(w int, _ uint64) error { return ws[w].get(true) })
		}
		return up.run(e, lc, func(w int, idx uint64) error { return ws[w].put(idx) })
	}
	b.ResetTimer()
	var sum, p99 float64
	for n := 0; n < b.N; n++ {
		// b.Logf, not the progress log: its lines follow the result line,
		// a line printed while the benchmark runs would split it.
		knee, res, err := c.findKnee(trial, b.Logf)
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
