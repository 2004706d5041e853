package workload

import (
	"fmt"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/core/coretest"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/keydist"
)

func TestParseMix(t *testing.T) {
	m, err := parseMix("read=60,update=20,insert=10,delete=5,scan=5")
	if err != nil || m[opRead] != 60 || m[opDelete] != 5 || m[opRMW] != 0 {
		t.Fatalf("%v, %v", m, err)
	}
	if m.String() != "read=60,update=20,insert=10,scan=5,delete=5" {
		t.Errorf("String: %s", m)
	}
	for in, want := range map[string]string{
		"read=60,update=30":        "add up to 90",
		"read=50,read=50":          "listed twice",
		"read=50,write=50":         "unknown operation",
		"read":                     "not op=percent",
		"read=-5,update=105":       "percentage",
		"update=50,insert=50":      "reads nothing",
		"read=50,update=fifty,x=1": "percentage",
	} {
		if _, err := parseMix(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

// ycsbEnv is a run over 2,000 keys of 64 bytes and an engine loaded with
// them.
func ycsbEnv(t *testing.T, name string) (*core.Env, engine.Info, engine.DB, string) {
	t.Helper()
	c := core.Default()
	c.KeysMil, c.ValSize, c.ValueRatio, c.Seed = 0.002, 64, 1, 5
	e, err := core.NewEnv(c, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	e.Running.Store(true)
	db, dir := loadedDB(t, e, name)
	return e, coretest.Engine(t, name), db, dir
}

// loadedDB is a new database of the engine holding e's data set: what a
// round's copy of a fixture holds.
func loadedDB(t testing.TB, e *core.Env, name string) (engine.DB, string) {
	dir := t.TempDir()
	db, err := engine.Open(name, engine.Options{Dir: dir, ExpectedBytes: 4 * e.Gen.LogicalBytes(), CacheMB: 8, MemtableMB: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := e.WriteAll(db, core.GenSource{G: e.Gen}, 500, 1, "load"); err != nil {
		t.Fatal(err)
	}
	return db, dir
}

// TestYCSBMixes runs every workload, and a mix with every operation, on
// two engines of either kind at one and three goroutines: every read is
// verified inside, and each operation type's share of the ops is the
// mix's.
func TestYCSBMixes(t *testing.T) {
	const ops = 1000
	coretest.SetBenchtime(t, fmt.Sprintf("%dx", ops))
	all, _ := parseMix("read=40,update=20,insert=10,delete=10,scan=10,rmw=10")
	specs := append(append([]ycsbSpec(nil), ycsbSpecs...), ycsbSpec{Name: "custom", Mix: all, Dist: "zipf"})
	for name, threadCounts := range map[string][]int{"bolt": {1, 3}, "pebble": {3}} {
		for _, spec := range specs {
			for _, threads := range threadCounts {
				e, info, _, _ := ycsbEnv(t, name)
				var failed string
				r := testing.Benchmark(func(b *testing.B) {
					defer func() {
						if b.Failed() {
							failed = "failed"
						}
					}()
					// Every call starts from the loaded data, as each
					// call's fresh copy of a fixture does.
					db, dir := loadedDB(t, e, name)
					runYCSB(b, e.Bench(), info, db, dir, spec, spec.Dist, threads)
				})
				if r.N != ops || failed != "" {
					t.Fatalf("%s %s threads=%d: N=%d %s", name, spec.Name, threads, r.N, failed)
				}
				for op, share := range spec.Mix {
					got := r.Extra[opNames[op]+"-ops/s"] / r.Extra["ops/s"] * 100
					// Five standard deviations of the binomial: a false
					// alarm in 1.7 million, while a mix drawn wrong is
					// off by its share.
					sigma := 100 * math.Sqrt(share/100*(1-share/100)/ops)
					if math.Abs(got-share) > 5*sigma+0.5 {
						t.Errorf("%s %s threads=%d: %s is %.1f %% of ops, want %.0f", name, spec.Name, threads, opNames[op], got, share)
					}
					if share > 0 && r.Extra[opNames[op]+"-p99-ns"] <= 0 {
						t.Errorf("%s %s: no %s latency", name, spec.Name, opNames[op])
					}
				}
				if spec.Background && r.Extra["write-ops/s"] <= 0 {
					t.Errorf("%s readwhilewriting: the writer wrote nothing", name)
				}
			}
		}
	}
}

// TestYCSBVerifyCatches: what the verification must refuse. A write made
// behind a goroutine's back (an older version, a version nobody wrote, a
// deleted key brought back) fails its next read of that key.
func TestYCSBVerifyCatches(t *testing.T) {
	e, _, db, _ := ycsbEnv(t, "bolt")
	p, err := keydist.New(keydist.Uniform, keydist.YCSBTheta, 0, e.Keys)
	if err != nil {
		t.Fatal(err)
	}
	newWorker := func(stripes int) (*ycsbWorker, *ycsbShared) {
		sh := &ycsbShared{g: e.Gen, keys: e.Keys, lanes: make([]ycsbLane, stripes), stripes: uint64(stripes), dist: p, deletes: true}
		w := newYCSBWorker(sh, 0, db, e.StreamsOfCall(1), true)
		t.Cleanup(w.close)
		return w, sh
	}
	putRaw := func(i, ver uint64) {
		bt := db.NewBatch()
		kb := make([]byte, 16)
		if err := bt.Set(e.Gen.Key(kb, i), e.Gen.ValueV(nil, i, ver)); err != nil {
			t.Fatal(err)
		}
		if err := bt.Commit(); err != nil {
			t.Fatal(err)
		}
	}

	w, _ := newWorker(1)
	if err := w.update(7); err != nil {
		t.Fatal(err)
	}
	if err := w.read(7); err != nil {
		t.Fatalf("its own write: %v", err)
	}
	putRaw(7, 0) // the write lost
	w.epoch--
	if err := w.read(7); err == nil || !strings.Contains(err.Error(), "after this goroutine wrote") {
		t.Errorf("a lost update read back: %v", err)
	}

	putRaw(9, 5<<16|1) // version 5 of stripe 0, which wrote one
	w.epoch--
	if err := w.read(9); err == nil || !strings.Contains(err.Error(), "never written") {
		t.Errorf("a version nobody wrote: %v", err)
	}

	w, _ = newWorker(1)
	if err := w.delete(); err != nil { // index 0, stripe 0's first
		t.Fatal(err)
	}
	if err := w.read(0); err != nil {
		t.Fatalf("a deleted key's miss: %v", err)
	}
	putRaw(0, 0) // brought back
	w.epoch--
	if err := w.read(0); err == nil || !strings.Contains(err.Error(), "was deleted") {
		t.Errorf("a deleted key read: %v", err)
	}

	if err := engine.Delete(db, e.Gen.Key(make([]byte, 16), 11)); err != nil {
		t.Fatal(err)
	}
	w.epoch--
	if err := w.read(11); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("a key lost: %v", err)
	}
}

// TestYCSBInsertsStayBehindReads: with inserts striped over goroutines,
// the live range reaches only keys every stripe has committed, and latest
// draws from it.
func TestYCSBInsertsStayBehindReads(t *testing.T) {
	sh := &ycsbShared{keys: 100, lanes: make([]ycsbLane, 3), stripes: 3}
	sh.lanes[0].inserted.Store(5)
	sh.lanes[1].inserted.Store(2)
	sh.lanes[2].inserted.Store(4)
	if lo, hi := sh.live(); lo != 0 || hi != 106 {
		t.Errorf("live [%d,%d), want [0,106)", lo, hi)
	}
	if !sh.written(100+3*2+1, 0) || sh.written(100+3*3+1, 0) {
		t.Error("stripe 1's third insert is started, its fourth is not")
	}
	sh.deletes = true
	sh.lanes[0].delClaimed.Store(3)
	sh.lanes[0].deleted.Store(3)
	sh.lanes[1].deleted.Store(1)
	sh.lanes[2].deleted.Store(2)
	if lo, _ := sh.live(); lo != 3 {
		t.Errorf("live from %d, want 3", lo)
	}
	if !sh.mayBeDeleted(6) || sh.mayBeDeleted(4) || sh.mayBeDeleted(1) {
		t.Error("stripe 0 started deleting 0, 3, 6; stripe 1 none")
	}
	sh.lanes[1].delClaimed.Store(1)
	if !sh.mayBeDeleted(1) {
		t.Error("stripe 1 started deleting 1")
	}
}
