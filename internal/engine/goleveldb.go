// goleveldb adapter (github.com/syndtr/goleveldb): docs/engines.md,
// "goleveldb", says how each option is mapped, and what it has and lacks.
// Settings says what was set.
package engine

import (
	"cmp"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/filter"
	"github.com/syndtr/goleveldb/leveldb/iterator"
	"github.com/syndtr/goleveldb/leveldb/opt"
	"github.com/syndtr/goleveldb/leveldb/storage"
	"github.com/syndtr/goleveldb/leveldb/util"
	"golang.org/x/sys/unix"
)

const goleveldbModule = "github.com/syndtr/goleveldb"

func init() {
	Register(Info{
		Name:         "goleveldb",
		Title:        "Goleveldb",
		Module:       goleveldbModule,
		Version:      func() string { return ModuleVersion(goleveldbModule, leveldb.Open) },
		Open:         openGoleveldb,
		Compressions: []string{"none", "snappy"},
		Layout:       lsmLayout,
		DataBlocks:   true,
		WriteReserve: goleveldbReserve,
		Dims:         []Dim{boundDim},
		LogFile:      levelDBLogFile,
	})
}

type goleveldbDB struct {
	store
	db        *leveldb.DB
	stor      storage.Storage
	opts      *opt.Options
	wo        *opt.WriteOptions
	lastWrite string // compaction output as the last settle poll saw it
}

// goleveldbOptions are goleveldb's options for o but the block cache, the
// filter and the compression, which openGoleveldb adds (the write reserve
// needs none of them).
func goleveldbOptions(o Options) *opt.Options {
	lo := &opt.Options{ReadOnly: o.ReadOnly, ErrorIfMissing: o.ReadOnly, BlockSize: o.BlockSize}
	setPositive(&lo.WriteBuffer, o.MemtableMB<<20)
	setPositive(&lo.CompactionL0Trigger, o.L0CompactionTables)
	if n := o.BaseLevelBytes; n > 0 {
		// Level n holds CompactionTotalSize×10^n by default: level 1 is
		// made n exactly, and each level below ten times the last.
		lo.CompactionTotalSize = int(n)
		lo.CompactionTotalSizeMultiplierPerLevel = []float64{0, 1, 10, 1e2, 1e3, 1e4, 1e5, 1e6}
	}
	if o.SkipChecksums {
		lo.Strict = opt.DefaultStrict &^ opt.StrictBlockChecksum
	}
	return lo
}

// goleveldbReserve: two memtables, each a level-0 table once flushed, and
// the next one's journal; a level-0 compaction (CompactionL0Trigger tables
// into level 1).
func goleveldbReserve(o Options) int64 {
	lo := goleveldbOptions(o)
	o.DisableCompactions = false // the adapter ignores it: compactions run
	return lsmReserve(o, int64(lo.GetWriteBuffer()), 3, int64(lo.GetCompactionL0Trigger()), lo.GetCompactionTotalSize(1))
}

func openGoleveldb(o Options) (DB, error) {
	lo := goleveldbOptions(o)
	// none or snappy, the other Compressions declares: Open checks
	lo.Compression = either(o.Compression == "snappy", opt.SnappyCompression, opt.NoCompression)
	cacheS := "none"
	if o.CacheMB > 0 {
		lo.BlockCacheCapacity = o.CacheMB << 20
		cacheS = lsmMiB(int64(lo.BlockCacheCapacity)) + " LRU"
	} else {
		lo.BlockCacheCapacity = -1 // goleveldb's zero
	}
	bloomS := "off"
	if o.BloomBitsPerKey > 0 {
		lo.Filter = filter.NewBloomFilter(o.BloomBitsPerKey)
		bloomS = strconv.Itoa(o.BloomBitsPerKey) + " bits/key, every table"
	}

	fs, err := storage.OpenFile(o.Dir, o.ReadOnly)
	if err != nil {
		return nil, err
	}
	stor := goleveldbStorage{Storage: fs, random: o.Readahead == ReadaheadOff}
	db, err := leveldb.Open(stor, lo)
	if err != nil {
		fs.Close()
		return nil, err
	}
	g := &goleveldbDB{store: storeOf("goleveldb", o), db: db, stor: fs, opts: lo,
		wo: &opt.WriteOptions{Sync: o.Sync}}

	g.settings = []Setting{
		{"sync", strconv.FormatBool(o.Sync)},
		{"group_commit", "write merge (DB.Write: the writer holding the lock merges queued batches, up to 128 KiB, into one journal write and one sync)"},
		{"block_cache", cacheS},
		{"write_buffer", lsmMiB(int64(lo.GetWriteBuffer()))},
		{"memtables", "2 at most (the one filling and the one being flushed: goleveldb's fixed number)"},
		{"compression", lo.Compression.String()},
		{"bloom", bloomS},
		{"block_size", lsmBlockSize(o, opt.DefaultBlockSize)},
		{"index", "one index block per table, binary search (goleveldb's only kind)"},
		{"verify_checksums", either(o.SkipChecksums, "false (StrictBlockChecksum off)",
			"true (StrictBlockChecksum, goleveldb's default: every block read from a file)")},
		{"compaction_l0_trigger", strconv.Itoa(lo.GetCompactionL0Trigger())},
		{"write_l0_slowdown_trigger", strconv.Itoa(lo.GetWriteL0SlowdownTrigger()) + " (default)"},
		{"write_l0_pause_trigger", strconv.Itoa(lo.GetWriteL0PauseTrigger()) + " (default)"},
		{"level1_max_bytes", lsmMiB(lo.GetCompactionTotalSize(1)) + ", ten times more per level below"},
		{"compaction_table_size", lsmMiB(int64(lo.GetCompactionTableSize(0))) + " (default)"},
		{"compactions", "1 at a time, beside 1 memtable flush (goleveldb's fixed goroutines; read-triggered compactions included)"},
		{"open_files_cache", strconv.Itoa(lo.GetOpenFilesCacheCapacity()) + " (default)"},
		{"readahead", either(stor.random,
			ReadaheadOff+" (tables FADV_RANDOM when opened, compactions' reads included; read with pread)",
			ReadaheadOS+" (goleveldb's default: tables read with pread, no advice)")},
		{"read_only", strconv.FormatBool(o.ReadOnly)},
		{"logger", "off"},
		{"reader", "DB directly (no snapshot); Get returns a copy of the value (goleveldb has no call without one)"},
		{"flush", "memtable written to level 0 (an empty transaction) + wait until no journal is queued for a flush, no level scores for compaction and no compaction finished since the last poll"},
	}
	return g, nil
}

// goleveldbStorage is goleveldb's file storage with its info log dropped
// and, when random is set, every table it opens advised FADV_RANDOM.
type goleveldbStorage struct {
	storage.Storage
	random bool
}

func (s goleveldbStorage) Log(string) {}

func (s goleveldbStorage) Open(fd storage.FileDesc) (storage.Reader, error) {
	r, err := s.Storage.Open(fd)
	if err != nil || !s.random || fd.Type != storage.TypeTable {
		return r, err
	}
	if f, ok := r.(interface{ Fd() uintptr }); ok {
		if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_RANDOM); err != nil {
			r.Close()
			return nil, os.NewSyscallError("fadvise", err)
		}
	}
	return r, nil
}

func (g *goleveldbDB) Close() error {
	return g.closeOnce(func() error { return cmp.Or(g.db.Close(), g.stor.Close()) })
}

// NewReader reads the DB directly, as with Pebble (directReader).
func (g *goleveldbDB) NewReader() (Reader, error) {
	return readerIf(g.usable(), &goleveldbReader{db: g})
}

type goleveldbReader struct {
	directReader
	db *goleveldbDB
}

func (g *goleveldbDB) NewBatch() Batch {
	if err := g.writable(); err != nil {
		return &lsmErrBatch{err: err}
	}
	return &goleveldbBatch{g: g, b: new(leveldb.Batch)}
}

// Flush opens an empty transaction, which writes the memtable to a synced
// level-0 table first, and settles on busy's three signals
// (docs/engines.md, "goleveldb"): a running compaction's inputs keep their
// level scoring until it installs its output.
func (g *goleveldbDB) Flush() error {
	if err := g.usable(); err != nil || g.readOnly {
		return err
	}
	tr, err := g.db.OpenTransaction()
	if err != nil {
		return err
	}
	tr.Discard()
	// The first poll compares with what compactions had written by now.
	if _, err := g.busy(); err != nil {
		return err
	}
	return settle("goleveldb", g.busy)
}

// busy reports whether goleveldb has memtable flushes or compactions
// running or due.
func (g *goleveldbDB) busy() (bool, error) {
	journals, _ := filepath.Glob(filepath.Join(g.dir, "*.log")) // the pattern is valid
	stats, err := g.db.GetProperty("leveldb.stats")
	if err != nil {
		return false, err
	}
	// Rows: level | tables | size (MB) | time (s) | read (MB) | write (MB).
	due, written := false, ""
	for _, line := range strings.Split(stats, "\n") {
		f := strings.Split(line, "|")
		if len(f) != 6 {
			continue
		}
		level, err1 := strconv.Atoi(strings.TrimSpace(f[0]))
		tables, err2 := strconv.Atoi(strings.TrimSpace(f[1]))
		mb, err3 := strconv.ParseFloat(strings.TrimSpace(f[2]), 64)
		if err1 != nil || err2 != nil || err3 != nil {
			continue // the header
		}
		if level == 0 {
			due = due || tables >= g.opts.GetCompactionL0Trigger()
		} else {
			due = due || mb*(1<<20) >= float64(g.opts.GetCompactionTotalSize(level))
		}
		written += strings.TrimSpace(f[5]) + " "
	}
	changed := written != g.lastWrite
	g.lastWrite = written
	return len(journals) > 1 || due || changed, nil
}

func (g *goleveldbDB) Delete(key []byte) error {
	return g.write(func() error { return g.db.Delete(key, g.wo) })
}

func (g *goleveldbDB) DeleteBatch(keys [][]byte) error {
	return g.write(func() error {
		b := new(leveldb.Batch)
		for _, k := range keys {
			b.Delete(k)
		}
		return g.db.Write(b, g.wo)
	})
}

// Compact is CompactRange over [start, end): the memtable written out, then
// each level's tables holding keys of the range compacted into the next,
// down to the last, where deletions are dropped with the keys they cover.
func (g *goleveldbDB) Compact(start, end []byte) error {
	return g.write(func() error { return g.db.CompactRange(util.Range{Start: start, Limit: end}) })
}

// Get calls fn on the copy of the value goleveldb returns.
func (r *goleveldbReader) Get(key []byte, fn func(value []byte) error) (bool, error) {
	if err := r.readable(&r.db.store); err != nil {
		return false, err
	}
	v, err := r.db.db.Get(key, nil)
	if err != nil {
		if errors.Is(err, leveldb.ErrNotFound) {
			return false, nil
		}
		return false, err
	}
	return true, fn(v)
}

// NewIter bounds the iterator with a util.Range (Start inclusive, Limit
// exclusive) and positions it at its first key.
func (r *goleveldbReader) NewIter(o IterOptions) (Iterator, error) {
	if err := r.readable(&r.db.store); err != nil {
		return nil, err
	}
	lower, upper := lsmIterBounds(o)
	it := r.db.db.NewIterator(&util.Range{Start: lower, Limit: upper}, nil)
	it.First()
	return &goleveldbIter{it: it}, nil
}

type goleveldbIter struct {
	it     iterator.Iterator
	closed bool
}

func (it *goleveldbIter) Valid() bool            { return !it.closed && it.it.Valid() }
func (it *goleveldbIter) Next()                  { it.it.Next() }
func (it *goleveldbIter) Key() []byte            { return it.it.Key() }
func (it *goleveldbIter) Value() ([]byte, error) { return it.it.Value(), nil }
func (it *goleveldbIter) Err() error             { return it.it.Error() }

func (it *goleveldbIter) Close() error {
	if it.closed {
		return nil
	}
	it.closed = true
	err := it.it.Error()
	it.it.Release()
	return err
}

type goleveldbBatch struct {
	g    *goleveldbDB
	b    *leveldb.Batch
	done bool
}

func (b *goleveldbBatch) Len() int { return b.b.Len() }

// Set copies key and value into the batch's buffer.
func (b *goleveldbBatch) Set(key, value []byte) error {
	b.b.Put(key, value)
	return nil
}

func (b *goleveldbBatch) Commit() error {
	if err := b.g.committing(&b.done); err != nil {
		return err
	}
	return b.g.db.Write(b.b, b.g.wo)
}
