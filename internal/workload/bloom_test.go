package workload

import (
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/core/coretest"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/measure"
)

// TestBloomFixtures: Setup builds one many-table fixture per -bloom_fpr
// value on each selected engine (Badger needs reopening to write each
// table out), each with at least -sst_tables tables and every key, and
// each Bloom leaf is preceded by its own fixture's settings.
func TestBloomFixtures(t *testing.T) {
	coretest.SetBenchtime(t, "1x")
	cfg := core.Default()
	cfg.Dir, cfg.KeysMil, cfg.ValSize = t.TempDir(), 0.002, 64
	withLoad(&cfg, func(l *loadSettings) { l.SSTTables, l.BloomFPR = 4, FPRList{0, 0.03} })
	withLoad(&cfg, func(l *loadSettings) { l.Rates, l.LoadTime = RateList{1000}, 10*time.Millisecond })
	pe, err := core.NewEnv(cfg, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := pe.NewPlan("BenchmarkBloom(Badger|Pebble)")
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Fixtures) != 4 || plan.Scratch != 0 || plan.DiskEstimate(cfg.Dir) < 4*pe.Gen.LogicalBytes() {
		t.Fatalf("plan: %d fixtures, %d scratch bytes, estimate %d", len(plan.Fixtures), plan.Scratch, plan.DiskEstimate(cfg.Dir))
	}
	var out strings.Builder
	e := setup(t, cfg, "BenchmarkBloom(Badger|Pebble)", &out)
	for _, name := range []string{"badger", "pebble"} {
		info := coretest.Engine(t, name)
		for _, fpr := range loadOf(&cfg).BloomFPR {
			f := tablesFixture(e, info, fpr)
			dir, err := e.FixtureDir(f)
			if err != nil {
				t.Fatal(err)
			}
			if ssts, _ := filepath.Glob(filepath.Join(dir, "*.sst")); len(ssts) < loadOf(&cfg).SSTTables {
				t.Errorf("%s: %d tables, want %d", dir, len(ssts), loadOf(&cfg).SSTTables)
			}
			if !passes(func(b *testing.B) {
				h := e.Open(b, f)
				h.DB(b, core.Warm, nil) // the warm-up pass counts every key
				h.Close(b)
			}) {
				t.Errorf("%s: warm-up pass failed", dir)
			}
		}
	}
	before := strings.Count(out.String(), "settings-pebble: ")
	if !runs(e, "Bloom", "pebble") {
		t.Fatal("Bloom failed")
	}
	if got := strings.Count(out.String(), "settings-pebble: ") - before; got != len(loadOf(&cfg).BloomFPR) {
		t.Errorf("%d settings lines, want one per filter setting:\n%s", got, out.String())
	}
}

// bloomEnv is a run on a tiny data set in four tables with one filter
// setting, its fixtures built.
func bloomEnv(t *testing.T, out io.Writer) *core.Env {
	t.Helper()
	cfg := core.Default()
	cfg.Dir, cfg.KeysMil, cfg.ValSize = t.TempDir(), 0.002, 64
	withLoad(&cfg, func(l *loadSettings) { l.SSTTables, l.BloomFPR = 4, FPRList{0.01} })
	withLoad(&cfg, func(l *loadSettings) { l.Rates, l.LoadTime = RateList{1000}, 10*time.Millisecond })
	return setup(t, cfg, "BenchmarkBloomPebble", out)
}

// TestBloomLeavesStartInTheirCacheState: on a fixture just evicted from
// the page cache (as a cold leaf or -mem_limit leaves it), a warm leaf
// starts with every byte of the fixture's files in the page cache (a
// warm-up scan alone leaves out what only point reads touch), and a cold
// leaf with next to none; and Bloom runs both, each cold window on a
// fixture of its own.
func TestBloomLeavesStartInTheirCacheState(t *testing.T) {
	e := bloomEnv(t, io.Discard)
	f := tablesFixture(e, coretest.Engine(t, "pebble"), 0.01)
	dir, err := e.FixtureDir(f)
	if err != nil {
		t.Fatal(err)
	}
	coretest.SetBenchtime(t, "2x")
	type state struct{ resident, total int64 }
	at := map[string][]state{}
	testing.Benchmark(func(b *testing.B) {
		if _, err := e.Evict(dir); err != nil {
			b.Fatal(err)
		}
		h := e.Open(b, f)
		for _, cache := range []string{core.Warm, core.Cold} {
			h.Run(b, cache, cache, nil, func(b *testing.B, db engine.DB) {
				r, tot := measure.ResidentDir(dir)
				at[cache] = append(at[cache], state{r, tot})
			})
		}
	})
	for _, s := range at[core.Warm] {
		if s.total == 0 || s.resident < s.total {
			t.Errorf("a warm leaf started with %d of %d bytes of the fixture in the page cache", s.resident, s.total)
		}
	}
	for _, s := range at[core.Cold] {
		if s.total == 0 || s.resident*4 > s.total && !coretest.InMemory(t, dir) {
			t.Errorf("a cold leaf started with %d of %d bytes of the fixture in the page cache", s.resident, s.total)
		}
	}
	if len(at[core.Warm]) == 0 || len(at[core.Cold]) == 0 {
		t.Fatalf("leaves ran %d warm and %d cold times", len(at[core.Warm]), len(at[core.Cold]))
	}

	// A cold leaf: one fixture opened per window, its open reported.
	// Bloom's windows here are 10 ms, and a pause of the machine as long
	// leaves one with a single read per worker (every window runs its
	// first), which these checks allow: they count opens and leaves.
	var opens opensCounter
	failed := false
	r := testing.Benchmark(func(b *testing.B) {
		defer func() { failed = b.Failed() }() // runs after b.Fatal too
		h := e.Open(b, opens.counted(f))
		runBloom(b, e, h, h.DB(b, core.Cold, nil), core.Cold, 0.5, 0)
	})
	if failed || r.N != 2 {
		t.Fatalf("cold Bloom failed (N=%d)", r.N)
	}
	if counts := opens.counts(); len(counts) != 3 || counts[2] == 0 {
		t.Errorf("reads per open %v: want 3 opens (b.N = 1, then 2), each read", counts)
	}
	if r.Extra["open-ms"] <= 0 || r.Extra["achieved-ops/s"] <= 0 {
		t.Errorf("cold Bloom reported %v", r.Extra)
	}

	// The workload runs every leaf in each -cache state (testing.Benchmark
	// names no sub-benchmark: count the calls of the leaves, 2 hit rates
	// by 2 rates, once each at -benchtime 1x).
	coretest.SetBenchtime(t, "1x")
	for _, caches := range []core.WordList{{core.Warm, core.Cold}, {core.Warm}, {core.Cold}} {
		e.Cfg.Caches = caches
		calls := e.Calls("")
		if !runs(e, "Bloom", "pebble") {
			t.Fatalf("-cache %s: Bloom failed", caches.String())
		}
		if n := e.Calls("") - calls; n != uint64(4*len(caches)) {
			t.Errorf("-cache %s: %d leaves ran, want %d", caches.String(), n, 4*len(caches))
		}
	}
}
