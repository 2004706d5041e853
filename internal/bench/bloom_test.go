package bench

import (
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBloomFixtures: Setup builds one many-table fixture per -bloom_fpr
// value on each selected engine (Badger needs reopening to write each
// table out), each with at least -sst_tables tables and every key, and
// each Bloom leaf is preceded by its own fixture's settings.
func TestBloomFixtures(t *testing.T) {
	setBenchtime(t, "1x")
	cfg := Default()
	cfg.Dir, cfg.KeysMil, cfg.ValSize = t.TempDir(), 0.002, 64
	cfg.Load.SSTTables, cfg.Load.BloomFPR = 4, FPRList{0, 0.03}
	cfg.Load.Rates, cfg.Load.LoadTime = RateList{1000}, 10*time.Millisecond
	pe, err := NewEnv(cfg, io.Discard, io.Discard)
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
	e, err := Setup(cfg, "BenchmarkBloom(Badger|Pebble)", &out, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"badger", "pebble"} {
		info := mustInfo(t, name)
		for _, fpr := range cfg.Load.BloomFPR {
			f := e.tablesFixture(info, fpr)
			dir, err := e.FixtureDir(f)
			if err != nil {
				t.Fatal(err)
			}
			if ssts, _ := filepath.Glob(filepath.Join(dir, "*.sst")); len(ssts) < cfg.Load.SSTTables {
				t.Errorf("%s: %d tables, want %d", dir, len(ssts), cfg.Load.SSTTables)
			}
			h := &Handle{e: e, f: f, dir: dir}
			ok := false
			testing.Benchmark(func(b *testing.B) {
				h.open(b, Warm, h.Options(nil), true) // the warm-up pass counts every key
				h.Close(b)
				ok = !b.Failed()
			})
			if !ok {
				t.Errorf("%s: warm-up pass failed", dir)
			}
		}
	}
	before := strings.Count(out.String(), "settings-pebble: ")
	failed := false
	testing.Benchmark(func(b *testing.B) {
		Run(b, e, "Bloom", "pebble")
		failed = b.Failed()
	})
	if failed {
		t.Fatal("Bloom failed")
	}
	if got := strings.Count(out.String(), "settings-pebble: ") - before; got != len(cfg.Load.BloomFPR) {
		t.Errorf("%d settings lines, want one per filter setting:\n%s", got, out.String())
	}
}
