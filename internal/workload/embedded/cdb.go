// Package embedded is seed 004: a constant database (cdb) of package
// records' records embedded in the test binary with //go:embed, against the
// same cdb read from a file and the same records in every engine. EmbedGet
// and EmbedIterate (read.go), EmbedColdStart (coldstart.go, minimal.go) and
// EmbedBuild, its flags and the cdb they read (this file).
package embedded

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alldroll/cdb"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/measure"
	"github.com/kvbench/kvbench/internal/records"
)

// The cdb files the root package embeds. `make embed-data RECORDS=n`
// writes Generated (never committed), which the next build embeds in
// place of the committed one.
const (
	Committed = "testdata/embed-committed.cdb"
	Generated = "testdata/embed-generated.cdb"
)

func cdbVersion() string { return engine.ModuleVersion("github.com/alldroll/cdb", cdb.New) }

// CDB is the cdb a binary carries.
type CDB struct {
	Name    string
	Size    int64
	Records uint64
	// Data reads the bytes where the linker put them (read-only data of
	// the executable, paged in on demand): nothing is copied up front.
	Data io.ReaderAt
}

// Open finds the embedded cdb in fsys, the generated one first, applies
// readahead to its pages and checks that it holds whole records.
func Open(fsys fs.FS, readahead bool) (*CDB, error) {
	name := Generated
	f, err := fsys.Open(name)
	if err != nil {
		name = Committed
		if f, err = fsys.Open(name); err != nil {
			return nil, fmt.Errorf("no embedded cdb: %w", err)
		}
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	ra, ok := f.(io.ReaderAt)
	if !ok {
		return nil, fmt.Errorf("%s: embedded file is not an io.ReaderAt", name)
	}
	d := &CDB{Name: name, Size: fi.Size(), Data: ra}
	// -embed_readahead=false: a page fault reads that page and not the
	// device's read_ahead_kb around it. Advised before the first read, as
	// reading the header faults a page in.
	if !readahead {
		data := embeddedString(f)
		if int64(len(data)) != d.Size {
			return nil, core.FlagError("embed_readahead", false,
				"this Go version's embed.FS hides the embedded bytes of "+name+"; only true works")
		}
		if err := measure.AdviseRandom(data); err != nil {
			return nil, err
		}
	}
	r, err := cdb.New().GetReader(ra)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	d.Records = uint64(r.Size())
	if d.Records == 0 || records.CDBSize(d.Records) != d.Size {
		return nil, fmt.Errorf("%s: %d bytes do not hold %d whole records (want %d bytes); rebuild it with make embed-data", name, d.Size, d.Records, records.CDBSize(d.Records))
	}
	return d, nil
}

// embeddedString reaches the string an embed.FS file reads from, which
// embed exposes only as an io.ReaderAt while madvise needs its address; ""
// if embed's internals change shape or f is not embed's.
func embeddedString(f fs.File) string {
	v := reflect.Indirect(reflect.ValueOf(f)) // embed's openFile
	if v.Kind() != reflect.Struct || v.NumField() == 0 {
		return ""
	}
	if v = reflect.Indirect(v.Field(0)); v.Kind() != reflect.Struct { // its f *file
		return ""
	}
	if s := v.FieldByName("data"); s.Kind() == reflect.String {
		return s.String()
	}
	return ""
}

// flags are all four Embed workloads' own: how much of the embedded cdb
// they use (it names the engines' fixtures) and its pages' readahead.
var flags = []core.Option{recordsFlag, readaheadFlag}

var (
	recordsFlag = &core.Flag[uint64]{Name: "embed_records", Shapes: true,
		Usage: "records of the embedded cdb the Embed benchmarks use (0: all of them)",
		Check: func(n uint64, c *core.Config) error {
			// Without a cdb there is nothing to check against; its error is readaheadFlag's.
			if d, err := cdbOf(c); d != nil && err == nil && n > d.Records {
				return fmt.Errorf("the embedded %s holds %d records; use at most that, or 0 for all (make embed-data RECORDS=%d embeds more)", d.Name, d.Records, n)
			}
			return nil
		},
		Echo: func(n uint64, c *core.Config, line func(string, any)) {
			d, _ := cdbOf(c)
			if d == nil {
				line("embed-cdb", "none (no embedded file system)")
				return
			}
			n = cmp.Or(n, d.Records) // -embed_records, or all
			line("embed-cdb", fmt.Sprintf("%s (%d records, %d bytes)", d.Name, d.Records, d.Size))
			line("embed-records", n)
			line("embed-cold-ops", coldOps(c, n)) // records a cold EmbedGet round reads
		}}
	// The pages are advised when the cdb is first opened for a run (cdbOf):
	// a check before any work.
	readaheadFlag = &core.Flag[bool]{Name: "embed_readahead", Default: true,
		Usage: "leave OS readahead on for the embedded cdb's pages of the executable (false: madvise MADV_RANDOM, as -readahead off has LMDB do to its map)",
		Check: func(on bool, _ *core.Config) error {
			_, err := opened(on)
			return err
		},
		Echo: func(on bool, _ *core.Config, line func(string, any)) {
			if d, _ := opened(on); d != nil {
				line("embed-readahead", on)
				line("engine-cdb", cdbVersion())
			}
		}}
)

// binary opens the cdb this binary embeds (SetFS) once for each
// -embed_readahead (Open advises the pages).
var binary atomic.Pointer[map[bool]func() (*CDB, error)]

// SetFS makes fsys, a //go:embed file system holding Committed or
// Generated, the cdb the Embed benchmarks read. Without it (or with nil)
// they fail with the reason, and nothing else changes.
func SetFS(fsys fs.FS) {
	open := map[bool]func() (*CDB, error){}
	for _, ra := range []bool{false, true} {
		if fsys != nil {
			open[ra] = sync.OnceValues(func() (*CDB, error) { return Open(fsys, ra) })
		}
	}
	binary.Store(&open)
}

// opened is the binary's cdb with readahead on or off; nil without SetFS.
func opened(readahead bool) (*CDB, error) {
	if open := binary.Load(); open != nil && (*open)[readahead] != nil {
		return (*open)[readahead]()
	}
	return nil, nil
}

// cdbOf is the cdb a run reads (nil without SetFS).
func cdbOf(c *core.Config) (*CDB, error) { return opened(readaheadFlag.Get(c)) }

// EmbedBuild writes the embedded cdb again, one op the whole file made
// durable, and compares it byte for byte. write=direct passes alldroll/cdb's
// 8-byte hash-table writes to write(2) as in the seed, write=buffered
// through a 1 MiB buffer. build-rss-MB is how far the build raised the
// peak RSS (pages of the embedded cdb read earlier count as RSS too).
func init() {
	core.Register(&core.Workload{
		Name: "EmbedBuild",
		Scratch: func(e *core.Env, _ engine.Info) int64 {
			var n uint64 // none without a cdb: the benchmark fails
			if d, _ := cdbOf(&e.Cfg); d != nil {
				n = cmp.Or(recordsFlag.Get(&e.Cfg), d.Records)
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
	b.SetBytes(records.CDBSize(n))
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
		m0, _ := measure.ReadRSS()
		start := time.Now()
		b.StartTimer()
		err := BuildCDB(path, n, buffered)
		b.StopTimer()
		elapsed += time.Since(start)
		if m, merr := measure.ReadRSS(); merr == nil && m0.Total() > 0 {
			peak = max(peak, m.Peak-m0.Total())
		}
		if err == nil {
			err = d.Check(path, n)
		}
		if err = cmp.Or(err, e.Root.RemoveAll(dir)); err != nil {
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
	for off := 0; ; off += len(ba) {
		na, ea := io.ReadFull(a, ba)
		nb, eb := io.ReadFull(b, bb)
		if !bytes.Equal(ba[:na], bb[:nb]) {
			return fmt.Errorf("built cdb differs from the embedded one within bytes %d..%d", off, off+max(na, nb))
		}
		if ea != nil || eb != nil {
			if ea == io.ErrUnexpectedEOF || ea == io.EOF {
				return nil
			}
			return errors.Join(ea, eb)
		}
	}
}
