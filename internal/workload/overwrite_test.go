package workload

import (
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/core/coretest"
	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
)

// Each pass's order visits every index exactly once, whatever n (primes,
// powers of two, and n with many small factors among them), and the
// passes of one op are in different orders.
func TestPassOrdersArePermutations(t *testing.T) {
	for _, n := range []uint64{1, 2, 3, 4, 5, 7, 8, 30, 64, 97, 210, 1000, 1024, 4093, 4096, 65536, 65537} {
		for seed := uint64(1); seed <= 3; seed++ {
			r := dataset.NewRand(seed, n)
			orders := drawPassOrders(&r, n, 3)
			if len(orders) != 3 {
				t.Fatalf("n=%d: %d orders, want 3", n, len(orders))
			}
			seqs := make([][]uint64, len(orders))
			for p, o := range orders {
				seen := make([]bool, n)
				for i := uint64(0); i < n; i++ {
					j := o.at(i)
					if j >= n || seen[j] {
						t.Fatalf("n=%d pass %d (%+v): position %d writes index %d again or out of range", n, p+1, o, i, j)
					}
					seen[j] = true
					seqs[p] = append(seqs[p], j)
				}
				if n > 2 && o.a == 1 {
					t.Errorf("n=%d pass %d: a=1, the fixture's own order shifted", n, p+1)
				}
			}
			if n < 3 {
				continue
			}
			for p := range seqs {
				for q := p + 1; q < len(seqs); q++ {
					if slices.Equal(seqs[p], seqs[q]) {
						t.Errorf("n=%d seed %d: passes %d and %d in the same order (%+v, %+v)", n, seed, p+1, q+1, orders[p], orders[q])
					}
				}
			}
		}
	}
	// Indexes near 2^32 and beyond: the product a*i is taken in 128 bits.
	o := passOrder{n: 1<<40 + 15, a: 1<<40 - 3, c: 1<<40 + 2}
	for _, i := range []uint64{0, 1, 1 << 39, 1<<40 + 14} {
		want := new(bigMod).mulAdd(o.a, i, o.c, o.n)
		if got := o.at(i); got != want {
			t.Errorf("at(%d) = %d, want %d", i, got, want)
		}
	}
}

// bigMod computes (a*i + c) mod n by doubling, a reference for at.
type bigMod struct{}

func (bigMod) mulAdd(a, i, c, n uint64) uint64 {
	r, x := uint64(0), a%n
	for ; i > 0; i >>= 1 {
		if i&1 != 0 {
			r = (r + x) % n
		}
		x = (x + x) % n
	}
	return (r + c%n) % n
}

// recordDB records every entry written through its batches: the index
// and the version of its value, in the order written.
type recordDB struct {
	engine.DB
	g   *dataset.Gen
	log *writeLog
}

type writeLog struct {
	mu      sync.Mutex
	entries []writeEntry
	commits int
}

type writeEntry struct{ index, version uint64 }

func (d *recordDB) NewBatch() engine.Batch { return &recordBatch{Batch: d.DB.NewBatch(), d: d} }

type recordBatch struct {
	engine.Batch
	d       *recordDB
	pending []writeEntry
}

func (b *recordBatch) Set(k, v []byte) error {
	i, ok := b.d.g.Index(k)
	if !ok {
		return fmt.Errorf("key %q is not in the data set", k)
	}
	b.pending = append(b.pending, writeEntry{i, b.d.g.VersionOf(i, v)})
	return b.Batch.Set(k, v)
}

func (b *recordBatch) Commit() error {
	if err := b.Batch.Commit(); err != nil {
		return err
	}
	b.d.log.mu.Lock()
	b.d.log.entries = append(b.d.log.entries, b.pending...)
	b.d.log.commits++
	b.d.log.mu.Unlock()
	return nil
}

// overwriteEnv sets up a run of Overwrite on bbolt and Pebble on a tiny
// data set in a fresh -dir, their fixtures built.
func overwriteEnv(t *testing.T, out io.Writer, passes core.IntList) *core.Env {
	t.Helper()
	c := core.Default()
	c.KeysMil, c.ValSize, c.Batch, c.Dir = 0.002, 64, 300, t.TempDir()
	overwritePassesFlag.Set(&c, passes)
	return setup(t, c, "^BenchmarkOverwrite(Bolt|Pebble)$", out)
}

// overwriteEngines are the engines the tests run on: a B-tree and an LSM.
func overwriteEngines(t *testing.T) []engine.Info {
	return []engine.Info{coretest.Engine(t, "bolt"), coretest.Engine(t, "pebble")}
}

// fixtureState is the fixture's files: name, size and modification time.
func fixtureState(t *testing.T, dir string) map[string]string {
	t.Helper()
	st := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		st[p] = fmt.Sprintf("%d %d %v", fi.Size(), fi.ModTime().UnixNano(), fi.Mode())
		return nil
	})
	if err != nil || len(st) < 2 {
		t.Fatalf("fixture %s: %d entries, %v", dir, len(st), err)
	}
	return st
}

// The fixture of the data set rewritten twice holds every key at version
// 2; an op on it rewrites every key once, in the op's order with version
// 3 of every value, through batches of -batch; the database it leaves
// holds every key once, at version 3; and the fixture it copied is
// untouched.
func TestOverwriteOnceRewritesEveryKeyEachPass(t *testing.T) {
	e := overwriteEnv(t, io.Discard, core.IntList{3})
	writersFlag.Set(&e.Cfg, 1) // one writer: the log is in each pass's order
	const passes = 3
	for _, info := range overwriteEngines(t) {
		f := rewrittenFixture(e, info, passes-1)
		src, err := e.FixtureDir(f)
		if err != nil {
			t.Fatal(err)
		}
		fo := f.Options
		fo.Dir = src
		if err := checkVersion(e, info, fo, passes-1); err != nil {
			t.Fatalf("%s: the fixture rewritten %d times: %v", info.Name, passes-1, err)
		}
		before := fixtureState(t, src)
		log := &writeLog{}
		rec := info
		rec.Open = func(o engine.Options) (engine.DB, error) {
			db, err := info.Open(o)
			if err != nil {
				return nil, err
			}
			return &recordDB{DB: db, g: e.Gen, log: log}, nil
		}
		o := f.Options
		o.Dir, o.ReadOnly = filepath.Join(t.TempDir(), "db"), false
		r := dataset.NewRand(5, 0)
		order := drawPassOrders(&r, e.Keys, 1)[0]
		started, stopped := 0, 0
		st, err := overwriteOnce(e, rec, src, o, passSource{g: e.Gen, order: order, version: passes}, "test", func() { started++ }, func() { stopped++ })
		if err != nil {
			t.Fatalf("%s: %v", info.Name, err)
		}
		if started != 1 || stopped != 1 {
			t.Errorf("%s: the interval started %d and stopped %d times, want once each", info.Name, started, stopped)
		}
		if st.elapsed <= 0 || st.hasIO == coretest.InMemory(t, o.Dir) || st.hasIO && st.written <= 0 || st.space.Data <= 0 {
			t.Errorf("%s: stats %+v", info.Name, st)
		}

		// What went through the batches: one pass, in its order, each
		// value at its version.
		n := int(e.Keys)
		if len(log.entries) != n {
			t.Fatalf("%s: %d entries written, want one pass of %d", info.Name, len(log.entries), n)
		}
		if batches := (n + e.Cfg.Batch - 1) / e.Cfg.Batch; log.commits != batches {
			t.Errorf("%s: %d commits, want %d", info.Name, log.commits, batches)
		}
		for i, w := range log.entries {
			if want := order.at(uint64(i)); w.index != want || w.version != passes {
				t.Fatalf("%s: write %d: index %d version %d, want index %d version %d", info.Name, i, w.index, w.version, want, passes)
			}
		}

		// What the database holds, read back here on its own.
		ro := o
		ro.ReadOnly = true
		db, err := engine.Open(info.Name, ro)
		if err != nil {
			t.Fatal(err)
		}
		rd, err := db.NewReader()
		if err != nil {
			t.Fatal(err)
		}
		it, err := rd.NewIter(engine.IterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		seen := make([]bool, n)
		count := 0
		for ; it.Valid(); it.Next() {
			i, ok := e.Gen.Index(it.Key())
			if !ok || seen[i] {
				t.Fatalf("%s: key %q: index %d (%v), seen before %v", info.Name, it.Key(), i, ok, ok && seen[i])
			}
			seen[i] = true
			v, err := it.Value()
			if err != nil {
				t.Fatal(err)
			}
			if ver, err := e.Gen.CheckV(i, v, true, nil); err != nil || ver != passes {
				t.Fatalf("%s: key %d holds version %d (%v), want %d", info.Name, i, ver, err, passes)
			}
			count++
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		it.Close()
		rd.Close()
		db.Close()
		if count != n {
			t.Errorf("%s: %d keys read back, want %d", info.Name, count, n)
		}

		// The settings line printed before the leaves (an empty database's
		// with the copy's options) is the written copy's own.
		printed, err := e.ScratchSettings(info, o)
		if err != nil {
			t.Fatal(err)
		}
		if db, err = engine.Open(info.Name, o); err != nil {
			t.Fatal(err)
		}
		if got := db.Settings(); !slices.Equal(got, printed) {
			t.Errorf("%s: the copy's settings\n%v\nthe printed ones\n%v", info.Name, got, printed)
		}
		db.Close()
		if after := fixtureState(t, src); !maps.Equal(before, after) {
			t.Errorf("%s: the fixture changed:\nbefore %v\nafter  %v", info.Name, before, after)
		}
	}
}

// A database that does not hold the last pass's version of every key
// fails the check after the pass.
func TestOverwriteCheckCatchesAStaleValue(t *testing.T) {
	e := overwriteEnv(t, io.Discard, core.IntList{1})
	info := coretest.Engine(t, "bolt")
	o := e.Cfg.Options(info, filepath.Join(t.TempDir(), "db"), e.Gen.LogicalBytes())
	db, err := engine.Open(info.Name, o)
	if err != nil {
		t.Fatal(err)
	}
	r := dataset.NewRand(1, 0)
	src := passSource{g: e.Gen, order: drawPassOrders(&r, e.Keys, 1)[0], version: 2}
	if err := e.WriteAll(db, src, 100, 1, "test"); err != nil {
		t.Fatal(err)
	}
	// One key left at version 1.
	b := db.NewBatch()
	kb := make([]byte, dataset.KeySize)
	if err := b.Set(e.Gen.Key(kb, 7), e.Gen.ValueV(nil, 7, 1)); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := checkVersion(e, info, o, 2); err == nil || !strings.Contains(err.Error(), "key 7 holds version 1, want 2") {
		t.Errorf("stale key: %v", err)
	}
	if err := checkVersion(e, info, o, 1); err == nil {
		t.Error("version 1 accepted for keys at version 2")
	}
}

// The Overwrite benchmark, as a run calls it: it reports its metrics,
// prints the engine's settings and the fixture's line before its leaves,
// removes every copy it made and leaves the fixture as it was.
func TestOverwriteBenchmark(t *testing.T) {
	coretest.SetBenchtime(t, "1x")
	var out strings.Builder
	e := overwriteEnv(t, &out, core.IntList{1, 2})
	for _, info := range overwriteEngines(t) {
		src, err := e.FixtureDir(e.KVFor(info))
		if err != nil {
			t.Fatal(err)
		}
		before := fixtureState(t, src)
		out.Reset()
		if !runs(e, "Overwrite", info.Name) {
			t.Fatalf("%s: Overwrite failed", info.Name)
		}
		if !strings.Contains(out.String(), "settings-"+info.Name+": ") || !strings.Contains(out.String(), "fixture-"+info.Name+": ") {
			t.Errorf("%s: no settings or fixture line:\n%s", info.Name, out.String())
		}
		if left := scratchLeft(e); len(left) != 0 {
			t.Fatalf("%s: scratch left behind: %v", info.Name, left)
		}
		if after := fixtureState(t, src); !maps.Equal(before, after) {
			t.Errorf("%s: the fixture changed:\nbefore %v\nafter  %v", info.Name, before, after)
		}

		// The body alone, for its metrics: pass 2, on the fixture
		// rewritten once.
		f := rewrittenFixture(e, info, 1)
		rewritten, err := e.FixtureDir(f)
		if err != nil {
			t.Fatal(err)
		}
		o := f.Options
		o.ReadOnly = false
		r := testing.Benchmark(func(b *testing.B) { overwrite(b, e, info, rewritten, o, 2) })
		mem := coretest.InMemory(t, e.Cfg.Dir) // write-amp absent: nothing to count
		for _, u := range []string{"keys/s", "write-amp", "space-amp", "log-MB"} {
			v, ok := r.Extra[u]
			bad := !ok || v < 0 || (u != "log-MB" && v == 0)
			if u == "write-amp" && mem {
				bad = ok
			}
			if bad {
				t.Errorf("%s: %s = %v in %v", info.Name, u, r.Extra[u], r.Extra)
			}
		}
		if r.N != 1 || r.Bytes != e.Gen.LogicalBytes() {
			t.Errorf("%s: N=%d bytes=%d", info.Name, r.N, r.Bytes)
		}
		if _, ok := r.Extra["rss-growth-MB"]; ok {
			t.Errorf("%s: reports memory growth: %v", info.Name, r.Extra)
		}
		if left := scratchLeft(e); len(left) != 0 {
			t.Fatalf("%s: scratch left behind: %v", info.Name, left)
		}
	}
}

var overwriteResult = regexp.MustCompile(`(?m)^BenchmarkTargets/(BenchmarkOverwrite\S+?)(?:-\d+)?\s+1\s.*$`)

// The leaves as a run names them, in a child process of this test binary
// (the twin test's): one per -overwrite_passes value, the shape first and
// the block size last, each after its engine's settings line.
func TestOverwriteLeafNames(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=BenchmarkTargets/^BenchmarkOverwrite(Bolt|Pebble)$", "-test.benchtime=1x",
		"-dir", dir, "-keys_mil", "0.002", "-valsz", "256", "-batch", "500", "-overwrite_passes", "1,3")
	cmd.Env = append(os.Environ(), "KVBENCH_BENCH_CHILD=1")
	outb, err := cmd.CombinedOutput()
	out := string(outb)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	block := "/block=" + core.Default().BlockSizes[0].String()
	want := []string{
		"BenchmarkOverwriteBolt/valsz=256/batch=500/pass=1",
		"BenchmarkOverwriteBolt/valsz=256/batch=500/pass=3",
		"BenchmarkOverwritePebble/valsz=256/batch=500/pass=1" + block,
		"BenchmarkOverwritePebble/valsz=256/batch=500/pass=3" + block,
	}
	var got []string
	settings := ""
	for _, l := range strings.Split(out, "\n") {
		if k, _, ok := strings.Cut(l, ": "); ok && strings.HasPrefix(k, "settings-") {
			settings = k
		}
		m := overwriteResult.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		got = append(got, m[1])
		eng := strings.ToLower(strings.TrimPrefix(strings.SplitN(m[1], "/", 2)[0], "BenchmarkOverwrite"))
		if settings != "settings-"+eng {
			t.Errorf("%s follows %q", m[1], settings)
		}
		for _, u := range []string{" keys/s", " write-amp", " space-amp", " MB/s"} {
			if !strings.Contains(l, u) && (u != " write-amp" || !coretest.InMemory(t, dir)) {
				t.Errorf("%s: no%s: %s", m[1], u, l)
			}
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("leaves\n%s\nwant\n%s\noutput:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), out)
	}
}
