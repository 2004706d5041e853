package core

import (
	"runtime"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/measure"
)

// A cache=cold leaf reads in rounds, one per op (docs/methodology.md,
// "What a cold round is"): the fixture closed, evicted and reopened,
// untimed but reported (open-ms, open-read-B), then a fixed work, timed.

// OpenCost is what one open of a fixture cost: its wall time and the
// bytes the process read from the device meanwhile.
type OpenCost struct {
	Time      time.Duration
	ReadBytes int64
}

// TimeOpen runs open, of a source just evicted, and returns its cost.
func TimeOpen(open func() error) (OpenCost, error) {
	io0, _ := measure.ReadIO()
	t0 := time.Now()
	err := open()
	d := time.Since(t0)
	io1, _ := measure.ReadIO()
	return OpenCost{Time: d, ReadBytes: io1.Sub(io0).ReadBytes}, err
}

// Reopen starts a cold round, timer stopped: it closes the db, evicts the
// fixture's files and opens it again with its options as tweak changes
// them, returning the db (the handle's to close) and the open's cost. A
// db Run opened cold that nothing has read yet is returned as it is.
func (h *Handle) Reopen(b *testing.B, tweak func(*engine.Options)) (engine.DB, OpenCost) {
	b.Helper()
	if h.f.Engine.Reference {
		b.Fatalf("%s has no files: it has no cold state", h.f.Engine.Name)
	}
	if o := h.Options(tweak); !h.fresh || h.db == nil || h.key != optionsKey(o) {
		h.open(b, Cold, o, false)
	}
	h.fresh = false
	return h.db, h.cost
}

// Timed is what the timed parts of a leaf's loop or rounds cost, summed.
type Timed struct {
	Ops        int64         // operations: b.N, or every round's (TimeLoop)
	Elapsed    time.Duration // b.Elapsed()
	Disk       DiskCounters  // device bytes read and major faults
	CPU        time.Duration // the process's user and system CPU time
	Mallocs    uint64        // heap allocations
	AllocBytes uint64        // heap bytes allocated
}

// ColdRounds runs a cache=cold leaf: b.N rounds, each on the fixture just
// reopened (Reopen). Untimed, round(db) readies a round and returns run,
// its work, which alone is timed, and done (nil, or called after run).
// Call it first in a leaf h.Run started, leaving the db Run gave unread
// (the first round's), and leave the timer to it. It reports open-ms and
// open-read-B, a round's open's mean, and returns what run cost.
func (h *Handle) ColdRounds(b *testing.B, tweak func(*engine.Options), round func(db engine.DB) (run, done func())) Timed {
	b.Helper()
	return RunColdRounds(b, func() (func(), func(), OpenCost) {
		db, c := h.Reopen(b, tweak)
		run, done := round(db)
		return run, done, c
	})
}

// RunColdRounds is ColdRounds for a source that is not a fixture's engine
// (a file the workload opens itself): b.N rounds, each readied by start,
// untimed, with its run alone timed; open-ms and open-read-B from start's
// OpenCost.
func RunColdRounds(b *testing.B, start func() (run, done func(), open OpenCost)) Timed {
	b.StopTimer()
	b.ResetTimer()
	var t Timed
	var opens OpenCost
	var ms runtime.MemStats
	for i := 0; i < b.N; i++ {
		run, done, c := start()
		opens.Time += c.Time
		opens.ReadBytes += c.ReadBytes
		d0 := sampleDisk()
		cpu0 := measure.CPUTime()
		runtime.ReadMemStats(&ms)
		m0, a0 := ms.Mallocs, ms.TotalAlloc
		b.StartTimer()
		run()
		b.StopTimer()
		runtime.ReadMemStats(&ms)
		t.Mallocs += ms.Mallocs - m0
		t.AllocBytes += ms.TotalAlloc - a0
		t.CPU += measure.CPUTime() - cpu0
		t.Disk = t.Disk.Add(sampleDisk().Sub(d0))
		if done != nil {
			done()
		}
	}
	t.Ops, t.Elapsed = int64(b.N), b.Elapsed()
	b.ReportMetric(float64(opens.Time.Nanoseconds())/1e6/float64(b.N), "open-ms")
	if ReadsCounted() {
		b.ReportMetric(float64(opens.ReadBytes)/float64(b.N), "open-read-B")
	}
	return t
}

// ReportPerOp reports ns/op, B/op and allocs/op per op of the leaf's kind
// (a read, a seek), ops in all, not per round: as the warm leaf's.
func (t Timed) ReportPerOp(b *testing.B, ops int64) {
	b.ReportAllocs()
	b.ReportMetric(float64(t.Elapsed.Nanoseconds())/float64(ops), "ns/op")
	b.ReportMetric(float64(t.AllocBytes)/float64(ops), "B/op")
	b.ReportMetric(float64(t.Mallocs)/float64(ops), "allocs/op")
}
