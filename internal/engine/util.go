package engine

import (
	"bytes"
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
// replace, as "path=label" (a local copy's: a hash of its sources): kvb
// compare -module and kvb versions set it with -ldflags -X, since a test
// binary does not record a replacement.
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

// byCompression is what o.Compression names: snappy, zstd, or none (also
// when empty); Open has checked it against Info.Compressions.
func byCompression[T any](o Options, none, snappy, zstd T) T {
	switch o.Compression {
	case "snappy":
		return snappy
	case "zstd":
		return zstd
	}
	return none
}

// either is a when c holds, else b.
func either[T any](c bool, a, b T) T {
	if c {
		return a
	}
	return b
}

// setPositive sets *dst to v when v > 0: an option at 0 leaves the
// engine's default. ifPositive is the same for an option set by a call.
func setPositive[T int | int64 | uint64 | float64](dst *T, v T) {
	ifPositive(v, func(v T) { *dst = v })
}

func ifPositive[T int | int64 | uint64 | float64](v T, set func(T)) {
	if v > 0 {
		set(v)
	}
}

// allocated is the space a file occupies on disk.
func allocated(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Blocks * 512
	}
	return fi.Size()
}

// store is what the adapters' databases share: where the store is, how it
// was opened, what Settings reports, and whether it is closed.
type store struct {
	name          string // the engine's: its errors begin with it
	dir           string
	readOnly      bool
	noCompactions bool // Options.DisableCompactions: Flush waits for no compaction
	closed        atomic.Bool
	settings      []Setting
}

func storeOf(name string, o Options) store {
	return store{name: name, dir: o.Dir, readOnly: o.ReadOnly, noCompactions: o.DisableCompactions}
}

func (l *store) Name() string         { return l.name }
func (l *store) Settings() []Setting  { return slices.Clone(l.settings) }
func (l *store) Size() (int64, error) { return DirSize(l.dir) }

// closeOnce closes the store with close unless it is closed already.
func (l *store) closeOnce(close func() error) error {
	if l.closed.Swap(true) {
		return nil
	}
	return close()
}

// closeWithoutReaders is closeOnce for a B-tree, which it refuses while
// readers of its read transactions are open: the caller holds the lock its
// readers and writers take.
func (l *store) closeWithoutReaders(readers int64, close func() error) error {
	if readers > 0 && !l.closed.Load() {
		return fmt.Errorf("engine %s: Close with %d readers still open", l.name, readers)
	}
	return l.closeOnce(close)
}

// errClosed is what a call on the closed store returns.
func (l *store) errClosed() error { return errors.New(l.name + ": database is closed") }

// usable is errClosed once the store is closed, or nil.
func (l *store) usable() error {
	if l.closed.Load() {
		return l.errClosed()
	}
	return nil
}

// writable is why the store cannot take a write now, or nil.
func (l *store) writable() error {
	if err := l.usable(); err != nil || !l.readOnly {
		return err
	}
	return errors.New(l.name + ": database is read-only")
}

// committing marks a batch of the store committed (*done), or says why it
// cannot be: it was before, or the store is closed.
func (l *store) committing(done *bool) error {
	if *done {
		return errors.New(l.name + ": batch already committed")
	}
	*done = true
	return l.usable()
}

// write runs f once the store can take a write (writable).
func (l *store) write(f func() error) error {
	if err := l.writable(); err != nil {
		return err
	}
	return f()
}

// directReader is the part of a reader that reads the store directly
// (Pebble, RocksDB, goleveldb): Close only marks it. Each such store has a
// reader type of its own around it whose Get calls the engine's directly,
// so that a timed read makes no call the engine's Get does not make.
type directReader struct{ closed bool }

func (r *directReader) Close() error {
	r.closed = true
	return nil
}

// readerIf is r, or err when it is not nil.
func readerIf(err error, r Reader) (Reader, error) {
	if err != nil {
		return nil, err
	}
	return r, nil
}

// readable is why a direct reader of l cannot read now, or nil.
func (r *directReader) readable(l *store) error {
	if r.closed || l.closed.Load() {
		return l.errClosed()
	}
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

// The settle rule every engine with background work shares in Flush
// (docs/engines.md, "When writes are settled"): each pays at least one
// settlePoll, so the rule does not tilt populate rates.
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

// levelDBLogFile is Info.LogFile of the stores that name files as LevelDB
// does (RocksDB, goleveldb): write-ahead logs or journals (NNNNNN.log) and
// the info log (LOG, LOG.old*).
func levelDBLogFile(n string) bool {
	return strings.HasSuffix(n, ".log") || n == "LOG" || strings.HasPrefix(n, "LOG.old")
}

// lsmIterBounds turns IterOptions into an inclusive lower and an exclusive
// upper bound (nil: none), copied so the caller may reuse its slices.
func lsmIterBounds(o IterOptions) (lower, upper []byte) {
	upper = o.End
	// The smallest key above every key with the prefix: its last byte below
	// 0xff incremented, the rest dropped (none for an all-0xff prefix).
	i := len(o.Prefix) - 1
	for i >= 0 && o.Prefix[i] == 0xff {
		i--
	}
	if i >= 0 {
		if pe := append(bytes.Clone(o.Prefix[:i]), o.Prefix[i]+1); upper == nil || bytes.Compare(pe, upper) < 0 {
			upper = pe
		}
	}
	if first := o.first(); len(first) > 0 {
		lower = bytes.Clone(first)
	}
	return lower, bytes.Clone(upper)
}

// lsmMiB formats a byte count as whole MiB when it is one, as bytes otherwise.
func lsmMiB(n int64) string {
	if n%(1<<20) == 0 {
		return strconv.FormatInt(n>>20, 10) + "MiB"
	}
	return strconv.FormatInt(n, 10) + "B"
}

// lsmErrBatch is the batch of a database that cannot take writes (closed or
// read-only): every call fails with err.
type lsmErrBatch struct{ err error }

func (b *lsmErrBatch) Set(key, value []byte) error { return b.err }
func (b *lsmErrBatch) Commit() error               { return b.err }
func (b *lsmErrBatch) Len() int                    { return 0 }

// btreeMap is the memory map of a B-tree expected to hold expected
// logical bytes: 4× (page fill, branch pages, overflow pages for big
// values and the freelist all add to the file), rounded up to 1 GiB, at
// least 1 GiB and at most limit (a multiple of 1 GiB). The map is
// address space: bbolt does not grow its file to it.
func btreeMap(expected, limit int64) int64 {
	if expected > limit/4 {
		return limit
	}
	return roundUpGiB(max(gib, 4*expected))
}

const gib = int64(1) << 30

func roundUpGiB(n int64) int64 { return (n + gib - 1) / gib * gib }

// first is where an iteration starts: the later of Start and Prefix.
func (o IterOptions) first() []byte {
	if bytes.Compare(o.Prefix, o.Start) > 0 {
		return o.Prefix
	}
	return o.Start
}

// past reports whether an iteration that met k has ended: at End, or past
// Prefix. The B-trees' cursors and the reference rail take no bounds.
func (o IterOptions) past(k []byte) bool {
	return o.End != nil && bytes.Compare(k, o.End) >= 0 || o.Prefix != nil && !bytes.HasPrefix(k, o.Prefix)
}

// batchArena buffers a batch's keys and values in one growing byte slice plus
// offsets, rather than a slice per key.
type batchArena struct {
	data []byte
	ends []int // per entry: key end, value end; an entry starts where the last ended
}

func (a *batchArena) Set(k, v []byte) error {
	a.data = append(a.data, k...)
	ke := len(a.data)
	a.data = append(a.data, v...)
	a.ends = append(a.ends, ke, len(a.data))
	return nil
}

func (a *batchArena) Len() int { return len(a.ends) / 2 }

// entry returns the i'th key and value, capped so appending to one cannot
// overwrite the next.
func (a *batchArena) entry(i int) (k, v []byte) {
	s := 0
	if i > 0 {
		s = a.ends[2*i-1]
	}
	ke, ve := a.ends[2*i], a.ends[2*i+1]
	return a.data[s:ke:ke], a.data[ke:ve:ve]
}

func (a *batchArena) reset() {
	a.data = a.data[:0]
	a.ends = a.ends[:0]
}

// lsmReserve is an LSM's Info.WriteReserve: memtables of mem bytes, each
// a level-0 table once flushed, and with compactions on a level-0
// compaction of l0 tables into a base level of base bytes, but never more
// than the data the caller said it would write (Options.ExpectedBytes).
func lsmReserve(o Options, mem, memtables, l0, base int64) int64 {
	if o.DisableCompactions {
		return memtables * mem
	}
	if o.ExpectedBytes > 0 {
		base = min(base, o.ExpectedBytes)
	}
	return (memtables+l0)*mem + base
}
