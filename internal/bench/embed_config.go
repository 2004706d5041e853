package bench

import (
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"reflect"
	"unsafe"

	"github.com/alldroll/cdb"
	"golang.org/x/sys/unix"

	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/records"
)

// EmbedConfig is the embed workloads' part of the run configuration: the
// constant database (cdb) compiled into the test binary (seed 004).
type EmbedConfig struct {
	Records   uint64 // -embed_records: records of the embedded cdb to use; 0 is all
	Readahead bool   // -embed_readahead

	// FS holds the embedded cdb (EmbedGenerated or EmbedCommitted): the
	// root package sets it to its //go:embed file system. Without it the
	// Embed benchmarks fail with the reason and nothing else changes.
	FS fs.FS

	// Derived by init, once per run.
	cdb *EmbeddedCDB // nil without FS
	n   uint64       // records the workloads use
}

// The cdb files the root package embeds. `make embed-data RECORDS=n`
// writes EmbedGenerated (never committed), which the next build embeds in
// place of the committed one.
const (
	EmbedCommitted = "testdata/embed-committed.cdb"
	EmbedGenerated = "testdata/embed-generated.cdb"
)

func (c *EmbedConfig) defaults() { c.Readahead = true }

func (c *EmbedConfig) bind(fs *flag.FlagSet) {
	fs.Uint64Var(&c.Records, "embed_records", c.Records, "records of the embedded cdb the Embed benchmarks use (0: all of them)")
	fs.BoolVar(&c.Readahead, "embed_readahead", c.Readahead, "leave OS readahead on for the embedded cdb's pages of the executable (false: madvise MADV_RANDOM, as -readahead off has LMDB do to its map)")
}

// validate has nothing to check without the embedded cdb: init checks
// -embed_records and -embed_readahead against it.
func (c *EmbedConfig) validate() []error { return nil }

// echo names the embedded cdb and how much of it the run uses.
func (c *EmbedConfig) echo(e *Env, line func(string, any)) {
	d := c.cdb
	if d == nil {
		line("embed-cdb", "none (no embedded file system)")
		return
	}
	line("embed-cdb", fmt.Sprintf("%s (%d records, %d bytes)", d.Name, d.Records, d.Size))
	line("embed-records", c.n)
	line("embed-cold-ops", e.embedColdOps(c.n)) // records a cold EmbedGet round reads
	line("embed-readahead", c.Readahead)
	line("engine-cdb", cdbVersion())
}

// init opens the embedded cdb, applies -embed_readahead to its pages and
// checks -embed_records against it, before any work.
func (c *EmbedConfig) init(e *Env) error {
	if c.FS == nil {
		return nil
	}
	d, err := OpenEmbedded(c.FS, c.Readahead)
	if err != nil {
		return err
	}
	if n := c.Records; n > d.Records {
		return flagError("embed_records", n, fmt.Sprintf("the embedded %s holds %d records; use at most that, or 0 for all (make embed-data RECORDS=%d embeds more)", d.Name, d.Records, n))
	}
	c.cdb, c.n = d, d.Records
	if n := c.Records; n > 0 {
		c.n = n
	}
	return nil
}

func cdbVersion() string { return engine.ModuleVersion("github.com/alldroll/cdb", cdb.New) }

// EmbeddedCDB is the cdb a binary carries.
type EmbeddedCDB struct {
	Name    string
	Size    int64
	Records uint64
	// Data reads the bytes where the linker put them (read-only data of
	// the executable, paged in on demand): nothing is copied up front.
	Data io.ReaderAt
	// bytes is the same data as a string, to advise the kernel on its
	// pages; empty if embed's internals ever change shape (or fsys is not
	// an embed.FS).
	bytes string
}

// OpenEmbedded finds the embedded cdb in fsys, preferring the generated
// one, applies readahead to its pages, and checks that it is a complete
// set of this suite's records.
func OpenEmbedded(fsys fs.FS, readahead bool) (*EmbeddedCDB, error) {
	name := EmbedGenerated
	f, err := fsys.Open(name)
	if err != nil {
		name = EmbedCommitted
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
	d := &EmbeddedCDB{Name: name, Size: fi.Size(), Data: ra, bytes: embeddedString(f)}
	// Advise before the first read: reading the header faults a page in.
	if err := d.adviseReadahead(readahead); err != nil {
		return nil, err
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
	s := p.Elem().FieldByName("data")
	if s.Kind() != reflect.String {
		return ""
	}
	return s.String()
}

// adviseReadahead applies -embed_readahead to the embedded cdb's pages:
// with readahead off, a page fault reads that page and not the device's
// read_ahead_kb around it.
func (d *EmbeddedCDB) adviseReadahead(on bool) error {
	if on {
		return nil
	}
	if int64(len(d.bytes)) != d.Size {
		return flagError("embed_readahead", false, "this Go version's embed.FS hides the embedded bytes of "+d.Name+"; only true works")
	}
	p := unsafe.Pointer(unsafe.StringData(d.bytes))
	off := int(uintptr(p) & uintptr(os.Getpagesize()-1)) // madvise wants a page-aligned start
	b := unsafe.Slice((*byte)(unsafe.Add(p, -off)), len(d.bytes)+off)
	if err := unix.Madvise(b, unix.MADV_RANDOM); err != nil {
		return fmt.Errorf("madvise(MADV_RANDOM) on the embedded cdb: %w", err)
	}
	return nil
}
