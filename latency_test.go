package kvbench

import (
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
)

// delayDB wraps the reference rail and makes every read take a known time:
// slowEvery-th keys (by index) take slow, every other key fast. The reads
// still go to the rail and are still verified by readRandom.
type delayDB struct {
	engine.DB
	fast, slow time.Duration
	slowEvery  uint64
}

type delayReader struct {
	engine.Reader
	db *delayDB
}

func (d *delayDB) NewReader() (engine.Reader, error) {
	r, err := d.DB.NewReader()
	return delayReader{r, d}, err
}

func (r delayReader) Get(key []byte, fn func([]byte) error) (bool, error) {
	d := r.db.fast
	if i, _ := cfg.gen.Index(key); i%r.db.slowEvery == 0 {
		d = r.db.slow
	}
	// Spin rather than sleep: a sleep's wake-up is late by a scheduler
	// tick on some kernels, and the test is about the harness, not timers.
	for t0 := time.Now(); time.Since(t0) < d; {
	}
	return r.Reader.Get(key, fn)
}

// TestReadRandomPercentilesMatchInjectedDelays runs readRandom, sampling
// included, over reads of known duration and checks the percentiles it
// reports: 98% of reads take 20µs and 2% take 400µs, so p50 is 20µs and
// p99 and p999 are 400µs, each plus the harness's own small cost.
func TestReadRandomPercentilesMatchInjectedDelays(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a benchmark for about a second")
	}
	info, ok := engine.Lookup("memory")
	if !ok {
		t.Fatal("the memory rail is not registered")
	}
	small, err := dataset.New(dataset.Spec{Keys: 5000, ValueSize: 64, ValueRatio: 1, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	saved := cfg.gen
	cfg.gen = small
	defer func() { cfg.gen = saved }()
	mem, err := engine.Open(info.Name, engine.Options{Dir: t.TempDir(), ExpectedBytes: small.LogicalBytes()})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	if err := writeAll(mem, small, 1000, 1, "memory load"); err != nil {
		t.Fatal(err)
	}
	const fast, slow = 20 * time.Microsecond, 400 * time.Microsecond
	db := &delayDB{DB: mem, fast: fast, slow: slow, slowEvery: 50}
	r := testing.Benchmark(func(b *testing.B) { readRandom(b, db, 2, 1) })
	if r.N == 0 {
		t.Fatal("the benchmark failed")
	}
	within := func(metric string, want time.Duration) {
		got := time.Duration(r.Extra[metric])
		// The harness adds a timestamp pair and a map lookup; 10% (at
		// least 5µs) covers that and HDR's rounding, not a wrong rank.
		slack := max(want/10, 5*time.Microsecond)
		if got < want || got > want+slack {
			t.Errorf("%s = %v, want %v to %v (reads %d)", metric, got, want, want+slack, r.N)
		}
	}
	within("p50-ns", fast)
	within("p99-ns", slow)
	within("p999-ns", slow)
	if hit := r.Extra["hit%"]; hit != 100 {
		t.Errorf("hit%% = %v, want 100", hit)
	}
}
