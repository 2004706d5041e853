package workload

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/core/coretest"
	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
)

// deleteEngines are the engines Delete's tests run on: a B-tree and an
// LSM with a range delete and a manual compaction.
var deleteEngines = []string{"bolt", "pebble"}

// deleteEnv builds tiny bbolt and Pebble fixtures for Delete in a
// temporary directory; out receives the configuration and settings lines.
func deleteEnv(t *testing.T, out io.Writer) *core.Env {
	t.Helper()
	c := core.Default()
	c.KeysMil, c.ValSize, c.Dir = 0.002, 64, t.TempDir()
	return setup(t, c, "BenchmarkDelete(Bolt|Pebble)", out)
}

// testDeleteDB is a database of the engine in a temporary directory,
// holding the run's data set when loaded, as the workload's copies do,
// without a space guard; closed when the test ends.
func testDeleteDB(t *testing.T, e *core.Env, name string, loaded bool) *workCopy {
	t.Helper()
	info := coretest.Engine(t, name)
	o := e.Options(info, t.TempDir(), e.Gen.LogicalBytes())
	db, err := engine.OpenInfo(info, o)
	if err != nil {
		t.Fatal(err)
	}
	c := &workCopy{e: e, info: info, Opts: o, label: name, inner: db, DB: db}
	t.Cleanup(func() { c.shut() })
	if loaded {
		if err := e.WriteAll(db, core.GenSource{G: e.Gen}, 500, 1, name); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// sortedKeys is every key of the data set, in key order.
func sortedKeys(g *dataset.Gen) []string {
	keys := make([]string, g.Keys)
	for i := range keys {
		keys[i] = string(g.Key(make([]byte, dataset.KeySize), uint64(i)))
	}
	sort.Strings(keys)
	return keys
}

// allKeys is every key of db from start, in order.
func allKeys(t *testing.T, db engine.DB, start []byte) []string {
	t.Helper()
	rd, err := db.NewReader()
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	it, err := rd.NewIter(engine.IterOptions{Start: start, KeysOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var out []string
	for ; it.Valid(); it.Next() {
		out = append(out, string(it.Key()))
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestQueueKeysSortAfterTheDataSet: queue keys are 'q' and the sequence
// number in 16 hex digits, in the order of their numbers and after every
// key of the data set.
func TestQueueKeysSortAfterTheDataSet(t *testing.T) {
	kb := make([]byte, queueKeySize)
	for _, seq := range []uint64{0, 1, 0xff, 1 << 40, 1<<64 - 1} {
		if got, want := string(queueKey(kb, seq)), fmt.Sprintf("q%016x", seq); got != want {
			t.Errorf("queueKey(%d) = %q, want %q", seq, got, want)
		}
	}
	if string(queueKey(kb, 0)) <= "ffffffffffffffff" || string(queueStart) > string(queueKey(kb, 0)) ||
		string(queueEnd) <= string(queueKey(kb, 1<<64-1)) {
		t.Error("queue keys do not sort between queueStart and queueEnd, after every data-set key")
	}
}

// TestDeleteQueueReadsItsHead runs the queue's ops on bbolt and Pebble
// holding the data set: after each op the head read is the item after the
// last one deleted, with its value; the queue holds exactly its items;
// and a head deleted behind the queue's back makes the read fail.
func TestDeleteQueueReadsItsHead(t *testing.T) {
	e := deleteEnv(t, io.Discard)
	for _, name := range deleteEngines {
		t.Run(name, func(t *testing.T) {
			c := testDeleteDB(t, e, name, true)
			q, err := newQueue(e, c, 10, 3)
			if err != nil {
				t.Fatal(err)
			}
			for op := uint64(1); op <= 25; op++ {
				if err := q.advance(); err != nil {
					t.Fatal(err)
				}
				if err := q.read(false); err != nil {
					t.Fatalf("op %d: %v", op, err)
				}
				if q.head != op || q.tail != 10+op {
					t.Fatalf("op %d: items %d to %d, want %d to %d", op, q.head, q.tail-1, op, 9+op)
				}
			}
			if err := q.read(true); err != nil {
				t.Fatal(err)
			}
			// What a reader of the database sees, read without the queue.
			items := allKeys(t, c.DB, queueStart)
			if len(items) != 10 || items[0] != "q0000000000000019" || items[9] != "q0000000000000022" {
				t.Fatalf("queue items %v, want q…19 to q…22", items)
			}
			rd, _ := c.DB.NewReader()
			var head []byte
			found, err := rd.Get([]byte(items[0]), func(v []byte) error { head = bytes.Clone(v); return nil })
			rd.Close()
			if err != nil || !found || !bytes.Equal(head, e.Gen.Value(nil, 25)) {
				t.Errorf("head item: found=%v err=%v, its value the generator's value 25: %v", found, err, bytes.Equal(head, e.Gen.Value(nil, 25)))
			}
			if n := len(allKeys(t, c.DB, nil)); n != int(e.Keys)+10 {
				t.Errorf("database holds %d keys, want the data set's %d and 10 items", n, e.Keys)
			}
			if err := engine.Delete(c.DB, []byte(items[0])); err != nil {
				t.Fatal(err)
			}
			if err := q.read(false); err == nil || !strings.Contains(err.Error(), "q0000000000000019") {
				t.Errorf("head deleted behind the queue's back: read = %v", err)
			}
		})
	}
}

// TestDeleteQueueReportsItsMarks runs the queue leaf's body for 1,000 ops
// on bbolt and Pebble: it reports its read latency at 100 and 1,000
// deleted items and at no count b.N did not reach.
func TestDeleteQueueReportsItsMarks(t *testing.T) {
	e := deleteEnv(t, io.Discard)
	coretest.SetBenchtime(t, "1000x")
	for _, name := range deleteEngines {
		f := e.KVFor(coretest.Engine(t, name))
		r := testing.Benchmark(func(b *testing.B) { queueBody(b, e, e.Open(b, f)) })
		if r.N != 1000 {
			t.Fatalf("%s: the benchmark failed (N=%d)", name, r.N)
		}
		for _, m := range []string{"seek-p50-ns", "seek-p99-ns", "seek-ns@100-del", "seek-ns@1k-del"} {
			if r.Extra[m] <= 0 {
				t.Errorf("%s: %s = %v", name, m, r.Extra[m])
			}
		}
		for _, m := range []string{"seek-ns@10k-del", "seek-ns@100k-del"} {
			if _, ok := r.Extra[m]; ok {
				t.Errorf("%s: %s reported at b.N = 1000", name, m)
			}
		}
	}
}

// TestDeleteSwathPlan: the swath holds about half the data set, exactly
// the keys below swathEnd, and the plan's first survivor is the first key
// after it.
func TestDeleteSwathPlan(t *testing.T) {
	e := deleteEnv(t, io.Discard)
	p := newSwathPlan(e.Gen)
	keys := sortedKeys(e.Gen)
	n := sort.SearchStrings(keys, string(swathEnd))
	if p.deleted != uint64(n) || uint64(len(p.live))+p.deleted != e.Keys {
		t.Errorf("plan deletes %d and keeps %d of %d keys; %d are below %s", p.deleted, len(p.live), e.Keys, n, swathEnd)
	}
	if f := float64(n) / float64(e.Keys); f < 0.45 || f > 0.55 {
		t.Errorf("the swath holds %.1f%% of the keys, want about half", 100*f)
	}
	if string(p.first) != keys[n] {
		t.Errorf("first survivor %q, want %q", p.first, keys[n])
	}
	if p.scanLen != swathScanLen || p.Len() != uint64(len(p.live)) {
		t.Errorf("scan of %d keys, source of %d", p.scanLen, p.Len())
	}
}

// TestDeleteSwathScansAfterTheDeletes deletes the swath from bbolt and
// Pebble holding the data set, each way the engine has, in each state:
// exactly the keys below swathEnd are gone, a seek to the swath's start
// lands on the first key after it, and the scan reads on from there.
func TestDeleteSwathScansAfterTheDeletes(t *testing.T) {
	e := deleteEnv(t, io.Discard)
	p := newSwathPlan(e.Gen)
	keys := sortedKeys(e.Gen)
	survivors := keys[sort.SearchStrings(keys, string(swathEnd)):]
	chk := e.Gen.NewChecker(true)
	for _, name := range deleteEngines {
		info := coretest.Engine(t, name)
		db := testDeleteDB(t, e, name, false).inner
		_, ranges := db.(engine.RangeDeleter)
		_, compacts := db.(engine.Compacter)
		if want := name == "pebble"; ranges != want || compacts != want {
			t.Errorf("%s: range delete %v, manual compaction %v", name, ranges, compacts)
		}
		for _, l := range swathLeaves(info.Title, ranges, compacts) {
			if l.state == "fresh" || l.skip != "" {
				continue
			}
			t.Run(name+"/"+l.method+"/"+l.state, func(t *testing.T) {
				c := testDeleteDB(t, e, name, true)
				var err error
				if l.method == "range" {
					err = deleteRange(c)
				} else {
					err = p.deletePoints(c, 300)
				}
				if err != nil {
					t.Fatal(err)
				}
				if err := reach(c, l.state); err != nil {
					t.Fatal(err)
				}
				got := allKeys(t, c.DB, swathStart)
				if len(got) != len(survivors) || got[0] != survivors[0] || got[len(got)-1] != survivors[len(survivors)-1] {
					t.Fatalf("after the deletes: %d keys from %q, want the %d survivors from %q", len(got), got[0], len(survivors), survivors[0])
				}
				if err := swathScans(p, c.DB, 3, chk); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
	// The scan notices a database that still holds the swath.
	c := testDeleteDB(t, e, "bolt", true)
	if err := swathScans(p, c.DB, 1, chk); err == nil || !strings.Contains(err.Error(), "first key after it") {
		t.Errorf("a scan of the whole data set: %v", err)
	}
}

// TestSwathLeaves: every engine gets point deletes in every state, the
// compacted state skipped with a reason where it has no manual
// compaction; only an engine with a range delete gets method=range.
func TestSwathLeaves(t *testing.T) {
	names := func(ls []swathLeaf) string {
		var s []string
		for _, l := range ls {
			n := l.method + "/" + l.state
			if l.skip != "" {
				n += "(skip)"
			}
			s = append(s, n)
		}
		return strings.Join(s, " ")
	}
	if got, want := names(swathLeaves("Bolt", false, false)), "point/fresh point/deleted point/flushed point/compacted(skip)"; got != want {
		t.Errorf("a B-tree: %s, want %s", got, want)
	}
	if got, want := names(swathLeaves("Badger", false, true)), "point/fresh point/deleted point/flushed point/compacted"; got != want {
		t.Errorf("Badger: %s, want %s", got, want)
	}
	want := "point/fresh point/deleted point/flushed point/compacted range/fresh range/deleted range/flushed range/compacted"
	if got := names(swathLeaves("Pebble", true, true)); got != want {
		t.Errorf("Pebble: %s, want %s", got, want)
	}
}

// TestDeleteRunsOnCopies runs the whole workload on bbolt and Pebble:
// every leaf has its engine's settings before it, slowdown-x comes with
// every swath state but fresh, the copies are gone from scratch
// afterwards, and the shared fixture still holds exactly the data set.
func TestDeleteRunsOnCopies(t *testing.T) {
	var out bytes.Buffer
	e := deleteEnv(t, &out)
	coretest.SetBenchtime(t, "2x")
	for _, name := range deleteEngines {
		out.Reset()
		if !runs(e, "Delete", name) {
			t.Fatalf("Delete on %s failed", name)
		}
		if !strings.Contains(out.String(), "settings-"+name+": ") {
			t.Errorf("%s: no settings line:\n%s", name, out.String())
		}
		if ents, _ := os.ReadDir(e.Root.Sub("scratch")); len(ents) > 0 {
			t.Errorf("%s: scratch left behind: %v", name, ents)
		}
		dir, err := e.FixtureDir(e.KVFor(coretest.Engine(t, name)))
		if err != nil {
			t.Fatal(err)
		}
		o := e.KVFor(coretest.Engine(t, name)).Options
		o.Dir, o.ReadOnly = dir, true
		db, err := engine.Open(name, o)
		if err != nil {
			t.Fatal(err)
		}
		n, _, err := core.ScanAll(db, true, core.GenSource{G: e.Gen}.NewChecker(true))
		db.Close()
		if err != nil || n != e.Keys {
			t.Errorf("%s: fixture holds %d keys (%v), want %d", name, n, err, e.Keys)
		}
	}
	// One leaf's figures, on Pebble.
	f := e.KVFor(coretest.Engine(t, "pebble"))
	p := newSwathPlan(e.Gen)
	fresh := testDeleteDB(t, e, "pebble", false)
	if err := e.WriteAll(fresh.DB, p, 500, 1, "fresh"); err != nil {
		t.Fatal(err)
	}
	for _, state := range []string{"fresh", "deleted"} {
		r := testing.Benchmark(func(b *testing.B) { swathBody(b, e, e.Open(b, f), p, fresh, "range", state) })
		if r.N != 2 || r.Extra["keys/s"] <= 0 || r.Extra["scan-p50-ns"] <= 0 {
			t.Errorf("%s: N=%d, %v", state, r.N, r.Extra)
		}
		if _, ok := r.Extra["slowdown-x"]; ok != (state != "fresh") {
			t.Errorf("%s: slowdown-x reported %v", state, ok)
		}
	}
}

// swathScans does n scans of the swath through one reader of db.
func swathScans(p *swathPlan, db engine.DB, n int, chk *dataset.Checker) error {
	rd, err := db.NewReader()
	if err != nil {
		return err
	}
	defer rd.Close()
	for range n {
		if err := p.scan(rd, chk); err != nil {
			return err
		}
	}
	return nil
}
