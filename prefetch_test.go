package kvbench

import (
	"io"
	"sort"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/core"
)

// prefetchBenchmarks are seed 000's prefix-lookup benchmarks by the names
// users type and gate on; the generated wrappers must keep every one.
var prefetchBenchmarks = map[string]func(*testing.B){
	"BenchmarkPrefetchBadger":    BenchmarkPrefetchBadger,
	"BenchmarkPrefetchBolt":      BenchmarkPrefetchBolt,
	"BenchmarkPrefetchGoleveldb": BenchmarkPrefetchGoleveldb,
	"BenchmarkPrefetchLmdb":      BenchmarkPrefetchLmdb,
	"BenchmarkPrefetchPebble":    BenchmarkPrefetchPebble,
	"BenchmarkPrefetchRocksDB":   BenchmarkPrefetchRocksDB,
}

// TestPrefetchPlan: -bench patterns over this package's benchmarks plan
// the trace fixture of exactly the engines they select, next to the other
// workloads' fixtures, so TestMain builds them before any result.
func TestPrefetchPlan(t *testing.T) {
	var targets []string
	for _, tg := range core.Targets() {
		if tg.W.Name == "Prefetch" {
			targets = append(targets, tg.Name())
		}
	}
	var want []string
	for n := range prefetchBenchmarks {
		want = append(want, n)
	}
	sort.Strings(want)
	if strings.Join(targets, " ") != strings.Join(want, " ") {
		t.Fatalf("prefetch benchmarks %v, want %v (every store, not the rail)", targets, want)
	}

	e, err := core.NewEnv(core.Default(), io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	fixtures := func(pattern string) string {
		p, err := e.NewPlan(pattern)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, f := range p.Fixtures {
			names = append(names, f.Params.Engine)
		}
		return " " + strings.Join(names, " ") + " "
	}
	if got := fixtures("BenchmarkPrefetchBadger"); got != " trace-badger " {
		t.Fatalf("plan for PrefetchBadger: fixtures%s", got)
	}
	if got := fixtures("ReadRandom/threads=1|PrefetchBadger"); !strings.Contains(got, " badger ") || !strings.Contains(got, " trace-badger ") || strings.Count(got, "trace-") != 1 {
		t.Fatalf("plan for ReadRandom and PrefetchBadger: fixtures%s", got)
	}
	if got := fixtures("BenchmarkPrefetch/hit=false"); strings.Count(got, " trace-") < 4 || strings.Contains(got, "memory") {
		t.Fatalf("plan for every engine's prefetch: fixtures%s", got)
	}
	if got := fixtures("BenchmarkReadRandomBadger"); strings.Contains(got, "trace-") {
		t.Fatalf("random reads plan a trace fixture:%s", got)
	}
}
