package workload

import (
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/measure"
)

// Disk measures the device under -dir in the same run as the engines: the
// ceiling their numbers are read against (seed 001 ran fio by hand for
// this; docs/methodology.md, "Reading engine results against the device").
func init() {
	core.Register(&core.Workload{
		Name: "Disk",
		// The prepared file and the one op=seqwrite-fsync writes.
		Scratch: func(e *core.Env, _ engine.Info) int64 { return 2 * diskFileSize(e) },
		Units: []core.Unit{core.Higher("ops/s"), core.Lower("p50-ns"), core.Lower("p99-ns"), core.Lower("p999-ns"),
			core.Lower("fsync-ms"), core.Info("file-MiB")},
		Run: func(b *testing.B, e *core.Env, _ engine.Info) { disk(b, e) },
	})
}

func disk(b *testing.B, e *core.Env) {
	e.ClearSettings() // these results belong to no engine
	dir := e.ScratchDir("disk")
	fatalIf(b, os.MkdirAll(dir, 0o755))
	defer e.Root.RemoveAll(dir)
	size := diskFileSize(e)
	e.Logf("disk: preparing a %s file in %s", core.Human(size), dir)
	path, err := measure.PrepareFile(dir, size)
	fatalIf(b, err)
	for _, threads := range e.Cfg.Threads {
		b.Run(core.SubName("op", "randread-4k", "threads", threads), func(b *testing.B) {
			b.SetBytes(4 << 10)
			b.ResetTimer()
			r, err := measure.RandomReadsDirect(path, threads, b.N)
			b.StopTimer()
			if errors.Is(err, measure.ErrNoDirectIO) {
				why := fmt.Sprintf("-dir cannot do direct I/O, so the device cannot be measured apart from the page cache: %v", err)
				// said without -test.v too: the summary has no disk column then
				e.WarnOnce("disk direct I/O", "disk: op=randread-4k skipped: %s", why)
				b.Skip(why)
			}
			fatalIf(b, err)
			if r.Ops != int64(b.N) || r.Bytes != int64(b.N)<<12 {
				b.Fatalf("%d reads of %d bytes, want %d of 4 KiB", r.Ops, r.Bytes, b.N)
			}
			b.ReportMetric(r.IOPS, "ops/s")
			r.Latency.Report(b.ReportMetric)
		})
	}
	b.Run("op=seqwrite-fsync", func(b *testing.B) {
		b.SetBytes(size)
		b.StopTimer()
		for i := 0; i < b.N; i++ {
			pattern := measure.WritePattern(size) // random bytes, made untimed
			b.StartTimer()
			r, err := measure.SeqWriteFsync(dir, size, pattern)
			b.StopTimer()
			fatalIf(b, err)
			if r.Bytes != size {
				b.Fatalf("wrote %d bytes, want %d", r.Bytes, size)
			}
			b.ReportMetric(float64(r.Fsync.Nanoseconds())/1e6, "fsync-ms")
			os.Remove(r.Path)
		}
		b.ReportMetric(float64(size)/(1<<20), "file-MiB")
	})
	// The warning waits for the parent: a line written inside the
	// sub-benchmark would split its result line.
	var cached, reads int64
	b.Run("op=seqread", func(b *testing.B) {
		b.SetBytes(size)
		reads = int64(b.N)
		evict := func() (int64, error) { // and how many bytes stayed cached
			if _, err := measure.EvictFile(path); err != nil {
				return 0, err
			}
			res, _, err := measure.Resident(path)
			return res, err
		}
		cached = seqReads(b, size, evict, func() (measure.DiskResult, error) { return measure.SeqRead(path) })
		b.ReportMetric(float64(size)/(1<<20), "file-MiB")
	})
	if cached > 0 {
		e.WarnOnce("seqread", "disk: %s of the file was still cached when reading began; op=seqread is not the device alone", core.Human(cached/reads))
	}
}

// seqReads times b.N reads of a size-byte file, read, each after evict
// (untimed) drops it from the page cache; it returns the bytes that
// stayed cached, summed.
func seqReads(b *testing.B, size int64, evict func() (int64, error), read func() (measure.DiskResult, error)) (cached int64) {
	b.StopTimer()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c, err := evict()
		fatalIf(b, err)
		cached += c
		b.StartTimer()
		r, err := read()
		b.StopTimer()
		fatalIf(b, err)
		if r.Bytes != size {
			b.Fatalf("read %d bytes, want %d", r.Bytes, size)
		}
	}
	return cached
}

// diskFileSize is the data set's size in whole MiB, at least 64 MiB so
// short runs still reach past a device's own cache.
func diskFileSize(e *core.Env) int64 {
	n := max(e.Gen.LogicalBytes(), 64<<20)
	return (n + 1<<20 - 1) &^ (1<<20 - 1)
}
