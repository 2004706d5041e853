//go:build rocksdb

// RocksDB adapter (grocksdb over the system librocksdb, -tags rocksdb):
// docs/engines.md says how each option is mapped and why; Settings says
// what was set, the C library's version and whether it asserts. A
// compaction hints its input tables FADV_NORMAL when it starts
// (access_hint_on_compaction_start), and the hint stays until it deletes them.
package engine

/*
#cgo LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <malloc.h>
#include <rocksdb/c.h>

// The file the dynamic linker loaded rocksdb_open from.
static const char* kvbench_rocksdb_lib_path(void) {
	Dl_info info;
	if (dladdr((void*)&rocksdb_open, &info) != 0 && info.dli_fname != NULL) {
		return info.dli_fname;
	}
	return NULL;
}

// RocksDB defines its test SyncPoint only when NDEBUG is not defined (see
// test_util/sync_point.cc), i.e. exactly when assert() is live.
static int kvbench_rocksdb_assertions(void) {
	return dlsym(RTLD_DEFAULT, "_ZN7rocksdb9SyncPoint11GetInstanceEv") != NULL;
}
*/
import "C"

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/linxGnu/grocksdb"
)

// The adapter behind RocksDB's declaration (rocksdb_info.go).
var (
	rocksdbVersion = func() string { return ModuleVersion(rocksdbModule, grocksdb.OpenDb) }
	rocksdbOpen    = openRocksDB
)

// malloc_trim hands back what freed RocksDB memory glibc keeps, so
// resident memory measured after engine.ReleaseMemory is memory in use.
func init() { releaseC = func() { C.malloc_trim(0) } }

// rocksdbHeaderLogLevel is InfoLogLevel::HEADER_LEVEL, the highest level
// (grocksdb names only up to FATAL).
const rocksdbHeaderLogLevel = grocksdb.InfoLogLevel(5)

// Bookkeeping kept out of Open, so that a timed open is RocksDB's own
// work: the library probed once per process (rocksdbLib), the OPTIONS file
// read when Settings is first asked for. The counters make both observable.
var (
	rocksdbLibProbes    atomic.Int64 // dladdr/dlsym probes of the library
	rocksdbOptionsReads atomic.Int64 // reads of an OPTIONS file
)

// rocksdbLib is the shared object librocksdb was loaded from, symlinks
// resolved ("unknown path", e.g. for a static link), its version from that
// file's name (librocksdb.so.7.8.3 -> 7.8.3: rocksdb/version.h is C++, cgo
// compiles C), and whether it was built with assert() live.
var rocksdbLib = sync.OnceValue(func() (lib struct{ path, version, assertions string }) {
	rocksdbLibProbes.Add(1)
	lib.path, lib.version = "unknown path", "unknown"
	if p := C.kvbench_rocksdb_lib_path(); p != nil {
		lib.path = C.GoString(p)
		if r, err := filepath.EvalSymlinks(lib.path); err == nil {
			lib.path = r
		}
		lib.version = "unknown (" + lib.path + ")"
		if base := filepath.Base(lib.path); strings.HasPrefix(base, "librocksdb") && strings.Contains(base, ".so.") {
			_, lib.version, _ = strings.Cut(base, ".so.")
		}
	}
	lib.assertions = either(C.kvbench_rocksdb_assertions() != 0,
		"on (NDEBUG not defined: rocksdb::SyncPoint is linked in; Debian's build keeps them)", "off (NDEBUG build)")
	return lib
})

// RocksDBLibVersion is the version of the librocksdb this binary runs
// against (rocksdbLib).
func RocksDBLibVersion() string { return rocksdbLib().version }

// rocksdbOptionsFileVersion is the rocksdb_version the library wrote into
// the newest OPTIONS file in dir: the running library's own statement.
func rocksdbOptionsFileVersion(dir string) string {
	files, _ := filepath.Glob(filepath.Join(dir, "OPTIONS-*"))
	if len(files) == 0 {
		return "none"
	}
	rocksdbOptionsReads.Add(1)
	num := func(f string) int { n, _ := strconv.Atoi(strings.TrimPrefix(filepath.Base(f), "OPTIONS-")); return n }
	b, err := os.ReadFile(slices.MaxFunc(files, func(a, b string) int { return num(a) - num(b) }))
	if err != nil {
		return "unreadable"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "rocksdb_version="); ok {
			return v
		}
	}
	return "not found"
}

type rocksDB struct {
	store       // its settings as opened; Settings adds the library's
	db          *grocksdb.DB
	wo          *grocksdb.WriteOptions
	ro          *grocksdb.ReadOptions // every reader's Gets: made once, as wo is
	iters       atomic.Int64          // open iterators: closing the DB under one is undefined
	verify      bool                  // ReadOptions.verify_checksums of every reader and iterator
	frees       []func()              // Destroy of the option objects, in the order made
	libOnce     sync.Once
	libSettings []Setting
}

func openRocksDB(o Options) (DB, error) {
	ct := byCompression(o, grocksdb.NoCompression, grocksdb.SnappyCompression, grocksdb.ZSTDCompression)
	comp := byCompression(o, "none", "snappy", "zstd (default level 3)")
	r := &rocksDB{store: storeOf("rocksdb", o), verify: !o.SkipChecksums}
	bbto := grocksdb.NewDefaultBlockBasedTableOptions()
	r.frees = append(r.frees, bbto.Destroy)
	ifPositive(o.BlockSize, bbto.SetBlockSize) // 0: RocksDB's default, 4 KiB
	// One index block per table, binary-searched: RocksDB's default, set
	// so that the settings line states it.
	bbto.SetIndexType(grocksdb.KBinarySearchIndexType)
	cacheS := "none"
	if o.CacheMB > 0 {
		cache := grocksdb.NewLRUCache(uint64(o.CacheMB) << 20)
		r.frees = append(r.frees, cache.Destroy)
		bbto.SetBlockCache(cache)
		cacheS = lsmMiB(int64(cache.GetCapacity())) + " LRU"
	} else {
		bbto.SetNoBlockCache(true)
	}
	cacheIndex := o.Params["rocksdb_cache_index"] == "true"
	bbto.SetCacheIndexAndFilterBlocks(cacheIndex) // false is RocksDB's default
	pin := o.Params["rocksdb_pin_l0"] == "true"
	bbto.SetPinL0FilterAndIndexBlocksInCache(pin)
	bloomS := "off"
	if o.BloomFPR > 0 {
		bits := BloomBitsForFPR(o.BloomFPR)
		bbto.SetFilterPolicy(grocksdb.NewBloomFilter(bits))
		bloomS = strconv.FormatFloat(bits, 'f', 3, 64) + " bits/key (full filter; BloomFPR " + strconv.FormatFloat(o.BloomFPR, 'g', -1, 64) + ")"
	} else if o.BloomBitsPerKey > 0 {
		bbto.SetFilterPolicy(grocksdb.NewBloomFilter(float64(o.BloomBitsPerKey)))
		bloomS = strconv.Itoa(o.BloomBitsPerKey) + " bits/key (full filter)"
	}

	opts := grocksdb.NewDefaultOptions()
	r.frees = append(r.frees, opts.Destroy)
	opts.SetBlockBasedTableFactory(bbto)
	opts.SetCreateIfMissing(true)
	ifPositive(o.MemtableMB, func(mb int) { opts.SetWriteBufferSize(uint64(mb) << 20) })
	ifPositive(o.MemtablesInFlight, opts.SetMaxWriteBufferNumber)
	ifPositive(o.L0CompactionTables, opts.SetLevel0FileNumCompactionTrigger)
	ifPositive(o.BaseLevelBytes, func(n int64) { opts.SetMaxBytesForLevelBase(uint64(n)) })
	opts.SetCompression(ct) // compression_per_level stays empty: every level
	opts.SetInfoLogLevel(rocksdbHeaderLogLevel)
	opts.SetKeepLogFileNum(1)
	if o.Readahead == ReadaheadOff {
		opts.SetAdviseRandomOnOpen(true)
	}
	if o.DisableCompactions {
		opts.SetDisableAutoCompactions(true)
		opts.SetLevel0SlowdownWritesTrigger(1 << 30)
		opts.SetLevel0StopWritesTrigger(1 << 30)
	}

	var err error
	if o.ReadOnly {
		r.db, err = grocksdb.OpenDbForReadOnly(opts, o.Dir, false)
	} else {
		r.db, err = grocksdb.OpenDb(opts, o.Dir)
	}
	if err != nil {
		r.free()
		return nil, err
	}
	r.wo = grocksdb.NewDefaultWriteOptions()
	r.wo.SetSync(o.Sync)
	r.ro = r.readOptions()
	r.frees = append(r.frees, r.wo.Destroy, r.ro.Destroy)

	r.settings = []Setting{
		{"sync", strconv.FormatBool(o.Sync)},
		{"group_commit", "write group (DB.Write: a leader writes the queued writers' batches to the WAL and syncs it once for the group)"},
		{"block_cache", cacheS},
		{"write_buffer_size", lsmMiB(int64(opts.GetWriteBufferSize()))},
		{"max_write_buffer_number", strconv.Itoa(opts.GetMaxWriteBufferNumber())},
		{"compression", comp + ", all levels"},
		{"bloom", bloomS},
		{"block_size", lsmBlockSize(o, rocksdbDefaultBlockSize)},
		{"index", "one index block per table, binary search (index_type kBinarySearch, RocksDB's default; not partitioned)"},
		{"verify_checksums", either(r.verify,
			"true (ReadOptions.verify_checksums, RocksDB's default: every block read from a file)",
			"false (ReadOptions.verify_checksums off; compactions still verify what they read)")},
		{"paranoid_checks", strconv.FormatBool(opts.ParanoidChecks()) + " (default: stop on corruption background work finds)"},
		{"cache_index_and_filter_blocks", either(cacheIndex, "true (-rocksdb_cache_index)", "false (default: index and filters live outside the block cache)")},
		{"pin_l0_filter_and_index_blocks_in_cache", strconv.FormatBool(pin)},
		{"max_background_jobs", strconv.Itoa(opts.GetMaxBackgroundJobs()) + " (default)"},
		{"disable_auto_compactions", strconv.FormatBool(o.DisableCompactions)},
		{"level0_file_num_compaction_trigger", strconv.Itoa(opts.GetLevel0FileNumCompactionTrigger())},
		{"level0_stop_writes_trigger", strconv.Itoa(opts.GetLevel0StopWritesTrigger())},
		{"max_bytes_for_level_base", lsmMiB(int64(opts.GetMaxBytesForLevelBase()))},
		{"target_file_size_base", lsmMiB(int64(opts.GetTargetFileSizeBase()))},
		{"max_bytes_for_level_multiplier", strconv.FormatFloat(opts.GetMaxBytesForLevelMultiplier(), 'g', -1, 64)},
		{"level_compaction_dynamic_level_bytes", strconv.FormatBool(opts.GetLevelCompactionDynamicLevelBytes()) + " (default)"},
		{"num_levels", strconv.Itoa(opts.GetNumLevels())},
		{"bytes_per_sync", strconv.FormatUint(opts.GetBytesPerSync(), 10) + " (default)"},
		{"wal_bytes_per_sync", strconv.FormatUint(opts.GetWALBytesPerSync(), 10) + " (default)"},
		{"max_open_files", strconv.Itoa(opts.GetMaxOpenFiles())},
		{"readahead", rocksdbReadaheadSetting(o.Readahead, opts)},
		{"info_log_level", "header"},
		{"keep_log_file_num", strconv.FormatUint(uint64(opts.GetKeepLogFileNum()), 10)},
		{"read_only", strconv.FormatBool(o.ReadOnly)},
		{"reader", "DB directly (no snapshot)"},
		{"flush", "Flush(wait) + FlushWAL(sync) + wait for compaction-pending, running compactions and flushes = 0"},
	}
	return r, nil
}

// rocksdbDefaultBlockSize is BlockBasedTableOptions::block_size's default.
const rocksdbDefaultBlockSize = 4 << 10

// rocksdbReadaheadSetting states what the tables' reads are advised.
func rocksdbReadaheadSetting(mode string, opts *grocksdb.Options) string {
	how := "advise_random_on_open true" + either(mode == ReadaheadOS, " (default)", "") + ": tables FADV_RANDOM"
	if !opts.AdviseRandomOnOpen() {
		how = "advise_random_on_open false: tables not advised"
	}
	h := opts.GetAccessHintOnCompactionStart() // grocksdb's CompactionAccessPattern, in its order
	hint := strconv.FormatUint(uint64(h), 10)
	if names := []string{"NONE", "NORMAL", "SEQUENTIAL", "WILLNEED"}; int(h) < len(names) {
		hint = names[h]
	}
	return mode + " (" + how + ", iterators read ahead themselves; " +
		"compactions hint their inputs " + hint + " (access_hint_on_compaction_start, default))"
}

// free releases the option objects (the DB keeps its own copies), the
// last made first.
func (r *rocksDB) free() {
	for i := len(r.frees) - 1; i >= 0; i-- {
		r.frees[i]()
	}
	r.frees = nil
}

// Settings reads the library's settings the first time it is asked, not
// in Open (see rocksdbLib).
func (r *rocksDB) Settings() []Setting {
	r.libOnce.Do(func() {
		lib := rocksdbLib()
		r.libSettings = []Setting{{"librocksdb", lib.version + " (" + lib.path + ")"},
			{"librocksdb_options_file", rocksdbOptionsFileVersion(r.dir)}, {"assertions", lib.assertions}}
	})
	return append(slices.Clone(r.settings), r.libSettings...)
}

// Close refuses to close the DB while an iterator is open (RocksDB's
// behaviour then is undefined; its debug build asserts).
func (r *rocksDB) Close() error {
	if n := r.iters.Load(); n > 0 && !r.closed.Load() {
		return errors.New("rocksdb: Close with " + strconv.FormatInt(n, 10) + " open iterators")
	}
	return r.closeOnce(func() error { r.db.Close(); r.free(); return nil })
}

// NewReader reads the DB directly, as with Pebble (directReader); its Gets
// share the DB's one ReadOptions, so making a reader costs no cgo call, as
// making Pebble's costs nothing.
func (r *rocksDB) NewReader() (Reader, error) { return readerIf(r.usable(), &rocksReader{db: r}) }

type rocksReader struct {
	directReader
	db *rocksDB
}

// readOptions are a reader's or an iterator's ReadOptions, checksums
// verified as Options.SkipChecksums says.
func (r *rocksDB) readOptions() *grocksdb.ReadOptions {
	ro := grocksdb.NewDefaultReadOptions()
	ro.SetVerifyChecksums(r.verify)
	return ro
}

func (r *rocksDB) NewBatch() Batch {
	if err := r.writable(); err != nil {
		return &lsmErrBatch{err: err}
	}
	return &rocksBatch{r: r, wb: grocksdb.NewWriteBatch()}
}

// Flush writes the memtables to L0, makes the WAL durable, then settles
// until no compaction or flush is pending or running.
func (r *rocksDB) Flush() error {
	if err := r.usable(); err != nil || r.readOnly {
		return err
	}
	fo := grocksdb.NewDefaultFlushOptions()
	fo.SetWait(true)
	err := r.db.Flush(fo)
	fo.Destroy()
	if err != nil {
		return err
	}
	if err := r.db.FlushWAL(true); err != nil {
		return err
	}
	return settle("rocksdb", func() (bool, error) {
		// With auto compactions off, compaction-pending stays set for ever.
		quiet := (r.noCompactions || r.db.GetProperty("rocksdb.compaction-pending") == "0") &&
			r.db.GetProperty("rocksdb.num-running-compactions") == "0" &&
			r.db.GetProperty("rocksdb.mem-table-flush-pending") == "0" &&
			r.db.GetProperty("rocksdb.num-running-flushes") == "0"
		return !quiet, nil
	})
}

// Get pins the value in the block cache or memtable (rocksdb_get_pinned)
// and calls fn on it without a copy; rocksdb_get would malloc and copy it.
func (rd *rocksReader) Get(key []byte, fn func(value []byte) error) (bool, error) {
	if err := rd.readable(&rd.db.store); err != nil {
		return false, err
	}
	h, err := rd.db.db.GetPinned(rd.db.ro, key)
	if err != nil {
		return false, err
	}
	if !h.Exists() {
		return false, nil
	}
	err = fn(h.Data())
	h.Destroy()
	return true, err
}

// NewIter bounds the iterator above with iterate_upper_bound (End or the
// prefix's successor), copied to C memory since RocksDB keeps a pointer to
// it for the iterator's life, and seeks to max(Start, Prefix).
func (rd *rocksReader) NewIter(o IterOptions) (Iterator, error) {
	if err := rd.readable(&rd.db.store); err != nil {
		return nil, err
	}
	r := rd.db
	lower, upper := lsmIterBounds(o)
	it := &rocksIter{r: r, ro: r.readOptions()}
	if upper != nil {
		it.upper = C.CBytes(upper)
		it.ro.SetIterateUpperBound(unsafe.Slice((*byte)(it.upper), len(upper)))
	}
	if o.ReadaheadBytes > 0 {
		it.ro.SetReadaheadSize(uint64(o.ReadaheadBytes))
	}
	it.it = r.db.NewIterator(it.ro)
	r.iters.Add(1)
	if lower != nil {
		it.it.Seek(lower)
	} else {
		it.it.SeekToFirst()
	}
	return it, nil
}

type rocksIter struct {
	r     *rocksDB
	it    *grocksdb.Iterator
	ro    *grocksdb.ReadOptions
	upper unsafe.Pointer // C copy of the upper bound, or nil
}

func (it *rocksIter) Valid() bool { return it.it != nil && it.it.Valid() }
func (it *rocksIter) Next()       { it.it.Next() }

// Key and Value point into RocksDB's iterator (the slices need no Free) and
// stay valid until Next or Close.
func (it *rocksIter) Key() []byte            { return it.it.Key().Data() }
func (it *rocksIter) Value() ([]byte, error) { return it.it.Value().Data(), nil }

func (it *rocksIter) Err() error {
	if it.it == nil {
		return nil
	}
	return it.it.Err()
}

func (it *rocksIter) Close() error {
	if it.it == nil {
		return nil
	}
	err := it.it.Err()
	it.it.Close()
	it.it = nil
	it.r.iters.Add(-1)
	it.ro.Destroy()
	if it.upper != nil {
		C.free(it.upper)
		it.upper = nil
	}
	return err
}

type rocksBatch struct {
	r  *rocksDB
	wb *grocksdb.WriteBatch
	n  int
}

// Set copies key and value into the batch (rocksdb_writebatch_put).
func (b *rocksBatch) Set(key, value []byte) error {
	if b.wb == nil {
		return errors.New("rocksdb: batch already committed")
	}
	b.wb.Put(key, value)
	b.n++
	return nil
}

func (b *rocksBatch) Commit() error {
	if b.wb == nil {
		return errors.New("rocksdb: batch already committed")
	}
	defer func() { b.wb.Destroy(); b.wb = nil }()
	if err := b.r.usable(); err != nil {
		return err
	}
	return b.r.db.Write(b.r.wo, b.wb)
}

func (b *rocksBatch) Len() int { return b.n }

func (r *rocksDB) Delete(key []byte) error {
	return r.write(func() error { return r.db.Delete(r.wo, key) })
}

func (r *rocksDB) DeleteBatch(keys [][]byte) error {
	return r.writeBatch(func(wb *grocksdb.WriteBatch) {
		for _, k := range keys {
			wb.Delete(k)
		}
	})
}

// DeleteRange writes one range tombstone over [start, end), in a write
// batch (grocksdb offers DB.DeleteRange only per column family).
func (r *rocksDB) DeleteRange(start, end []byte) error {
	return r.writeBatch(func(wb *grocksdb.WriteBatch) { wb.DeleteRange(start, end) })
}

// writeBatch writes, as write does, a batch that fill makes.
func (r *rocksDB) writeBatch(fill func(wb *grocksdb.WriteBatch)) error {
	return r.write(func() error {
		wb := grocksdb.NewWriteBatch()
		defer wb.Destroy()
		fill(wb)
		return r.db.Write(r.wo, wb)
	})
}

// Compact is CompactRange over [start, end] with RocksDB's defaults, and
// returns when it is done: every level holding keys of the range compacted
// into the next, down to the bottom level, where tombstones are dropped
// with the keys they cover (bottommost_level_compaction
// kIfHaveCompactionFilter: the bottom level's own files are not rewritten).
func (r *rocksDB) Compact(start, end []byte) error {
	return r.write(func() error { r.db.CompactRange(grocksdb.Range{Start: start, Limit: end}); return nil })
}
