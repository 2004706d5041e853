// Bolt adapter (go.etcd.io/bbolt); docs/engines.md gives its settings and
// why. InitialMmapSize is sized from ExpectedBytes also so that a writer
// does not stall behind long-lived read transactions (a remap needs every
// reader gone).
package engine

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// boltMaxMap caps bbolt's initial map: 1 TiB, 1 GiB where int is 32 bits.
const boltMaxMap = int64(1) << min(40, strconv.IntSize-2)

const (
	boltModule      = "go.etcd.io/bbolt"
	boltFile        = "bolt.db"
	boltLockTimeout = time.Second
)

var boltBucket = []byte("kv")

func init() {
	Register(Info{
		Name:         "bolt",
		Title:        "Bolt",
		Module:       boltModule,
		Version:      func() string { return ModuleVersion(boltModule, bolt.Open) },
		Open:         openBolt,
		Compressions: []string{"none"},
		Params: []Param{
			&Flag[Text]{Name: "bolt_freelist", Default: "map", Choices: []Text{"map", "array"}, Shapes: true,
				Usage: "bbolt freelist type: map or array"},
			&Flag[Text]{Name: "bolt_write", Default: "update", Choices: []Text{"update", "batch"},
				Usage: "how bbolt commits a batch: update (DB.Update) or batch (DB.Batch)"},
			&Flag[Text]{Name: "bolt_get", Default: "bucket", Choices: []Text{"bucket", "cursor"},
				Usage: "how a bbolt point read finds its key: bucket (Bucket.Get, the call bbolt's users make, a cursor of its own per read) or cursor (one Cursor per reader, reused: Seek and compare)"},
			&Flag[Switch]{Name: "bolt_mmap_populate", Default: "false", Choices: onOff,
				Usage: "map bbolt's file MAP_POPULATE (Options.MmapFlags): the kernel reads the whole file in at open instead of on first touch"},
			&Flag[Switch]{Name: "bolt_freelist_sync", Default: "false", Choices: onOff, Shapes: true,
				Usage: "write bbolt's freelist into the file at every commit (NoFreelistSync=false, bbolt's default); off, as etcd runs it, a writable open rebuilds it by scanning the file"},
		},
		Dims: []Dim{
			// DB.Update (one transaction per batch) against DB.Batch
			// (concurrent callers coalesced into one transaction), the
			// switch badger-bench made for bbolt: bbolt's group commit.
			{Name: "mode", Values: []string{"update", "batch"}, Is: GroupCommit,
				Apply: func(v string, o *Options, _ *IterOptions) { *o = o.WithParam("bolt_write", v) }},
		},
	})
}

type boltDB struct {
	store   // settings fixed at open; closed under closeMu
	db      *bolt.DB
	commit  func(func(*bolt.Tx) error) error // DB.Update, or DB.Batch under bolt_write=batch
	getMode string                           // bolt_get

	closeMu sync.Mutex
	readers atomic.Int64 // open Readers; Close refuses while any is open
}

func openBolt(o Options) (DB, error) {
	d := &boltDB{store: storeOf("bolt", o), getMode: o.Params["bolt_get"]}
	writeMode := o.Params["bolt_write"]
	mmapSize := int(btreeMap(o.ExpectedBytes, boltMaxMap))
	path := filepath.Join(o.Dir, boltFile)
	if o.ReadOnly {
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("engine bolt: read-only open: %w", err)
		}
	}
	db, err := bolt.Open(path, 0o644, &bolt.Options{
		Timeout: boltLockTimeout,
		NoSync:  !o.Sync,
		// Growing the file fsyncs it unless NoGrowSync: without -sync that
		// would be a sync no other engine's commit makes (etcd ties the
		// two the same way).
		NoGrowSync:      !o.Sync,
		NoFreelistSync:  o.Params["bolt_freelist_sync"] != "true",
		FreelistType:    either(o.Params["bolt_freelist"] == "array", bolt.FreelistArrayType, bolt.FreelistMapType),
		ReadOnly:        o.ReadOnly,
		InitialMmapSize: mmapSize,
		MmapFlags:       either(o.Params["bolt_mmap_populate"] == "true", syscall.MAP_POPULATE, 0),
	})
	if err != nil {
		if errors.Is(err, bolterrors.ErrTimeout) {
			return nil, fmt.Errorf("engine bolt: %s is locked by another opener (gave up after %v): %w", path, boltLockTimeout, err)
		}
		return nil, fmt.Errorf("engine bolt: open %s: %w", path, err)
	}
	d.db, d.commit = db, either(writeMode == "batch", db.Batch, db.Update)
	d.settings = []Setting{
		{"sync", strconv.FormatBool(!db.NoSync)},
		{"nosync", strconv.FormatBool(db.NoSync)},
		{"nofreelistsync", either(db.NoFreelistSync,
			"true (etcd's setting: commits write no freelist; a writable open rebuilds it by scanning the file)",
			"false (-bolt_freelist_sync: every commit writes the freelist; bbolt's default)")},
		{"nogrowsync", strconv.FormatBool(db.NoGrowSync) + " (= !sync: growing the file fsyncs only with -sync)"},
		{"freelist", o.Params["bolt_freelist"] + " (" + string(db.FreelistType) + ")"},
		{"fill_percent", strconv.FormatFloat(bolt.DefaultFillPercent, 'g', -1, 64) + " (bbolt default: a split leaves pages half full; keys arrive in random order)"},
		{"checksums", "none (engine has none)"},
		{"write_mode", writeMode},
		{"group_commit", either(writeMode == "batch",
			"DB.Batch (concurrent commits coalesced into one transaction, up to batch_max_size of them or batch_max_delay)",
			"none (DB.Update: one transaction per commit, one writer at a time)")},
		{"get", either(d.getMode == "cursor",
			"cursor (one Cursor per reader, reused: Seek and compare; -bolt_get)",
			"bucket (Bucket.Get, the call bbolt's users make; -bolt_get)")},
		{"mmap_flags", either(db.MmapFlags&syscall.MAP_POPULATE != 0,
			"MAP_POPULATE (-bolt_mmap_populate: the file is read in at open)",
			"none (bbolt's default: pages are read on first touch)")},
	}
	if writeMode == "batch" {
		d.settings = append(d.settings,
			Setting{"batch_max_size", strconv.Itoa(db.MaxBatchSize)},
			Setting{"batch_max_delay", db.MaxBatchDelay.String()})
	}
	d.settings = append(d.settings,
		Setting{"initial_mmap", strconv.Itoa(mmapSize) + " (no MAP_POPULATE)"},
		Setting{"page_size", strconv.Itoa(db.Info().PageSize)},
		Setting{"lock_timeout", boltLockTimeout.String()},
		Setting{"readonly", strconv.FormatBool(o.ReadOnly)},
		Setting{"cache", "os-page-cache"},
		Setting{"readahead", o.Readahead + " (bbolt madvises its map MADV_RANDOM itself, in either mode)"},
		Setting{"compression", "none"},
	)
	if !o.ReadOnly {
		err := db.Update(func(tx *bolt.Tx) error {
			_, err := tx.CreateBucketIfNotExists(boltBucket)
			return err
		})
		if err != nil {
			db.Close()
			return nil, fmt.Errorf("engine bolt: create bucket: %w", err)
		}
	}
	return d, nil
}

func (d *boltDB) NewReader() (Reader, error) {
	tx, err := d.db.Begin(false)
	if err != nil {
		return nil, fmt.Errorf("engine bolt: begin read: %w", err)
	}
	r := &boltReader{d: d, tx: tx, b: tx.Bucket(boltBucket)}
	if r.b != nil && d.getMode == "cursor" {
		r.cur = r.b.Cursor()
	}
	d.readers.Add(1)
	return r, nil
}

func (d *boltDB) NewBatch() Batch { return &boltBatch{d: d} }

func (d *boltDB) Flush() error {
	if d.readOnly {
		return nil
	}
	return d.db.Sync()
}

func (d *boltDB) Close() error {
	d.closeMu.Lock()
	defer d.closeMu.Unlock()
	// bbolt's Close waits for every read transaction, so closing under an
	// open Reader would hang.
	return d.closeWithoutReaders(d.readers.Load(), d.db.Close)
}

type boltReader struct {
	d   *boltDB
	tx  *bolt.Tx     // nil once closed
	b   *bolt.Bucket // nil when a read-only database has no bucket yet, or closed
	cur *bolt.Cursor // reused by Get under bolt_get=cursor
}

func (r *boltReader) Get(key []byte, fn func(value []byte) error) (bool, error) {
	if r.b == nil {
		return false, nil
	}
	if r.cur == nil { // bolt_get=bucket
		// The bucket holds no nested buckets, so a nil value is a miss.
		v := r.b.Get(key)
		if v == nil {
			return false, nil
		}
		return true, fn(v)
	}
	k, v := r.cur.Seek(key)
	// Seek lands on the first key >= key; the bucket holds no nested buckets,
	// so an equal key is a value (possibly empty).
	if k == nil || !bytes.Equal(k, key) {
		return false, nil
	}
	return true, fn(v)
}

func (r *boltReader) NewIter(o IterOptions) (Iterator, error) {
	it := &boltIter{o: o}
	if r.b == nil {
		return it, nil
	}
	it.c = r.b.Cursor()
	if seek := o.first(); len(seek) > 0 {
		it.k, it.v = it.c.Seek(seek)
	} else {
		it.k, it.v = it.c.First()
	}
	it.check()
	return it, nil
}

func (r *boltReader) Close() error {
	if r.tx == nil {
		return nil
	}
	err := r.tx.Rollback()
	r.tx, r.cur, r.b = nil, nil, nil
	r.d.readers.Add(-1)
	return err
}

// boltIter and lmdbIter keep their own fields and methods: one embedded
// iterator for both cost ScanBolt 1% more instructions and 16 bytes a scan
// (kvb compare -mode sim, 2026-11-29).
type boltIter struct {
	c    *bolt.Cursor
	k, v []byte
	o    IterOptions
}

// check ends the iteration at End or past Prefix.
func (it *boltIter) check() {
	if it.k != nil && it.o.past(it.k) {
		it.k, it.v = nil, nil
	}
}

func (it *boltIter) Valid() bool { return it.k != nil }

func (it *boltIter) Next() {
	if it.k == nil {
		return
	}
	it.k, it.v = it.c.Next()
	it.check()
}

func (it *boltIter) Key() []byte            { return it.k }
func (it *boltIter) Value() ([]byte, error) { return it.v, nil }
func (it *boltIter) Err() error             { return nil }
func (it *boltIter) Close() error {
	it.c, it.k, it.v = nil, nil, nil
	return nil
}

type boltBatch struct {
	batchArena // Set and Len
	d          *boltDB
}

// Commit applies the batch in one transaction; the batch is then empty and
// may be reused.
func (b *boltBatch) Commit() error {
	apply := inBucket(func(bk *bolt.Bucket) error {
		for i, n := 0, b.Len(); i < n; i++ {
			k, v := b.entry(i)
			if err := bk.Put(k, v); err != nil {
				return err
			}
		}
		return nil
	})
	if err := b.d.commit(apply); err != nil {
		return fmt.Errorf("engine bolt: commit: %w", err)
	}
	b.reset()
	return nil
}

// Delete deletes one key in a transaction of its own (not DeleteBatch of
// one key, whose slice would be an allocation of the suite's in the op).
func (d *boltDB) Delete(key []byte) error {
	return d.db.Update(inBucket(func(bk *bolt.Bucket) error { return bk.Delete(key) }))
}

func (d *boltDB) DeleteBatch(keys [][]byte) error {
	return d.db.Update(inBucket(func(bk *bolt.Bucket) error {
		for _, k := range keys {
			if err := bk.Delete(k); err != nil {
				return err
			}
		}
		return nil
	}))
}

// inBucket runs fn on the store's bucket of tx.
func inBucket(fn func(bk *bolt.Bucket) error) func(tx *bolt.Tx) error {
	return func(tx *bolt.Tx) error {
		bk := tx.Bucket(boltBucket)
		if bk == nil {
			return errors.New("engine bolt: bucket missing")
		}
		return fn(bk)
	}
}
