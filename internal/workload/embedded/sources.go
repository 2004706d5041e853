package embedded

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/alldroll/cdb"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/records"
)

// readSet is the binary's cdb and how many of its records the run reads;
// it fails b without one.
func readSet(b *testing.B, e *core.Env) (*CDB, uint64) {
	b.Helper()
	d, _ := cdbOf(&e.Cfg) // an error stopped the run before any work
	if d == nil {
		b.Fatal("no embedded cdb: the test binary sets none (embedded.SetFS)")
	}
	return d, used(recordsFlag.Get(&e.Cfg), d)
}

// fixtures declares what the Embed read benchmarks read on disk: the
// embedded cdb as a file (src=file), and the same records in every store
// compiled in (src=<Engine>), each only where the pattern may run it
// (src=none and src=embedded read none). The calibration rail loads them
// into memory itself.
func fixtures(e *core.Env, _ engine.Info) []*core.Fixture {
	d, _ := cdbOf(&e.Cfg)
	if d == nil {
		return nil // the benchmarks fail with the reason
	}
	var out []*core.Fixture
	if e.Selects("src=file") {
		out = append(out, fileFixture(d))
	}
	for _, info := range engine.All() {
		if core.Stores(info) && info.Missing == "" && e.Selects("src="+info.Title) {
			out = append(out, engineFixture(e, info))
		}
	}
	return out
}

// fileName is the cdb file in its fixture's directory.
const fileName = "data.cdb"

// fileFixture is the embedded cdb written out as a file under the
// suite's root, byte for byte, so "embedded" and "file" read the same
// bytes. It holds every embedded record whatever -embed_records says.
func fileFixture(d *CDB) *core.Fixture {
	return &core.Fixture{
		Params: dataset.Params{Engine: "cdb", Keys: d.Records, FormatVersion: dataset.FormatVersion,
			Compression: "none", Layout: map[string]string{"set": "lorem"}},
		Data: recordSet{d.Records},
		Files: func(_ *core.Env, dir string) (dataset.Manifest, error) {
			err := writeSynced(filepath.Join(dir, fileName), 0o644, io.NewSectionReader(d.Data, 0, d.Size))
			return dataset.Manifest{EngineVersion: cdbVersion(), DiskBytes: d.Size,
				Settled: "copied from the embedded cdb and fsynced"}, err
		},
	}
}

// filePath is the cdb file of the file fixture, which Setup built.
func filePath(e *core.Env, d *CDB) (string, error) {
	dir, err := e.FixtureDir(fileFixture(d))
	return filepath.Join(dir, fileName), err
}

// engineFixture is the engine's database of the records the run uses,
// written in record order through its batch path, with the run's options
// (LMDB's map sized for the records rather than the main data set).
func engineFixture(e *core.Env, info engine.Info) *core.Fixture {
	d, _ := cdbOf(&e.Cfg)
	f := e.NewFixture(info, "embed", recordSet{used(recordsFlag.Get(&e.Cfg), d)}, nil)
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
func (s recordSet) NewChecker(bool) core.Checker { return s }

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

// close closes the reader; a nil source has none.
func (s *engineSource) close() error {
	if s == nil {
		return nil
	}
	return s.rd.Close()
}

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
		if core.Stores(info) || withReference {
			out = append(out, embedSource{name: info.Title, info: info})
		}
	}
	return out
}
