package embedded

import (
	"io"
	"testing"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/core/coretest"
	"github.com/kvbench/kvbench/internal/records"
)

// recordRail is the cdb's records in memory, logging the keys an Embed
// body gets.
type recordRail struct{ log *coretest.KeyLog }

func (r recordRail) get(key []byte, i uint64) error {
	r.log.Add(key)
	var kb [records.MaxKeySize]byte
	if string(records.Key(kb[:0], i)) != string(key) {
		return io.ErrUnexpectedEOF
	}
	return nil
}
func (recordRail) scan(limit uint64) (uint64, error) { return limit, nil }
func (recordRail) close() error                      { return nil }

// TestEmbedGetCallsReadTheirOwnKeys holds EmbedGet's body to the rule of
// core.CallStreams (coretest.CheckCalls).
func TestEmbedGetCallsReadTheirOwnKeys(t *testing.T) {
	coretest.SetBenchtime(t, "50x")
	coretest.CheckCalls(t, "EmbedGet", func(seed uint64) [][]string {
		c := core.Default()
		c.Seed = seed
		e, err := core.NewEnv(c, io.Discard, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		log := &coretest.KeyLog{}
		for range 2 {
			r := testing.Benchmark(func(b *testing.B) {
				log.Mark()
				embedGet(b, e, recordRail{log}, nil, 1000, true)
			})
			if r.N != 50 {
				t.Fatalf("the benchmark failed (N=%d)", r.N)
			}
		}
		return log.Calls()
	})
}
