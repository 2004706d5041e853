package workload

import (
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/core/coretest"
	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/keydist"
)

func TestParseMix(t *testing.T) {
	m, err := parseMix("read=60,update=20,insert=10,delete=5,scan=5")
	if err != nil || m[opRead] != 60 || m[opDelete] != 5 || m[opRMW] != 0 {
		t.Fatalf("%v, %v", m, err)
	}
	if want := (opMix{opRead: 60, opUpdate: 20, opInsert: 10, opScan: 5, opDelete: 5}); m != want {
		t.Errorf("parsed %v, want %v", m, want)
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
					runYCSB(b, e, info, db, dir, spec, spec.Dist, threads)
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

// TestYCSBUpdateRead: with -update read an update reads its key first,
// verified as any read, and both run inside the update's one timing.
func TestYCSBUpdateRead(t *testing.T) {
	coretest.SetBenchtime(t, "1000x")
	e, info, _, _ := ycsbEnv(t, "bolt")
	updateFlag.Set(&e.Cfg, "read")
	var failed bool
	r := testing.Benchmark(func(b *testing.B) {
		defer func() { failed = failed || b.Failed() }()
		db, dir := loadedDB(t, e, "bolt")
		runYCSB(b, e, info, db, dir, ycsbSpecs[0], "zipf", 2)
	})
	if failed || r.N != 1000 || r.Extra["update-ops/s"] <= 0 {
		t.Fatalf("N=%d failed=%v update-ops/s=%v", r.N, failed, r.Extra["update-ops/s"])
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
	all, _ := parseMix("read=40,update=20,insert=10,delete=10,scan=10,rmw=10")
	newWorker := func(stripes int) (*ycsbWorker, *ycsbShared) {
		sh := newYCSBShared(e.Gen, e.Keys, p, all, 1000, stripes)
		w := newYCSBWorker(sh, 0, db, e.StreamsOfCall(1), true)
		t.Cleanup(w.close)
		return w, sh
	}
	kb := make([]byte, 16)
	read := func(w *ycsbWorker, i uint64) error {
		rd, err := w.reader()
		if err != nil {
			return err
		}
		return w.read(rd, i, e.Gen.Key(kb, i))
	}
	update := func(w *ycsbWorker, i uint64) error {
		ver := w.nextVersion()
		if err := w.put(e.Gen.Key(kb, i), e.Gen.ValueV(nil, i, ver)); err != nil {
			return err
		}
		w.own[i%ownWrites] = ownWrite{i + 1, ver}
		return nil
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
	if err := update(w, 7); err != nil {
		t.Fatal(err)
	}
	if err := read(w, 7); err != nil {
		t.Fatalf("its own write: %v", err)
	}
	putRaw(7, 0) // the write lost
	w.epoch--
	if err := read(w, 7); err == nil || !strings.Contains(err.Error(), "after this goroutine wrote") {
		t.Errorf("a lost update read back: %v", err)
	}

	putRaw(9, 5<<16|1) // version 5 of stripe 0, which wrote one
	w.epoch--
	if err := read(w, 9); err == nil || !strings.Contains(err.Error(), "never written") {
		t.Errorf("a version nobody wrote: %v", err)
	}

	w, _ = newWorker(1)
	if err := w.do(opDelete); err != nil { // index 0, the first
		t.Fatal(err)
	}
	if err := read(w, 0); err != nil {
		t.Fatalf("a deleted key's miss: %v", err)
	}
	putRaw(0, 0) // brought back
	w.epoch--
	if err := read(w, 0); err == nil || !strings.Contains(err.Error(), "was deleted") {
		t.Errorf("a deleted key read: %v", err)
	}

	if err := engine.Delete(db, e.Gen.Key(make([]byte, 16), 11)); err != nil {
		t.Fatal(err)
	}
	w.epoch--
	if err := read(w, 11); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("a key lost: %v", err)
	}
}

// ycsbDrawer is a goroutine of a round of mix over dist at keys, ops
// operations and stripes goroutines, with no engine: its draws and its
// inserts' and deletes' sequences are the run's own.
func ycsbDrawer(t *testing.T, kind keydist.Kind, mix opMix, keys uint64, ops, stripes int) *ycsbWorker {
	t.Helper()
	p, err := keydist.New(kind, keydist.YCSBTheta, 0, keys)
	if err != nil {
		t.Fatal(err)
	}
	sh := newYCSBShared(nil, keys, p, mix, ops, stripes)
	return &ycsbWorker{sh: sh, smp: p.NewSampler(), rng: dataset.NewRand(5, 1)}
}

// TestYCSBZipfHotKeyStaysHot: under zipf the ranks fall on a key space
// fixed for the round, so the key of rank 0 gets its 1/zeta(10^10+1,
// 0.99) = 3.78 % of the draws from the first operation to the last, while
// the mix inserts (E) and deletes (a custom mix). Were the ranks hashed
// mod the live keys, the hot key would move with every insert and the
// hottest over the run would get about 0.01 %.
func TestYCSBZipfHotKeyStaysHot(t *testing.T) {
	const keys, ops, tenths = 100_000, 400_000, 10
	const p0 = 1 / 26.46902820178302 // YCSB's ZETAN
	custom, _ := parseMix("read=90,insert=5,delete=5")
	for _, mix := range []opMix{ycsbSpecs[4].Mix, custom} {
		w := ycsbDrawer(t, keydist.Zipf, mix, keys, ops, 1)
		sh := w.sh
		counts := map[uint64]int{}
		var hot [tenths]uint64 // each tenth's hottest key
		drawn := 0
		for n := range ops {
			switch op := w.pick(); op {
			case opInsert, opDelete:
				q := &sh.inserts
				if op == opDelete {
					q = &sh.dels
				}
				v, err := q.claim()
				if err != nil {
					t.Fatal(err)
				}
				q.ack(v)
			default:
				w.lo, w.hi = sh.live()
				i, err := w.draw(false)
				if err != nil {
					t.Fatal(err)
				}
				if i < w.lo || i >= w.hi {
					t.Fatalf("%v: drew %d outside the live [%d,%d)", mix, i, w.lo, w.hi)
				}
				counts[i]++
				drawn++
			}
			if (n+1)%(ops/tenths) == 0 { // the hottest key so far
				for k, c := range counts {
					if c > counts[hot[n/(ops/tenths)]] {
						hot[n/(ops/tenths)] = k
					}
				}
			}
		}
		top := hot[tenths-1]
		for i, k := range hot {
			if k != top {
				t.Errorf("%v: the hottest key after %d0 %% of the run is %d, at the end %d", mix, i+1, k, top)
			}
		}
		// Draws past the live keys are drawn again, so the hot key's
		// share of the kept draws is at least p0; five standard
		// deviations of the binomial below it.
		share := float64(counts[top]) / float64(drawn)
		if tol := 5 * math.Sqrt(p0*(1-p0)/float64(drawn)); share < p0-tol || share > 1.5*p0 {
			t.Errorf("%v: the hottest key got %.3f %% of %d draws, want %.3f %% (at least %.3f)", mix, 100*share, drawn, 100*p0, 100*(p0-tol))
		}
	}
}

// TestYCSBLatestTrailsOnlyInFlight: 16 goroutines insert (D's 5 %) in
// rounds of one operation each, claiming in one order and committing in
// another. The newest drawable key trails the newest committed insert by
// at most the inserts in flight (at most the goroutines), and by none
// once no insert is in flight: the latest draws reach every committed
// key at any goroutine count. With inserts striped per goroutine and
// drawable up to the slowest stripe, the lag at 62,500 operations each
// is about 3,000 keys.
func TestYCSBLatestTrailsOnlyInFlight(t *testing.T) {
	const goroutines, each = 16, 62_500
	w := ycsbDrawer(t, keydist.Latest, ycsbSpecs[3].Mix, 1000, goroutines*each, goroutines)
	sh := w.sh
	rng := dataset.NewRand(7, 7)
	var claims []uint64
	for range each {
		claims = claims[:0]
		for range goroutines {
			if rng.Float64() < ycsbSpecs[3].Mix[opInsert]/100 {
				v, err := sh.inserts.claim()
				if err != nil {
					t.Fatal(err)
				}
				claims = append(claims, v)
			}
		}
		for i := len(claims) - 1; i > 0; i-- { // committed in a random order
			j := rng.Below(uint64(i + 1))
			claims[i], claims[j] = claims[j], claims[i]
		}
		for _, v := range claims {
			sh.inserts.ack(v)
			if _, hi := sh.live(); sh.keys+v+1 > hi+goroutines {
				t.Fatalf("insert %d committed, yet the newest drawable key is %d", sh.keys+v, hi-1)
			}
		}
		if _, hi := sh.live(); hi != sh.keys+sh.inserts.next.Load() {
			t.Fatalf("no insert in flight, yet the newest drawable key is %d of %d", hi-1, sh.keys+sh.inserts.next.Load()-1)
		}
	}
	w.lo, w.hi = sh.live()
	newest := 0
	for range 10_000 {
		if i, _ := w.draw(false); i == w.hi-1 {
			newest++
		}
	}
	if newest == 0 {
		t.Errorf("latest never drew the newest key, %d", w.hi-1)
	}
}

// TestAckSeqConcurrent: goroutines that claim and acknowledge at once
// leave every number acknowledged, none lost.
func TestAckSeqConcurrent(t *testing.T) {
	q := ackSeq{acked: make([]atomic.Uint64, ackWindow)}
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 5000 {
				v, err := q.claim()
				if err != nil {
					t.Error(err)
					return
				}
				q.ack(v)
			}
		})
	}
	wg.Wait()
	if q.limit.Load() != 16*5000 || q.next.Load() != 16*5000 {
		t.Errorf("claimed %d, acknowledged below %d; want 80000 both", q.next.Load(), q.limit.Load())
	}
}

// TestYCSBDrawIsNotTimed: a sampler that sleeps 1 ms at each refill (one
// operation in 16 under zipf) leaves the recorded latencies alone, for
// the key is drawn before the clock starts. A read's p99 is normally a
// few microseconds here, the bound 1 ms; drawn inside the clock, one read
// in 16 would take over 1 ms, and so would the p99.
func TestYCSBDrawIsNotTimed(t *testing.T) {
	e, _, db, _ := ycsbEnv(t, "bolt")
	p, err := keydist.New(keydist.Zipf, keydist.YCSBTheta, 0, e.Keys)
	if err != nil {
		t.Fatal(err)
	}
	const ops = 3200
	sh := newYCSBShared(e.Gen, e.Keys, p, ycsbSpecs[0].Mix, ops, 1)
	w := newYCSBWorker(sh, 0, db, e.StreamsOfCall(1), true)
	defer w.close()
	refills := 0
	w.smp.Refilled = func() { refills++; time.Sleep(time.Millisecond) }
	w.run(ops)
	if w.err != nil {
		t.Fatal(w.err)
	}
	if refills < ops/2/16 {
		t.Fatalf("%d refills in %d operations", refills, ops)
	}
	if p99 := time.Duration(w.lat[opRead].Percentile(99)); p99 >= time.Millisecond {
		t.Errorf("read p99 %v with a 1 ms refill: the draw is timed", p99)
	}
}

// TestMixLeftoverGoesToANamedOp: shares that add up to a little less
// than 100 give what is left to the last operation named, never to one
// the mix does not name.
func TestMixLeftoverGoesToANamedOp(t *testing.T) {
	m, err := parseMix("read=33.333,update=33.333,scan=33.333")
	if err != nil {
		t.Fatal(err)
	}
	c := m.cum()
	for _, u := range []float64{0, 0.3333, 0.5, 0.99998, 0.9999999999} {
		if op := pickOp(&c, u); m[op] == 0 {
			t.Errorf("u=%v picks %s, which the mix does not name", u, opNames[op])
		}
	}
	if op := pickOp(&c, 0.9999999999); op != opScan {
		t.Errorf("the leftover goes to %s, want scan", opNames[op])
	}
	w := ycsbDrawer(t, keydist.Uniform, m, 1000, 1_000_000, 1)
	for range 1_000_000 {
		if op := w.pick(); m[op] == 0 {
			t.Fatalf("picked %s", opNames[op])
		}
	}
}
