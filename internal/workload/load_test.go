package workload

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/core/coretest"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/load"
	"github.com/kvbench/kvbench/internal/measure"
)

// TestLatencySpectrumFile: -latency_dir gets one HdrHistogram spectrum per
// fixed-rate sub-benchmark, named after it, with every operation in it.
func TestLatencySpectrumFile(t *testing.T) {
	coretest.SetBenchtime(t, "1x")
	dir := t.TempDir()
	cfg := core.Default()
	cfg.KeysMil, cfg.ValSize = 0.001, 100
	withLoad(&cfg, func(l *loadSettings) { l.Rates, l.LoadTime, l.LatencyDir = RateList{2000}, 100*time.Millisecond, dir })
	e := setup(t, cfg, "BenchmarkLoadMemory", io.Discard)
	db := loadedRail(t, e)
	r := testing.Benchmark(func(b *testing.B) { runLoad(b, e, db, "get-hit", 2000, nil, &upserts{}) })
	// How many operations ran in the window is the machine's (a pause
	// leaves them unrun); that the window was measured is not.
	if r.N != 1 || r.Extra["achieved-ops/s"] <= 0 || r.Extra["p9999-ns"] <= 0 {
		t.Fatalf("N=%d, metrics %v", r.N, r.Extra)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.hgrm"))
	if len(files) != 1 {
		t.Fatalf("spectrum files %v, want one", files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if !strings.Contains(s, "Percentile") || !strings.Contains(s, "1/(1-Percentile)") {
		t.Fatalf("not a percentile spectrum:\n%s", s)
	}
	// 100ms at 2000/s is 200 operations, every one due in the window (run,
	// or unrun if the machine paused past the hard stop); the footer counts
	// them.
	_, tail, _ := strings.Cut(s, "Total count")
	var n int
	if _, err := fmt.Sscanf(strings.TrimLeft(tail, " ="), "%d", &n); err != nil || n != 200 {
		t.Errorf("spectrum holds %d operations (%v), want 200:\n%s", n, err, s[max(0, len(s)-300):])
	}
	if _, ok := r.Extra["unrun-%"]; !ok {
		t.Errorf("no unrun-%% in %v", r.Extra)
	}

	// Named after the sub-benchmark, slashes made file-name safe.
	if err := writeSpectrum(e, "BenchmarkLoadMemory/op=get-hit/rate=2000", measure.NewRecorder()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "BenchmarkLoadMemory_op=get-hit_rate=2000.hgrm")); err != nil {
		t.Error(err)
	}
}

// TestLoadKneeHTTPOnCopies runs Load, Knee and HTTP on bbolt at tiny rates:
// every leaf is preceded by the engine's settings, the writing leaves
// write to copies in scratch that are gone afterwards (upserts verified
// on them), and the shared fixture still holds exactly the data set.
func TestLoadKneeHTTPOnCopies(t *testing.T) {
	coretest.SetBenchtime(t, "1x")
	cfg := core.Default()
	cfg.Dir, cfg.KeysMil, cfg.ValSize = t.TempDir(), 0.002, 64
	withLoad(&cfg, func(l *loadSettings) { l.Rates, l.LoadTime, l.WriteRate = RateList{1000}, 20*time.Millisecond, 200 })
	withLoad(&cfg, func(l *loadSettings) { l.KneeTime, l.KneeStart, l.KneeSteps = 10*time.Millisecond, 4000, 0 })
	var out strings.Builder
	e := setup(t, cfg, "BenchmarkLoadBolt|BenchmarkKneeBolt|BenchmarkHTTPBolt", &out)
	for _, w := range []string{"Load", "Knee", "HTTP"} {
		if !runs(e, w, "bolt") {
			t.Fatalf("%s failed", w)
		}
	}
	if !strings.Contains(out.String(), "settings-bolt: ") {
		t.Errorf("no settings line:\n%s", out.String())
	}
	if ents, _ := os.ReadDir(e.Root.Sub("scratch")); len(ents) > 0 {
		t.Errorf("scratch left behind: %v", ents)
	}
	dir, err := e.FixtureDir(e.KVFor(coretest.Engine(t, "bolt")))
	if err != nil {
		t.Fatal(err)
	}
	o := e.KVFor(coretest.Engine(t, "bolt")).Options
	o.Dir, o.ReadOnly = dir, true
	db, err := engine.Open("bolt", o)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if n, _, err := core.ScanAll(db, true, core.GenSource{G: e.Gen}.NewChecker(true)); err != nil || n != e.Keys {
		t.Errorf("fixture holds %d keys (%v), want %d", n, err, e.Keys)
	}
}

// TestMergeAccountsForEveryOperation: windows merged for b.N keep
// scheduled = done + unrun and one latency per scheduled operation, so
// reportLoad's unrun-% and percentiles cover all of them.
func TestMergeAccountsForEveryOperation(t *testing.T) {
	window := func(done, unrun int64) *load.Result {
		lat := measure.NewRecorder()
		for i := int64(0); i < done+unrun; i++ {
			lat.Record(time.Millisecond)
		}
		return &load.Result{Target: 100, Scheduled: done + unrun, Done: done, Unrun: unrun, Elapsed: time.Second,
			Latency: lat, Service: measure.NewRecorder(), Lag: measure.NewRecorder()}
	}
	m := merge(merge(nil, window(100, 0)), window(60, 40))
	if m.Scheduled != 200 || m.Done != 160 || m.Unrun != 40 || m.Latency.Count() != 200 || m.Complete() {
		t.Errorf("merged: scheduled %d, done %d, unrun %d, latencies %d", m.Scheduled, m.Done, m.Unrun, m.Latency.Count())
	}
}

// loadedRail is the calibration rail holding the run's data set, closed
// when the test ends.
func loadedRail(t *testing.T, e *core.Env) engine.DB {
	t.Helper()
	db, err := engine.Open("memory", engine.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := e.WriteAll(db, core.GenSource{G: e.Gen}, 100, 1, "memory"); err != nil {
		t.Fatal(err)
	}
	return db
}
