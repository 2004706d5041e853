package workload

import (
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/keydist"
	"github.com/kvbench/kvbench/internal/measure"
)

// ReadRandom: point reads on the engine's fixture, split across -threads
// goroutines, a -hit_rate share for keys that exist, every one verified
// (docs/methodology.md, "The read benchmarks", "What a cold round is").
func init() {
	core.Register(&core.Workload{
		Name:     "ReadRandom",
		Engines:  core.Everything,
		Fixtures: kvFixture,
		Units: append(append([]core.Unit{core.Info("hit%"), core.Higher("mem-hit%"), core.Higher("ops/s"), core.Lower("cpu-ns/op")},
			core.LoopUnits...), core.LatencyUnits...),
		Options: append([]core.Option{hitRateFlag}, distOptions...),
		Run: func(b *testing.B, e *core.Env, info engine.Info) {
			h := e.Open(b, e.KVFor(info))
			for _, cache := range h.Caches() {
				for _, d := range dists(&e.Cfg, "uniform") {
					p := keyDist(b, e, d)
					for _, hit := range hitRateFlag.Get(&e.Cfg) {
						for _, threads := range e.Cfg.Threads {
							name := e.LeafName("cache", cache, "dist", distName(d), "hit", core.TrimFloat(hit*100)+"%", "threads", threads)
							rr := readRandomRun{threads: threads, hitRate: hit, dist: p, countIO: cache == core.Cold || e.Budget() != nil}
							h.Run(b, name, cache, nil, func(b *testing.B, _ engine.DB) {
								// A stream per goroutine for the timed loop, and
								// fresh ones for simulation mode's warm-up pass.
								streams := newReadStreams(e, e.CallStreams(b), rr)
								warm := func() func(t, n int, rd engine.Reader) error { return newReadStreams(e, e.CallStreams(b), rr).read }
								reportReads(b, streams, h.TimeLoop(b, cache, threads, core.SimReads, streams.read, warm))
							})
						}
					}
				}
			}
		},
	})
}

// kvFixture declares the shared fixture of the run's data set: what every
// workload that reads it returns from Workload.Fixtures.
func kvFixture(e *core.Env, info engine.Info) []*core.Fixture {
	if info.Reference {
		return nil // the rail loads the data set into memory
	}
	return []*core.Fixture{e.KVFor(info)}
}

// hitRateFlag is -hit_rate: one sub-benchmark per share of hits.
var hitRateFlag = &core.Flag[core.FloatList]{Name: "hit_rate", Default: core.FloatList{0.63},
	Usage: "comma-separated fractions of random reads that ask for a key that exists, one sub-benchmark each (0,0.63,1 adds the all-miss and all-hit cases)",
	Check: func(rates core.FloatList, _ *core.Config) error {
		var errs []error
		for _, h := range rates {
			if !(h >= 0 && h <= 1) {
				errs = append(errs, core.FlagError("hit_rate", h, "must be from 0 to 1"))
			}
		}
		return errors.Join(errs...)
	}}

// readRandomRun is one leaf's dimensions.
type readRandomRun struct {
	threads int
	hitRate float64
	dist    *keydist.Params // nil or uniform: every key alike
	countIO bool            // report mem-hit% (docs/workloads.md, "Memory budget: mem-hit%")
}

// readStream is one reader goroutine's reads: its own random keys and
// latency samples (core.Stream), checker and tally, kept across the
// rounds of a cold leaf. Padded so streams never share a cache line.
type readStream struct {
	_ [64]byte
	core.Stream
	g       *dataset.Gen
	hitRate float64
	smp     *keydist.Sampler // nil: uniform
	chk     *dataset.Checker
	check   func([]byte) error // verifies against idx, counting bytes; bound once
	idx     uint64             // the key Get is reading
	kb      [dataset.KeySize]byte
	ops     int64 // counted across the call, which with the stream's phase picks the sampled ones
	found   int64
	bytes   int64
	// countIO: sampled reads also count device reads (memHits of
	// ioSampled had none), on the goroutine's locked thread.
	countIO            bool
	ioSampled, memHits int64
	ru                 unix.Rusage
	_                  [64]byte
}

// readStreams are a leaf's reader goroutines' streams, one each.
type readStreams []*readStream

// threadIO is the calling thread's reads from the device so far: blocks
// read (read_bytes/512, whatever the engine read them with) and major
// faults (a mapped page fetched).
func (s *readStream) threadIO() int64 {
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &s.ru); err != nil {
		return -1
	}
	return s.ru.Inblock + s.ru.Majflt
}

// newReadStreams makes a stream per reader goroutine from rs.
func newReadStreams(e *core.Env, rs core.Streams, rr readRandomRun) readStreams {
	out := make(readStreams, rr.threads)
	for t, st := range rs.Threads(1000, rr.threads, core.LatencySample) {
		s := &readStream{Stream: st, g: e.Gen, hitRate: rr.hitRate, chk: e.Gen.NewChecker(e.FullCheck), countIO: rr.countIO}
		if rr.dist != nil && rr.dist.Kind != keydist.Uniform {
			s.smp = rr.dist.NewSampler()
		}
		s.check = func(v []byte) error {
			s.bytes += int64(len(v))
			return s.chk.Check(s.idx, v) // Get returns it
		}
		out[t] = s
	}
	return out
}

// read does n reads of goroutine t's stream through rd, stopping at an
// error; its ops count on from earlier reads (which choose the sampled).
func (ss readStreams) read(t, n int, rd engine.Reader) error {
	s := ss[t]
	if s.countIO {
		runtime.LockOSThread() // threadIO's counters are this thread's
		defer runtime.UnlockOSThread()
	}
	g := s.g
	op := s.ops
	defer func() { s.ops = op }()
	for end := op + int64(n); op < end; op++ {
		if s.smp != nil {
			s.idx = s.smp.Next(&s.Rand, g.Keys)
		} else {
			s.idx = s.Rand.Below(g.Keys)
		}
		hit := s.Rand.Float64() < s.hitRate
		var key []byte
		if hit {
			key = g.Key(s.kb[:], s.idx)
		} else {
			key = g.MissKey(s.kb[:], s.idx)
		}
		sampled := s.Sampled(op)
		var t0 time.Time
		var io0 int64
		if sampled {
			if s.countIO {
				io0 = s.threadIO()
			}
			t0 = time.Now()
		}
		found, err := rd.Get(key, s.check)
		if sampled {
			s.Lat.Record(time.Since(t0))
			if s.countIO {
				s.ioSampled++
				if s.threadIO() == io0 {
					s.memHits++
				}
			}
		}
		if err != nil {
			return err
		}
		if found != hit {
			return fmt.Errorf("key %d (hit=%v): found=%v", s.idx, hit, found)
		}
		if found {
			s.found++
		}
	}
	return nil
}

// reportReads checks the streams' tallies against the loop's and reports their figures.
func reportReads(b *testing.B, streams readStreams, timed core.Timed) {
	var done, found, bytes, sampled, memHits int64
	lats := make([]*measure.Recorder, len(streams))
	for i, s := range streams {
		done += s.ops
		found += s.found
		bytes += s.bytes
		sampled += s.ioSampled
		memHits += s.memHits
		lats[i] = s.Lat
	}
	reportLoop(b, timed, "reads", done, bytes, lats)
	ops := float64(timed.Ops)
	b.ReportMetric(100*float64(found)/ops, "hit%")
	b.ReportMetric(ops/timed.Elapsed.Seconds(), "ops/s")
	if sampled > 0 {
		b.ReportMetric(100*float64(memHits)/float64(sampled), "mem-hit%")
	}
	b.ReportMetric(float64(timed.CPU.Nanoseconds())/ops, "cpu-ns/op") // robust to other processes' load
}

// reportLoop fails b unless the streams did the loop's operations (done
// of what) and reports their MB/s and sampled latencies.
func reportLoop(b *testing.B, timed core.Timed, what string, done, bytes int64, lats []*measure.Recorder) {
	if done != timed.Ops {
		b.Fatalf("%d %s done, want %d", done, what, timed.Ops)
	}
	b.ReportMetric(float64(bytes)/1e6/timed.Elapsed.Seconds(), "MB/s")
	measure.Merge(lats...).Report(b.ReportMetric)
}
