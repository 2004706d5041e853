package workload

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/measure"
)

// Delete: what deleted keys cost the reads that come after them, in the
// two patterns LSM maintainers benchmark, queue and swath
// (docs/workloads.md, "Deletes"). Every call of every leaf runs on a new
// private copy of the fixture, its deletes made untimed.
func init() {
	core.Register(&core.Workload{
		Name:     "Delete",
		Engines:  core.Stores,
		Fixtures: kvFixture,
		Scratch:  deleteScratch,
		Units:    deleteUnits(),
		Run: func(b *testing.B, e *core.Env, info engine.Info) {
			h := e.Open(b, e.KVFor(info))
			h.Close(b) // only its copies are read
			scratchLeaf(b, e, info, h.Fixture(), e.Shape()+"/queue/"+core.SubName("len", queueLen), h.Options(nil), func(b *testing.B) { queueBody(b, e, h) })
			runSwath(b, e, h)
		},
	})
}

// deleteUnits are what the queue and the swath report.
func deleteUnits() []core.Unit {
	u := []core.Unit{core.Lower("seek-p50-ns"), core.Lower("seek-p99-ns")}
	for _, m := range queueMarks {
		u = append(u, core.Lower(m.unit))
	}
	return append(u, core.Higher("keys/s"), core.Lower("scan-p50-ns"), core.Lower("slowdown-x"))
}

// queueScratchOps bounds the queue writes deleteScratch counts: b.N
// beyond it at the default -benchtime means under 4 µs an op.
const queueScratchOps = 250_000

// deleteScratch is one copy of the fixture at a time (three times the
// logical bytes, as a fixture) and either the queue's writes on it or the
// swath's fresh database of half the data set.
func deleteScratch(e *core.Env, _ engine.Info) int64 {
	logical := e.Gen.LogicalBytes()
	queue := int64(queueScratchOps) * int64(queueKeySize+e.Cfg.ValSize)
	return 3*logical + max(3*logical/2, queue)
}

// The queue.

// queueLen is the number of items the queue holds.
const queueLen = 1000

// queueKeySize is the length of a queue key: 'q' and 16 hex digits.
const queueKeySize = 1 + dataset.KeySize

// queueStart and queueEnd bound the queue's keys, above the data set's (lowercase hex).
var queueStart, queueEnd = []byte("q"), []byte("r")

// queueKey writes the key of queue item seq into dst (queueKeySize
// bytes): 'q' and seq in 16 hex digits, so items sort by seq.
func queueKey(dst []byte, seq uint64) []byte {
	var be [8]byte
	binary.BigEndian.PutUint64(be[:], seq)
	dst[0] = 'q'
	hex.Encode(dst[1:queueKeySize], be[:])
	return dst[:queueKeySize]
}

// queueMarks are the deleted counts the queue reports its mean read
// latency at, over the tenth of the ops before each (docs/workloads.md).
var queueMarks = [...]struct {
	deleted int
	unit    string
}{
	{100, "seek-ns@100-del"},
	{1_000, "seek-ns@1k-del"},
	{10_000, "seek-ns@10k-del"},
	{100_000, "seek-ns@100k-del"},
}

// queue is the queue on one database: items head to tail-1, item seq holding value seq.
type queue struct {
	g          *dataset.Gen
	c          *workCopy
	del        engine.Deleter
	chk        *dataset.Checker
	head, tail uint64
	kb, hb     [queueKeySize]byte
	vb         []byte
}

// newQueue writes items 0 to n-1 in batches of batch and flushes them.
func newQueue(e *core.Env, c *workCopy, n, batch int) (*queue, error) {
	del, ok := c.inner.(engine.Deleter)
	if !ok {
		return nil, fmt.Errorf("engine %s: no engine.Deleter", c.info.Name)
	}
	q := &queue{g: e.Gen, c: c, del: del, chk: e.Gen.NewChecker(e.FullCheck), vb: make([]byte, e.Gen.ValueSize)}
	for q.tail < uint64(n) {
		bt := c.DB.NewBatch()
		for end := min(uint64(n), q.tail+uint64(batch)); q.tail < end; q.tail++ {
			if err := bt.Set(queueKey(q.kb[:], q.tail), q.g.Value(q.vb, q.tail)); err != nil {
				return nil, err
			}
		}
		if err := bt.Commit(); err != nil {
			return nil, err
		}
	}
	if err := c.DB.Flush(); err != nil {
		return nil, fmt.Errorf("flush the queue: %w", err)
	}
	return q, nil
}

// advance deletes the head item and inserts a new tail item, each a write
// of its own, once the space guard allows (through the adapter: the
// guard's wrapper would allocate a batch of its own).
func (q *queue) advance() error {
	if err := q.c.guard.Err(); err != nil {
		return err
	}
	if err := q.del.Delete(queueKey(q.kb[:], q.head)); err != nil {
		return err
	}
	q.head++
	bt := q.c.inner.NewBatch()
	if err := bt.Set(queueKey(q.kb[:], q.tail), q.g.Value(q.vb, q.tail)); err != nil {
		return err
	}
	if err := bt.Commit(); err != nil {
		return err
	}
	q.tail++
	return nil
}

// read checks the head item through a new reader and iterator, with all
// every item: exactly items head to tail-1, in order, with their values.
func (q *queue) read(all bool) error {
	rd, err := q.c.inner.NewReader()
	if err != nil {
		return err
	}
	it, err := rd.NewIter(engine.IterOptions{Start: queueStart, End: queueEnd})
	if err == nil {
		err = q.check(it, all)
		if cerr := it.Close(); err == nil {
			err = cerr
		}
	}
	if cerr := rd.Close(); err == nil {
		err = cerr
	}
	return err
}

func (q *queue) check(it engine.Iterator, all bool) error {
	seq := q.head
	for ; it.Valid(); it.Next() {
		if want := queueKey(q.hb[:], seq); string(it.Key()) != string(want) {
			return fmt.Errorf("queue item %d: key %q, want %q", seq-q.head, it.Key(), want)
		}
		v, err := it.Value()
		if err != nil {
			return err
		}
		if err := q.chk.Check(seq, v); err != nil {
			return err
		}
		if seq++; !all {
			return nil
		}
	}
	switch err := it.Err(); {
	case err != nil:
		return err
	case !all:
		return fmt.Errorf("queue empty, want item %d at its head", q.head)
	case seq != q.tail:
		return fmt.Errorf("queue holds items %d to %d, want %d to %d", q.head, seq-1, q.head, q.tail-1)
	}
	return nil
}

// queueBody is the queue leaf: b.N ops on a new copy of the fixture.
func queueBody(b *testing.B, e *core.Env, h *core.Handle) {
	c, done := copyForCall(b, e, h, nil)
	defer done()
	q, err := newQueue(e, c, queueLen, e.Cfg.Batch)
	fatalIf(b, err)
	lat := measure.NewRecorder()
	var sums, counts [len(queueMarks)]int64
	b.ResetTimer()
	b.StartTimer()
	for n := 0; n < b.N; n++ {
		if err := q.advance(); err != nil {
			b.Fatalf("op %d: %v", n, err)
		}
		t0 := time.Now()
		err := q.read(false)
		d := time.Since(t0)
		if err != nil {
			b.Fatalf("op %d: %v", n, err)
		}
		lat.Record(d)
		deleted := n + 1
		for i := range queueMarks {
			if m := queueMarks[i].deleted; deleted > m-m/10 && deleted <= m {
				sums[i] += int64(d)
				counts[i]++
			}
		}
	}
	b.StopTimer()
	fatalIf(b, q.read(true))
	lat.ReportPercentiles(func(v float64, unit string) { b.ReportMetric(v, "seek-"+unit) }, 50, 99)
	for i, m := range queueMarks {
		if b.N >= m.deleted && counts[i] > 0 {
			b.ReportMetric(float64(sums[i])/float64(counts[i]), m.unit)
		}
	}
}

// The swath.

// The swath: every key from swathStart (below every key of the data set)
// up to swathEnd; swathScanLen keys are read after a seek to its start.
var swathStart, swathEnd = []byte("0000000000000000"), []byte("8000000000000000")

const swathScanLen = 100

// The swath's states and methods, in the order they run.
var (
	swathStates  = []string{"fresh", "deleted", "flushed", "compacted"}
	swathMethods = []string{"point", "range"}
)

// swathPlan is the data set split at the swath: the indexes of the keys
// that survive it (in index order), the first of them in key order, and
// how many keys it deletes.
type swathPlan struct {
	core.GenSource // the data set, whose surviving keys are the plan's Source
	live           []uint64
	first          []byte
	deleted        uint64
	scanLen        int
}

func newSwathPlan(g *dataset.Gen) *swathPlan {
	p := &swathPlan{GenSource: core.GenSource{G: g}}
	kb := make([]byte, dataset.KeySize)
	for i := uint64(0); i < g.Keys; i++ {
		k := g.Key(kb, i)
		if string(k) < string(swathEnd) {
			p.deleted++
			continue
		}
		p.live = append(p.live, i)
		if p.first == nil || string(k) < string(p.first) {
			p.first = append(p.first[:0], k...)
		}
	}
	p.scanLen = min(swathScanLen, len(p.live))
	return p
}

// Len, LogicalBytes and Entry make the surviving keys (the fresh database) a core.Source.
func (p *swathPlan) Len() uint64 { return uint64(len(p.live)) }
func (p *swathPlan) LogicalBytes() int64 {
	return int64(len(p.live)) * int64(dataset.KeySize+p.G.ValueSize)
}
func (p *swathPlan) Entry(i uint64, kb, vb []byte) ([]byte, []byte) {
	return p.G.Key(kb, p.live[i]), p.G.Value(vb, p.live[i])
}

// deletePoints finds the swath's keys by a scan, checks they are the
// plan's, and deletes them in key order in batches of batch.
func (p *swathPlan) deletePoints(c *workCopy, batch int) error {
	bd, ok := c.inner.(engine.BatchDeleter)
	if !ok {
		return fmt.Errorf("engine %s: no engine.BatchDeleter", c.info.Name)
	}
	var keys [][]byte
	_, _, err := core.ScanAllWith(c.DB, engine.IterOptions{Start: swathStart, End: swathEnd, KeysOnly: true}, keyFunc(func(k []byte) error {
		if len(k) != dataset.KeySize {
			return fmt.Errorf("key %q in the swath is not a key of the data set", k)
		}
		keys = append(keys, bytes.Clone(k))
		return nil
	}))
	if err != nil {
		return err
	}
	if uint64(len(keys)) != p.deleted {
		return fmt.Errorf("deleted %d keys found in the swath, the data set has %d there", len(keys), p.deleted)
	}
	for len(keys) > 0 {
		n := min(batch, len(keys))
		if err := c.guard.Err(); err != nil {
			return err
		}
		if err := bd.DeleteBatch(keys[:n]); err != nil {
			return err
		}
		keys = keys[n:]
	}
	return nil
}

// keyFunc is a core.Checker that passes every key it checks to itself.
type keyFunc func(k []byte) error

func (f keyFunc) CheckKey(k []byte) error   { return f(k) }
func (f keyFunc) CheckKV(k, _ []byte) error { return f(k) }

// deleteRange deletes the swath with one range delete.
func deleteRange(c *workCopy) error {
	rd, ok := c.inner.(engine.RangeDeleter)
	if !ok {
		return fmt.Errorf("engine %s: no engine.RangeDeleter", c.info.Name)
	}
	if err := c.guard.Err(); err != nil {
		return err
	}
	return rd.DeleteRange(swathStart, swathEnd)
}

// reach puts the database whose swath was just deleted in state.
func reach(c *workCopy, state string) error {
	switch state {
	case "deleted":
		return nil
	case "flushed":
		return c.DB.Flush()
	case "compacted":
		if err := c.DB.Flush(); err != nil {
			return err
		}
		if err := c.reopen(); err != nil {
			return err
		}
		cp, ok := c.inner.(engine.Compacter)
		if !ok {
			return fmt.Errorf("engine %s: no engine.Compacter", c.info.Name)
		}
		if err := c.guard.Err(); err != nil {
			return err
		}
		if err := cp.Compact(swathStart, swathEnd); err != nil {
			return fmt.Errorf("compact: %w", err)
		}
		return c.DB.Flush()
	}
	return fmt.Errorf("unknown state %q", state)
}

// scan reads scanLen keys from the swath's start, the first the first after the swath.
func (p *swathPlan) scan(rd engine.Reader, chk *dataset.Checker) error {
	n, _, err := scanFrom(rd, engine.IterOptions{Start: swathStart}, p.scanLen, p.first, chk)
	if err == nil && n != int64(p.scanLen) {
		err = fmt.Errorf("read %d keys after the swath, want %d", n, p.scanLen)
	}
	return err
}

// swathLeaf is one leaf of the swath and why it is skipped ("" if not).
type swathLeaf struct {
	method, state, skip string
}

// swathLeaves are the swath's leaves on an engine with or without ranges and compaction.
func swathLeaves(title string, ranges, compacts bool) []swathLeaf {
	var out []swathLeaf
	for _, m := range swathMethods {
		if m == "range" && !ranges {
			continue
		}
		for _, s := range swathStates {
			l := swathLeaf{method: m, state: s}
			if s == "compacted" && !compacts {
				l.skip = title + " has no manual compaction (engine.Compacter): it frees the pages of deleted keys when the delete commits, so its compacted state is its flushed state"
			}
			out = append(out, l)
		}
	}
	return out
}

// runSwath runs every leaf of the swath against a fresh database of the surviving keys.
func runSwath(b *testing.B, e *core.Env, h *core.Handle) {
	info := h.Fixture().Engine
	p := newSwathPlan(e.Gen)
	if p.deleted == 0 || len(p.live) == 0 {
		b.Run(e.Shape()+"/swath", func(b *testing.B) {
			b.Skipf("the swath holds %d of the %d keys: it must hold some and leave some", p.deleted, e.Keys)
		})
		return
	}
	// Closed on return, not at b's end: core.Run calls the workload once
	// per block size on the same b.
	fresh, err := newWorkCopy(e, h, b.Name()+"/swath fresh", nil, false)
	fatalIf(b, err)
	defer func() { errorIf(b, fresh.Close()) }()
	fatalIf(b, e.WriteAll(fresh.DB, p, e.Cfg.Batch, 1, info.Name+" swath fresh"))
	fatalIf(b, fresh.DB.Flush())
	_, ranges := fresh.inner.(engine.RangeDeleter)
	c, compacts := fresh.inner.(engine.Compacter)
	// The base is the surviving keys in their best shape, and reopened as
	// every copy is (docs/workloads.md, "Deletes").
	if compacts {
		if err := c.Compact([]byte{0}, []byte{0xff}); err != nil {
			b.Fatalf("compact the fresh database: %v", err)
		}
	}
	if err := fresh.reopen(); err != nil {
		b.Fatalf("reopen the fresh database: %v", err)
	}
	settings := fresh.DB.Settings() // the copies are opened with the same options
	for _, l := range swathLeaves(info.Title, ranges, compacts) {
		name := core.BlockLeaf(e.Shape()+"/swath/"+core.SubName("method", l.method, "state", l.state), info, fresh.Opts)
		if l.skip != "" {
			b.Run(name, func(b *testing.B) { b.Skip(l.skip) })
			continue
		}
		e.WatchLeaf(b.Name() + "/" + name)
		f := h.Fixture() // the leaf reads a copy of it
		if l.state == "fresh" {
			f = nil
		}
		e.ShowFixtureSettings(info, settings, f)
		b.Run(name, func(b *testing.B) { swathBody(b, e, h, p, fresh, l.method, l.state) })
	}
}

// swathBody is one leaf of the swath: b.N scans of the fresh database in
// state fresh; in any other, of a new copy of the fixture whose swath was
// deleted by method and brought to state, each right after a scan of the
// fresh database (slowdown-x's base). ns/op is the leaf's own scans'.
func swathBody(b *testing.B, e *core.Env, h *core.Handle, p *swathPlan, fresh *workCopy, method, state string) {
	b.StopTimer()
	chk := e.Gen.NewChecker(e.FullCheck)
	db := fresh.DB
	if state != "fresh" {
		c, done := copyForCall(b, e, h, nil)
		defer done()
		var err error
		if method == "range" {
			err = deleteRange(c)
		} else {
			err = p.deletePoints(c, e.Cfg.Batch)
		}
		if err != nil {
			b.Fatalf("delete the swath: %v", err)
		}
		if err := reach(c, state); err != nil {
			b.Fatalf("%s: %v", state, err)
		}
		fatalIf(b, syncFS(c.Opts.Dir))
		db = c.DB
	}
	frd, err := fresh.DB.NewReader()
	fatalIf(b, err)
	defer frd.Close()
	rd, err := db.NewReader()
	fatalIf(b, err)
	defer rd.Close()
	scan := func(rd engine.Reader, state string) time.Duration {
		t0 := time.Now()
		err := p.scan(rd, chk)
		d := time.Since(t0)
		if err != nil {
			b.Fatalf("%s: %v", state, err)
		}
		return d
	}
	// One scan of each first, untimed: the checks of the state, and the
	// blocks both read in the engines' caches.
	scan(frd, "fresh")
	scan(rd, state)
	lat := measure.NewRecorder()
	var base, total time.Duration
	b.ResetTimer()
	b.StartTimer()
	for n := 0; n < b.N; n++ {
		if state != "fresh" {
			base += scan(frd, "fresh")
		}
		d := scan(rd, state)
		total += d
		lat.Record(d)
	}
	b.StopTimer()
	b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "ns/op")
	b.ReportMetric(float64(p.scanLen)*float64(b.N)/total.Seconds(), "keys/s")
	b.ReportMetric(float64(lat.Percentile(50)), "scan-p50-ns")
	if state != "fresh" && base > 0 {
		b.ReportMetric(float64(total)/float64(base), "slowdown-x")
	}
}
