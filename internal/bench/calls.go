package bench

import (
	"testing"

	"github.com/kvbench/kvbench/internal/dataset"
)

// testing calls every (sub-)benchmark body several times: with b.N = 1,
// then with larger b.N until the run is long enough, and all of that
// again for each -count repetition. Each call draws its random keys from
// streams of its own, so a warm call does not re-read exactly what the
// previous one cached, and calls are independent samples. The streams are
// derived from -seed and the call's number alone, counted per benchmark
// name from 1 in each process: the same -seed gives the same sequence of
// streams, and call k of a benchmark reads the same keys on every engine.

// Streams hands out the random streams of one call.
type Streams struct{ seed uint64 }

// callSalt keeps the derivation of a call's seed apart from the data
// set's own streams.
const callSalt = 0x6b76_6361_6c6c_7321 // "kvcalls!"

// CallStreams counts a new call of the benchmark b is and returns its
// streams. Call it once per call of the body, before the timer starts.
func (e *Env) CallStreams(b *testing.B) Streams {
	e.mu.Lock()
	if e.calls == nil {
		e.calls = map[string]uint64{}
	}
	e.calls[b.Name()]++
	n := e.calls[b.Name()]
	e.mu.Unlock()
	return e.callStreams(n)
}

// callStreams are the streams of call n (from 1) of any benchmark.
func (e *Env) callStreams(n uint64) Streams {
	r := dataset.NewRand(e.Cfg.Seed^callSalt, n)
	return Streams{seed: r.Uint64()}
}

// Rand is random stream number stream of the call. Workloads number their
// streams apart (one per goroutine).
func (s Streams) Rand(stream uint64) dataset.Rand { return dataset.NewRand(s.seed, stream) }

// samplePhase picks which reads of a stream are timed: those whose op
// number plus the phase is a multiple of LatencySampleMask+1. Drawn per
// call, so the first read after an open is not always among them.
func samplePhase(r *dataset.Rand) int64 { return int64(r.Uint64() & LatencySampleMask) }
