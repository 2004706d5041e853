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
// goroutines, a -hit_rate share of them for keys that exist, in every
// -cache state. Warm, one op is one read; cold, one op is a round of
// -cold_ops reads on a fixture just evicted and reopened (ColdRounds), and
// every per-op figure is still per read. Every hit is verified; a miss key
// that is found, or a hit key that is not, fails the benchmark.
func init() {
	core.Register(&core.Workload{
		Name:     "ReadRandom",
		Engines:  core.Everything,
		Fixtures: kvFixture,
		Units: append(append([]core.Unit{core.Info("hit%"), core.Higher("mem-hit%"), core.Lower("sched-p99-ns"), core.Higher("ops/s"), core.Lower("cpu-ns/op"),
			core.Lower("open-ms"), core.Lower("open-read-B")}, core.DiskUnits...), core.LatencyUnits...),
		Options: append([]core.Option{hitRateFlag}, distOptions...),
		Run: func(b *testing.B, e *core.Env, info engine.Info) {
			h := e.Open(b, e.KVFor(info))
			list := dists(&e.Cfg, "uniform")
			for _, cache := range h.Caches() {
				for _, d := range list {
					p, err := keyDist(&e.Cfg, d, e.Keys)
					if err != nil {
						b.Fatal(err)
					}
					for _, hit := range hitRateFlag.Get(&e.Cfg) {
						for _, threads := range e.Cfg.Threads {
							n := e.Shape() + "/" + core.SubName("cache", cache) + "/" + distLevel(d) +
								core.SubName("hit", core.TrimFloat(hit*100)+"%", "threads", threads)
							rr := readRandomRun{threads: threads, hitRate: hit, dist: p, countIO: cache == core.Cold || e.Budget() != nil}
							h.Run(b, n, cache, nil, func(b *testing.B, db engine.DB) {
								if cache == core.Cold {
									readRandomCold(b, e, h, rr)
								} else {
									readRandom(b, e, db, rr)
								}
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
	// countIO reports mem-hit%, the share of sampled reads that read
	// nothing from the device: cold and in a memory budget, where reads
	// take microseconds and the two getrusage calls of a sample do not
	// weigh (warm, they would).
	countIO bool
}

// readStream is one reader goroutine's reads: its own random keys,
// checker, latency samples and tally, kept across the rounds of a cold
// leaf. Padded so streams never share a cache line.
type readStream struct {
	_          [64]byte
	g          *dataset.Gen
	hitRate    float64
	smp        *keydist.Sampler // nil: uniform
	rng        dataset.Rand
	chk        *dataset.Checker
	lat        *measure.Recorder
	check      func([]byte) error // s.checkValue, bound once
	idx        uint64             // the key Get is reading
	phase      int64              // samplePhase: which op numbers are timed
	kb         [dataset.KeySize]byte
	ops, found int64
	bytes      int64
	err        error
	// countIO: each sampled read also counts whether it went to the
	// device (memHits of ioSampled did not); its goroutine is locked to
	// its thread, whose counters these are.
	countIO            bool
	ioSampled, memHits int64
	ru                 unix.Rusage
	_                  [64]byte
}

// threadIO is the calling thread's reads from the device so far: blocks
// read (read_bytes/512, whatever the engine read them with) and major
// faults (a mapped page fetched).
func (s *readStream) threadIO() int64 {
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &s.ru); err != nil {
		return -1
	}
	return s.ru.Inblock + s.ru.Majflt
}

// newReadStreams makes one stream per reader goroutine, each recording
// latencies into lats[t], from the round's streams rs.
func newReadStreams(e *core.Env, rs core.Streams, lats []*measure.Recorder, rr readRandomRun) []*readStream {
	out := make([]*readStream, len(lats))
	for t := range out {
		s := &readStream{g: e.Gen, hitRate: rr.hitRate, rng: rs.Rand(uint64(t) + 1000),
			chk: e.Gen.NewChecker(e.FullCheck), lat: lats[t]}
		if rr.dist != nil && rr.dist.Kind != keydist.Uniform {
			s.smp = rr.dist.NewSampler()
		}
		s.phase = core.SamplePhase(&s.rng)
		s.countIO = rr.countIO
		s.check = s.checkValue
		out[t] = s
	}
	return out
}

func (s *readStream) checkValue(v []byte) error {
	s.bytes += int64(len(v))
	return s.chk.Check(s.idx, v) // Get returns it
}

// read does n reads through rd; it stops at the first error, in s.err.
// Its ops count on from the stream's earlier reads, which with the
// stream's phase choose the sampled ones.
func (s *readStream) read(rd engine.Reader, n int) {
	if s.countIO {
		runtime.LockOSThread() // threadIO's counters are this thread's
		defer runtime.UnlockOSThread()
	}
	g := s.g
	op, phase := s.ops, s.phase
	defer func() { s.ops = op }()
	for end := op + int64(n); op < end; op++ {
		if s.smp != nil {
			s.idx = s.smp.Next(&s.rng, g.Keys)
		} else {
			s.idx = s.rng.Below(g.Keys)
		}
		hit := s.rng.Float64() < s.hitRate
		var key []byte
		if hit {
			key = g.Key(s.kb[:], s.idx)
		} else {
			key = g.MissKey(s.kb[:], s.idx)
		}
		sampled := (op+phase)&core.LatencySampleMask == 0
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
			s.lat.Record(time.Since(t0))
			if s.countIO {
				s.ioSampled++
				if s.threadIO() == io0 {
					s.memHits++
				}
			}
		}
		if err != nil {
			s.err = err
			return
		}
		if found != hit {
			s.err = fmt.Errorf("key %d (hit=%v): found=%v", s.idx, hit, found)
			return
		}
		if found {
			s.found++
		}
	}
}

// newRecorders makes one latency recorder per thread.
func newRecorders(threads int) []*measure.Recorder {
	lats := make([]*measure.Recorder, threads)
	for t := range lats {
		lats[t] = measure.NewRecorder()
	}
	return lats
}

// readRandom times b.N reads of an open db, warm.
func readRandom(b *testing.B, e *core.Env, db engine.DB, rr readRandomRun) {
	readers, lats := core.NewReaders(b, db, rr.threads)
	streams := newReadStreams(e, e.CallStreams(b), lats, rr)
	timed := core.TimeLoop(b, rr.threads, core.SimReads, func(t, n int) { streams[t].read(readers[t], n) },
		func() (func(t, n int), func()) {
			warm := newReadStreams(e, e.CallStreams(b), newRecorders(rr.threads), rr)
			return func(t, n int) { warm[t].read(readers[t], n) }, func() {
				for _, s := range warm {
					if s.err != nil {
						b.Fatalf("warm-up read: %v", s.err)
					}
				}
			}
		})
	reportReads(b, streams, int64(b.N), timed.Elapsed, timed.Disk, timed.CPU)
}

// readRandomCold times b.N cold rounds of -cold_ops reads each, split
// across threads; each round's readers are opened on its fresh db and
// closed after it, untimed.
func readRandomCold(b *testing.B, e *core.Env, h *core.Handle, rr readRandomRun) {
	perRound := e.Cfg.ColdRoundOps()
	streams := newReadStreams(e, e.CallStreams(b), newRecorders(rr.threads), rr)
	timed := h.ColdReaders(b, rr.threads, perRound, func(t, n int, rd engine.Reader) { streams[t].read(rd, n) })
	ops := int64(b.N) * int64(perRound)
	timed.ReportPerOp(b, ops)
	reportReads(b, streams, ops, timed.Elapsed, timed.Disk, timed.CPU)
}

// reportReads checks the streams' tallies (ops reads in all) and reports
// their figures over the timed elapsed, disk bytes and CPU time.
func reportReads(b *testing.B, streams []*readStream, ops int64, elapsed time.Duration, disk core.DiskCounters, cpu time.Duration) {
	var done, found, bytes, sampled, memHits int64
	lats := make([]*measure.Recorder, len(streams))
	for i, s := range streams {
		if s.err != nil {
			b.Fatalf("reader %d: %v", i, s.err)
		}
		done += s.ops
		found += s.found
		bytes += s.bytes
		sampled += s.ioSampled
		memHits += s.memHits
		lats[i] = s.lat
	}
	if done != ops {
		b.Fatalf("%d reads done, want %d", done, ops)
	}
	b.ReportMetric(100*float64(found)/float64(ops), "hit%")
	b.ReportMetric(float64(ops)/elapsed.Seconds(), "ops/s")
	b.ReportMetric(float64(bytes)/1e6/elapsed.Seconds(), "MB/s")
	disk.Report(b, ops)
	if sampled > 0 {
		b.ReportMetric(100*float64(memHits)/float64(sampled), "mem-hit%")
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(ops), "cpu-ns/op") // robust to other processes' load
	measure.Merge(lats...).Report(b.ReportMetric)                        // p50-ns, p99-ns, p999-ns of the sampled reads
}
