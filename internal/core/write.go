package core

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/measure"
)

// Source is a data set entries are written from.
type Source interface {
	Len() uint64
	ValueSize() int
	LogicalBytes() int64
	// Entry is entry i, the same on every call, built in kb
	// (dataset.KeySize bytes) and vb (ValueSize()).
	Entry(i uint64, kb, vb []byte) (key, value []byte)
	// NewChecker verifies entries read back: every byte when full, else
	// a value's length and a few words.
	NewChecker(full bool) Checker
}

// Checker verifies entries read back from a store: it fails for a key not
// in the data set or a value not that key's.
type Checker interface {
	CheckKV(key, value []byte) error
	CheckKey(key []byte) error
}

// GenSource is the run's data set of random keys.
type GenSource struct{ G *dataset.Gen }

func (s GenSource) Len() uint64         { return s.G.Keys }
func (s GenSource) ValueSize() int      { return s.G.ValueSize }
func (s GenSource) LogicalBytes() int64 { return s.G.LogicalBytes() }
func (s GenSource) Entry(i uint64, kb, vb []byte) ([]byte, []byte) {
	return s.G.Key(kb, i), s.G.Value(vb, i)
}
func (s GenSource) NewChecker(full bool) Checker { return genChecker{s.G.NewChecker(full), s.G} }

type genChecker struct {
	*dataset.Checker
	g *dataset.Gen
}

func (c genChecker) CheckKey(k []byte) error {
	if _, ok := c.g.Index(k); !ok {
		return fmt.Errorf("key %q is not in the data set", k)
	}
	return nil
}

// WriteAll writes every entry of src in batches of batchSize. Writer w of
// writers takes every writers-th batch, so each batch holds keys from all
// over the key space. label names the work in progress lines.
func (e *Env) WriteAll(db engine.DB, src Source, batchSize, writers int, label string) error {
	_, err := e.WriteAllTimed(db, src, batchSize, writers, 0, label)
	return err
}

// WriteTimes is how a write of the data set went over time: the rate of
// its first and last tenth of entries (a write that slows as the data
// outgrows memory shows it), and its commits' rate and p99 per interval.
type WriteTimes struct {
	FirstRate, LastRate float64 // entries per second; 0 when too few entries to tell
	Intervals           []measure.Interval
}

// WriteAllTimed is WriteAll, timing the first and the last tenth of the
// entries (one clock read per batch) and, when every > 0, every commit,
// for the intervals of every (measure.Intervals).
func (e *Env) WriteAllTimed(db engine.DB, src Source, batchSize, writers int, every time.Duration, label string) (WriteTimes, error) {
	n := src.Len()
	var done atomic.Int64
	start := time.Now()
	tenth := int64(n / 10)
	// Nanoseconds from start until done reached a tenth, and nine tenths
	// (with the count then).
	var firstAt, lastAt, lastFrom atomic.Int64
	mark := func(v int64) {
		if tenth == 0 {
			return
		}
		if v >= tenth && firstAt.Load() == 0 {
			firstAt.CompareAndSwap(0, int64(time.Since(start)))
		}
		if v >= int64(n)-tenth && lastAt.Load() == 0 && lastAt.CompareAndSwap(0, int64(time.Since(start))) {
			lastFrom.Store(v)
		}
	}
	stop := e.progress(label, n, &done)
	defer stop()
	nBatches := (n + uint64(batchSize) - 1) / uint64(batchSize)
	errs := make([]error, writers)
	var tls []*measure.Timeline
	if every > 0 {
		tls = make([]*measure.Timeline, writers)
		for w := range tls {
			tls[w] = measure.NewTimeline(int(nBatches)/writers + 1)
		}
	}
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			kb := make([]byte, dataset.KeySize)
			vb := make([]byte, src.ValueSize())
			for bi := uint64(w); bi < nBatches; bi += uint64(writers) {
				batch := db.NewBatch()
				lo, hi := bi*uint64(batchSize), min((bi+1)*uint64(batchSize), n)
				for i := lo; i < hi; i++ {
					if err := batch.Set(src.Entry(i, kb, vb)); err != nil {
						errs[w] = err
						return
					}
				}
				t0 := time.Now()
				if err := batch.Commit(); err != nil {
					errs[w] = fmt.Errorf("commit of entries %d..%d: %w", lo, hi, err)
					return
				}
				if tls != nil {
					tls[w].Add(t0, time.Since(t0), int(hi-lo))
				}
				mark(done.Add(int64(hi - lo)))
			}
		}(w)
	}
	wg.Wait()
	endAt := time.Now()
	end := endAt.Sub(start)
	for _, err := range errs {
		if err != nil {
			return WriteTimes{}, err
		}
	}
	if got := done.Load(); got != int64(n) {
		return WriteTimes{}, fmt.Errorf("wrote %d entries, want %d", got, n)
	}
	var wt WriteTimes
	if tls != nil {
		iv, err := measure.Intervals(tls, start, endAt, every)
		if err != nil {
			return WriteTimes{}, err
		}
		wt.Intervals = iv
	}
	if f := firstAt.Load(); f > 0 {
		wt.FirstRate = float64(tenth) / time.Duration(f).Seconds()
	}
	if l, from := lastAt.Load(), lastFrom.Load(); l > 0 && int64(n) > from && end > time.Duration(l) {
		wt.LastRate = float64(int64(n)-from) / (end - time.Duration(l)).Seconds()
	}
	return wt, nil
}

// progress reports a long write on Log before benchmarks run: a live
// line on a terminal, else a rate line every few seconds (badger-bench's).
func (e *Env) progress(label string, total uint64, done *atomic.Int64) (stop func()) {
	if e.Running.Load() {
		return func() {}
	}
	tty := false
	if f, ok := e.Log.(*os.File); ok {
		fi, _ := f.Stat()
		tty = fi != nil && fi.Mode()&os.ModeCharDevice != 0
	}
	every := 5 * time.Second
	if tty {
		every = 500 * time.Millisecond
	}
	quit := make(chan struct{})
	finished := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		last, lastAt := int64(0), start
		for {
			select {
			case <-quit:
				if tty {
					fmt.Fprintln(e.Log)
				}
				return
			case now := <-t.C:
				n := done.Load()
				rate := float64(n-last) / now.Sub(lastAt).Minutes()
				last, lastAt = n, now
				left := timeLeft(n, int64(total), now.Sub(start))
				if tty {
					pct := 100 * float64(n) / float64(total)
					bar := strings.Repeat("=", int(pct/5)) + strings.Repeat(" ", 20-int(pct/5))
					fmt.Fprintf(e.Log, "\r%s [%s] %5.1f%% %s of %s keys, %s keys/min, %s left   ", label, bar, pct, count(n), count(int64(total)), count(int64(rate)), left)
				} else {
					fmt.Fprintf(e.Log, "%s [%04.0fs] Write key rate per minute: %s. Total: %s of %s, %s left\n", label, now.Sub(start).Seconds(), count(int64(rate)), count(n), count(int64(total)), left)
				}
			}
		}
	}()
	return func() { close(quit); <-finished }
}

// timeLeft is what the rest of total should take at the rate so far.
func timeLeft(done, total int64, elapsed time.Duration) string {
	if done <= 0 {
		return "?"
	}
	return (time.Duration(float64(elapsed) * float64(total-done) / float64(done))).Round(time.Second).String()
}

func count(n int64) string {
	switch {
	case n >= 1e6:
		return fmt.Sprintf("%.2fM", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.2fK", float64(n)/1e3)
	}
	return strconv.FormatInt(n, 10)
}
