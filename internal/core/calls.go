package core

import (
	"testing"

	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/measure"
)

// Each call of a benchmark body draws from streams of its own, derived
// from -seed and the call's number alone: docs/methodology.md, "Random
// keys and -seed".

// Streams hands out the random streams of one call.
type Streams struct{ seed uint64 }

// callSalt keeps the derivation of a call's seed apart from the data
// set's own streams.
const callSalt = 0x6b76_6361_6c6c_7321 // "kvcalls!"

// CallStreams counts a new call of the benchmark b is and returns its
// streams. Call it once per call of the body, before the timer starts.
func (e *Env) CallStreams(b *testing.B) Streams {
	e.mu.Lock()
	e.calls[b.Name()]++
	n := e.calls[b.Name()]
	e.mu.Unlock()
	return e.StreamsOfCall(n)
}

// Calls is how many calls of the benchmark named name CallStreams has
// counted ("" is testing.Benchmark's): a test finds the call it ran.
func (e *Env) Calls(name string) uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.calls[name]
}

// StreamsOfCall are the streams of call n (from 1) of any benchmark: a
// test draws again what a call drew.
func (e *Env) StreamsOfCall(n uint64) Streams {
	r := dataset.NewRand(e.Cfg.Seed^callSalt, n)
	return Streams{seed: r.Uint64()}
}

// Rand is random stream number stream of the call. Workloads number their
// streams apart (one per goroutine).
func (s Streams) Rand(stream uint64) dataset.Rand { return dataset.NewRand(s.seed, stream) }

// LatencySample is how many of a stream's point reads each recorded
// latency stands for: 1 in 32, at a phase drawn per call, so the first
// read after an open is not always among them. Timing every op would cost
// more than some reads (a time.Now pair is ~150 ns on some VMs); the
// configuration's latency-sample line states it.
const LatencySample = 32

// Stream is one goroutine's part of a call: its random numbers (Rand) and
// the latencies it records (Lat), of the ops Sampled picks.
type Stream struct {
	dataset.Rand
	Lat         *measure.Recorder
	phase, mask int64
}

// Threads are n streams, numbered first to first+n-1, one per goroutine,
// each with an empty latency recorder and timing one op in every: 1 times
// each (a scan), LatencySample one read in 32, from a phase drawn first
// from the stream.
func (s Streams) Threads(first uint64, n, every int) []Stream {
	out := make([]Stream, n)
	for t := range out {
		st := Stream{Rand: s.Rand(first + uint64(t)), Lat: measure.NewRecorder(), mask: int64(every - 1)}
		if every > 1 {
			st.phase = int64(st.Uint64()) & st.mask
		}
		out[t] = st
	}
	return out
}

// Sampled reports whether op number op of the stream (counted from the
// call's first) is one whose latency is recorded.
func (s *Stream) Sampled(op int64) bool { return (op+s.phase)&s.mask == 0 }
