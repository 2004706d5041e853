package kvbench

import (
	"embed"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/alldroll/cdb"
	"golang.org/x/sys/unix"

	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/records"
)

// The constant database compiled into the test binary. `make embed-data
// RECORDS=n` writes embedGenerated (never committed), which the next build
// embeds in place of the committed one.
//
//go:embed testdata/embed-*.cdb
var embedFS embed.FS

const (
	embedCommitted = "testdata/embed-committed.cdb"
	embedGenerated = "testdata/embed-generated.cdb"
)

// embeddedCDB is the cdb this binary carries.
type embeddedCDB struct {
	name    string
	size    int64
	records uint64
	// data reads the bytes where the linker put them (read-only data of
	// the executable, paged in on demand): nothing is copied up front.
	data io.ReaderAt
	// bytes is the same data as a string, to advise the kernel on its
	// pages; empty if embed's internals ever change shape.
	bytes string
}

// embeddedString reaches the string an embed.FS file reads from. embed
// exposes it only as an io.ReaderAt; madvise needs its address.
func embeddedString(f fs.File) string {
	v := reflect.ValueOf(f)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct || v.Elem().NumField() == 0 {
		return ""
	}
	p := v.Elem().Field(0) // openFile.f *file
	if p.Kind() != reflect.Pointer || p.IsNil() || p.Elem().Kind() != reflect.Struct {
		return ""
	}
	d := p.Elem().FieldByName("data")
	if d.Kind() != reflect.String {
		return ""
	}
	return d.String()
}

// adviseReadahead applies -embed_readahead to the embedded cdb's pages:
// with readahead off, a page fault reads that page and not the device's
// read_ahead_kb around it.
func (e *embeddedCDB) adviseReadahead(on bool) error {
	if on {
		return nil
	}
	if int64(len(e.bytes)) != e.size {
		return fmt.Errorf("-embed_readahead=false: cannot find the embedded bytes of %s", e.name)
	}
	p := unsafe.Pointer(unsafe.StringData(e.bytes))
	off := int(uintptr(p) & uintptr(os.Getpagesize()-1)) // madvise wants a page-aligned start
	b := unsafe.Slice((*byte)(unsafe.Add(p, -off)), len(e.bytes)+off)
	if err := unix.Madvise(b, unix.MADV_RANDOM); err != nil {
		return fmt.Errorf("madvise(MADV_RANDOM) on the embedded cdb: %w", err)
	}
	return nil
}

// openEmbedded finds the embedded cdb, preferring the generated one, and
// checks that it is a complete set of this suite's records.
func openEmbedded() (*embeddedCDB, error) {
	name := embedGenerated
	f, err := embedFS.Open(name)
	if err != nil {
		name = embedCommitted
		if f, err = embedFS.Open(name); err != nil {
			return nil, fmt.Errorf("no embedded cdb: %w", err)
		}
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	ra, ok := f.(io.ReaderAt)
	if !ok {
		return nil, fmt.Errorf("%s: embed.FS file is not an io.ReaderAt", name)
	}
	e := &embeddedCDB{name: name, size: fi.Size(), data: ra, bytes: embeddedString(f)}
	// Advise before the first read: reading the header faults a page in.
	readahead := *flagEmbedReadahead
	if embedReadaheadOverride != nil {
		readahead = *embedReadaheadOverride
	}
	if err := e.adviseReadahead(readahead); err != nil {
		return nil, err
	}
	r, err := cdb.New().GetReader(ra)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	e.records = uint64(r.Size())
	if e.records == 0 || records.CDBSize(e.records) != e.size {
		return nil, fmt.Errorf("%s: %d bytes do not hold %d whole records (want %d bytes); rebuild it with make embed-data", name, e.size, e.records, records.CDBSize(e.records))
	}
	return e, nil
}

var embedded = sync.OnceValues(openEmbedded)

// embedReadaheadOverride replaces -embed_readahead in a cold-start child,
// which gets its settings from the parent rather than from flags.
var embedReadaheadOverride *bool

// embedRecords is how many records the Embed benchmarks use: every
// embedded record unless -embed_records caps it.
func embedRecords() uint64 {
	e, err := embedded()
	if err != nil {
		return 0
	}
	if n := *flagEmbedRecords; n > 0 && n < e.records {
		return n
	}
	return e.records
}

// validateEmbedFlags checks -embed_records against the embedded cdb.
func validateEmbedFlags() error {
	e, err := embedded()
	if err != nil {
		return err
	}
	if !*flagEmbedReadahead && int64(len(e.bytes)) != e.size {
		return flagError("embed_readahead", false, "this Go version's embed.FS hides the embedded bytes; only true works")
	}
	if n := *flagEmbedRecords; n > e.records {
		return flagError("embed_records", n, fmt.Sprintf("the embedded %s holds %d records; use at most that, or 0 for all (make embed-data RECORDS=%d embeds more)", e.name, e.records, n))
	}
	return nil
}

// printEmbedConfig names the embedded cdb and how much of it the run uses.
func printEmbedConfig(w io.Writer) {
	e, err := embedded()
	if err != nil {
		fmt.Fprintf(w, "embed-cdb: none (%v)\n", err)
		return
	}
	fmt.Fprintf(w, "embed-cdb: %s (%d records, %d bytes)\n", e.name, e.records, e.size)
	fmt.Fprintf(w, "embed-records: %d\n", embedRecords())
	fmt.Fprintf(w, "embed-readahead: %v\n", *flagEmbedReadahead)
	fmt.Fprintf(w, "engine-cdb: %s\n", engine.ModuleVersion("github.com/alldroll/cdb", cdb.New))
}

// embedPlan is what the selected Embed benchmarks need on disk: the
// embedded cdb as a file, the same records in each engine, scratch space.
type embedPlan struct {
	file    bool
	engines []engine.Info
	scratch bool
}

// Embed benchmarks that read the records from disk.
var embedReadBenchmarks = []string{"BenchmarkEmbedGet", "BenchmarkEmbedIterate", "BenchmarkEmbedColdStart"}

func newEmbedPlan(pattern string) embedPlan {
	var p embedPlan
	levels := benchLevels(pattern)
	top, err := regexp.Compile(levels[0])
	if err != nil {
		return p
	}
	// A second level (src=...) narrows which sources need their records
	// on disk.
	src := func(string) bool { return true }
	if len(levels) > 1 {
		if re, err := regexp.Compile(levels[1]); err == nil {
			src = re.MatchString
		}
	}
	for _, b := range embedReadBenchmarks {
		if !top.MatchString(b) {
			continue
		}
		p.scratch = true
		p.file = p.file || src("src=file")
		for _, info := range engine.All() {
			if !info.Reference && src("src="+info.Title) && !containsInfo(p.engines, info) {
				p.engines = append(p.engines, info)
			}
		}
	}
	p.scratch = p.scratch || top.MatchString("BenchmarkEmbedBuild")
	return p
}

// benchLevels splits a -bench pattern at the slashes go test splits it at.
func benchLevels(pattern string) []string {
	var levels []string
	for rest := pattern; ; {
		top := topLevel(rest)
		levels = append(levels, top)
		if len(top) == len(rest) {
			return levels
		}
		rest = rest[len(top)+1:]
	}
}

func containsInfo(list []engine.Info, info engine.Info) bool {
	for _, i := range list {
		if i.Name == info.Name {
			return true
		}
	}
	return false
}

func (p embedPlan) touchesDisk() bool { return p.scratch }

// diskEstimate bounds what the plan writes: the cdb file, each engine's
// copy of the records at up to three times their size, a scratch cdb and
// a copy of the test binary.
func (p embedPlan) diskEstimate() int64 {
	if !p.touchesDisk() {
		return 0
	}
	n := embedRecords()
	bin := int64(0)
	if exe, err := os.Executable(); err == nil {
		if fi, err := os.Stat(exe); err == nil {
			bin = fi.Size()
		}
	}
	return 2*records.CDBSize(n) + int64(len(p.engines))*3*records.LogicalBytes(n) + bin
}

// ensure builds (or reuses) every fixture the plan reads.
func (p embedPlan) ensure() error {
	if p.file {
		if _, err := embedFileFixture(); err != nil {
			return err
		}
	}
	for _, info := range p.engines {
		if _, err := embedFixture(info); err != nil {
			return err
		}
	}
	return nil
}

// embedFileFixture is the embedded cdb written out as a file under the
// suite's root, byte for byte, so "embedded" and "file" read the same bytes.
func embedFileFixture() (string, error) {
	e, err := embedded()
	if err != nil {
		return "", err
	}
	p := dataset.Params{Engine: "cdb", Keys: e.records, FormatVersion: dataset.FormatVersion,
		Compression: "none", Layout: map[string]string{"set": "lorem"}}
	dir, _, err := cfg.root.Ensure(p, func(dir string) (dataset.Manifest, error) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return dataset.Manifest{}, err
		}
		start := time.Now()
		f, err := os.Create(filepath.Join(dir, "data.cdb"))
		if err != nil {
			return dataset.Manifest{}, err
		}
		_, err = io.Copy(f, io.NewSectionReader(e.data, 0, e.size))
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return dataset.Manifest{EngineVersion: engine.ModuleVersion("github.com/alldroll/cdb", cdb.New),
			KeyCount: e.records, LogicalBytes: records.LogicalBytes(e.records), DiskBytes: e.size,
			BuildSeconds: time.Since(start).Seconds(), Settled: "copied from the embedded cdb and fsynced"}, err
	}, logf)
	return filepath.Join(dir, "data.cdb"), err
}

var (
	embedFixturesMu sync.Mutex
	embedFixtures   = map[string]string{}
)

// embedFixture is the engine's database of the first embedRecords()
// records, written in record order through its batch path and flushed.
func embedFixture(info engine.Info) (string, error) {
	embedFixturesMu.Lock()
	defer embedFixturesMu.Unlock()
	if d, ok := embedFixtures[info.Name]; ok {
		return d, nil
	}
	n := embedRecords()
	layout := fixtureLayout(info)
	if layout == nil {
		layout = map[string]string{}
	}
	layout["set"] = "lorem"
	opts := embedOptions(info, "")
	p := dataset.Params{Engine: info.Name, Keys: n, FormatVersion: dataset.FormatVersion,
		Compression: opts.Compression, Layout: layout}
	dir, _, err := cfg.root.Ensure(p, func(dir string) (dataset.Manifest, error) {
		opts.Dir = dir
		logf("building fixture %s (%d cdb records)", p.Name(), n)
		db, err := engine.Open(info.Name, opts)
		if err != nil {
			return dataset.Manifest{}, err
		}
		defer db.Close()
		start := time.Now()
		if err := loadRecords(db, n); err != nil {
			return dataset.Manifest{}, err
		}
		if err := db.Flush(); err != nil {
			return dataset.Manifest{}, err
		}
		el := time.Since(start)
		size, err := db.Size()
		if err != nil {
			return dataset.Manifest{}, err
		}
		return dataset.Manifest{EngineVersion: db.Version(), KeyCount: n, LogicalBytes: records.LogicalBytes(n),
			DiskBytes: size, BuildSeconds: el.Seconds(),
			Settled: "Flush returned: data durable, memtables flushed, no compaction running or pending"}, db.Close()
	}, logf)
	if err != nil {
		return "", err
	}
	embedFixtures[info.Name] = dir
	return dir, nil
}

// embedOptions are the run's engine options, with the LMDB map sized for
// the record set rather than the main data set.
func embedOptions(info engine.Info, dir string) engine.Options {
	o := engineOptions(info, dir)
	o.ExpectedBytes = records.LogicalBytes(embedRecords())
	return o
}

// loadRecords writes records 0..n-1 in order, -batch per commit.
func loadRecords(db engine.DB, n uint64) error {
	var kb [records.MaxKeySize]byte
	var vb [records.MaxValueSize]byte
	for lo := uint64(0); lo < n; lo += uint64(*flagBatch) {
		batch := db.NewBatch()
		for i := lo; i < min(n, lo+uint64(*flagBatch)); i++ {
			if err := batch.Set(records.Key(kb[:0], i), records.Value(vb[:0], i)); err != nil {
				return err
			}
		}
		if err := batch.Commit(); err != nil {
			return fmt.Errorf("commit of records from %d: %w", lo, err)
		}
	}
	return nil
}

// TestEmbeddedCDBIsReproducible rebuilds the embedded cdb from its record
// count and compares every byte, so the committed file is what the
// generator makes.
func TestEmbeddedCDBIsReproducible(t *testing.T) {
	e, err := embedded()
	if err != nil {
		t.Fatal(err)
	}
	if e.records > 1_000_000 && testing.Short() {
		t.Skip("a large generated cdb")
	}
	path := filepath.Join(t.TempDir(), "again.cdb")
	if err := buildFile(path, e.records, true); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := sameBytes(f, io.NewSectionReader(e.data, 0, e.size)); err != nil {
		t.Fatal(err)
	}
}

func TestEmbedRecordsFlagChecked(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary")
	}
	e, err := embedded()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	before := treeState(t, dir)
	out, code := runSelf(t, "-test.bench=BenchmarkEmbedGet", "-embed_records", fmt.Sprint(e.records+1), "-dir", dir)
	if code == 0 || !strings.Contains(out, "-embed_records") || !strings.Contains(out, "make embed-data") {
		t.Fatalf("exit %d: %s", code, out)
	}
	if after := treeState(t, dir); !reflect.DeepEqual(before, after) {
		t.Fatal("a bad -embed_records changed -dir")
	}
}

func TestEmbedPlan(t *testing.T) {
	for pattern, want := range map[string][3]bool{ // file, engines, scratch
		"BenchmarkEmbedGet":                   {true, true, true},
		"EmbedColdStart/src=file":             {true, false, true},
		"EmbedGet/src=(embedded|Bolt)/order=": {false, true, true},
		"EmbedIterate/src=embedded":           {false, false, true},
		"BenchmarkEmbedBuild":                 {false, false, true},
		"BenchmarkReadRandomBadger":           {false, false, false},
		"BenchmarkEmbed":                      {true, true, true},
		"BenchmarkPopulate|EmbedGet":          {true, true, true},
	} {
		p := newRunPlan(pattern).embed
		if got := [3]bool{p.file, len(p.engines) > 0, p.scratch}; got != want {
			t.Errorf("%s: plan %+v, want file/engines/scratch %v", pattern, p, want)
		}
	}
}
