package kvbench

import (
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/kvbench/kvbench/internal/measure"
)

// BenchmarkDisk measures the device under -dir in the same run as the
// engines, so every report carries the ceiling its engine numbers should
// be read against (seed 001 ran fio by hand for this; see
// docs/methodology.md):
//
//   - op=randread-4k: 4 KiB reads at random aligned offsets with O_DIRECT,
//     at every -threads value (the queue depth);
//   - op=seqwrite-fsync: a file the size of the data set written in 1 MiB
//     writes, then fsynced;
//   - op=seqread: the same size read from start to end after eviction.
func BenchmarkDisk(b *testing.B) {
	dir := scratchDir("disk")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	defer cfg.root.RemoveAll(dir)
	size := diskFileSize()
	logf("disk: preparing a %s file in %s", human(size), dir)
	path, err := measure.PrepareFile(dir, size)
	if err != nil {
		b.Fatal(err)
	}
	for _, threads := range flagThreads {
		b.Run(fmt.Sprintf("op=randread-4k/threads=%d", threads), func(b *testing.B) {
			b.SetBytes(4 << 10)
			b.ResetTimer()
			r, err := measure.RandomReadsDirect(path, threads, b.N)
			b.StopTimer()
			if errors.Is(err, measure.ErrNoDirectIO) {
				b.Skipf("-dir cannot do direct I/O, so the device cannot be measured apart from the page cache: %v", err)
			}
			if err != nil {
				b.Fatal(err)
			}
			if r.Ops != int64(b.N) || r.Bytes != int64(b.N)<<12 {
				b.Fatalf("%d reads of %d bytes, want %d of 4 KiB", r.Ops, r.Bytes, b.N)
			}
			b.ReportMetric(r.IOPS, "ops/s")
			r.Latency.Report(b.ReportMetric)
		})
	}
	b.Run("op=seqwrite-fsync", func(b *testing.B) {
		b.SetBytes(size)
		for i := 0; i < b.N; i++ {
			r, err := measure.SeqWriteFsync(dir, size)
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if r.Bytes != size {
				b.Fatalf("wrote %d bytes, want %d", r.Bytes, size)
			}
			b.ReportMetric(float64(r.Fsync.Nanoseconds())/1e6, "fsync-ms")
			os.Remove(r.Path)
			b.StartTimer()
		}
		b.ReportMetric(float64(size)/(1<<20), "file-MiB")
	})
	b.Run("op=seqread", func(b *testing.B) {
		b.SetBytes(size)
		var cached int64
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			if _, err := measure.EvictFile(path); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			r, err := measure.SeqRead(path)
			if err != nil {
				b.Fatal(err)
			}
			if r.Bytes != size {
				b.Fatalf("read %d bytes, want %d", r.Bytes, size)
			}
			cached += r.Cached
		}
		b.StopTimer()
		if cached > 0 {
			warnOnce("seqread", "disk: %s of the file was still cached when reading began; op=seqread is not the device alone", human(cached/int64(b.N)))
		}
		b.ReportMetric(float64(size)/(1<<20), "file-MiB")
	})
}

// diskFileSize is the size of the data set, at least 64 MiB so that short
// runs still reach past a device's own cache, in whole MiB.
func diskFileSize() int64 {
	n := max(cfg.gen.LogicalBytes(), 64<<20)
	return (n + 1<<20 - 1) &^ (1<<20 - 1)
}
