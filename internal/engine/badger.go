// Badger adapter: docs/engines.md says how each option is mapped and why
// (Bloom filters as a false-positive rate, checksums, readahead, Flush);
// Settings says what was set.
package engine

import (
	"bytes"
	"errors"
	"expvar"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	badger "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
)

const badgerModule = "github.com/dgraph-io/badger/v4"

func init() {
	Register(Info{
		Name:         "badger",
		Title:        "Badger",
		Module:       badgerModule,
		Version:      func() string { return ModuleVersion(badgerModule, badger.Open) },
		Open:         openBadger,
		Compressions: []string{"none", "snappy", "zstd"},
		Params: []Param{
			&Flag[Text]{Name: "badger_vthreshold", Default: "", Shapes: true,
				Usage: "values of at least this many bytes go to Badger's value log (default: Badger v4's 1 MiB, lowered to 15% of the memtable when that is smaller, as Badger requires)",
				Check: func(v Text, _ any) error { // empty: Badger's default
					if n, err := strconv.Atoi(string(v)); v != "" && (err != nil || n < 1 || n > 1<<30) {
						return errors.New("must be from 1 to 1073741824")
					}
					return nil
				}},
			&Flag[Text]{Name: "badger_compactors", Default: "", Shapes: true, Check: checkIntParam(2, 64),
				Usage: "Badger's NumCompactors, the compactions it runs at once (default: Badger's 4; at least 2, Badger's minimum short of none)"},
		},
		Layout:       lsmLayout,
		TableFilters: true,
		DataBlocks:   true,
		WriteReserve: badgerReserve,
		// Memtable write-ahead logs; *.vlog holds values, so it is data.
		LogFile: func(n string) bool { return strings.HasSuffix(n, ".mem") },
		Dims: []Dim{
			// Seed 000: Badger alone fetches values ahead of its iterator.
			{Name: "prefetch", Values: []string{"true", "false"}, Is: ValuePrefetch,
				Apply: func(v string, _ *Options, it *IterOptions) { it.NoPrefetch = v == "false" }},
			boundDim,
		},
	})
}

// badgerZstdLevel matches the zstd level Pebble (ZstdCompression) and
// RocksDB (kDefaultCompressionLevel) use.
const badgerZstdLevel = 3

type badgerDB struct {
	store
	db *badger.DB
}

// badgerReserve: the memtable filling, the one its flusher took, the
// NumMemtables queued and the next one's log (its logs are sparse maps:
// only what is written counts); NumLevelZeroTables into the base level.
func badgerReserve(o Options) int64 {
	bo, _, err := badgerOptions(o)
	if err != nil {
		return 0
	}
	return lsmReserve(o, bo.MemTableSize, int64(bo.NumMemtables+2+1), int64(bo.NumLevelZeroTables), bo.BaseLevelSize)
}

// badgerOptions is Badger's configuration for o, and how its value
// threshold was chosen.
func badgerOptions(o Options) (badger.Options, string, error) {
	bo := badger.DefaultOptions(o.Dir).WithLogger(nil).WithSyncWrites(o.Sync).WithReadOnly(o.ReadOnly).WithNumVersionsToKeep(1)
	// CacheMB 0 means no block cache, as for the other engines; Badger needs
	// one to read compressed blocks.
	bo.BlockCacheSize = int64(o.CacheMB) << 20
	if bo.BlockCacheSize == 0 && o.Compression != "" && o.Compression != "none" {
		return bo, "", errors.New("badger: compressed blocks need a block cache (CacheMB > 0)")
	}
	setPositive(&bo.MemTableSize, int64(o.MemtableMB)<<20)
	setPositive(&bo.BlockSize, o.BlockSize) // 0: Badger's default, 4 KiB
	// Every block read from a table file is verified, as RocksDB and Pebble
	// do by default (Badger's default verifies nothing); blocks served from
	// the block cache are not re-verified, in any of the three.
	bo.ChecksumVerificationMode = either(o.SkipChecksums, options.NoVerification, options.OnBlockRead)
	bo.VerifyValueChecksum = !o.SkipChecksums
	// Badger's metrics are process-wide expvar counters several of which
	// every Get bumps. A read-only open turns them off (Flush, which reads
	// the compaction gauge, has nothing to do there).
	bo.MetricsEnabled = !o.ReadOnly
	if bo.Compression = byCompression(o, options.None, options.Snappy, options.ZSTD); bo.Compression == options.ZSTD {
		bo.ZSTDCompressionLevel = badgerZstdLevel
	}
	// The rate of a Bloom filter of so many bits per key and the optimal
	// number of probes: exp(-bits * ln(2)^2).
	bo.BloomFalsePositive = either(o.BloomBitsPerKey > 0, math.Exp(-float64(o.BloomBitsPerKey)*math.Ln2*math.Ln2), 0)
	setPositive(&bo.BloomFalsePositive, o.BloomFPR)
	if n := o.MemtablesInFlight; n > 0 {
		// The one filling and the one the flusher took are beside the
		// queue; an empty queue (0) can leave a writer waiting for good.
		bo.NumMemtables = max(1, n-2)
	}
	if v := o.Params["badger_compactors"]; v != "" {
		bo.NumCompactors, _ = strconv.Atoi(v) // Check accepted it
	}
	if n := o.MaxCompactions; n > 0 && n < bo.NumCompactors {
		bo.NumCompactors = max(2, n)
	}
	if n := o.BuildTableBytes; n > 0 && n < bo.BaseTableSize {
		bo.BaseTableSize = n
	}
	setPositive(&bo.BaseLevelSize, o.BaseLevelBytes)
	if n := o.L0CompactionTables; n > 0 {
		bo.NumLevelZeroTables = min(n, bo.NumLevelZeroTablesStall-1)
	}
	if o.DisableCompactions {
		bo.NumCompactors = 0
		bo.NumLevelZeroTables = math.MaxInt32 - 1 // Badger wants it below the stall
		bo.NumLevelZeroTablesStall = math.MaxInt32
		bo.CompactL0OnClose = false
	}

	// Badger rejects a value threshold above 15% of the memtable (its largest
	// batch). An explicit threshold is passed through so Badger reports the
	// conflict; its 1 MiB default is clamped so a small memtable still opens.
	maxBatch := bo.MemTableSize * 15 / 100
	thresholdNote := " (-badger_vthreshold)"
	if vt, _ := strconv.ParseInt(o.Params["badger_vthreshold"], 10, 64); vt > 0 {
		bo.ValueThreshold = vt
	} else if bo.ValueThreshold > maxBatch {
		bo.ValueThreshold = maxBatch
		thresholdNote = " (default 1MiB clamped to 15% of memtable)"
	} else {
		thresholdNote = " (default)"
	}
	return bo, thresholdNote, nil
}

func openBadger(o Options) (DB, error) {
	bo, thresholdNote, err := badgerOptions(o)
	if err != nil {
		return nil, err
	}
	db, err := badger.Open(bo)
	if err != nil {
		return nil, err
	}
	b := &badgerDB{store: storeOf("badger", o), db: db}
	readahead := ReadaheadOS + " (Badger's default: its memory maps are not advised; a fault reads read_ahead_kb around the page)"
	if o.Readahead == ReadaheadOff {
		if err := adviseRandom(o.Dir); err != nil {
			db.Close()
			return nil, fmt.Errorf("badger: readahead off: %w", err)
		}
		readahead = ReadaheadOff + " (madvise MADV_RANDOM on every map of the store's files at open; " +
			"tables, memtables and value logs created later are not advised)"
	}

	comp := byCompression(o, "none", "snappy", "zstd (level "+strconv.Itoa(badgerZstdLevel)+")")
	bloom := strconv.FormatFloat(bo.BloomFalsePositive, 'g', 4, 64) +
		either(o.BloomFPR > 0, " (BloomFPR)", " ("+strconv.Itoa(o.BloomBitsPerKey)+" bits/key)")
	if bo.BloomFalsePositive == 0 {
		bloom = "off"
	}
	b.settings = []Setting{
		{"sync_writes", strconv.FormatBool(bo.SyncWrites)},
		{"group_commit", "WriteBatch per commit; one writer goroutine takes the transactions queued meanwhile as a group: the value log synced once per group, the memtable log after each transaction"},
		{"block_cache", lsmMiB(bo.BlockCacheSize)},
		{"index_cache", strconv.FormatInt(bo.IndexCacheSize, 10) + " (default: table indexes and filters kept in memory)"},
		{"memtable", lsmMiB(bo.MemTableSize)},
		{"num_memtables", strconv.Itoa(bo.NumMemtables) + " (queued for a flush; at most " + strconv.Itoa(bo.NumMemtables+2) + " in memory with the one filling and the one flushing)"},
		{"compression", comp},
		{"bloom_fpr", bloom},
		{"value_threshold", strconv.FormatInt(bo.ValueThreshold, 10) + thresholdNote},
		{"num_versions_to_keep", strconv.Itoa(bo.NumVersionsToKeep)},
		{"num_compactors", strconv.Itoa(bo.NumCompactors) + compactionNote(o)},
		{"num_level_zero_tables", strconv.Itoa(bo.NumLevelZeroTables)},
		{"num_level_zero_tables_stall", strconv.Itoa(bo.NumLevelZeroTablesStall)},
		{"base_table_size", lsmMiB(bo.BaseTableSize)},
		{"table_size_multiplier", strconv.Itoa(bo.TableSizeMultiplier)},
		{"base_level_size", lsmMiB(bo.BaseLevelSize)},
		{"level_size_multiplier", strconv.Itoa(bo.LevelSizeMultiplier)},
		{"max_levels", strconv.Itoa(bo.MaxLevels)},
		{"block_size", lsmBlockSize(o, bo.BlockSize)},
		{"index", "one entry per block in each table's index, all held in memory (no index blocks)"},
		{"verify_checksums", either(o.SkipChecksums, // badgerOptions sets both checks from it
			"false (tables: ChecksumVerificationMode NoVerification, Badger's default; value log: VerifyValueChecksum false)",
			"true (tables: ChecksumVerificationMode OnBlockRead, every block read from a file; value log: VerifyValueChecksum true)")},
		{"vlog_file_size", lsmMiB(bo.ValueLogFileSize)},
		{"detect_conflicts", strconv.FormatBool(bo.DetectConflicts)},
		{"compact_l0_on_close", strconv.FormatBool(bo.CompactL0OnClose)},
		{"metrics", either(bo.MetricsEnabled,
			"on (Badger's default; Flush reads the compaction gauge)",
			"off (read-only open: nothing reads them, and every Get would bump several shared counters)")},
		{"read_only", strconv.FormatBool(bo.ReadOnly)},
		{"readahead", readahead},
		{"iterator_prefetch", strconv.Itoa(badger.DefaultIteratorOptions.PrefetchSize) + " values (DefaultIteratorOptions; off with IterOptions.NoPrefetch or KeysOnly)"},
		{"logger", "off"},
		{"flush", "Sync + wait for immutable memtables and compactions; the active memtable stays in memory, durable in its WAL"},
	}
	return b, nil
}

func (b *badgerDB) Close() error { return b.closeOnce(b.db.Close) }

// NewReader holds one read-only transaction for the reader's life: Badger's
// idiom, and the snapshot every read through it sees.
func (b *badgerDB) NewReader() (Reader, error) {
	if err := b.usable(); err != nil {
		return nil, err
	}
	return &badgerReader{db: b, txn: b.db.NewTransaction(false)}, nil
}

func (b *badgerDB) NewBatch() Batch {
	if err := b.writable(); err != nil {
		return &lsmErrBatch{err: err}
	}
	return &badgerBatch{db: b, wb: b.db.NewWriteBatch()}
}

// Flush is DB.Sync (the active memtable's log and the value log; Badger
// writes the memtable out only when full or on Close), then settles: one
// *.mem file is left when no flushed memtable is queued; the compactors pick
// a level at L0 score >= 1 or an adjusted score >= 1.
func (b *badgerDB) Flush() error {
	if err := b.usable(); err != nil || b.readOnly {
		return err
	}
	if err := b.db.Sync(); err != nil {
		return err
	}
	return settle("badger", b.busy)
}

// busy reports whether Badger has memtable flushes or compactions running or
// due.
func (b *badgerDB) busy() (bool, error) {
	ents, err := os.ReadDir(b.dir)
	if err != nil {
		return false, err
	}
	mems := 0
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".mem") {
			mems++
		}
	}
	if v, ok := expvar.Get("badger_compaction_current_num_lsm").(*expvar.Int); mems > 1 || ok && v.Value() > 0 {
		return true, nil
	}
	return !b.noCompactions && slices.ContainsFunc(b.db.Levels(), func(l badger.LevelInfo) bool {
		return (l.Level == 0 && l.Score >= 1) || l.Adjusted >= 1
	}), nil
}

type badgerReader struct {
	db    *badgerDB
	txn   *badger.Txn // nil once closed
	iters int
}

// Get passes the caller's fn straight to Item.Value, so the value is not
// copied (it points into the block or value log while fn runs).
func (r *badgerReader) Get(key []byte, fn func(value []byte) error) (bool, error) {
	if r.txn == nil || r.db.closed.Load() {
		return false, r.db.errClosed()
	}
	item, err := r.txn.Get(key)
	if err != nil {
		if err == badger.ErrKeyNotFound {
			return false, nil
		}
		return false, err
	}
	return true, item.Value(fn)
}

func (r *badgerReader) NewIter(o IterOptions) (Iterator, error) {
	if r.txn == nil || r.db.closed.Load() {
		return nil, r.db.errClosed()
	}
	prefetch := !o.KeysOnly && !o.NoPrefetch
	bio := badger.IteratorOptions{PrefetchValues: prefetch, Prefix: o.Prefix,
		PrefetchSize: either(prefetch, badger.DefaultIteratorOptions.PrefetchSize, 0)}
	it := &badgerIter{r: r, it: r.txn.NewIterator(bio), end: o.End, prefetched: bio.PrefetchValues}
	it.setVal = it.setValue
	r.iters++
	it.it.Seek(o.first()) // nil or empty rewinds
	return it, nil
}

// Close discards the transaction. Badger panics if a transaction is
// discarded with an iterator open, so that is an error here instead.
func (r *badgerReader) Close() error {
	if r.txn == nil {
		return nil
	}
	if r.iters > 0 {
		return errors.New("badger: reader closed with open iterators")
	}
	if !r.db.closed.Load() {
		r.txn.Discard()
	}
	r.txn = nil
	return nil
}

type badgerIter struct {
	r          *badgerReader
	it         *badger.Iterator
	end        []byte
	prefetched bool
	val        []byte
	buf        []byte
	setVal     func([]byte) error // it.setValue, bound once
	closed     bool
}

func (it *badgerIter) Valid() bool {
	if it.closed || !it.it.Valid() {
		return false
	}
	return it.end == nil || bytes.Compare(it.it.Item().Key(), it.end) < 0
}

func (it *badgerIter) Next() { it.it.Next() }

func (it *badgerIter) Key() []byte { return it.it.Item().Key() }

func (it *badgerIter) setValue(v []byte) error { it.val = v; return nil }

// Value returns the prefetched value without a copy; without prefetching,
// a copy in a buffer the iterator reuses, as Badger releases the value's
// memory when Item.Value returns.
func (it *badgerIter) Value() ([]byte, error) {
	item := it.it.Item()
	if it.prefetched {
		it.val = nil
		err := item.Value(it.setVal)
		return it.val, err
	}
	v, err := item.ValueCopy(it.buf[:0])
	if err == nil {
		it.buf = v
	}
	return v, err
}

func (it *badgerIter) Err() error { return nil }

func (it *badgerIter) Close() error {
	if it.closed {
		return nil
	}
	it.closed = true
	it.it.Close()
	it.r.iters--
	return nil
}

type badgerBatch struct {
	db   *badgerDB
	wb   *badger.WriteBatch
	n    int
	done bool
}

// Set copies key and value into one allocation: WriteBatch keeps the slices
// it is given until the batch is written.
func (b *badgerBatch) Set(key, value []byte) error {
	buf := make([]byte, len(key)+len(value))
	copy(buf, key)
	copy(buf[len(key):], value)
	if err := b.wb.Set(buf[:len(key):len(key)], buf[len(key):]); err != nil {
		return err
	}
	b.n++
	return nil
}

// Commit writes the batch and waits for it. WriteBatch splits a batch larger
// than Badger's transaction limit (15% of the memtable) into several
// transactions, so only batches under that limit are atomic.
func (b *badgerBatch) Commit() error {
	if err := b.db.committing(&b.done); err != nil {
		return err
	}
	return b.wb.Flush()
}

func (b *badgerBatch) Len() int { return b.n }

func (b *badgerDB) Delete(key []byte) error {
	return b.write(func() error { return b.db.Update(func(txn *badger.Txn) error { return txn.Delete(key) }) })
}

func (b *badgerDB) DeleteBatch(keys [][]byte) error {
	return b.write(func() error {
		wb := b.db.NewWriteBatch()
		defer wb.Cancel()
		for _, k := range keys {
			if err := wb.Delete(k); err != nil {
				return err
			}
		}
		return wb.Flush()
	})
}

// Compact is Flatten with one compactor: Badger's only manual
// compaction. It compacts whole levels until one is left, whatever start
// and end say, and does not reach the active memtable, which only Close
// writes out.
func (b *badgerDB) Compact(start, end []byte) error {
	return b.write(func() error { return b.db.Flatten(1) })
}
