// Package engine puts every key-value store the suite measures behind one
// small interface. Adapters know nothing about benchmarks; benchmark bodies
// know nothing about any one adapter.
package engine

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/kvbench/kvbench/internal/flagreg"
)

// Options is everything that shapes how an engine is opened, each field
// with the same intent for every engine (docs/engines.md, "The fairness
// table"); DB.Settings reports what each engine did with it.
type Options struct {
	Dir string // the engine's own directory; created if missing

	// Sync makes every committed batch durable before Commit returns; off,
	// the OS decides. Flush always makes everything durable.
	Sync bool

	CacheMB     int    // the LSMs' own block cache; B-trees read through the OS page cache
	MemtableMB  int    // the LSMs' memtable (write buffer) size
	Compression string // of blocks on disk: "none", "snappy" or "zstd"; B-trees take only "none"

	// BloomBitsPerKey for LSM table filters; 0 turns them off.
	BloomBitsPerKey int

	// BlockSize is the LSMs' target size of a data block, uncompressed, in
	// bytes; 0 keeps each engine's default (4 KiB in all). B-trees ignore it.
	BlockSize int

	// SkipChecksums turns off block checksum verification on reads where
	// the engine allows it.
	SkipChecksums bool

	// Readahead is whether the OS may read more of a file than the engine
	// asks for: ReadaheadOff ("off", also when empty) or ReadaheadOS ("os",
	// each engine's default). An engine's own, explicit readahead stays.
	Readahead string

	// ReadOnly opens an existing database without write access.
	ReadOnly bool

	// What an LSM holds in memory beside its caches, bounded under a
	// memory budget (docs/methodology.md, "One budget rule"); 0 keeps each
	// engine's default.
	MemtablesInFlight  int   // memtables at once: filling, flushing and queued
	MaxCompactions     int   // background compactions at once
	BuildTableBytes    int64 // tables held whole in memory while built (Badger's)
	BaseLevelBytes     int64 // level 1's size (each next 10×); over a memtable's, it sets write amp
	L0CompactionTables int   // level-0 tables that start a compaction

	// ExpectedBytes is the logical size (keys+values) the caller will
	// write; the B-trees size their maps from it, so that a populate
	// neither hits LMDB's MDB_MAP_FULL nor waits on bbolt's remaps.
	ExpectedBytes int64

	// Params holds the values of the engine's own options (Info.Params) by
	// name; Open checks them and fills in every missing default.
	Params map[string]string

	// Many-table LSM layouts (seed 003's Bloom filter experiment); B-trees
	// ignore both. DisableCompactions stops background compactions and
	// the level-0 write stalls, so every flush stays a table of its own.
	DisableCompactions bool
	// BloomFPR, when > 0, sets the table filters by false-positive rate,
	// overriding BloomBitsPerKey (RocksDB and Pebble: BloomBitsForFPR bits
	// per key, Pebble's rounded to whole bits, at least 1).
	BloomFPR float64
}

// The values of Options.Readahead.
const (
	ReadaheadOff = "off"
	ReadaheadOS  = "os"
)

// ReadaheadModes lists the values of Options.Readahead.
var ReadaheadModes = []string{ReadaheadOff, ReadaheadOS}

// BloomBitsForFPR is the bits per key of an optimal Bloom filter whose
// false-positive rate is p: -ln(p)/ln(2)^2.
func BloomBitsForFPR(p float64) float64 {
	return -math.Log(p) / (math.Ln2 * math.Ln2)
}

// DB is an open database.
type DB interface {
	// Name is the engine's short name ("badger", "pebble", ...).
	Name() string
	// NewReader returns a reader for one goroutine. Engines whose idiom is a
	// long-lived read transaction (LMDB, bbolt, Badger) hold one for the
	// reader's life; Readers see the data committed before they were made.
	NewReader() (Reader, error)
	// NewBatch starts a write batch. Keys and values are copied by Set.
	NewBatch() Batch
	// Flush makes everything written so far durable and, for LSMs, flushes
	// memtables and waits until no compaction is running or pending.
	Flush() error
	// Size is the engine's bytes on disk.
	Size() (int64, error)
	// Settings describes, as key=value pairs, every option the adapter set.
	Settings() []Setting
	// Close releases the database; calling it twice is safe.
	Close() error
}

// Reader serves point reads and iterators. One goroutine at a time.
type Reader interface {
	// Get looks key up. When found, fn is called with the value, which is
	// valid only for the duration of the call (no copy is made where the
	// engine allows it). fn's error is returned as Get's.
	Get(key []byte, fn func(value []byte) error) (found bool, err error)
	// NewIter returns an iterator positioned at the first key >= o.Start
	// within the bounds.
	NewIter(o IterOptions) (Iterator, error)
	// Close releases the reader; calling it twice is safe.
	Close() error
}

// IterOptions bounds an ordered scan.
type IterOptions struct {
	Start    []byte // first key, inclusive; nil is the first key
	End      []byte // upper bound, exclusive; nil is none
	Prefix   []byte // only keys with this prefix; nil is none
	KeysOnly bool   // values are not needed (engines may skip reading them)

	// NoPrefetch reads each value only when Value asks for it. Badger
	// otherwise fetches values ahead of the cursor (PrefetchValues, 100
	// items); the other engines read a value with its key either way.
	NoPrefetch bool
	// ReadaheadBytes is RocksDB's ReadOptions.readahead_size for this
	// iterator; 0 keeps RocksDB's implicit readahead (8 KiB growing to 256
	// KiB after two sequential reads of one file). Others ignore it.
	ReadaheadBytes int
}

// Iterator walks keys in ascending byte order.
type Iterator interface {
	Valid() bool
	Next()
	// Key and Value are valid until the next call to Next or Close.
	Key() []byte
	Value() ([]byte, error)
	// Err reports an error that stopped iteration.
	Err() error
	Close() error
}

// Batch collects writes that Commit applies atomically.
type Batch interface {
	Set(key, value []byte) error
	Commit() error
	// Len is the number of Sets since the batch was made.
	Len() int
}

// Put writes key in a batch of its own: a transaction of one key through
// the engine's batch path, durable as Options.Sync says.
func Put(db DB, key, value []byte) error {
	b := db.NewBatch()
	if err := b.Set(key, value); err != nil {
		return err
	}
	return b.Commit()
}

// Setting is one option as the adapter applied it.
type Setting struct{ Key, Value string }

func (s Setting) String() string { return s.Key + "=" + s.Value }

// Info describes a registered engine.
type Info struct {
	Name   string // short lower-case name used in flags and fixture paths
	Title  string // as it appears in benchmark names: "Badger", "Bolt", ...
	Module string // Go module path of the binding
	// Version reports the binding's module path and version without
	// opening a database; nil for the reference rail.
	Version func() string
	// Library, when set, reports the version of the library the binding
	// links at run time (librocksdb), which keys fixtures too.
	Library func() string
	Open    func(o Options) (DB, error) // opens, creating if needed
	// Compressions lists the values of Options.Compression it accepts.
	Compressions []string
	// Reference marks a calibration rail that is not a store.
	Reference bool
	// Missing, when set, says why the engine is declared but not compiled
	// into this binary (RocksDB without -tags rocksdb); Open is nil then.
	Missing string

	// Params are the options of this engine alone, each a flag of its own.
	Params []Param
	// Layout returns the values of the common options that shape this
	// engine's files (bloom bits, memtable size...); Params marked Shapes
	// are added to it by FileLayout. nil: none.
	Layout func(o Options) map[string]string
	// Dims are option variants workloads sweep as sub-benchmarks.
	Dims []Dim
	// TableFilters: the engine builds per-table filters and can keep many
	// unmerged tables (Options.DisableCompactions, Options.BloomFPR).
	TableFilters bool
	// DataBlocks: the engine's tables are made of data blocks of
	// Options.BlockSize, the unit it reads, caches and checksums, so the
	// block size is a dimension of its results (block=4KiB).
	DataBlocks bool
	// WriteReserve is the most the engine opened with o may still write
	// on its own after its last commit returned (memtables, a level-0
	// compaction's output, its next log): the suite stops writes while
	// that much is still free, as a full device crashes some engines.
	// nil: nothing (a B-tree's commit that finds the device full fails).
	WriteReserve func(o Options) int64
	// LogFile says whether a file of the engine's directory (by base name)
	// is a write-ahead or informational log rather than data; nil: none.
	LogFile func(name string) bool
}

// Param is an option only one engine has, declared as every flag of the
// suite is (a Flag, internal/flagreg): a flag -<Name>, checked before any
// work, echoed as a configuration line, and part of a fixture's key when
// it Shapes the files. Adapters read its value as text, o.Params[name].
type Param = flagreg.Option

// Flag declares an engine's option: of type Text, or Switch for one that
// is on or off. It reads nothing of the run but its own value.
type Flag[T any] = flagreg.Flag[T, any]

// Text is the value of an engine's option as its adapter reads it: a
// word, a size, a number, or empty for the engine's own default.
type Text string

func (t *Text) String() string     { return string(*t) }
func (t *Text) Set(v string) error { *t = Text(v); return nil }

// Switch is the value of an engine's option that is on ("true") or off
// ("false"); -name alone turns it on. Its Choices say which it accepts.
type Switch string

func (s *Switch) String() string     { return string(*s) }
func (s *Switch) Set(v string) error { *s = Switch(v); return nil }
func (s *Switch) IsBoolFlag() bool   { return true }

// onOff are a Switch's values.
var onOff = []Switch{"false", "true"}

// CheckParam reports whether v is an accepted value of p.
func CheckParam(p Param, v string) error {
	val, err := flagreg.Parse(p, v)
	if err != nil {
		return err
	}
	return p.CheckValue(val.Get(), nil)
}

// Dim is one option of this engine that a workload may sweep as a
// sub-benchmark dimension (name=value), applied to the open options and
// to each iterator. A workload asks for the capabilities (Is) it sweeps.
type Dim struct {
	Name   string     // sub-benchmark key: "readahead", "mode", "prefetch", "bound"
	Values []string   // in the order they run
	Is     Capability // what the option is
	Apply  func(v string, o *Options, it *IterOptions)
}

// Capability is a kind of engine option a workload can sweep.
type Capability string

// The capabilities engines declare.
const (
	ValuePrefetch     Capability = "value-prefetch"     // an iterator fetches values ahead of the caller
	MapReadahead      Capability = "map-readahead"      // OS readahead on the engine's memory map, on or off
	IteratorReadahead Capability = "iterator-readahead" // the engine's own readahead for an iterator
	IteratorBound     Capability = "iterator-bound"     // an iterator bounded by the engine, or stopped by the caller
	CommitMode        Capability = "commit-mode"        // the engine's ways to commit a batch
	// GroupCommit is a CommitMode that coalesces concurrent commits into
	// one transaction or not (bbolt's DB.Batch against DB.Update):
	// DimsWith(CommitMode) lists it too.
	GroupCommit Capability = "group-commit"
)

// Capabilities lists them all.
var Capabilities = []Capability{ValuePrefetch, MapReadahead, IteratorReadahead, IteratorBound, CommitMode, GroupCommit}

// DimsWith lists the engine's dimensions that are one of caps, in the
// engine's order.
func (i Info) DimsWith(caps ...Capability) []Dim {
	var out []Dim
	for _, d := range i.Dims {
		if slices.Contains(caps, d.Is) || d.Is == GroupCommit && slices.Contains(caps, CommitMode) {
			out = append(out, d)
		}
	}
	return out
}

// WithParam returns o with the engine option name set to v; o's own map
// is not modified.
func (o Options) WithParam(name, v string) Options {
	m := make(map[string]string, len(o.Params)+1)
	maps.Copy(m, o.Params)
	m[name] = v
	o.Params = m
	return o
}

// FileLayout is every option value that shapes the engine's files under o.
func (i Info) FileLayout(o Options) map[string]string {
	m := map[string]string{}
	if i.Layout != nil {
		maps.Copy(m, i.Layout(o))
	}
	o = i.withDefaults(o)
	for _, p := range i.Params {
		if v := o.Params[p.FlagName()]; p.Shaping() && v != "" {
			m[p.FlagName()] = v
		}
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

var registry = map[string]Info{}

// Register adds an engine; adapters call it from init.
func Register(i Info) {
	if _, dup := registry[i.Name]; dup {
		panic("engine: registered twice: " + i.Name)
	}
	registry[i.Name] = i
}

// Lookup returns the engine registered under name.
func Lookup(name string) (Info, bool) {
	i, ok := registry[name]
	return i, ok
}

// All returns every registered engine, by name.
func All() []Info {
	return slices.SortedFunc(maps.Values(registry), func(a, b Info) int { return strings.Compare(a.Name, b.Name) })
}

// Open validates o against the engine and opens it.
func Open(name string, o Options) (DB, error) {
	i, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("engine %q is not registered (have %s)", name, strings.Join(Names(), ", "))
	}
	return OpenInfo(i, o)
}

// OpenInfo is Open for an engine given by its declaration, registered or
// not (tests wrap a real engine's declaration to observe it).
func OpenInfo(i Info, o Options) (DB, error) {
	name := i.Name
	if i.Missing != "" {
		return nil, fmt.Errorf("engine %s is not compiled in: %s", name, i.Missing)
	}
	for k, v := range o.Params {
		n := slices.IndexFunc(i.Params, func(p Param) bool { return p.FlagName() == k })
		if n < 0 {
			return nil, fmt.Errorf("engine %s: no option %q", name, k)
		}
		if err := CheckParam(i.Params[n], v); err != nil {
			return nil, fmt.Errorf("engine %s: option %s=%q: %v", name, k, v, err)
		}
	}
	o = i.withDefaults(o)
	if o.Readahead = cmp.Or(o.Readahead, ReadaheadOff); !slices.Contains(ReadaheadModes, o.Readahead) {
		return nil, fmt.Errorf("engine %s: readahead %q: must be one of %s", name, o.Readahead, strings.Join(ReadaheadModes, ", "))
	}
	if err := i.CheckCompression(o.Compression); err != nil {
		return nil, err
	}
	if o.Dir == "" {
		return nil, errors.New("engine: Options.Dir is empty")
	}
	if !o.ReadOnly {
		if err := os.MkdirAll(o.Dir, 0o755); err != nil {
			return nil, err
		}
	}
	return i.Open(o)
}

// withDefaults returns o with every option of the engine that o does not
// set at its declared default.
func (i Info) withDefaults(o Options) Options {
	for _, p := range i.Params {
		if _, ok := o.Params[p.FlagName()]; !ok {
			o = o.WithParam(p.FlagName(), flagreg.Text(p))
		}
	}
	return o
}

// CheckCompression reports whether the engine can store blocks compressed c.
func (i Info) CheckCompression(c string) error {
	if c = cmp.Or(c, "none"); slices.Contains(i.Compressions, c) {
		return nil
	}
	return fmt.Errorf("engine %s: compression %q not supported (have %s)", i.Name, c, strings.Join(i.Compressions, ", "))
}

// Names lists the registered engines.
func Names() []string { return slices.Sorted(maps.Keys(registry)) }

// DirSize sums the sizes of the regular files under dir. Sparse files count
// by the blocks they occupy, so LMDB's map size does not inflate it.
func DirSize(dir string) (int64, error) {
	s, err := SpaceOf(Info{}, dir)
	return s.Data + s.Logs, err
}

// compactionNote marks a setting that DisableCompactions overrides.
func compactionNote(o Options) string {
	return either(o.DisableCompactions, " (compactions disabled)", "")
}

// ModuleEngines returns the titles (as benchmarks name them) of the stores
// whose binding is module, and every store's module, each once, for the
// error that names none.
func ModuleEngines(module string) (titles, modules []string) {
	for _, info := range All() {
		if info.Reference {
			continue
		}
		if info.Module == module {
			titles = append(titles, info.Title)
		}
		if !slices.Contains(modules, info.Module) {
			modules = append(modules, info.Module)
		}
	}
	return titles, modules
}
