package embedded

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/alldroll/cdb"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/measure"
	"github.com/kvbench/kvbench/internal/records"
)

// EmbedGet and EmbedIterate read the records from every source, in each
// -cache state the source has.
func init() {
	// EmbedGet: one verified Get per op, at random or in write order from a
	// record drawn per round.
	core.Register(readWorkload("EmbedGet", func(e *core.Env, r *embedReader, cache string) {
		for _, order := range []string{"random", "sequential"} {
			r.run(core.SubName("cache", cache, "order", order), cache, func(b *testing.B, src recordSource, rounds embedRounds) {
				embedGet(b, e, src, rounds, r.n, order == "random")
			})
		}
	}))
	// EmbedIterate: one verified record per op, in the source's own order
	// (write order for cdb, key order for the engines).
	core.Register(readWorkload("EmbedIterate", func(_ *core.Env, r *embedReader, cache string) {
		r.run(core.SubName("cache", cache), cache, func(b *testing.B, src recordSource, rounds embedRounds) {
			embedIterate(b, src, rounds, r.n)
		})
	}))
}

// readWorkload is an Embed read workload that runs leaves under src=<name>
// for each source, opened as r, and each of its cache states. It reports
// reportRead's units and, in cold leaves, their rounds' opens (ColdRounds).
func readWorkload(name string, leaves func(e *core.Env, r *embedReader, cache string)) *core.Workload {
	run := func(b *testing.B, e *core.Env, _ engine.Info) {
		d, n := readSet(b, e)
		for _, s := range embedSources(true) {
			b.Run("src="+s.name, func(b *testing.B) {
				r := openSource(e, b, d, n, s)
				defer r.close(b)
				for _, cache := range r.caches {
					leaves(e, r, cache)
				}
			})
		}
	}
	return &core.Workload{Name: name, Fixtures: fixtures(false), Options: flags, Run: run,
		Units: []core.Unit{core.Higher("records/s"), core.Lower("all-s"), core.Lower("read-B/op"), core.Lower("rss-MB"),
			core.Lower("open-ms"), core.Lower("open-read-B")}}
}

// embedReader is a source opened in a parent benchmark for the leaves
// that read it in each page cache state, as the read benchmarks do: warm,
// the source read through once first; cold, in rounds on the source
// closed, evicted and reopened. The embedded cdb is only warm: the running
// binary's own mapping cannot be evicted (docs/seed-004.md).
type embedReader struct {
	e      *core.Env
	parent *testing.B
	d      *CDB // the binary's
	n      uint64
	cdb    *cdbSource   // the embedded cdb or the cdb file, or
	h      *core.Handle // an engine's fixture
	path   string       // the cdb file; "" for the embedded cdb and engines
	warm   bool         // the cdb has been read through since it was last evicted
	caches []string     // the cache states the source is read in
}

// openSource opens s, reading the first n records of d, for leaves of
// parent. A store not compiled in skips parent.
func openSource(e *core.Env, parent *testing.B, d *CDB, n uint64, s embedSource) *embedReader {
	parent.Helper()
	r := &embedReader{e: e, parent: parent, d: d, n: n, caches: e.Cfg.Caches}
	var err error
	switch {
	case s.name == "embedded":
		r.cdb, err = openCDB(d.Data, nil)
		r.caches = []string{core.Warm}
	case s.name == "file":
		if r.path, err = filePath(e, d); err == nil {
			err = r.openFile()
		}
	case s.info.Missing != "":
		parent.Skip(s.info.Missing)
	default:
		r.h = e.Open(parent, engineFixture(e, s.info))
		r.caches = r.h.Caches()
	}
	if err != nil {
		parent.Fatal(err)
	}
	return r
}

// openFile opens the cdb file as the source.
func (r *embedReader) openFile() error {
	f, err := os.Open(r.path)
	if err != nil {
		return err
	}
	if r.cdb, err = openCDB(f, f); err != nil {
		f.Close()
	}
	return err
}

// embedRounds runs a cold leaf's rounds: round readies one, untimed, on a
// source just evicted and reopened and returns its timed work. nil if warm.
type embedRounds func(round func(src recordSource) (run func())) core.Timed

// run runs body as the parent's leaf on the source in the cache state,
// after the settings it reads with (an engine's; none for the cdb): warm,
// body gets the warmed source; cold, the rounds to read it in.
func (r *embedReader) run(leaf, cache string, body func(b *testing.B, src recordSource, rounds embedRounds)) {
	if r.h != nil {
		r.h.Run(r.parent, leaf, cache, nil, func(b *testing.B, db engine.DB) {
			if cache == core.Cold {
				body(b, nil, r.rounds(b))
				return
			}
			src, err := newEngineSource(db, r.n)
			if err != nil {
				b.Fatal(err)
			}
			defer src.close()
			body(b, src, nil)
		})
		return
	}
	r.e.ClearSettings()
	if cache == core.Warm {
		r.warmUp(r.parent)
	}
	r.parent.Run(leaf, func(b *testing.B) {
		if cache == core.Cold {
			body(b, nil, r.rounds(b))
			return
		}
		r.warmUp(b)
		body(b, r.cdb, nil)
	})
}

// rounds are leaf b's cold rounds: an engine's through its handle, the
// cdb file's closed, evicted and reopened here.
func (r *embedReader) rounds(b *testing.B) embedRounds {
	if r.h != nil {
		return func(round func(recordSource) func()) core.Timed {
			var src *engineSource
			defer func() { src.close() }() // before the handle closes the db, on failure too
			return r.h.ColdRounds(b, nil, func(db engine.DB) (func(), func()) {
				s, err := newEngineSource(db, r.n)
				if err != nil {
					b.Fatal(err)
				}
				src = s
				return round(s), func() { src.close(); src = nil }
			})
		}
	}
	return func(round func(recordSource) func()) core.Timed {
		return core.RunColdRounds(b, func() (func(), func(), core.OpenCost) {
			if err := r.cdb.close(); err != nil {
				b.Fatal(err)
			}
			r.cdb, r.warm = nil, false
			if _, err := r.e.Evict(filepath.Dir(r.path)); err != nil {
				b.Fatal(err)
			}
			c, err := core.TimeOpen(r.openFile)
			if err != nil {
				b.Fatal(err)
			}
			return round(r.cdb), nil, c
		})
	}
}

// warmUp reads the cdb's bytes once since the last eviction, untimed: the
// file into the page cache, the embedded cdb's pages into memory.
func (r *embedReader) warmUp(b *testing.B) {
	if r.warm {
		return
	}
	var err error
	if r.path != "" {
		err = core.ReadThrough(filepath.Dir(r.path))
	} else {
		_, err = io.Copy(io.Discard, io.NewSectionReader(r.d.Data, 0, r.d.Size))
	}
	if err != nil {
		b.Fatalf("warm-up read of the cdb: %v", err)
	}
	r.warm = true
}

// close closes the source; an engine's handle closes now rather than
// when the parent ends, so only one store is open at a time.
func (r *embedReader) close(tb testing.TB) {
	if err := r.cdb.close(); err != nil {
		tb.Error(err)
	}
	r.cdb = nil
	if r.h != nil {
		r.h.Close(tb)
	}
}

// coldOps is how many records a cold EmbedGet round reads: -cold_ops, or
// 1% of the records and at least 100 (a round small next to the set stays
// cold to its end), never more than all of them.
func coldOps(c *core.Config, n uint64) int {
	if k := uint64(c.ColdOps); k > 0 {
		return int(min(k, n))
	}
	return int(min(max(n/100, 100), n))
}

// reportRead reports ops records read in elapsed, readBytes from the device.
func reportRead(b *testing.B, n uint64, ops int64, elapsed time.Duration, readBytes int64) {
	perOp := elapsed.Seconds() / float64(ops)
	b.ReportMetric(1/perOp, "records/s")
	b.ReportMetric(perOp*float64(n), "all-s") // reading every record at this rate, as the seed timed it
	core.ReportReads(b, readBytes, float64(ops))
	if m, err := measure.ReadRSS(); err == nil {
		b.ReportMetric(float64(m.Total())/(1<<20), "rss-MB")
	}
}

// reportCold reports a cold leaf's rounds of perRound records each, or
// fails b with err, the rounds' failure.
func reportCold(b *testing.B, n uint64, timed core.Timed, perRound int64, err error) {
	if err != nil {
		b.Fatal(err)
	}
	ops := int64(b.N) * perRound
	timed.ReportPerOp(b, ops)
	reportRead(b, n, ops, timed.Elapsed, timed.Disk.ReadBytes)
}

// timeWarm times read, b.N records of a warm source, and reports it.
func timeWarm(b *testing.B, n uint64, read func() error) {
	b.ReportAllocs()
	io0, _ := measure.ReadIO()
	b.ResetTimer()
	err := read()
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	io1, _ := measure.ReadIO()
	reportRead(b, n, int64(b.N), b.Elapsed(), io1.Sub(io0).ReadBytes)
}

// embedGet is one verified point read per op, at random or in write order
// from a record drawn per round; cold, rounds of coldOps reads.
func embedGet(b *testing.B, e *core.Env, src recordSource, rounds embedRounds, n uint64, random bool) {
	rng := e.CallStreams(b).Rand(4)
	seq := rng.Below(n)
	var kb [records.MaxKeySize]byte
	var err error
	read := func(src recordSource, ops int) {
		if err != nil {
			return // an earlier round failed
		}
		for op := 0; op < ops; op++ {
			i := seq
			if random {
				i = rng.Below(n)
			} else if seq++; seq == n {
				seq = 0
			}
			if err = src.get(records.Key(kb[:0], i), i); err != nil {
				return
			}
		}
	}
	perRecord := records.LogicalBytes(n) / int64(n)
	if rounds != nil {
		perRound := coldOps(&e.Cfg, n)
		b.SetBytes(perRecord * int64(perRound))
		timed := rounds(func(src recordSource) func() { return func() { read(src, perRound) } })
		reportCold(b, n, timed, int64(perRound), err)
		return
	}
	b.SetBytes(perRecord)
	timeWarm(b, n, func() error { read(src, b.N); return err })
}

// embedIterate reads one record per op in full passes over the set; cold,
// one full pass a round.
func embedIterate(b *testing.B, src recordSource, rounds embedRounds, n uint64) {
	var err error
	scan := func(src recordSource, want uint64) { // exactly want records
		if err != nil {
			return // an earlier scan failed
		}
		var got uint64
		if got, err = src.scan(want); err == nil && got != want {
			err = fmt.Errorf("a scan read %d records, want %d", got, want)
		}
	}
	if rounds != nil {
		b.SetBytes(records.LogicalBytes(n))
		timed := rounds(func(src recordSource) func() { return func() { scan(src, n) } })
		reportCold(b, n, timed, int64(n), err)
		return
	}
	// Whatever a source builds on its first scan (the calibration rail
	// sorts its keys) is not part of reading a record.
	if _, err := src.scan(1); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(records.LogicalBytes(n) / int64(n))
	timeWarm(b, n, func() error {
		for done := uint64(0); done < uint64(b.N) && err == nil; done += n {
			scan(src, min(n, uint64(b.N)-done))
		}
		return err
	})
}

// readSet is the binary's cdb and how many records the run reads; it fails b without one.
func readSet(b *testing.B, e *core.Env) (*CDB, uint64) {
	b.Helper()
	d, _ := cdbOf(&e.Cfg) // an error stopped the run before any work
	if d == nil {
		b.Fatal("no embedded cdb: the test binary sets none (embedded.SetFS)")
	}
	return d, cmp.Or(recordsFlag.Get(&e.Cfg), d.Records)
}

// fixtures declares the cdb as a file (src=file, or always with fileAlways)
// and the records in every store compiled in (src=<Engine>), each only where
// the pattern may run it. The calibration rail loads them into memory itself.
func fixtures(fileAlways bool) func(*core.Env, engine.Info) []*core.Fixture {
	return func(e *core.Env, _ engine.Info) []*core.Fixture {
		d, _ := cdbOf(&e.Cfg)
		if d == nil {
			return nil // the benchmarks fail with the reason
		}
		var out []*core.Fixture
		if fileAlways || e.Selects("src=file") {
			out = append(out, fileFixture(d))
		}
		for _, info := range engine.All() {
			if core.Stores(info) && info.Missing == "" && e.Selects("src="+info.Title) {
				out = append(out, engineFixture(e, info))
			}
		}
		return out
	}
}

// fileName is the cdb file in its fixture's directory.
const fileName = "data.cdb"

// fileFixture is the embedded cdb written out byte for byte as a file, with
// every record whatever -embed_records says.
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
// written in record order through its batch path, with the run's options.
func engineFixture(e *core.Env, info engine.Info) *core.Fixture {
	d, _ := cdbOf(&e.Cfg)
	f := e.NewFixture(info, "embed", recordSet{cmp.Or(recordsFlag.Get(&e.Cfg), d.Records)}, nil)
	// One fixture serves every -seed and -value_ratio: the records depend on neither.
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

// NewChecker checks every byte, full or not: a value is a prefix and its key.
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

// cdbSource reads a cdb through the embedded bytes or an *os.File (pread
// per access; alldroll/cdb does not mmap).
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

// close closes the file; a nil source or the embedded cdb has none.
func (s *cdbSource) close() error {
	if s == nil || s.f == nil {
		return nil
	}
	return s.f.Close()
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

// scan walks the engine in key order: record keys below n, strictly
// ascending, each with its value, so a pass of n has read every record.
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

// embedSources lists the embedded cdb, the cdb file and each store (with
// the calibration rail too if withReference) by title.
func embedSources(withReference bool) []embedSource {
	out := []embedSource{{name: "embedded"}, {name: "file"}}
	for _, info := range engine.All() {
		if core.Stores(info) || withReference {
			out = append(out, embedSource{name: info.Title, info: info})
		}
	}
	return out
}
