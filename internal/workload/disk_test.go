package workload

import (
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/core/coretest"
	"github.com/kvbench/kvbench/internal/measure"
)

// TestSeqReadTimesTheReadAlone: Disk's op=seqread evicts the file and
// checks what stayed cached with the timer stopped. An eviction that
// takes 20ms against a read that takes none must leave the timed total
// far below 20ms a round, and every round's leftover is summed.
func TestSeqReadTimesTheReadAlone(t *testing.T) {
	const size, evictTime = 1 << 20, 20 * time.Millisecond
	coretest.SetBenchtime(t, "5x")
	var evicts, reads int
	var cached int64
	r := testing.Benchmark(func(b *testing.B) {
		evict := func() (int64, error) {
			evicts++
			time.Sleep(evictTime)
			return 100, nil
		}
		read := func() (measure.DiskResult, error) {
			reads++
			if evicts != reads {
				b.Fatalf("read %d came after %d evictions", reads, evicts)
			}
			return measure.DiskResult{Bytes: size}, nil
		}
		cached = seqReads(b, size, evict, read)
	})
	if r.N != 5 {
		t.Fatalf("the benchmark failed (N=%d)", r.N)
	}
	if cached != 500 {
		t.Errorf("%d bytes left cached in all, want 5 rounds of 100", cached)
	}
	if r.T >= evictTime {
		t.Errorf("5 rounds timed %v in all: the 20ms evictions are inside the timer", r.T)
	}
}
