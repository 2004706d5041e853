package workload

import (
	"bytes"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/keydist"
	"github.com/kvbench/kvbench/internal/measure"
)

// ycsbLane is what one goroutine publishes to the others: the last
// version it wrote. Padded to a cache line of its own.
type ycsbLane struct {
	version atomic.Uint64 // the last version sequence it started writing
	_       [56]byte
}

// ackSeq is YCSB's AcknowledgedCounterGenerator for a round's inserts (or
// deletes) (docs/workloads.md, "YCSB", Insert): limit is the first number
// not yet acknowledged. Lock-free: slot v&mask holds v+1 once v is
// acknowledged, and whoever acknowledges moves limit past every
// acknowledged number it finds.
type ackSeq struct {
	next  atomic.Uint64 // numbers claimed
	_     [56]byte
	limit atomic.Uint64 // numbers below it are acknowledged
	_     [56]byte
	acked []atomic.Uint64
}

// ackWindow is the most claims may run ahead of limit (YCSB's window).
const ackWindow = 1 << 20

// claim is the next number of the sequence.
func (q *ackSeq) claim() (uint64, error) {
	v := q.next.Add(1) - 1
	if v-q.limit.Load() >= uint64(len(q.acked)) {
		return 0, fmt.Errorf("%d inserts or deletes claimed and not yet acknowledged: more than the window of %d", v-q.limit.Load(), len(q.acked))
	}
	return v, nil
}

// ack acknowledges v, committed.
func (q *ackSeq) ack(v uint64) {
	mask := uint64(len(q.acked) - 1)
	q.acked[v&mask].Store(v + 1)
	for {
		l := q.limit.Load()
		if q.acked[l&mask].Load() != l+1 {
			return
		}
		q.limit.CompareAndSwap(l, l+1)
	}
}

// ycsbShared is the round's state every goroutine reads.
type ycsbShared struct {
	g        *dataset.Gen
	keys     uint64 // the fixture's
	lanes    []ycsbLane
	stripes  uint64 // goroutines that write: a version's tag names one
	dist     *keydist.Params
	space    uint64          // zipf: the indexes its ranks are hashed onto, fixed for the round
	cum      [numOps]float64 // the mix's cumulative shares, from 0 to 1
	deletes  bool
	prefetch bool   // -scan_prefetch
	readUpd  bool   // -update read: an update reads the key first
	inserts  ackSeq // index keys+v is the v-th insert
	dels     ackSeq // index v is the v-th delete
	_        [64]byte
	commits  atomic.Uint64 // writes committed: a reader older than the last is stale
	_        [56]byte
}

// newYCSBShared is the state of a round of ops operations of mix over
// dist at stripes writing goroutines. Under zipf the ranks are hashed onto
// a key space fixed for the round, sized as YCSB's CoreWorkload sizes it
// (docs/workloads.md, "Key distributions").
func newYCSBShared(g *dataset.Gen, keys uint64, dist *keydist.Params, mix opMix, ops, stripes int) *ycsbShared {
	sh := &ycsbShared{g: g, keys: keys, lanes: make([]ycsbLane, stripes), stripes: uint64(stripes), dist: dist,
		space: keys + uint64(float64(ops)*mix[opInsert]/100*2) + 1, cum: mix.cum(), deletes: mix[opDelete] > 0}
	// A round claims at most ops numbers, so a window of ops never
	// overflows however far one goroutine falls behind.
	win := 64
	for win < ops && win < ackWindow {
		win *= 2
	}
	if mix[opInsert] > 0 {
		sh.inserts.acked = make([]atomic.Uint64, win)
	}
	if sh.deletes {
		sh.dels.acked = make([]atomic.Uint64, win)
	}
	return sh
}

// live is the range of indexes every goroutine may draw: [lo, hi).
func (s *ycsbShared) live() (lo, hi uint64) {
	return min(s.dels.limit.Load(), s.keys), s.keys + s.inserts.limit.Load()
}

// mayBeDeleted says whether index i may be deleted: its delete started.
func (s *ycsbShared) mayBeDeleted(i uint64) bool {
	return s.deletes && i < s.keys && i < s.dels.next.Load()
}

// written says whether a value of index i at version ver was written: an
// inserted index by a started insert, a version by a started update.
func (s *ycsbShared) written(i, ver uint64) bool {
	if i >= s.keys && i-s.keys >= s.inserts.next.Load() {
		return false
	}
	if ver == 0 {
		return true
	}
	tag, seq := ver&0xffff, ver>>16
	return tag >= 1 && tag <= s.stripes && seq <= s.lanes[tag-1].version.Load()
}

// ownWrite is a key this goroutine wrote last and the version it wrote.
type ownWrite struct{ idx1, ver uint64 } // idx1: the index plus one

// ycsbWorker is one goroutine's operations; padded: workers share no cache line.
type ycsbWorker struct {
	_       [64]byte
	sh      *ycsbShared
	t       uint64
	db      engine.DB
	rd      engine.Reader
	reads   int
	epoch   uint64 // commits when the reader was made
	deleted uint64 // deletes committed before it was made: indexes below it
	smp     *keydist.Sampler
	rng     dataset.Rand
	chk     *dataset.Checker
	kb, kb2 [dataset.KeySize]byte
	vb      []byte
	lo, hi  uint64 // the live range it draws from
	readUpd bool   // an update reads the key first (-update read)
	seq     uint64 // its versions
	idx     uint64 // the key Get is reading
	ver     uint64 // the version Get read
	check   func([]byte) error
	own     [ownWrites]ownWrite
	lat     [numOps]*measure.Recorder
	tl      *measure.Timeline // nil: the window keeps none
	count   [numOps]int64
	written int64 // logical bytes written
	scanned int64 // keys scans read
	err     error
	_       [64]byte
}

func newYCSBWorker(sh *ycsbShared, t int, db engine.DB, rs core.Streams, full bool) *ycsbWorker {
	w := &ycsbWorker{sh: sh, t: uint64(t), db: db, smp: sh.dist.NewSampler(), rng: rs.Rand(uint64(t) + 4000),
		chk: sh.g.NewChecker(full), vb: make([]byte, sh.g.ValueSize), readUpd: sh.readUpd}
	for op := range w.lat {
		w.lat[op] = measure.NewRecorder()
	}
	w.check = func(v []byte) error {
		var err error
		w.ver, err = w.chk.CheckV(w.idx, v)
		return err
	}
	w.lo, w.hi = sh.live()
	return w
}

// run does n operations of the mix; it stops at the first error, in w.err.
func (w *ycsbWorker) run(n int) {
	for range n {
		op := w.pick()
		if err := w.do(op); err != nil {
			w.err = fmt.Errorf("%s: %w", opNames[op], err)
			return
		}
	}
}

// pick draws the next operation from the mix's shares.
func (w *ycsbWorker) pick() ycsbOp { return pickOp(&w.sh.cum, w.rng.Float64()) }

// pickOp is the operation a uniform draw u in [0, 1) picks from cum.
func pickOp(cum *[numOps]float64, u float64) ycsbOp {
	op := opRead
	for op < numOps-1 && u >= cum[op] {
		op++
	}
	return op
}

// do runs one operation and records its latency, the engine's call alone
// (docs/workloads.md, "YCSB"): what the harness chooses comes before the
// clock starts, the acknowledgement after it stops.
func (w *ycsbWorker) do(op ycsbOp) error {
	sh := w.sh
	var rd engine.Reader
	var i uint64
	var err error
	n := 0
	switch op {
	case opRead, opScan, opRMW:
		if rd, err = w.reader(); err == nil {
			i, err = w.draw(op == opRMW)
		}
		if op == opScan {
			n = 1 + int(w.rng.Below(ycsbMaxScan))
		}
	case opUpdate:
		if w.readUpd {
			rd, err = w.reader()
		} else {
			w.lo, w.hi = sh.live()
		}
		if err == nil {
			i, err = w.draw(true)
		}
	case opInsert:
		var v uint64
		v, err = sh.inserts.claim()
		i = sh.keys + v
		sh.g.Value(w.vb, i)
	case opDelete:
		if i, err = sh.dels.claim(); err == nil && i >= sh.keys {
			err = errors.New("every key of the fixture is deleted: lower delete= in -mix or the operation count")
		}
	}
	if err != nil {
		return err
	}
	key := sh.g.Key(w.kb[:], i)
	ver := uint64(0)
	if op == opUpdate || op == opRMW {
		ver = w.nextVersion()
		sh.g.ValueV(w.vb, i, ver)
	}

	t0 := time.Now()
	switch op {
	case opRead:
		err = w.read(rd, i, key)
	case opScan:
		err = w.scan(rd, key, n)
	case opUpdate, opRMW:
		if rd != nil {
			err = w.read(rd, i, key)
		}
		if err == nil {
			err = w.put(key, w.vb)
		}
	case opInsert:
		err = w.put(key, w.vb)
	case opDelete:
		err = engine.Delete(w.db, key)
	}
	d := time.Since(t0)
	w.lat[op].Record(d)
	if w.tl != nil {
		w.tl.Add(t0, d, 1)
	}
	w.count[op]++
	if err != nil {
		return err
	}

	switch op {
	case opUpdate, opRMW:
		w.own[i%ownWrites] = ownWrite{i + 1, ver}
	case opInsert:
		sh.inserts.ack(i - sh.keys)
	case opDelete:
		sh.dels.ack(i)
	}
	if op != opRead && op != opScan {
		sh.commits.Add(1)
	}
	return nil
}

// draw is an index of the live range from the shared distribution; a
// writable one is also one no delete has started on, so an update never
// brings a deleted key back. Under zipf a draw outside the live range is
// drawn again, a bounded number of times (docs/workloads.md, "Key distributions").
func (w *ycsbWorker) draw(writable bool) (uint64, error) {
	sh := w.sh
	for range 1 << 16 {
		var i uint64
		if sh.dist.Kind == keydist.Zipf {
			i = w.smp.Next(&w.rng, sh.space)
			if i < w.lo || i >= w.hi {
				continue
			}
		} else {
			i = w.lo + w.smp.Next(&w.rng, w.hi-w.lo)
		}
		if !writable || !sh.mayBeDeleted(i) {
			return i, nil
		}
	}
	return 0, errors.New("65536 draws in a row found no live key: lower delete= in -mix or the operation count")
}

// nextVersion is the version this goroutine's next update writes,
// published before the write starts.
func (w *ycsbWorker) nextVersion() uint64 {
	w.seq++
	w.sh.lanes[w.t].version.Store(w.seq)
	return w.seq<<16 | (w.t + 1)
}

// reader is a reader that sees every write committed before the
// operation (docs/workloads.md, "YCSB"): made afresh when any goroutine
// committed since the last was made, and every readerRenew operations.
// What was inserted and deleted is read as of the reader's making: the
// range draws come from and the deletes a read must not see.
func (w *ycsbWorker) reader() (engine.Reader, error) {
	sh := w.sh
	if c := sh.commits.Load(); w.rd == nil || c != w.epoch || w.reads >= readerRenew {
		w.close()
		w.epoch = c
		w.lo, w.hi = sh.live()
		w.deleted = sh.dels.limit.Load()
		rd, err := w.db.NewReader()
		if err != nil {
			return nil, err
		}
		w.rd, w.reads = rd, 0
	}
	w.reads++
	return w.rd, nil
}

// deletedBefore says whether index i was deleted before the reader was made.
func (w *ycsbWorker) deletedBefore(i uint64) bool {
	return w.sh.deletes && i < w.deleted
}

func (w *ycsbWorker) close() {
	if w.rd != nil {
		w.rd.Close()
		w.rd = nil
	}
}

// read gets index i, whose key is key, through rd and verifies it.
func (w *ycsbWorker) read(rd engine.Reader, i uint64, key []byte) error {
	gone := w.deletedBefore(i)
	w.idx = i
	found, err := rd.Get(key, w.check)
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

// put commits key and value in a batch of one.
func (w *ycsbWorker) put(key, v []byte) error {
	if err := engine.Put(w.db, key, v); err != nil {
		return err
	}
	w.written += int64(len(key) + len(v))
	return nil
}

// scan reads up to n keys from start on, verifying each, its order and value.
func (w *ycsbWorker) scan(rd engine.Reader, start []byte, n int) error {
	it, err := rd.NewIter(engine.IterOptions{Start: start, NoPrefetch: !w.sh.prefetch})
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
		j, ok := w.sh.g.IndexAny(key)
		if !ok {
			return fmt.Errorf("%w: key %q is not the data set's", dataset.ErrWrongValue, key)
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
		err := w.do(opUpdate)
		if w.count[opUpdate] == 1 || err != nil && w.count[opUpdate] == 0 {
			close(started)
		}
		if err != nil {
			w.err = fmt.Errorf("writer: %w", err)
			return
		}
	}
}

// ycsbWarmOps is the most reads of a round's untimed warm-up
// (docs/workloads.md, "YCSB").
const ycsbWarmOps = 10000

// runYCSB times b.N operations of spec over dist at threads goroutines on
// db (in dir when it is a copy that writes, "" on the fixture itself).
func runYCSB(b *testing.B, e *core.Env, info engine.Info, db engine.DB, dir string, spec ycsbSpec, dist string, threads int) {
	stripes := threads
	if spec.Background {
		stripes++ // the writer's
	}
	sh := newYCSBShared(e.Gen, e.Keys, keyDist(b, e, dist), spec.Mix, b.N, stripes)
	sh.prefetch, sh.readUpd = scanPrefetchFlag.Get(&e.Cfg), updateFlag.Get(&e.Cfg) == "read"
	rs := e.CallStreams(b)
	ws := make([]*ycsbWorker, stripes)
	for t := range ws {
		ws[t] = newYCSBWorker(sh, t, db, rs, e.FullCheck)
		defer ws[t].close()
	}
	if spec.Background {
		ws[threads].readUpd = false // db_bench's writer puts blind
	}
	warmYCSB(b, e, db, sh, threads, min(b.N, ycsbWarmOps))

	var stop atomic.Bool
	writerDone := make(chan struct{})
	c0, err := readCounters(dir)
	fatalIf(b, err)
	cpu0 := measure.CPUTime()
	if spec.Background { // writing before the readers start
		started := make(chan struct{})
		go func() { ws[threads].writeUntil(&stop, rwwRateFlag.Get(&e.Cfg)*1e6, started); close(writerDone) }()
		<-started
	}
	// A mix that writes keeps its operations' timeline.
	var tls []*measure.Timeline
	if spec.Mix.writes() {
		tls = newTimelines(threads, b.N)
		for t, tl := range tls {
			ws[t].tl = tl
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	core.RunThreads(threads, b.N, func(t, n int) { ws[t].run(n) })
	elapsed := time.Since(start)
	stop.Store(true)
	if spec.Background {
		<-writerDone
	}
	b.StopTimer()
	cpu := measure.CPUTime() - cpu0
	var written int64
	for _, w := range ws {
		written += w.written
	}
	// The writes' cost includes what they left in memory, flushed and
	// synced untimed (docs/workloads.md, "YCSB", Figures).
	if dir != "" && written > 0 {
		if err := db.Flush(); err != nil {
			b.Fatalf("flush: %v", err)
		}
		if err := engine.SyncTree(dir); err != nil {
			b.Fatalf("sync: %v", err)
		}
	}
	ioWritten, dev, err := c0.since()
	fatalIf(b, err)
	for t, w := range ws {
		if w.err != nil {
			b.Fatalf("goroutine %d: %v", t, w.err)
		}
	}
	reportYCSB(b, ws[:threads], elapsed, cpu)
	if tls != nil {
		iv, err := measure.Intervals(tls, start, start.Add(elapsed), intervalFlag.Get(&e.Cfg))
		fatalIf(b, err)
		reportIntervals(b, e, iv)
	}
	if spec.Background {
		wr := ws[threads]
		b.ReportMetric(float64(wr.count[opUpdate])/elapsed.Seconds(), "write-ops/s")
		b.ReportMetric(float64(wr.lat[opUpdate].Percentile(99)), "write-p99-ns")
	}
	if dir == "" || written == 0 {
		return
	}
	if c0.hasIO {
		b.ReportMetric(float64(ioWritten)/float64(written), "write-amp")
	}
	if c0.hasDev {
		b.ReportMetric(float64(dev.WrittenBytes)/float64(written), "dev-write-amp")
	}
	lo, hi := sh.live()
	liveBytes := int64(hi-lo) * int64(dataset.KeySize+e.Cfg.ValSize)
	sp, err := engine.SpaceOf(info, dir)
	fatalIf(b, err)
	if liveBytes > 0 {
		b.ReportMetric(float64(sp.Data)/float64(liveBytes), "space-amp")
	}
}

// warmYCSB reads n keys of the distribution, untimed, with workers of
// their own, so the round's counters and streams are untouched.
func warmYCSB(b *testing.B, e *core.Env, db engine.DB, sh *ycsbShared, threads, n int) {
	warm := newYCSBShared(sh.g, sh.keys, sh.dist, opMix{opRead: 100}, 0, int(sh.stripes))
	warm.space = sh.space // the round's hot keys
	rs := e.StreamsOfCall(1 << 40)
	core.RunThreads(threads, n, func(t, n int) {
		w := newYCSBWorker(warm, t, db, rs, false)
		defer w.close()
		w.run(n)
		if w.err != nil {
			b.Errorf("warm-up: %v", w.err)
		}
	})
	if b.Failed() {
		b.FailNow()
	}
}

// reportYCSB reports the window's figures and each operation type's.
func reportYCSB(b *testing.B, ws []*ycsbWorker, elapsed time.Duration, cpu time.Duration) {
	var total, scanned int64
	for _, w := range ws {
		for _, c := range w.count {
			total += c
		}
		scanned += w.scanned
	}
	if total != int64(b.N) {
		b.Fatalf("%d operations done, want %d", total, b.N)
	}
	b.ReportMetric(float64(total)/elapsed.Seconds(), "ops/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(total), "cpu-ns/op")
	for op := range numOps {
		var n int64
		lats := make([]*measure.Recorder, len(ws))
		for t, w := range ws {
			n += w.count[op]
			lats[t] = w.lat[op]
		}
		if n == 0 {
			continue
		}
		name := opNames[op]
		lat := measure.Merge(lats...)
		b.ReportMetric(float64(n)/elapsed.Seconds(), name+"-ops/s")
		lat.Report(func(v float64, unit string) { b.ReportMetric(v, name+"-"+unit) }) // p50, p99, p999
		if op == opScan {
			b.ReportMetric(float64(scanned)/float64(n), "scan-keys/op")
		}
	}
}
