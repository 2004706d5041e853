package embedded

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/measure"
	"github.com/kvbench/kvbench/internal/records"
)

// EmbedBuild writes the cdb the binary embeds, as make embed-data does,
// into a scratch file: one op is the whole file, made durable. With
// write=direct alldroll/cdb's hash tables reach the file 8 bytes per
// write(2), as in the seed; write=buffered passes them through a 1 MiB
// buffer. The result is compared byte for byte with the embedded cdb.
// build-rss-MB is how far the build raised the process's peak RSS (pages
// of the embedded cdb that earlier benchmarks touched count as RSS too).
func init() {
	core.Register(&core.Workload{
		Name: "EmbedBuild",
		Scratch: func(e *core.Env, _ engine.Info) int64 {
			var n uint64 // none without a cdb: the benchmark fails
			if d, _ := cdbOf(&e.Cfg); d != nil {
				n = used(recordsFlag.Get(&e.Cfg), d)
			}
			return records.CDBSize(n)
		},
		Units:   []core.Unit{core.Higher("records/s"), core.Lower("build-rss-MB")},
		Options: flags,
		Run: func(b *testing.B, e *core.Env, _ engine.Info) {
			d, n := readSet(b, e)
			for _, mode := range []string{"direct", "buffered"} {
				e.ClearSettings()
				b.Run("write="+mode, func(b *testing.B) { embedBuild(b, e, d, n, mode == "buffered") })
			}
		},
	})
}

func embedBuild(b *testing.B, e *core.Env, d *CDB, n uint64, buffered bool) {
	size := records.CDBSize(n)
	b.SetBytes(size)
	var elapsed time.Duration
	var peak int64
	b.StopTimer()
	for op := 0; op < b.N; op++ {
		dir := e.ScratchDir("cdb")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		path := filepath.Join(dir, "build.cdb")
		runtime.GC()
		measure.ResetPeakRSS()
		m0, _ := measure.ReadMem()
		start := time.Now()
		b.StartTimer()
		err := BuildCDB(path, n, buffered)
		b.StopTimer()
		elapsed += time.Since(start)
		if m, merr := measure.ReadMem(); merr == nil && m0.RSS > 0 {
			peak = max(peak, m.PeakRSS-m0.RSS)
		}
		if err == nil {
			err = d.Check(path, n)
		}
		if rerr := e.Root.RemoveAll(dir); err == nil {
			err = rerr
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/elapsed.Seconds(), "records/s")
	b.ReportMetric(float64(peak)/(1<<20), "build-rss-MB")
}

// BuildCDB writes records 0..n-1 as a cdb at path and fsyncs it; buffered
// passes alldroll/cdb's small writes through a 1 MiB buffer.
func BuildCDB(path string, n uint64, buffered bool) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	var w io.WriteSeeker = f
	sb := records.NewSeekBuffer(f, 1<<20)
	if buffered {
		w = sb
	}
	err = records.Build(w, n, nil)
	if err == nil {
		err = sb.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

// Check checks a cdb of n records built at path: the embedded file's
// exact bytes when it holds the same records, otherwise every record
// read back.
func (d *CDB) Check(path string, n uint64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() != records.CDBSize(n) {
		return fmt.Errorf("built %d bytes, want %d", fi.Size(), records.CDBSize(n))
	}
	if n == d.Records {
		return sameBytes(f, io.NewSectionReader(d.Data, 0, d.Size))
	}
	s, err := openCDB(f, nil)
	if err != nil {
		return err
	}
	var kb [records.MaxKeySize]byte
	for i := uint64(0); i < n; i++ {
		if err := s.get(records.Key(kb[:0], i), i); err != nil {
			return err
		}
	}
	return nil
}

func sameBytes(a, b io.Reader) error {
	ba, bb := make([]byte, 1<<20), make([]byte, 1<<20)
	for off := int64(0); ; {
		na, ea := io.ReadFull(a, ba)
		nb, eb := io.ReadFull(b, bb)
		if !bytes.Equal(ba[:na], bb[:nb]) {
			return fmt.Errorf("built cdb differs from the embedded one within bytes %d..%d", off, off+int64(max(na, nb)))
		}
		if ea != nil || eb != nil {
			if ea == io.ErrUnexpectedEOF || ea == io.EOF {
				return nil
			}
			return errors.Join(ea, eb)
		}
		off += int64(na)
	}
}
