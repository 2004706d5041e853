// LMDB adapter, on the binding lmdb_powerdns.go or (-tags lmdb_bmatsuo)
// lmdb_bmatsuo.go imports, through their aliases; docs/engines.md gives its
// settings and why. Readers need no LockOSThread: the binding opens the env
// MDB_NOTLS, and Env.Update locks the thread for a write itself.
package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
)

const (
	lmdbMaxReaders = 512 // ≥ 128 reader goroutines, with room to spare
	lmdbDataFile   = "data.mdb"
	lmdbMaxMap     = int64(1) << 45 // 32 TiB: a sanity cap on address space
	lmdbMapRule    = "max(1GiB, 4*expected_bytes, data.mdb size) rounded up to 1GiB"
)

func init() {
	Register(Info{
		Name:         "lmdb",
		Title:        "Lmdb",
		Module:       lmdbModule,
		Version:      func() string { return ModuleVersion(lmdbModule, lmdbNewEnv) },
		Open:         openLMDB,
		Compressions: []string{"none"},
		Params: []Param{
			&Flag[Text]{Name: "lmdb_write", Default: "update", Choices: []Text{"update", "txn"},
				Usage: "how LMDB commits a batch: update (Env.Update) or txn (locked thread, BeginTxn/Commit)"},
			&Flag[Switch]{Name: "lmdb_writemap", Default: "false", Choices: onOff,
				Usage: "open LMDB's env MDB_WRITEMAP: writes go through a writable map instead of write(2)"},
			&Flag[Switch]{Name: "lmdb_nometasync", Default: "false", Choices: onOff,
				Usage: "with -sync, open LMDB's env MDB_NOMETASYNC: a commit syncs its data pages but not the meta page (without -sync, MDB_NOSYNC already skips both)"},
		},
		Dims: []Dim{
			// Seed 001 found OS readahead on the map decides a cold scan
			// by an order of magnitude: on is Options.Readahead "os"
			// (LMDB's default), off is "off" (MDB_NORDAHEAD).
			{Name: "readahead", Values: []string{"on", "off"}, Is: MapReadahead,
				Apply: func(v string, o *Options, _ *IterOptions) {
					o.Readahead = either(v == "on", ReadaheadOS, ReadaheadOff)
				}},
			// Seed 001's batch experiment: Env.Update ("SimpleBatched")
			// against a hand-driven write transaction ("TxnBatched").
			{Name: "mode", Values: []string{"update", "txn"}, Is: CommitMode,
				Apply: func(v string, o *Options, _ *IterOptions) { *o = o.WithParam("lmdb_write", v) }},
		},
	})
}

// lmdbOpenDirs guards against opening one env twice in a process, which
// LMDB forbids (its POSIX locks are per process).
var lmdbOpenDirs sync.Map

type lmdbDB struct {
	store     // settings fixed at open (Settings adds map_size); closed under mu
	env       *lmdbEnv
	dbi       lmdbDBI
	key       string
	writeMode string

	// mu is held shared by every write transaction and by NewReader, and
	// exclusively to resize the map or close the env, which LMDB allows only
	// with no transaction active in the process.
	mu      sync.RWMutex
	readers atomic.Int64 // open Readers: their transactions pin the map
	mapSize atomic.Int64
	grows   atomic.Int64
}

func openLMDB(o Options) (DB, error) {
	var fileSize int64
	if fi, err := os.Stat(filepath.Join(o.Dir, lmdbDataFile)); err == nil {
		fileSize = fi.Size()
	} else if o.ReadOnly {
		return nil, fmt.Errorf("engine lmdb: read-only open: %w", err)
	}
	key := resolvedDir(o.Dir)
	if _, open := lmdbOpenDirs.LoadOrStore(key, true); open {
		return nil, fmt.Errorf("engine lmdb: %s is already open in this process", o.Dir)
	}
	writeMode := o.Params["lmdb_write"]
	readahead := o.Readahead == ReadaheadOS
	env, err := lmdbNewEnv()
	if err != nil {
		lmdbOpenDirs.Delete(key)
		return nil, fmt.Errorf("engine lmdb: %w", err)
	}
	fail := func(what string, err error) (DB, error) {
		env.Close()
		lmdbOpenDirs.Delete(key)
		return nil, fmt.Errorf("engine lmdb: %s: %w", what, err)
	}
	if err := env.SetMaxReaders(lmdbMaxReaders); err != nil {
		return fail("set max readers", err)
	}
	// btreeMap (LMDB reuses freed pages only once no reader can see them),
	// never below the data file already on disk.
	if err := env.SetMapSize(roundUpGiB(max(btreeMap(o.ExpectedBytes, lmdbMaxMap), fileSize))); err != nil {
		return fail("set map size", err)
	}
	var flags uint
	for f, on := range map[uint]bool{lmdbNoReadahead: !readahead, lmdbNoSync: !o.Sync,
		lmdbNoMetaSync: !o.Sync || o.Params["lmdb_nometasync"] == "true",
		lmdbWriteMap:   o.Params["lmdb_writemap"] == "true", lmdbReadonly: o.ReadOnly} {
		if on {
			flags |= f
		}
	}
	if err := env.Open(o.Dir, flags, 0o644); err != nil {
		return fail("open "+o.Dir, err)
	}
	d := &lmdbDB{store: storeOf("lmdb", o), env: env, key: key, writeMode: writeMode}
	err = either(o.ReadOnly, env.View, env.Update)(func(txn *lmdbTxn) (err error) {
		d.dbi, err = txn.OpenRoot(0)
		return err
	})
	if err != nil {
		return fail("open root database", err)
	}
	info, err := env.Info()
	if err != nil {
		return fail("env info", err)
	}
	d.mapSize.Store(info.MapSize)
	maxReaders, err := env.MaxReaders()
	if err != nil {
		return fail("max readers", err)
	}
	st, err := env.Stat()
	if err != nil {
		return fail("stat", err)
	}
	d.settings = []Setting{
		{"map_size_rule", lmdbMapRule},
		{"expected_bytes", strconv.FormatInt(o.ExpectedBytes, 10)},
		{"readahead", either(readahead,
			ReadaheadOS+" (LMDB's default: the map is not advised; a fault reads read_ahead_kb around the page)",
			ReadaheadOff+" (MDB_NORDAHEAD: liblmdb madvises its map MADV_RANDOM)")},
		{"sync", strconv.FormatBool(o.Sync)},
		{"nosync", strconv.FormatBool(!o.Sync)},
		{"nometasync", strconv.FormatBool(flags&lmdbNoMetaSync != 0)},
		{"writemap", strconv.FormatBool(flags&lmdbWriteMap != 0)},
		{"notls", "true (forced by the binding)"},
		{"write_mode", writeMode},
		{"group_commit", "none (one write transaction at a time, each commit synced on its own)"},
		{"max_readers", strconv.Itoa(maxReaders)},
		{"readonly", strconv.FormatBool(o.ReadOnly)},
		{"page_size", strconv.FormatUint(uint64(st.PSize), 10)},
		{"cache", "os-page-cache"},
		{"compression", "none"},
		{"checksums", "none (engine has none)"},
		{"binding", ModuleVersion(lmdbModule, lmdbNewEnv)},
		{"liblmdb", lmdbVersionString()},
	}
	return d, nil
}

func (d *lmdbDB) Settings() []Setting {
	s := append([]Setting{{"map_size", strconv.FormatInt(d.mapSize.Load(), 10)}}, d.settings...)
	if g := d.grows.Load(); g > 0 {
		s = append(s, Setting{"map_grown", strconv.FormatInt(g, 10) + " times after MDB_MAP_FULL"})
	}
	return s
}

var errLMDBClosed = errors.New("engine lmdb: closed")

func (d *lmdbDB) NewReader() (Reader, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed.Load() {
		return nil, errLMDBClosed
	}
	txn, err := d.env.BeginTxn(nil, lmdbReadonly)
	if err != nil {
		return nil, fmt.Errorf("engine lmdb: begin read: %w", err)
	}
	txn.RawRead = true
	d.readers.Add(1)
	return &lmdbReader{d: d, txn: txn}, nil
}

func (d *lmdbDB) NewBatch() Batch { return &lmdbBatch{d: d} }

func (d *lmdbDB) Flush() error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed.Load() {
		return errLMDBClosed
	}
	if d.readOnly {
		return nil
	}
	return d.env.Sync(true)
}

func (d *lmdbDB) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	// Closing the env under a live read transaction would free what the
	// transaction points at.
	return d.closeWithoutReaders(d.readers.Load(), func() error {
		defer lmdbOpenDirs.Delete(d.key)
		return d.env.Close()
	})
}

// update runs fn in one write transaction: Env.Update, or under mode
// "txn" a locked thread driving BeginTxn/Commit. seen is the map size it
// ran under, for grow.
func (d *lmdbDB) update(mode string, fn func(*lmdbTxn) error) (seen int64, err error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed.Load() {
		return 0, errLMDBClosed
	}
	seen = d.mapSize.Load()
	if mode == "update" {
		return seen, d.env.Update(fn)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	txn, err := d.env.BeginTxn(nil, 0)
	if err != nil {
		return seen, err
	}
	if err := fn(txn); err != nil {
		txn.Abort()
		return seen, err
	}
	return seen, txn.Commit()
}

// write runs fn as update does, growing the map and retrying once on
// MDB_MAP_FULL; n is the bytes it writes (a delete, too, copies the pages
// on its path before it frees any).
func (d *lmdbDB) write(what, mode string, n int64, fn func(*lmdbTxn) error) error {
	seen, err := d.update(mode, fn)
	if lmdbIsMapFull(err) {
		if gerr := d.grow(seen, n); gerr != nil {
			return fmt.Errorf("engine lmdb: %s: %w (%v)", what, err, gerr)
		}
		_, err = d.update(mode, fn)
	}
	if err != nil {
		return fmt.Errorf("engine lmdb: %s: %w", what, err)
	}
	return nil
}

// grow enlarges the map after MDB_MAP_FULL under a map of size seen, to
// max(2×, +8× the batch) rounded up to 1 GiB. LMDB allows it only with no
// transaction active in the process, so it waits out in-flight commits (mu)
// and refuses while any Reader is open.
func (d *lmdbDB) grow(seen, batchBytes int64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed.Load() {
		return errLMDBClosed
	}
	cur := d.mapSize.Load()
	if cur != seen {
		return nil // another commit grew it meanwhile
	}
	if n := d.readers.Load(); n > 0 {
		return fmt.Errorf("map of %d bytes is full and %d readers are open, so it cannot be resized; "+
			"raise Options.ExpectedBytes", cur, n)
	}
	next := roundUpGiB(max(2*cur, cur+8*batchBytes))
	if err := d.env.SetMapSize(next); err != nil {
		return fmt.Errorf("grow map to %d bytes: %w", next, err)
	}
	info, err := d.env.Info()
	if err != nil {
		return err
	}
	d.mapSize.Store(info.MapSize)
	d.grows.Add(1)
	return nil
}

type lmdbReader struct {
	d   *lmdbDB
	txn *lmdbTxn // nil once closed
}

func (r *lmdbReader) Get(key []byte, fn func(value []byte) error) (bool, error) {
	if r.txn == nil {
		return false, errLMDBClosed
	}
	v, err := r.txn.Get(r.d.dbi, key)
	if err != nil {
		if lmdbIsNotFound(err) {
			return false, nil
		}
		return false, err
	}
	return true, fn(v)
}

func (r *lmdbReader) NewIter(o IterOptions) (Iterator, error) {
	if r.txn == nil {
		return nil, errLMDBClosed
	}
	c, err := r.txn.OpenCursor(r.d.dbi)
	if err != nil {
		return nil, fmt.Errorf("engine lmdb: open cursor: %w", err)
	}
	it := &lmdbIter{c: c, o: o}
	if seek := o.first(); len(seek) > 0 {
		it.set(c.Get(seek, nil, lmdbSetRange))
	} else {
		it.set(c.Get(nil, nil, lmdbFirst))
	}
	return it, nil
}

func (r *lmdbReader) Close() error {
	if r.txn == nil {
		return nil
	}
	r.txn.Abort()
	r.txn = nil
	r.d.readers.Add(-1)
	return nil
}

type lmdbIter struct {
	c    *lmdbCursor
	k, v []byte
	err  error
	o    IterOptions
}

// set takes a cursor result and ends the iteration at the last key, an
// error, End, or past Prefix.
func (it *lmdbIter) set(k, v []byte, err error) {
	if err != nil && !lmdbIsNotFound(err) {
		it.err = err
	}
	if err != nil || it.o.past(k) {
		k, v = nil, nil
	}
	it.k, it.v = k, v
}

func (it *lmdbIter) Valid() bool { return it.k != nil }

func (it *lmdbIter) Next() {
	if it.k == nil {
		return
	}
	it.set(it.c.Get(nil, nil, lmdbNext))
}

func (it *lmdbIter) Key() []byte            { return it.k }
func (it *lmdbIter) Value() ([]byte, error) { return it.v, nil }
func (it *lmdbIter) Err() error             { return it.err }

func (it *lmdbIter) Close() error {
	if it.c != nil {
		it.c.Close()
		it.c = nil
	}
	it.k, it.v = nil, nil
	return nil
}

type lmdbBatch struct {
	batchArena // Set and Len
	d          *lmdbDB
}

// Commit applies the batch in one write transaction (write); the batch is
// then empty and may be reused.
func (b *lmdbBatch) Commit() error {
	err := b.d.write("commit", b.d.writeMode, int64(len(b.data)), func(txn *lmdbTxn) error {
		for i, n := 0, b.Len(); i < n; i++ {
			k, v := b.entry(i)
			if err := txn.Put(b.d.dbi, k, v, 0); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		b.reset()
	}
	return err
}

// Delete deletes one key in a transaction of its own (not DeleteBatch of
// one key, whose slice would be an allocation of the suite's in the op).
func (d *lmdbDB) Delete(key []byte) error {
	return d.write("delete", "update", int64(len(key)), func(txn *lmdbTxn) error {
		if err := txn.Del(d.dbi, key, nil); err != nil && !lmdbIsNotFound(err) {
			return err
		}
		return nil
	})
}

// DeleteBatch deletes in one write transaction (Env.Update, through
// write as a batch's Commit).
func (d *lmdbDB) DeleteBatch(keys [][]byte) error {
	var n int64
	for _, k := range keys {
		n += int64(len(k))
	}
	return d.write("delete", "update", n, func(txn *lmdbTxn) error {
		for _, k := range keys {
			if err := txn.Del(d.dbi, k, nil); err != nil && !lmdbIsNotFound(err) {
				return err
			}
		}
		return nil
	})
}
