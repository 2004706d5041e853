package kvbench

// Seed 004: a constant database (cdb) embedded in the binary with
// //go:embed, against the same cdb read from a file and the same records
// in every other engine. Records are k_<n> -> "Lorem ipsum ... k_<n>".

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

	"github.com/alldroll/cdb"

	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/measure"
	"github.com/kvbench/kvbench/internal/records"
)

// recordSource is one place the records can be read from.
type recordSource interface {
	// get looks up key, the key of record i, and verifies its value.
	get(key []byte, i uint64) error
	// scan reads up to limit records from the first in the source's
	// order, verifying each, and returns how many it read.
	scan(limit uint64) (uint64, error)
	close() error
}

// cdbSource reads a cdb through any io.ReaderAt: the embedded bytes or an
// *os.File (pread per access; alldroll/cdb does not mmap).
type cdbSource struct {
	r cdb.Reader
	f *os.File // nil for the embedded cdb
}

func openCDB(ra io.ReaderAt, f *os.File) (*cdbSource, error) {
	r, err := cdb.New().GetReader(ra)
	if err != nil {
		return nil, err
	}
	return &cdbSource{r: r, f: f}, nil
}

func (s *cdbSource) get(key []byte, i uint64) error {
	v, err := s.r.Get(key)
	if err != nil {
		return fmt.Errorf("get %s: %w", key, err)
	}
	return records.Check(i, v)
}

// scan walks the cdb in write order: record i is the i-th.
func (s *cdbSource) scan(limit uint64) (uint64, error) {
	it, err := s.r.Iterator()
	if err != nil {
		return 0, err
	}
	var i uint64
	for i < limit {
		k, err := it.Key()
		if err != nil {
			return i, err
		}
		v, err := it.Value()
		if err != nil {
			return i, err
		}
		if j, err := records.CheckKV(k, v); err != nil || j != i {
			return i, fmt.Errorf("record %d of the scan: key %q: %v", i, k, err)
		}
		i++
		if ok, err := it.Next(); err != nil || !ok {
			return i, err
		}
	}
	return i, nil
}

func (s *cdbSource) close() error {
	if s.f != nil {
		return s.f.Close()
	}
	return nil
}

// engineSource reads the records from an engine's fixture, read-only.
type engineSource struct {
	db    engine.DB
	rd    engine.Reader
	n     uint64
	idx   uint64
	check func([]byte) error // made once: no closure per Get
	prev  []byte
}

func newEngineSource(db engine.DB, n uint64) (*engineSource, error) {
	rd, err := db.NewReader()
	if err != nil {
		db.Close()
		return nil, err
	}
	s := &engineSource{db: db, rd: rd, n: n, prev: make([]byte, 0, records.MaxKeySize)}
	s.check = func(v []byte) error { return records.Check(s.idx, v) }
	return s, nil
}

func (s *engineSource) get(key []byte, i uint64) error {
	s.idx = i
	found, err := s.rd.Get(key, s.check)
	if err == nil && !found {
		err = fmt.Errorf("get %s: not found", key)
	}
	return err
}

// scan walks the engine in key order. Keys must be record keys below n,
// strictly ascending (so distinct), each with its own value; a full pass
// that reads n of them has read every record.
func (s *engineSource) scan(limit uint64) (uint64, error) {
	it, err := s.rd.NewIter(engine.IterOptions{})
	if err != nil {
		return 0, err
	}
	defer it.Close()
	s.prev = s.prev[:0]
	var n uint64
	for ; n < limit && it.Valid(); it.Next() {
		k := it.Key()
		v, err := it.Value()
		if err != nil {
			return n, err
		}
		j, err := records.CheckKV(k, v)
		if err != nil {
			return n, err
		}
		if j >= s.n || (n > 0 && bytes.Compare(k, s.prev) <= 0) {
			return n, fmt.Errorf("key %q after %q: out of order or not in the set", k, s.prev)
		}
		s.prev = append(s.prev[:0], k...)
		n++
	}
	return n, it.Err()
}

func (s *engineSource) close() error {
	s.rd.Close()
	return s.db.Close()
}

// sourceNames lists every source of the Embed read benchmarks: the
// embedded cdb, the same cdb as a file, and each engine by title.
func sourceNames(withReference bool) []string {
	names := []string{"embedded", "file"}
	for _, info := range engine.All() {
		if !info.Reference || withReference {
			names = append(names, info.Title)
		}
	}
	return names
}

// openSource opens a source for reading the first embedRecords() records.
func openSource(b *testing.B, name string) recordSource {
	b.Helper()
	n := embedRecords()
	switch name {
	case "embedded":
		e, err := embedded()
		if err != nil {
			b.Fatal(err)
		}
		s, err := openCDB(e.data, nil)
		if err != nil {
			b.Fatal(err)
		}
		return s
	case "file":
		path, err := embedFileFixture()
		if err != nil {
			b.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		s, err := openCDB(f, f)
		if err != nil {
			f.Close()
			b.Fatal(err)
		}
		return s
	}
	info := lookupTitle(b, name)
	var db engine.DB
	var err error
	if info.Reference {
		if db, err = engine.Open(info.Name, embedOptions(info, os.TempDir())); err == nil {
			err = loadRecords(db, n)
		}
	} else {
		var dir string
		if dir, err = embedFixture(info); err == nil {
			o := embedOptions(info, dir)
			o.ReadOnly = true
			db, err = engine.Open(info.Name, o)
		}
	}
	if err != nil {
		b.Fatal(err)
	}
	printEngineConfig(os.Stdout, db)
	s, err := newEngineSource(db, n)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// reportRead adds what every Embed read benchmark reports.
func reportRead(b *testing.B, n uint64, elapsed time.Duration, io0 measure.IO) {
	io1, _ := measure.ReadIO()
	perOp := elapsed.Seconds() / float64(b.N)
	b.ReportMetric(1/perOp, "records/s")
	b.ReportMetric(perOp*float64(n), "all-s") // reading every record at this rate, as the seed timed it
	b.ReportMetric(float64(io1.Sub(io0).ReadBytes)/float64(b.N), "read-B/op")
	if m, err := measure.ReadMem(); err == nil {
		b.ReportMetric(float64(m.RSS)/(1<<20), "rss-MB")
	}
}

// embedGet is one verified point read per op, at random or in write order.
func embedGet(b *testing.B, src recordSource, n uint64, random bool) {
	rng := dataset.NewRand(*flagSeed, 4)
	var kb [records.MaxKeySize]byte
	var seq uint64
	b.SetBytes(records.LogicalBytes(n) / int64(n))
	b.ReportAllocs()
	io0, _ := measure.ReadIO()
	b.ResetTimer()
	start := time.Now()
	for op := 0; op < b.N; op++ {
		i := seq
		if random {
			i = rng.Below(n)
		} else if seq++; seq == n {
			seq = 0
		}
		if err := src.get(records.Key(kb[:0], i), i); err != nil {
			b.Fatal(err)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	reportRead(b, n, elapsed, io0)
}

// embedIterate reads one record per op in full passes over the set.
func embedIterate(b *testing.B, src recordSource, n uint64) {
	// Whatever a source builds on its first scan (the calibration rail
	// sorts its keys) is not part of reading a record.
	if _, err := src.scan(1); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(records.LogicalBytes(n) / int64(n))
	b.ReportAllocs()
	io0, _ := measure.ReadIO()
	b.ResetTimer()
	start := time.Now()
	for done := uint64(0); done < uint64(b.N); {
		want := min(n, uint64(b.N)-done)
		got, err := src.scan(want)
		if err != nil {
			b.Fatal(err)
		}
		if got != want {
			b.Fatalf("a scan read %d records, want %d", got, want)
		}
		done += got
	}
	elapsed := time.Since(start)
	b.StopTimer()
	reportRead(b, n, elapsed, io0)
}

// BenchmarkEmbedGet reads single records by key from each source: one
// verified Get per op.
func BenchmarkEmbedGet(b *testing.B) {
	n := embedRecords()
	for _, name := range sourceNames(true) {
		b.Run("src="+name, func(b *testing.B) {
			src := openSource(b, name)
			defer src.close()
			for _, order := range []string{"random", "sequential"} {
				b.Run("order="+order, func(b *testing.B) { embedGet(b, src, n, order == "random") })
			}
		})
	}
}

// BenchmarkEmbedIterate reads every record in the source's own order (write
// order for cdb, key order for the engines): one verified record per op.
func BenchmarkEmbedIterate(b *testing.B) {
	n := embedRecords()
	for _, name := range sourceNames(true) {
		b.Run("src="+name, func(b *testing.B) {
			src := openSource(b, name)
			defer src.close()
			embedIterate(b, src, n)
		})
	}
}

// BenchmarkEmbedBuild writes the cdb the binary embeds, as make embed-data
// does, into a scratch file: one op is the whole file, made durable. With
// write=direct alldroll/cdb's hash tables reach the file 8 bytes per
// write(2), as in the seed; write=buffered passes them through a 1 MiB
// buffer. The result is compared byte for byte with the embedded cdb.
// build-rss-MB is how far the build raised the process's peak RSS (pages
// of the embedded cdb that earlier benchmarks touched count as RSS too).
func BenchmarkEmbedBuild(b *testing.B) {
	n := embedRecords()
	for _, mode := range []string{"direct", "buffered"} {
		b.Run("write="+mode, func(b *testing.B) { embedBuild(b, n, mode == "buffered") })
	}
}

func embedBuild(b *testing.B, n uint64, buffered bool) {
	size := records.CDBSize(n)
	b.SetBytes(size)
	var elapsed time.Duration
	var peak int64
	b.StopTimer()
	for op := 0; op < b.N; op++ {
		dir := scratchDir("cdb")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		path := filepath.Join(dir, "build.cdb")
		runtime.GC()
		measure.ResetPeakRSS()
		m0, _ := measure.ReadMem()
		start := time.Now()
		b.StartTimer()
		err := buildFile(path, n, buffered)
		b.StopTimer()
		elapsed += time.Since(start)
		if m, merr := measure.ReadMem(); merr == nil && m0.RSS > 0 {
			peak = max(peak, m.PeakRSS-m0.RSS)
		}
		if err == nil {
			err = sameAsEmbedded(path, n)
		}
		if rerr := cfg.root.RemoveAll(dir); err == nil {
			err = rerr
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/elapsed.Seconds(), "records/s")
	b.ReportMetric(float64(peak)/(1<<20), "build-rss-MB")
}

// buildFile writes n records as a cdb at path and fsyncs it.
func buildFile(path string, n uint64, buffered bool) error {
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

// sameAsEmbedded checks a built cdb: the embedded file's exact bytes when
// it holds the same records, otherwise every record read back.
func sameAsEmbedded(path string, n uint64) error {
	e, err := embedded()
	if err != nil {
		return err
	}
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
	if n == e.records {
		return sameBytes(f, io.NewSectionReader(e.data, 0, e.size))
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
