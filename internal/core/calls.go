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

// callSalt keeps a call's seed apart from the data set's streams.
const callSalt = 0x6b76_6361_6c6c_7321 // "kvcalls!"

// CallStreams counts a new call of b and returns its streams: once per
// call of the body, before the timer starts.
func (e *Env) CallStreams(b *testing.B) Streams {
	e.mu.Lock()
	e.calls[b.Name()]++
	n := e.calls[b.Name()]
	e.mu.Unlock()
	return e.StreamsOfCall(n)
}

// Calls is how many calls of the benchmark name ("" is
// testing.Benchmark's) CallStreams counted.
func (e *Env) Calls(name string) uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.calls[name]
}

// StreamsOfCall are the streams of call n (from 1) of any benchmark.
func (e *Env) StreamsOfCall(n uint64) Streams {
	r := dataset.NewRand(e.Cfg.Seed^callSalt, n)
	return Streams{seed: r.Uint64()}
}

// Rand is the call's random stream number stream.
func (s Streams) Rand(stream uint64) dataset.Rand { return dataset.NewRand(s.seed, stream) }

// LatencySample is how many of a stream's point reads a recorded latency
// stands for, at a phase drawn per call (so not always the first read
// after an open): timing every read would cost more than some reads.
const LatencySample = 32

// Stream is one goroutine's part of a call: its random numbers (Rand) and
// the latencies it records (Lat), of the ops Sampled picks.
type Stream struct {
	dataset.Rand
	Lat         *measure.Recorder
	phase, mask int64
}

// Threads are n streams, numbered from first, one per goroutine, each
// with an empty latency recorder and timing one op in every (a power of
// two) from a phase drawn first from the stream.
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

// Sampled reports whether the stream records op number op's latency.
func (s *Stream) Sampled(op int64) bool { return (op+s.phase)&s.mask == 0 }
