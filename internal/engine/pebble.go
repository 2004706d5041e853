// Pebble adapter: docs/engines.md says how each option is mapped and why
// (index blocks, checksums, FormatNewest, readahead); Settings says what
// was set.
package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"

	"github.com/kvbench/kvbench/internal/memlimit"
)

const pebbleModule = "github.com/cockroachdb/pebble/v2"

func init() {
	Register(Info{
		Name:         "pebble",
		Title:        "Pebble",
		Module:       pebbleModule,
		Version:      func() string { return ModuleVersion(pebbleModule, pebble.Open) },
		Open:         openPebble,
		Compressions: []string{"none", "snappy", "zstd"},
		Params: []Param{
			&Flag[Text]{Name: "pebble_index_block", Default: "256KiB", Shapes: true,
				Usage: "target size of Pebble's index blocks (1KiB to 1GiB); a table whose index outgrows one block gets a two-level index (default: CockroachDB's 256KiB; Pebble's own is its block size)",
				Check: func(v Text, _ any) error {
					if n, err := memlimit.ParseSize(string(v)); err != nil || n < 1<<10 || n > 1<<30 {
						return errors.New("must be a size from 1KiB to 1GiB (256KiB)")
					}
					return nil
				}},
			&Flag[Text]{Name: "pebble_compactions", Default: "", Shapes: true, Check: checkIntParam(1, 64),
				Usage: "the most compactions Pebble runs at once, the upper end of its CompactionConcurrencyRange (default: Pebble's 1)"},
			&Flag[Switch]{Name: "pebble_read_sampling", Default: "true", Choices: []Switch{"true", "false"},
				Usage: "Pebble's read sampling, which schedules read-triggered compactions of tables iterators seek through often (false: ReadSamplingMultiplier -1)"},
		},
		Layout:       lsmLayout,
		TableFilters: true,
		DataBlocks:   true,
		WriteReserve: pebbleReserve,
		Dims:         []Dim{boundDim},
		// Write-ahead logs, including those kept for recycling.
		LogFile: func(n string) bool { return strings.HasSuffix(n, ".log") },
	})
}

// pebbleDeclined is how long a level may score with nothing running
// before Flush takes it that Pebble will not compact it.
const pebbleDeclined = 400 * time.Millisecond

// pebbleQuietLogger drops Pebble's log output. Fatalf must not return, so it
// panics.
type pebbleQuietLogger struct{}

func (pebbleQuietLogger) Infof(string, ...any)  {}
func (pebbleQuietLogger) Errorf(string, ...any) {}
func (pebbleQuietLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("pebble: fatal: "+format, args...))
}

type pebbleDB struct {
	store
	db *pebble.DB
	wo *pebble.WriteOptions
}

// pebbleMemory sets what o says of Pebble's memtables and its first
// compactions: sizes that both the open and its write reserve use.
func pebbleMemory(o Options, po *pebble.Options) {
	setPositive(&po.MemTableSize, uint64(o.MemtableMB)<<20)
	setPositive(&po.MemTableStopWritesThreshold, o.MemtablesInFlight)
	setPositive(&po.L0CompactionThreshold, o.L0CompactionTables)
	setPositive(&po.LBaseMaxBytes, o.BaseLevelBytes)
}

// pebbleReserve: MemTableStopWritesThreshold memtables, each a level-0
// table once flushed, and the next one's log; a level-0 compaction
// (L0CompactionThreshold tables into the base level).
func pebbleReserve(o Options) int64 {
	po := &pebble.Options{}
	pebbleMemory(o, po)
	po.EnsureDefaults()
	return lsmReserve(o, int64(po.MemTableSize), int64(po.MemTableStopWritesThreshold+1),
		int64(po.L0CompactionThreshold), po.LBaseMaxBytes)
}

func openPebble(o Options) (DB, error) {
	prof := byCompression(o, sstable.NoCompression, sstable.SnappyCompression, sstable.ZstdCompression)
	compression := func() *sstable.CompressionProfile { return prof }

	cache := pebble.NewCache(int64(o.CacheMB) << 20)
	defer cache.Unref() // the DB holds its own reference

	// A read-only open keeps the store's format (0); ratcheting it is a write.
	po := &pebble.Options{Cache: cache, Logger: pebbleQuietLogger{}, ReadOnly: o.ReadOnly,
		FormatMajorVersion: either(o.ReadOnly, 0, pebble.FormatNewest)}
	pebbleMemory(o, po)
	bits := o.BloomBitsPerKey
	if o.BloomFPR > 0 {
		bits = max(1, int(math.Round(BloomBitsForFPR(o.BloomFPR))))
	}
	// The index block size is a size Check has accepted; 0 cannot happen
	// after Open filled in the default.
	indexBlock, _ := memlimit.ParseSize(o.Params["pebble_index_block"])
	for i := range po.Levels {
		po.Levels[i].Compression = compression
		po.Levels[i].BlockSize = o.BlockSize // 0: Pebble's default, 4 KiB
		po.Levels[i].IndexBlockSize = int(indexBlock)
		po.Levels[i].FilterPolicy = either[pebble.FilterPolicy](bits > 0, bloom.FilterPolicy(bits), pebble.NoFilterPolicy)
	}
	if o.DisableCompactions {
		po.DisableAutomaticCompactions = true
		po.L0CompactionThreshold = math.MaxInt32
		po.L0StopWritesThreshold = math.MaxInt32
		po.FlushSplitBytes = math.MaxInt64 // one table per flush
	}
	readahead := ReadaheadOS + " (Pebble's default: tables FADV_RANDOM; a sequential iterator reads ahead with readahead(2) up to 256KiB, then reopens the table FADV_SEQUENTIAL; compactions FADV_SEQUENTIAL)"
	if o.Readahead == ReadaheadOff {
		rc := objstorageprovider.NewReadaheadConfig()
		rc.Set(objstorageprovider.FadviseSequential, objstorageprovider.SysReadahead)
		po.Local.ReadaheadConfig = rc
		readahead = ReadaheadOff + " (tables FADV_RANDOM; a sequential iterator reads ahead with readahead(2) up to 256KiB and never hands over to the OS: speculative readahead SysReadahead; compactions FADV_SEQUENTIAL, the default)"
	}
	if v := o.Params["pebble_compactions"]; v != "" {
		n, _ := strconv.Atoi(v) // Check accepted it
		po.CompactionConcurrencyRange = func() (int, int) { return 1, n }
	}
	if o.Params["pebble_read_sampling"] == "false" {
		po.Experimental.ReadSamplingMultiplier = -1
	}
	po.EnsureDefaults() // Open does the same; done here so Settings can show the defaults

	db, err := pebble.Open(o.Dir, po)
	if err != nil {
		return nil, err
	}
	p := &pebbleDB{store: storeOf("pebble", o), db: db, wo: either(o.Sync, pebble.Sync, pebble.NoSync)}

	bloomS := "off"
	if bits > 0 {
		bloomS = strconv.Itoa(bits) + " bits/key, all levels"
	}
	if o.BloomFPR > 0 {
		bloomS += " (BloomFPR " + strconv.FormatFloat(o.BloomFPR, 'g', -1, 64) + " rounded to whole bits)"
	}
	lo, hi := po.CompactionConcurrencyRange()
	fmv := db.FormatMajorVersion().String() + either(db.FormatMajorVersion() == pebble.FormatNewest, " (FormatNewest)", "")
	p.settings = []Setting{
		{"sync", strconv.FormatBool(o.Sync)},
		{"group_commit", "commit pipeline (Batch.Commit: one WAL sync covers every commit queued behind it)"},
		{"block_cache", lsmMiB(cache.MaxSize())},
		{"memtable", lsmMiB(int64(po.MemTableSize))},
		{"memtable_stop_writes_threshold", strconv.Itoa(po.MemTableStopWritesThreshold)},
		{"compression", prof.Name + ", all levels"},
		{"bloom", bloomS},
		{"block_size", lsmBlockSize(o, po.Levels[0].BlockSize) + ", all levels"},
		{"index_block_size", memlimit.FormatSize(int64(po.Levels[0].IndexBlockSize)) + ", all levels (-pebble_index_block; a table whose index outgrows one block gets a two-level index)"},
		{"target_file_size", lsmMiB(po.TargetFileSizes[0]) + " at L0, doubling per level (default)"},
		{"verify_checksums", "true (always: Pebble verifies every block it reads from a file and has no option to skip it" +
			either(o.SkipChecksums, "; -verify_checksums=false does not apply", "") + ")"},
		{"format_major_version", fmv},
		{"l0_compaction_threshold", strconv.Itoa(po.L0CompactionThreshold)},
		{"l0_stop_writes_threshold", strconv.Itoa(po.L0StopWritesThreshold)},
		{"lbase_max_bytes", lsmMiB(po.LBaseMaxBytes)},
		{"compaction_concurrency", strconv.Itoa(lo) + "-" + strconv.Itoa(hi) + either(o.Params["pebble_compactions"] != "", " (-pebble_compactions)", " (default)") + compactionNote(o)},
		{"read_sampling_multiplier", strconv.FormatInt(po.Experimental.ReadSamplingMultiplier, 10) + " (-1: off, -pebble_read_sampling)"},
		{"max_open_files", strconv.Itoa(po.MaxOpenFiles)},
		{"bytes_per_sync", strconv.Itoa(po.BytesPerSync)},
		{"wal_bytes_per_sync", strconv.Itoa(po.WALBytesPerSync) + " (default)"},
		{"readahead", readahead},
		{"read_only", strconv.FormatBool(o.ReadOnly)},
		{"logger", "off"},
		{"reader", "DB directly (no snapshot)"},
		{"flush", "DB.Flush + wait until no flush/compaction runs and no level scores for compaction"},
	}
	return p, nil
}

func (p *pebbleDB) Close() error { return p.closeOnce(p.db.Close) }

// NewReader reads the DB directly, Pebble's idiom (directReader). Unlike
// the B-trees' and Badger's readers it holds no snapshot.
func (p *pebbleDB) NewReader() (Reader, error) { return readerIf(p.usable(), &pebbleReader{db: p}) }

type pebbleReader struct {
	directReader
	db *pebbleDB
}

func (p *pebbleDB) NewBatch() Batch {
	if err := p.writable(); err != nil {
		return &lsmErrBatch{err: err}
	}
	return &pebbleBatch{p: p, b: p.db.NewBatch()}
}

// Flush writes the memtable to an sstable (durable with the MANIFEST,
// whatever Options.Sync is) and settles on DB.Metrics. Not on
// Compact.EstimatedDebt, which counts all of L0 whenever L0 and Lbase hold
// data and may never reach 0. pebbleDeclined is four ticks of Pebble's
// compaction granter.
func (p *pebbleDB) Flush() error {
	if err := p.usable(); err != nil || p.readOnly {
		return err
	}
	if err := p.db.Flush(); err != nil {
		return err
	}
	if p.noCompactions {
		return nil
	}
	var stuckSince time.Time
	return settle("pebble", func() (bool, error) {
		m := p.db.Metrics()
		if m.Compact.NumInProgress > 0 || m.Flush.NumInProgress > 0 {
			stuckSince = time.Time{}
			return true, nil
		}
		pending := m.Compact.MarkedFiles > 0 ||
			slices.ContainsFunc(m.Levels[:len(m.Levels)-1], func(l pebble.LevelMetrics) bool { return l.Score > 0 })
		if !pending {
			return false, nil
		}
		if stuckSince.IsZero() {
			stuckSince = time.Now()
		}
		return time.Since(stuckSince) < pebbleDeclined, nil
	})
}

// Get calls fn on Pebble's own buffer (no copy) and releases it after.
func (r *pebbleReader) Get(key []byte, fn func(value []byte) error) (bool, error) {
	if err := r.readable(&r.db.store); err != nil {
		return false, err
	}
	v, closer, err := r.db.db.Get(key)
	if err != nil {
		if errors.Is(err, pebble.ErrNotFound) {
			return false, nil
		}
		return false, err
	}
	return true, cmp.Or(fn(v), closer.Close())
}

func (r *pebbleReader) NewIter(o IterOptions) (Iterator, error) {
	if err := r.readable(&r.db.store); err != nil {
		return nil, err
	}
	lower, upper := lsmIterBounds(o)
	it, err := r.db.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, err
	}
	it.First() // the lower bound is max(Start, Prefix)
	return &pebbleIter{it: it}, nil
}

type pebbleIter struct {
	it     *pebble.Iterator
	closed bool
}

func (it *pebbleIter) Valid() bool            { return !it.closed && it.it.Valid() }
func (it *pebbleIter) Next()                  { it.it.Next() }
func (it *pebbleIter) Key() []byte            { return it.it.Key() }
func (it *pebbleIter) Value() ([]byte, error) { return it.it.ValueAndErr() }
func (it *pebbleIter) Err() error             { return it.it.Error() }

func (it *pebbleIter) Close() error {
	if it.closed {
		return nil
	}
	it.closed = true
	return it.it.Close()
}

type pebbleBatch struct {
	p    *pebbleDB
	b    *pebble.Batch
	n    int
	done bool
}

// Set copies key and value into the batch's buffer.
func (b *pebbleBatch) Set(key, value []byte) error {
	if err := b.b.Set(key, value, nil); err != nil {
		return err
	}
	b.n++
	return nil
}

func (b *pebbleBatch) Commit() error {
	if err := b.p.committing(&b.done); err != nil {
		return err
	}
	return cmp.Or(b.b.Commit(b.p.wo), b.b.Close())
}

func (b *pebbleBatch) Len() int { return b.n }

func (p *pebbleDB) Delete(key []byte) error {
	return p.write(func() error { return p.db.Delete(key, p.wo) })
}

func (p *pebbleDB) DeleteBatch(keys [][]byte) error {
	return p.write(func() error {
		b := p.db.NewBatch()
		for _, k := range keys {
			if err := b.Delete(k, nil); err != nil {
				b.Close()
				return err
			}
		}
		return cmp.Or(b.Commit(p.wo), b.Close())
	})
}

// DeleteRange writes one range tombstone over [start, end).
func (p *pebbleDB) DeleteRange(start, end []byte) error {
	return p.write(func() error { return p.db.DeleteRange(start, end, p.wo) })
}

// Compact compacts [start, end) down through every level, with
// parallelize on (Pebble splits a manual compaction where it can, as
// CockroachDB asks it to).
func (p *pebbleDB) Compact(start, end []byte) error {
	return p.write(func() error { return p.db.Compact(context.Background(), start, end, true) })
}
