package workload

import (
	"bytes"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/keydist"
	"github.com/kvbench/kvbench/internal/measure"
)

// ycsbLane is what one goroutine publishes to the others: how far its
// inserts and deletes went and the last version it wrote. Inserts and
// deletes are striped over the goroutines (goroutine t of T inserts
// Keys+t, Keys+t+T, ... and deletes t, t+T, ...), so every goroutine
// knows, without a lock or a map, which keys exist: those below
// Keys+T*min(inserted) exist unless deleted, those of stripe t below
// t+T*deleted are gone. Padded to a cache line of its own.
type ycsbLane struct {
	inserted   atomic.Uint64 // inserts committed
	delClaimed atomic.Uint64 // deletes started
	deleted    atomic.Uint64 // deletes committed
	version    atomic.Uint64 // the last version sequence it started writing
	_          [32]byte
}

// ycsbShared is the round's state every goroutine reads.
type ycsbShared struct {
	g        *dataset.Gen
	keys     uint64 // the fixture's
	lanes    []ycsbLane
	stripes  uint64 // goroutines that insert, delete or update
	dist     *keydist.Params
	cum      [numOps]float64 // the mix's cumulative shares, from 0 to 1
	deletes  bool
	prefetch bool // -scan_prefetch
	_        [64]byte
	commits  atomic.Uint64 // writes committed: a reader older than the last is stale
	_        [56]byte
}

// live is the range of indexes every goroutine may draw: [lo, hi).
func (s *ycsbShared) live() (lo, hi uint64) {
	minIns, minDel := ^uint64(0), ^uint64(0)
	for i := range s.lanes[:s.stripes] {
		minIns = min(minIns, s.lanes[i].inserted.Load())
		minDel = min(minDel, s.lanes[i].deleted.Load())
	}
	return min(s.stripes*minDel, s.keys), s.keys + s.stripes*minIns
}

// mayBeDeleted says whether index i may be deleted: its delete started.
func (s *ycsbShared) mayBeDeleted(i uint64) bool {
	return s.deletes && i < s.keys && i/s.stripes < s.lanes[i%s.stripes].delClaimed.Load()
}

// written says whether a value of index i at version ver was written: an
// inserted index by a started insert, a version by a started update.
func (s *ycsbShared) written(i, ver uint64) bool {
	if i >= s.keys {
		j := i - s.keys
		if j/s.stripes > s.lanes[j%s.stripes].inserted.Load() {
			return false
		}
	}
	if ver == 0 {
		return true
	}
	tag, seq := ver&0xffff, ver>>16
	return tag >= 1 && tag <= s.stripes && seq <= s.lanes[tag-1].version.Load()
}

// ownWrite is a key this goroutine wrote last and the version it wrote.
type ownWrite struct{ idx1, ver uint64 } // idx1: the index plus one

// ycsbWorker is one goroutine's operations; padded so workers never
// share a cache line.
type ycsbWorker struct {
	_       [64]byte
	sh      *ycsbShared
	t       uint64
	db      engine.DB
	rd      engine.Reader
	reads   int
	epoch   uint64   // commits when the reader was made
	deleted []uint64 // each stripe's deletes committed before it was made
	smp     *keydist.Sampler
	rng     dataset.Rand
	chk     *dataset.Checker
	kb, kb2 [dataset.KeySize]byte
	vb      []byte
	lo, hi  uint64 // the live range it draws from
	ops     int64
	seq     uint64 // its versions
	ins     uint64 // its inserts
	dels    uint64 // its deletes
	idx     uint64 // the key Get is reading
	ver     uint64 // the version Get read
	check   func([]byte) error
	own     [ownWrites]ownWrite
	lat     [numOps]*measure.Recorder
	count   [numOps]int64
	written int64 // logical bytes written
	scanned int64 // keys scans read
	err     error
	_       [64]byte
}

func newYCSBWorker(sh *ycsbShared, t int, db engine.DB, rs core.Streams, full bool) *ycsbWorker {
	w := &ycsbWorker{sh: sh, t: uint64(t), db: db, smp: sh.dist.NewSampler(), rng: rs.Rand(uint64(t) + 4000),
		chk: sh.g.NewChecker(full), vb: make([]byte, sh.g.ValueSize)}
	for op := range w.lat {
		w.lat[op] = measure.NewRecorder()
	}
	w.check = func(v []byte) error {
		var err error
		w.ver, err = w.chk.CheckV(w.idx, v)
		return err
	}
	w.lo, w.hi = sh.live()
	w.deleted = make([]uint64, len(sh.lanes))
	return w
}

// run does n operations of the mix; it stops at the first error, in w.err.
func (w *ycsbWorker) run(n int) {
	for i := 0; i < n; i++ {
		w.ops++
		u := w.rng.Float64()
		op := opRead
		for op < numOps-1 && u >= w.sh.cum[op] {
			op++
		}
		t0 := time.Now()
		var err error
		switch op {
		case opRead:
			err = w.read(w.draw())
		case opUpdate:
			var i uint64
			if i, err = w.drawWritable(); err == nil {
				err = w.update(i)
			}
		case opInsert:
			err = w.insert()
		case opScan:
			err = w.scan(w.draw(), 1+int(w.rng.Below(ycsbMaxScan)))
		case opRMW:
			var i uint64
			if i, err = w.drawWritable(); err == nil {
				if err = w.read(i); err == nil {
					err = w.update(i)
				}
			}
		case opDelete:
			err = w.delete()
		}
		w.lat[op].Record(time.Since(t0))
		w.count[op]++
		if err != nil {
			w.err = fmt.Errorf("%s: %w", opNames[op], err)
			return
		}
	}
}

// draw is an index of the live range from the shared distribution.
func (w *ycsbWorker) draw() uint64 { return w.lo + w.smp.Next(&w.rng, w.hi-w.lo) }

// drawWritable draws a key no delete has started on, so an update never
// brings a deleted key back; a mix that deleted nearly every key it draws
// from ends with an error rather than a search without end.
func (w *ycsbWorker) drawWritable() (uint64, error) {
	for range 1 << 16 {
		if i := w.draw(); !w.sh.mayBeDeleted(i) {
			return i, nil
		}
	}
	return 0, errors.New("65536 draws in a row found only deleted keys: lower delete= in -mix or the operation count")
}

// reader is a reader that sees every write committed before the
// operation, as a YCSB read, each a transaction of its own, does: made
// afresh when any goroutine committed a write since the last was made
// (so a read-only mix keeps its readers, a mix that writes takes one per
// read), and every readerRenew operations, so that no read transaction
// pins old pages or versions for the whole round. What was inserted and
// deleted is read as of the reader's making: the range draws come from
// and the deletes a read must not see.
func (w *ycsbWorker) reader() (engine.Reader, error) {
	sh := w.sh
	if c := sh.commits.Load(); w.rd == nil || c != w.epoch || w.reads >= readerRenew {
		if w.rd != nil {
			w.rd.Close()
		}
		w.epoch = c
		w.lo, w.hi = sh.live()
		if sh.deletes {
			for t := range sh.lanes {
				w.deleted[t] = sh.lanes[t].deleted.Load()
			}
		}
		rd, err := w.db.NewReader()
		if err != nil {
			return nil, err
		}
		w.rd, w.reads = rd, 0
	}
	w.reads++
	return w.rd, nil
}

// deletedBefore says whether index i was deleted before the reader was
// made.
func (w *ycsbWorker) deletedBefore(i uint64) bool {
	s := w.sh
	return s.deletes && i < s.keys && i/s.stripes < w.deleted[i%s.stripes]
}

func (w *ycsbWorker) close() {
	if w.rd != nil {
		w.rd.Close()
		w.rd = nil
	}
}

// read gets index i and verifies what it got.
func (w *ycsbWorker) read(i uint64) error {
	rd, err := w.reader()
	if err != nil {
		return err
	}
	gone := w.deletedBefore(i)
	w.idx = i
	found, err := rd.Get(w.sh.g.Key(w.kb[:], i), w.check)
	if err != nil {
		return err
	}
	if !found {
		if !w.sh.mayBeDeleted(i) {
			return fmt.Errorf("key %d is missing", i)
		}
		return nil
	}
	return w.verify(i, w.ver, gone)
}

// verify checks that version ver of index i, just read, may be there:
// written, not deleted before the read began, and, when this goroutine
// wrote the key last, its own write or another goroutine's newer one.
func (w *ycsbWorker) verify(i, ver uint64, gone bool) error {
	if !w.sh.written(i, ver) {
		return fmt.Errorf("key %d: version %d was never written", i, ver)
	}
	if gone && (ver == 0 || w.sh.stripes == 1) {
		return fmt.Errorf("key %d was deleted, yet read (version %d)", i, ver)
	}
	if o := &w.own[i%ownWrites]; o.idx1 == i+1 && ver != o.ver && (ver == 0 || ver&0xffff == w.t+1) {
		return fmt.Errorf("key %d: read version %d, after this goroutine wrote version %d", i, ver, o.ver)
	}
	return nil
}

// update writes the next version of index i.
func (w *ycsbWorker) update(i uint64) error {
	w.seq++
	w.sh.lanes[w.t].version.Store(w.seq)
	ver := w.seq<<16 | (w.t + 1)
	if err := w.put(i, w.sh.g.ValueV(w.vb, i, ver)); err != nil {
		return err
	}
	w.own[i%ownWrites] = ownWrite{i + 1, ver}
	return nil
}

// insert writes the goroutine's next new key, beyond the fixture's.
func (w *ycsbWorker) insert() error {
	i := w.sh.keys + w.ins*w.sh.stripes + w.t
	if err := w.put(i, w.sh.g.Value(w.vb, i)); err != nil {
		return err
	}
	w.ins++
	w.sh.lanes[w.t].inserted.Store(w.ins)
	return nil
}

func (w *ycsbWorker) put(i uint64, v []byte) error {
	bt := w.db.NewBatch()
	if err := bt.Set(w.sh.g.Key(w.kb[:], i), v); err != nil {
		return err
	}
	if err := bt.Commit(); err != nil {
		return err
	}
	w.sh.commits.Add(1)
	w.written += int64(dataset.KeySize + len(v))
	return nil
}

// delete removes the goroutine's next key of its stripe of the fixture.
func (w *ycsbWorker) delete() error {
	i := w.dels*w.sh.stripes + w.t
	if i >= w.sh.keys {
		return fmt.Errorf("goroutine %d deleted every key of its share of the fixture: lower delete= or the operation count", w.t)
	}
	lane := &w.sh.lanes[w.t]
	lane.delClaimed.Store(w.dels + 1)
	if err := engine.Delete(w.db, w.sh.g.Key(w.kb[:], i)); err != nil {
		return err
	}
	w.dels++
	lane.deleted.Store(w.dels)
	w.sh.commits.Add(1)
	return nil
}

// scan reads up to n keys from index i's key on, verifying each key, its
// order and its value.
func (w *ycsbWorker) scan(i uint64, n int) error {
	rd, err := w.reader()
	if err != nil {
		return err
	}
	it, err := rd.NewIter(engine.IterOptions{Start: w.sh.g.Key(w.kb[:], i), NoPrefetch: !w.sh.prefetch})
	if err != nil {
		return err
	}
	defer it.Close()
	prev := w.kb2[:0]
	for k := 0; k < n && it.Valid(); k++ {
		key := it.Key()
		if len(prev) > 0 && bytes.Compare(prev, key) >= 0 {
			return core.ErrOrder(prev, key)
		}
		j, err := checkIndex(w.sh.g, key)
		if err != nil {
			return err
		}
		gone := w.deletedBefore(j)
		v, err := it.Value()
		if err != nil {
			return err
		}
		ver, err := w.chk.CheckV(j, v)
		if err != nil {
			return err
		}
		if err := w.verify(j, ver, gone); err != nil {
			return err
		}
		prev = append(w.kb2[:0], key...)
		w.scanned++
		it.Next()
	}
	return it.Err()
}

// writeUntil is readwhilewriting's writer: updates of keys from the
// shared distribution at a fixed byte rate until stop is set. It closes
// started once its first write is done.
func (w *ycsbWorker) writeUntil(stop *atomic.Bool, bytesPerSec float64, started chan<- struct{}) {
	per := time.Duration(float64(dataset.KeySize+w.sh.g.ValueSize) / bytesPerSec * 1e9)
	next := time.Now()
	for w.count[opUpdate] == 0 || !stop.Load() {
		if d := time.Until(next); d > 0 {
			time.Sleep(min(d, 10*time.Millisecond))
			continue
		}
		next = next.Add(per)
		t0 := time.Now()
		err := w.update(w.draw())
		w.lat[opUpdate].Record(time.Since(t0))
		if w.count[opUpdate]++; w.count[opUpdate] == 1 {
			close(started)
		}
		if err != nil {
			w.err = fmt.Errorf("writer: %w", err)
			return
		}
	}
}
