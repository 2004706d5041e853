// Memory: an in-memory calibration rail, not a store. It measures what the
// harness itself costs (key generation, the Get callback, iterator plumbing,
// scheduling) over a Go map; every option is accepted and ignored.
//
// A map for Get, and a sorted key slice built once, lazily, for iteration.
// A Reader reads the snapshot current when it was made without a lock. A
// commit changes the current snapshot in place until a Reader holds it, and
// clones it first (copy-on-write) once one does: a populate copies nothing
// and readers never see a torn map.
package engine

import (
	"errors"
	"maps"
	"slices"
	"sync"
	"unsafe"
)

func init() {
	Register(Info{
		Name:         "memory",
		Title:        "Memory",
		Module:       "(reference)",
		Open:         openMemory,
		Compressions: []string{"none"},
		Reference:    true,
	})
}

// memSnap is one version of the data. Once shared is set (under memDB.mu, as
// the snapshot is handed to a Reader) it is never mutated again.
type memSnap struct {
	m      map[string][]byte
	shared bool

	keysOnce sync.Once
	keys     []string // sorted; built on the first NewIter
}

func (s *memSnap) sorted() []string {
	s.keysOnce.Do(func() {
		s.keys = slices.AppendSeq(make([]string, 0, len(s.m)), maps.Keys(s.m))
		slices.Sort(s.keys)
	})
	return s.keys
}

type memDB struct {
	store              // its name and settings; closed under mu
	mu    sync.RWMutex // held by Commit and NewReader, not by Get
	cur   *memSnap
	bytes int64 // logical bytes (keys+values) held
}

func openMemory(o Options) (DB, error) {
	settings := []Setting{
		{"kind", "go-map+lazily-sorted-keys"},
		{"snapshots", "copy-on-write once a reader holds one"},
		{"sync", "ignored (nothing is durable)"},
		{"cache", "n/a"},
		{"readahead", "n/a (no files: Options.Readahead is ignored)"},
		{"compression", "none"},
	}
	return &memDB{store: store{name: "memory", settings: settings}, cur: &memSnap{m: make(map[string][]byte)}}, nil
}

var errMemClosed = errors.New("engine memory: closed")

func (d *memDB) NewReader() (Reader, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed.Load() {
		return nil, errMemClosed
	}
	d.cur.shared = true
	return &memReader{s: d.cur}, nil
}

// own is the snapshot a write may change: the current one, cloned first
// once a Reader holds it. The caller holds mu.
func (d *memDB) own() *memSnap {
	if d.cur.shared {
		d.cur = &memSnap{m: maps.Clone(d.cur.m)}
	}
	return d.cur
}

func (d *memDB) NewBatch() Batch { return &memBatch{d: d} }
func (d *memDB) Flush() error    { return nil }

// Size is the logical bytes held (there is no disk).
func (d *memDB) Size() (int64, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.bytes, nil
}

func (d *memDB) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed.Store(true)
	d.cur = &memSnap{m: map[string][]byte{}, shared: true}
	d.bytes = 0
	return nil
}

type memReader struct {
	s *memSnap
}

func (r *memReader) Get(key []byte, fn func(value []byte) error) (bool, error) {
	s := r.s
	if s == nil {
		return false, errMemClosed
	}
	v, ok := s.m[string(key)] // the conversion does not allocate
	if !ok {
		return false, nil
	}
	return true, fn(v)
}

func (r *memReader) NewIter(o IterOptions) (Iterator, error) {
	if r.s == nil {
		return nil, errMemClosed
	}
	keys := r.s.sorted()
	i, _ := slices.BinarySearch(keys, string(o.first()))
	it := &memIter{m: r.s.m, keys: keys, i: i, o: o}
	it.check()
	return it, nil
}

func (r *memReader) Close() error {
	r.s = nil
	return nil
}

type memIter struct {
	m    map[string][]byte
	keys []string
	i    int
	o    IterOptions
}

func (it *memIter) check() {
	if it.i < len(it.keys) && it.o.past(it.Key()) {
		it.i = len(it.keys)
	}
}

func (it *memIter) Valid() bool { return it.i < len(it.keys) }

func (it *memIter) Next() {
	if it.i < len(it.keys) {
		it.i++
		it.check()
	}
}

// Key returns the stored key's bytes; callers must not modify them.
func (it *memIter) Key() []byte {
	k := it.keys[it.i]
	return unsafe.Slice(unsafe.StringData(k), len(k))
}

func (it *memIter) Value() ([]byte, error) { return it.m[it.keys[it.i]], nil }
func (it *memIter) Err() error             { return nil }
func (it *memIter) Close() error {
	it.keys, it.m = nil, nil
	return nil
}

type memBatch struct {
	batchArena // Set and Len
	d          *memDB
}

// Commit hands the batch's arena to the store (keys and values point into it,
// so nothing is copied twice); the batch starts a fresh arena and may be
// reused.
func (b *memBatch) Commit() error {
	d := b.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed.Load() {
		return errMemClosed
	}
	s := d.own()
	for i, n := 0, b.Len(); i < n; i++ {
		k, v := b.entry(i)
		ks := unsafe.String(unsafe.SliceData(k), len(k)) // the arena is never written again
		if old, ok := s.m[ks]; ok {
			d.bytes -= int64(len(ks) + len(old))
		}
		s.m[ks] = v
		d.bytes += int64(len(ks) + len(v))
	}
	b.batchArena = batchArena{data: make([]byte, 0, len(b.data)), ends: b.ends[:0]}
	return nil
}

func (d *memDB) Delete(key []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed.Load() {
		return errMemClosed
	}
	ks := unsafe.String(unsafe.SliceData(key), len(key)) // only looked up
	old, ok := d.cur.m[ks]
	if !ok {
		return nil
	}
	delete(d.own().m, ks)
	d.bytes -= int64(len(key) + len(old))
	return nil
}
func (d *memDB) DeleteBatch(keys [][]byte) error {
	for _, k := range keys {
		if err := d.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
