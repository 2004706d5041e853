package bench

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

func init() {
	// What every Embed read benchmark reports (reportRead); cold leaves
	// add their rounds' opens (ColdRounds).
	readUnits := []Unit{Higher("records/s"), Lower("all-s"), Lower("read-B/op"), Lower("rss-MB"),
		Lower("open-ms"), Lower("open-read-B")}

	// EmbedGet reads single records by key from each source: one
	// verified Get per op, at random or in write order from a record drawn
	// per round, in each -cache state the source has (embed_read.go).
	Register(&Workload{
		Name:     "EmbedGet",
		Fixtures: embedFixtures,
		Units:    readUnits,
		Gate:     []string{"ns/op", "read-B/op", "allocs/op"},
		Run: func(b *testing.B, e *Env, _ engine.Info) {
			n := e.embedRecords(b)
			for _, s := range embedSources(true) {
				b.Run("src="+s.name, func(b *testing.B) {
					r := e.openEmbedSource(b, s)
					defer r.close(b)
					for _, cache := range r.caches() {
						for _, order := range []string{"random", "sequential"} {
							r.run(name("cache", cache, "order", order), cache, func(b *testing.B, src recordSource, rounds embedRounds) {
								embedGet(b, e, src, rounds, n, order == "random")
							})
						}
					}
				})
			}
		},
	})

	// EmbedIterate reads every record in the source's own order (write
	// order for cdb, key order for the engines): one verified record per
	// op, in each -cache state the source has.
	Register(&Workload{
		Name:     "EmbedIterate",
		Fixtures: embedFixtures,
		Units:    readUnits,
		Gate:     []string{"ns/op", "read-B/op", "allocs/op"},
		Run: func(b *testing.B, e *Env, _ engine.Info) {
			n := e.embedRecords(b)
			for _, s := range embedSources(true) {
				if s.info.Missing != "" {
					b.Run("src="+s.name, func(b *testing.B) { b.Skip(s.info.Missing) })
					continue
				}
				if !e.runsSub(b, "src="+s.name) {
					continue // not selected: no fixture was planned for it
				}
				r := e.openEmbedSource(b, s)
				for _, cache := range r.caches() {
					r.run(name("src", s.name, "cache", cache), cache, func(b *testing.B, src recordSource, rounds embedRounds) {
						embedIterate(b, src, rounds, n)
					})
				}
				r.close(b)
			}
		},
	})

	// EmbedBuild writes the cdb the binary embeds, as make embed-data
	// does, into a scratch file: one op is the whole file, made durable.
	// With write=direct alldroll/cdb's hash tables reach the file 8 bytes
	// per write(2), as in the seed; write=buffered passes them through a
	// 1 MiB buffer. The result is compared byte for byte with the
	// embedded cdb. build-rss-MB is how far the build raised the
	// process's peak RSS (pages of the embedded cdb that earlier
	// benchmarks touched count as RSS too).
	Register(&Workload{
		Name: "EmbedBuild",
		Scratch: func(e *Env, _ engine.Info) int64 {
			return records.CDBSize(e.Cfg.Embed.n)
		},
		Units: []Unit{Higher("records/s"), Lower("build-rss-MB")},
		Gate:  []string{"records/s"},
		Run: func(b *testing.B, e *Env, _ engine.Info) {
			n := e.embedRecords(b)
			for _, mode := range []string{"direct", "buffered"} {
				e.ClearSettings()
				b.Run("write="+mode, func(b *testing.B) { embedBuild(b, e, n, mode == "buffered") })
			}
		},
	})
}

// embedRecords is how many records the Embed benchmarks use: every
// embedded record unless -embed_records caps it.
func (e *Env) embedRecords(b *testing.B) uint64 {
	b.Helper()
	if e.Cfg.Embed.cdb == nil {
		b.Fatal("no embedded cdb: the test binary sets none (bench.EmbedConfig.FS)")
	}
	return e.Cfg.Embed.n
}

// embedFixtures declares what the Embed read benchmarks read on disk: the
// embedded cdb as a file (src=file), and the same records in every store
// compiled in (src=<Engine>), each only where the pattern may run it
// (src=none and src=embedded read none). The calibration rail loads them
// into memory itself.
func embedFixtures(e *Env, _ engine.Info) []*Fixture {
	if e.Cfg.Embed.cdb == nil {
		return nil // the benchmarks fail with the reason
	}
	var out []*Fixture
	if e.Selects("src=file") {
		out = append(out, e.embedFileFixture())
	}
	for _, info := range engine.All() {
		if Stores(info) && info.Missing == "" && e.Selects("src="+info.Title) {
			out = append(out, e.embedFixture(info))
		}
	}
	return out
}

// embedFileName is the cdb file in its fixture's directory.
const embedFileName = "data.cdb"

// embedFileFixture is the embedded cdb written out as a file under the
// suite's root, byte for byte, so "embedded" and "file" read the same
// bytes. It holds every embedded record whatever -embed_records says.
func (e *Env) embedFileFixture() *Fixture {
	d := e.Cfg.Embed.cdb
	return &Fixture{
		Params: dataset.Params{Engine: "cdb", Keys: d.Records, FormatVersion: dataset.FormatVersion,
			Compression: "none", Layout: map[string]string{"set": "lorem"}},
		Data: recordSet{d.Records},
		Files: func(e *Env, dir string) (dataset.Manifest, error) {
			f, err := os.Create(filepath.Join(dir, embedFileName))
			if err != nil {
				return dataset.Manifest{}, err
			}
			_, err = io.Copy(f, io.NewSectionReader(d.Data, 0, d.Size))
			if err == nil {
				err = f.Sync()
			}
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			return dataset.Manifest{EngineVersion: cdbVersion(), DiskBytes: d.Size,
				Settled: "copied from the embedded cdb and fsynced"}, err
		},
	}
}

// embedFixture is the engine's database of the records the run uses,
// written in record order through its batch path, with the run's options
// (LMDB's map sized for the records rather than the main data set).
func (e *Env) embedFixture(info engine.Info) *Fixture {
	f := e.NewFixture(info, "embed", recordSet{e.Cfg.Embed.n}, nil)
	// The records depend on neither: one fixture serves every -seed and
	// -value_ratio.
	f.Params.Seed, f.Params.ValueRatio = 0, 0
	return f
}

// recordSet is records 0..n-1 of the cdb's set (package records).
type recordSet struct{ n uint64 }

func (s recordSet) Len() uint64         { return s.n }
func (s recordSet) ValueSize() int      { return records.MaxValueSize }
func (s recordSet) LogicalBytes() int64 { return records.LogicalBytes(s.n) }
func (s recordSet) Entry(i uint64, kb, vb []byte) ([]byte, []byte) {
	return records.Key(kb[:0], i), records.Value(vb[:0], i)
}

// NewChecker checks every byte whether full or not: a record's value is
// a short prefix and its own key.
func (s recordSet) NewChecker(bool) Checker { return s }

func (s recordSet) CheckKV(k, v []byte) error {
	i, err := records.CheckKV(k, v)
	if err == nil && i >= s.n {
		err = fmt.Errorf("key %q: record %d is not one of the %d in the set", k, i, s.n)
	}
	return err
}

func (s recordSet) CheckKey(k []byte) error {
	if i, ok := records.Index(k); !ok || i >= s.n {
		return fmt.Errorf("key %q is not one of the %d records", k, s.n)
	}
	return nil
}

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

// engineSource reads the records from an open engine through one reader;
// closing it closes the reader, not the engine.
type engineSource struct {
	rd    engine.Reader
	n     uint64
	idx   uint64
	check func([]byte) error // made once: no closure per Get
	prev  []byte
}

func newEngineSource(db engine.DB, n uint64) (*engineSource, error) {
	rd, err := db.NewReader()
	if err != nil {
		return nil, err
	}
	s := &engineSource{rd: rd, n: n, prev: make([]byte, 0, records.MaxKeySize)}
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

func (s *engineSource) close() error { return s.rd.Close() }

// embedSource is one source of the Embed benchmarks: the embedded cdb,
// the same cdb as a file, or an engine (info set).
type embedSource struct {
	name string // as in src=<name>: "embedded", "file" or the engine's title
	info engine.Info
}

// embedSources lists the sources of the Embed read benchmarks: the
// embedded cdb, the same cdb as a file, and each engine by title (stores
// not compiled in skip with the reason).
func embedSources(withReference bool) []embedSource {
	out := []embedSource{{name: "embedded"}, {name: "file"}}
	for _, info := range engine.All() {
		if Stores(info) || withReference {
			out = append(out, embedSource{name: info.Title, info: info})
		}
	}
	return out
}

func embedBuild(b *testing.B, e *Env, n uint64, buffered bool) {
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
			err = e.Cfg.Embed.cdb.Check(path, n)
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
func (d *EmbeddedCDB) Check(path string, n uint64) error {
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
