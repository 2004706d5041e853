package engine

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/kvbench/kvbench/internal/memlimit"
	"golang.org/x/mod/module"
)

// ModuleLabel names the version of one engine module built in by a
// replace, as "path=label": kvb compare -module and kvb versions set it with
// -ldflags -X, since a test binary does not record a replacement. A local
// copy's label is a hash of its sources, so fixtures are keyed by what
// wrote them.
var ModuleLabel string

// ModuleVersion returns "path version" for the module that defines fn.
// Build info lists it in ordinary binaries; go test binaries carry no
// module list, so the fallback reads the "@version" the compiler recorded
// in the source path of fn (also present with -trimpath).
func ModuleVersion(path string, fn any) string {
	if p, label, ok := strings.Cut(ModuleLabel, "="); ok && p == path {
		return path + " " + label
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == path {
				if d.Replace != nil {
					return path + " " + d.Version + " => " + d.Replace.Path + " " + d.Replace.Version
				}
				return path + " " + d.Version
			}
		}
	}
	if fn != nil {
		if f := runtime.FuncForPC(reflect.ValueOf(fn).Pointer()); f != nil {
			file, _ := f.FileLine(f.Entry())
			escaped, err := module.EscapePath(path) // PowerDNS is stored as !power!d!n!s
			if err != nil {
				escaped = path
			}
			for _, p := range []string{path, escaped} {
				if i := strings.Index(file, p+"@"); i >= 0 {
					ver, _, _ := strings.Cut(file[i+len(p)+1:], "/")
					if ver != "" {
						return path + " " + ver
					}
				}
			}
		}
	}
	return path + " (unknown)"
}

// either is a when c holds, else b.
func either[T any](c bool, a, b T) T {
	if c {
		return a
	}
	return b
}

// setPositive sets *dst to v when v > 0: an option at 0 leaves the
// engine's default.
func setPositive[T int | int64 | uint64 | float64](dst *T, v T) {
	if v > 0 {
		*dst = v
	}
}

// allocated is the space a file occupies on disk.
func allocated(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Blocks * 512
	}
	return fi.Size()
}

// lsm is what the LSM adapters' databases share: where the store is, how
// it was opened, what Settings reports, and whether it is closed.
type lsm struct {
	name          string // the engine's: its errors begin with it
	dir           string
	readOnly      bool
	noCompactions bool // Options.DisableCompactions: Flush waits for no compaction
	closed        atomic.Bool
	settings      []Setting
}

func lsmOf(name string, o Options) lsm {
	return lsm{name: name, dir: o.Dir, readOnly: o.ReadOnly, noCompactions: o.DisableCompactions}
}

func (l *lsm) Name() string         { return l.name }
func (l *lsm) Settings() []Setting  { return slices.Clone(l.settings) }
func (l *lsm) Size() (int64, error) { return DirSize(l.dir) }

// errClosed is what a call on the closed store returns.
func (l *lsm) errClosed() error { return errors.New(l.name + ": database is closed") }

// usable is errClosed once the store is closed, or nil.
func (l *lsm) usable() error {
	if l.closed.Load() {
		return l.errClosed()
	}
	return nil
}

// writable is why the store cannot take a write now, or nil.
func (l *lsm) writable() error {
	if err := l.usable(); err != nil || !l.readOnly {
		return err
	}
	return errors.New(l.name + ": database is read-only")
}

// committing marks a batch of the store committed (*done), or says why it
// cannot be: it was before, or the store is closed.
func (l *lsm) committing(done *bool) error {
	if *done {
		return errors.New(l.name + ": batch already committed")
	}
	*done = true
	return l.usable()
}

// write runs f once the store can take a write (writable).
func (l *lsm) write(f func() error) error {
	if err := l.writable(); err != nil {
		return err
	}
	return f()
}

// directStore is an LSM read directly (Pebble, RocksDB, goleveldb): every
// Get and iterator sees the latest committed data (an iterator is its own
// consistent view), and a reader holds no snapshot.
type directStore interface {
	usable() error
	errClosed() error
	get(key []byte, fn func(value []byte) error) (bool, error)
	iter(o IterOptions) (Iterator, error)
}

// directReader is the reader of a directStore: it holds nothing, so Close
// only marks it.
type directReader struct {
	s      directStore
	closed bool
}

func newDirectReader(s directStore) (Reader, error) {
	if err := s.usable(); err != nil {
		return nil, err
	}
	return &directReader{s: s}, nil
}

func (r *directReader) check() error {
	if r.closed {
		return r.s.errClosed()
	}
	return r.s.usable()
}

func (r *directReader) Get(key []byte, fn func(value []byte) error) (bool, error) {
	if err := r.check(); err != nil {
		return false, err
	}
	return r.s.get(key, fn)
}

func (r *directReader) NewIter(o IterOptions) (Iterator, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	return r.s.iter(o)
}

func (r *directReader) Close() error {
	r.closed = true
	return nil
}

// lsmLayout is what shapes an LSM's files besides compression: its table
// filters, the size its memtables flush at and its data block size.
func lsmLayout(o Options) map[string]string {
	m := map[string]string{"b": strconv.Itoa(o.BloomBitsPerKey), "m": strconv.Itoa(o.MemtableMB), "bs": strconv.Itoa(o.BlockSize)}
	// A memory budget's bounds shape the tables too (their size, when L0
	// compacts); set only under a budget, so other fixtures keep their keys.
	for k, v := range map[string]int64{"t": o.BuildTableBytes, "lb": o.BaseLevelBytes, "l0": int64(o.L0CompactionTables)} {
		if v > 0 {
			m[k] = strconv.FormatInt(v, 10)
		}
	}
	return m
}

// lsmBlockSize states the data block size an LSM was given: bytes as
// -block_size reads them (32KiB), or the engine's own default when o
// sets none.
func lsmBlockSize(o Options, engineDefault int) string {
	if o.BlockSize > 0 {
		return memlimit.FormatSize(int64(o.BlockSize))
	}
	return memlimit.FormatSize(int64(engineDefault)) + " (engine default)"
}

// checkIntParam accepts an empty value (the engine's default) or an
// integer from lo to hi.
func checkIntParam(lo, hi int) func(Text, any) error {
	return func(v Text, _ any) error {
		if v == "" {
			return nil
		}
		if n, err := strconv.Atoi(string(v)); err != nil || n < lo || n > hi {
			return fmt.Errorf("must be empty (the engine's default) or an integer from %d to %d", lo, hi)
		}
		return nil
	}
}

// boundDim: an LSM iterator takes a real upper bound (a B-tree cursor
// stops at the first key past a prefix either way). The workload bounds
// each iterator to its prefix when the value is "prefix".
var boundDim = Dim{Name: "bound", Values: []string{"none", "prefix"}, Is: IteratorBound}

// One settle rule for every engine with background work (Flush): poll the
// engine's own "flushes or compactions running or due" signal every
// settlePoll, and call it settled after settleQuiet quiet polls in a row.
// A second quiet poll is asked for because a compaction that has written
// its tables but not yet installed them shows in no signal for a moment.
// Every engine pays the same (at least one settlePoll of waiting), so the
// rule does not tilt populate rates.
const (
	settlePoll    = 10 * time.Millisecond
	settleQuiet   = 2
	settleTimeout = 10 * time.Minute
)

// settle waits until busy has reported false settleQuiet times in a row.
func settle(engine string, busy func() (bool, error)) error {
	deadline := time.Now().Add(settleTimeout)
	quiet := 0
	for {
		b, err := busy()
		if err != nil {
			return err
		}
		if b {
			quiet = 0
		} else if quiet++; quiet >= settleQuiet {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: Flush: compactions did not settle within %v", engine, settleTimeout)
		}
		time.Sleep(settlePoll)
	}
}
