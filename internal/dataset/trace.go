package dataset

import "fmt"

// The trace data set of seed 000: keys "TTTTT:SSSS", a trace and a span ID,
// as a tail-based sampler keys its events; a lookup asks for a trace's
// spans by the prefix "TTTTT:".
const (
	TraceFirst    = 10000 // first trace ID
	TraceStep     = 10    // trace IDs are TraceFirst, TraceFirst+10, ...
	MaxTraces     = 9000  // up to trace ID 99990
	SpanFirst     = 1000  // first span ID of every trace
	SpanStep      = 100   // span IDs are 1000, 1100, ..., 9900
	SpansPerTrace = 90

	TracePrefixSize = 6  // "TTTTT:"
	TraceKeySize    = 10 // "TTTTT:SSSS"
)

// Traces generates the trace data set: N traces of SpansPerTrace spans,
// their values a Gen's of index trace*SpansPerTrace+span.
type Traces struct {
	N   int  // number of trace IDs, 1..MaxTraces
	Gen *Gen // values; Gen.Keys is N*SpansPerTrace
}

// NewTraces returns the data set of n trace IDs with values of valueSize
// bytes.
func NewTraces(n, valueSize int, valueRatio float64, seed uint64) (*Traces, error) {
	if n < 1 || n > MaxTraces {
		return nil, fmt.Errorf("dataset: %d traces out of range 1..%d", n, MaxTraces)
	}
	g, err := New(Spec{Keys: uint64(n) * SpansPerTrace, ValueSize: valueSize, ValueRatio: valueRatio, Seed: seed})
	if err != nil {
		return nil, err
	}
	return &Traces{N: n, Gen: g}, nil
}

// Keys is the number of keys in the data set.
func (t *Traces) Keys() uint64 { return t.Gen.Keys }

// LogicalBytes is the size of all keys and values.
func (t *Traces) LogicalBytes() int64 {
	return int64(t.Gen.Keys) * int64(TraceKeySize+t.Gen.ValueSize)
}

// Index is the value index of span s (0..SpansPerTrace-1) of trace tr.
func (t *Traces) Index(tr, s int) uint64 { return uint64(tr)*SpansPerTrace + uint64(s) }

// Key writes the key of span s of trace tr into dst (TraceKeySize bytes)
// and returns it; keys sort by trace, then span.
func (t *Traces) Key(dst []byte, tr, s int) []byte {
	t.Prefix(dst, tr, true)
	putDigits(dst[TracePrefixSize:TraceKeySize], SpanFirst+SpanStep*s)
	return dst[:TraceKeySize]
}

// Prefix writes the lookup prefix of trace tr into dst (TracePrefixSize
// bytes): its ID, or for a miss the ID plus one, which no trace has and
// which sorts right after tr's keys (an unbounded iterator lands on the next
// trace's first key, as in the seed).
func (t *Traces) Prefix(dst []byte, tr int, hit bool) []byte {
	dst = dst[:TracePrefixSize]
	id := TraceFirst + TraceStep*tr
	if !hit {
		id++
	}
	putDigits(dst[:5], id)
	dst[5] = ':'
	return dst
}

// putDigits writes v in decimal into all of dst, zero-padded.
func putDigits(dst []byte, v int) {
	for i := len(dst) - 1; i >= 0; i-- {
		dst[i] = byte('0' + v%10)
		v /= 10
	}
}
