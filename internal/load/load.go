// Package load runs operations on an open-loop schedule at a fixed rate and
// records each one's latency from the moment it was due, as wrk2 does
// (coordinated omission corrected), or back to back (Closed), the
// closed-loop way, for comparison. Every operation due in the window runs,
// however late, until a hard stop; the window, the stop and the counts are
// docs/methodology.md's, "Fixed-rate load and the knee".
package load

import (
	"cmp"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kvbench/kvbench/internal/measure"
)

// Op runs one operation. worker is the goroutine (0..Workers-1), so an Op
// can keep per-worker state without locks; seq numbers operations of one
// run from 0, each exactly once.
type Op func(worker int, seq uint64) error

// Config is one run.
type Config struct {
	Rate     float64       // operations per second (Run only)
	Duration time.Duration // the measured window: operations are due inside it
	Workers  int           // goroutines taking operations, like wrk2's connections
	// Drain is how long after the window operations due in it may still
	// start (Run only); 0 is one more window. An engine that serves at
	// least half the rate works off its backlog within one window.
	Drain time.Duration
	// Prepare, when set, is called by worker w before its first operation
	// and after each (Run only), outside the operation's timing: what
	// the next operation needs of the harness, such as its key.
	Prepare func(w int)
}

// Result is what a run measured. Latency and Service are merged from the
// workers after the run.
type Result struct {
	Target    float64 // Config.Rate (0 for Closed)
	Scheduled int64   // operations due within the window
	Done      int64   // operations completed: seq 0..Done-1
	// Unrun counts operations due within the window that the run never
	// started because Drain ran out: Scheduled = Done + Unrun.
	Unrun int64
	// Elapsed runs from the start to the last completion or the hard stop,
	// whichever is later, and is at least the window.
	Elapsed time.Duration
	// Latency holds one value per scheduled operation: from its intended
	// start to its end (coordinated omission corrected), or, for an unrun
	// one, to the hard stop. Closed records service time here.
	Latency *measure.Recorder
	// Service runs from each operation's actual start to its end: what a
	// closed-loop timer would report.
	Service *measure.Recorder
	// Lag is how late the generator itself started operations that were
	// not held back by earlier ones: its own timing error.
	Lag *measure.Recorder
}

// Achieved is the completed operations per second over Elapsed. An engine
// that keeps up achieves the target, less the share of the window its last
// operation's latency adds; one that does not achieves its service rate.
func (r *Result) Achieved() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Done) / r.Elapsed.Seconds()
}

// Complete reports whether every scheduled operation ran and is in Latency.
func (r *Result) Complete() bool {
	return r.Unrun == 0 && r.Done == r.Scheduled && r.Latency.Count() == r.Scheduled
}

func (c Config) check(open bool) error {
	if open && !(c.Rate > 0 && c.Rate <= 1e9) {
		return fmt.Errorf("load: rate %v out of (0, 1e9]", c.Rate)
	}
	if c.Duration <= 0 {
		return fmt.Errorf("load: duration %v must be positive", c.Duration)
	}
	if c.Workers < 1 {
		return fmt.Errorf("load: %d workers", c.Workers)
	}
	if c.Drain < 0 {
		return fmt.Errorf("load: drain %v must not be negative", c.Drain)
	}
	return nil
}

// worker is one goroutine's tally; padded so workers share no cache line.
type worker struct {
	lat, svc, lag *measure.Recorder
	done          int64
	last          int64 // ns from start to its last completion
	err           error
	_             [64]byte
}

// do runs operation i on worker w and records it: its latency from due,
// its service time from began (ns since start). It returns when the
// operation ended, and false after an error, which it keeps.
func (me *worker) do(op Op, w int, i uint64, start time.Time, due, began int64) (end int64, ok bool) {
	if err := op(w, i); err != nil {
		me.err = fmt.Errorf("operation %d: %w", i, err)
		return 0, false
	}
	end = int64(time.Since(start))
	me.lat.RecordNanos(end - due)
	me.svc.RecordNanos(end - began)
	me.done++
	me.last = end
	return end, true
}

// goEach runs body on a goroutine of its own for each worker; wait waits
// for them all.
func goEach(ws []worker, body func(w int, me *worker)) (wait func()) {
	var wg sync.WaitGroup
	for w := range ws {
		wg.Go(func() { body(w, &ws[w]) })
	}
	return wg.Wait
}

func newWorkers(n int) []worker {
	ws := make([]worker, n)
	for i := range ws {
		ws[i].lat, ws[i].svc, ws[i].lag = measure.NewRecorder(), measure.NewRecorder(), measure.NewRecorder()
	}
	return ws
}

// Run calls op at c.Rate for c.Duration: operation i is due at
// start + i/Rate, and every i due in the window is issued. The clock (the
// caller's goroutine) waits for each due time and hands the operation to
// the next free worker, which records its latency from the due time; while
// every worker is busy the clock waits too, and the latencies show it.
// After the window it hands out the backlog as workers free up, until
// c.Drain past the window (the hard stop), and records each operation never
// handed out in Latency (hard stop less due time) and Unrun. An operation
// handed out always runs (the completed ones are seq 0..Done-1), and the
// first always is: a pause past the hard stop leaves one done, not none.
// The first error from op stops the run.
//
// Only the clock sleeps to a due time: workers park on a channel, holding
// no processor (one asleep in a system call would hold one, and with more
// workers than GOMAXPROCS the others would start late).
func Run(c Config, op Op) (*Result, error) {
	if err := c.check(true); err != nil {
		return nil, err
	}
	interval := float64(time.Second) / c.Rate
	window := int64(c.Duration)
	scheduled := int64(float64(window) / interval)
	if float64(scheduled)*interval < float64(window) {
		scheduled++
	}
	deadline := window + int64(cmp.Or(c.Drain, c.Duration)) // nothing is handed out after it
	ws := newWorkers(c.Workers)
	unrun := measure.NewRecorder() // the clock's: operations never handed out
	slots := make(chan uint64)     // unbuffered: the clock waits for a free worker
	var stop atomic.Bool
	start := time.Now()
	wait := goEach(ws, func(w int, me *worker) {
		prevEnd := int64(0)
		if c.Prepare != nil {
			c.Prepare(w)
		}
		for i := range slots {
			if stop.Load() {
				continue // drain until the clock stops
			}
			now := int64(time.Since(start))
			due := int64(float64(i) * interval)
			// Lateness of an operation this worker was free to start
			// on time is the generator's own error, not queueing.
			if prevEnd <= due {
				me.lag.RecordNanos(now - due)
			}
			end, ok := me.do(op, w, i, start, due, now)
			if !ok {
				stop.Store(true)
				continue
			}
			prevEnd = end
			if c.Prepare != nil {
				c.Prepare(w)
			}
		}
	})
	i, stopped := uint64(0), int64(0)
	for ; i < uint64(scheduled) && !stop.Load(); i++ {
		now := waitUntil(start, int64(float64(i)*interval))
		if now >= deadline && i > 0 { // the first always runs: no window measures nothing
			stopped = now
			break
		}
		slots <- i
	}
	close(slots)
	if stopped > 0 {
		for j := i; j < uint64(scheduled); j++ {
			unrun.RecordNanos(stopped - int64(float64(j)*interval))
		}
	}
	wait()
	r, err := collect(ws, c, scheduled)
	if r != nil {
		r.Unrun = unrun.Count()
		r.Latency = measure.Merge(r.Latency, unrun)
		r.Elapsed = max(r.Elapsed, time.Duration(stopped))
	}
	return r, err
}

// Closed runs op back to back on c.Workers goroutines for c.Duration, at
// least once on each, and records each operation's service time: the
// closed-loop measurement, in which a stalled operation also stops the
// clock for the operations it holds back.
func Closed(c Config, op Op) (*Result, error) {
	if err := c.check(false); err != nil {
		return nil, err
	}
	c.Rate = 0
	window := int64(c.Duration)
	ws := newWorkers(c.Workers)
	var next atomic.Uint64
	var stop atomic.Bool
	start := time.Now()
	goEach(ws, func(w int, me *worker) {
		// Each worker runs at least one operation, so that a worker
		// the machine started after the window still measures one.
		now := int64(time.Since(start))
		for !stop.Load() {
			end, ok := me.do(op, w, next.Add(1)-1, start, now, now)
			if !ok {
				stop.Store(true)
				return
			}
			if now = end; now >= window {
				return
			}
		}
	})()
	r, err := collect(ws, c, 0)
	if r != nil {
		r.Scheduled = r.Done
	}
	return r, err
}

func collect(ws []worker, c Config, scheduled int64) (*Result, error) {
	r := &Result{Target: c.Rate, Scheduled: scheduled, Elapsed: c.Duration}
	var lat, svc, lag []*measure.Recorder
	var errs []error
	for i := range ws {
		w := &ws[i]
		if w.err != nil {
			errs = append(errs, fmt.Errorf("worker %d: %w", i, w.err))
		}
		r.Done += w.done
		r.Elapsed = max(r.Elapsed, time.Duration(w.last))
		lat, svc, lag = append(lat, w.lat), append(svc, w.svc), append(lag, w.lag)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	r.Latency, r.Service, r.Lag = measure.Merge(lat...), measure.Merge(svc...), measure.Merge(lag...)
	return r, nil
}

// Waiting thresholds. time.Sleep wakes about 1ms late for short sleeps on
// Linux; nanosleep with the thread's timer slack at 1ns, within about 20µs;
// the last stretch is spun, yielding, so an operation starts within a few
// µs of its due time without burning a core on long waits.
const (
	sleepAbove     = 1500 * time.Microsecond // time.Sleep for waits longer than this ...
	sleepShort     = 1200 * time.Microsecond // ... stopping this far before the due time
	nanosleepAbove = 80 * time.Microsecond   // nanosleep for waits longer than this ...
	nanosleepShort = 40 * time.Microsecond   // ... stopping this far before
)

// waitUntil blocks until due ns after start and returns the ns since start
// at which it returned.
func waitUntil(start time.Time, due int64) int64 {
	for {
		now := int64(time.Since(start))
		d := due - now
		switch {
		case d <= 0:
			return now
		case d > int64(sleepAbove):
			time.Sleep(time.Duration(d - int64(sleepShort)))
		case d > int64(nanosleepAbove):
			// The slack belongs to the thread, which may be another one
			// each time; setting it costs less than the wait it sharpens.
			syscall.RawSyscall(syscall.SYS_PRCTL, unix.PR_SET_TIMERSLACK, 1, 0)
			ts := syscall.NsecToTimespec(d - int64(nanosleepShort))
			syscall.Nanosleep(&ts, nil)
		default:
			runtime.Gosched()
		}
	}
}
