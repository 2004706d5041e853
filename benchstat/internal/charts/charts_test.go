package charts

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/benchstat/internal/engname"
	"github.com/kvbench/kvbench/benchstat/internal/results"
	"github.com/kvbench/kvbench/internal/engine"
	"gonum.org/v1/plot/plotutil"
)

func TestLabels(t *testing.T) {
	short, common := labels([]string{"valsz=1024/hit=63%/threads=1", "valsz=1024/hit=63%/threads=16"})
	if !reflect.DeepEqual(short, []string{"threads=1", "threads=16"}) || common != "valsz=1024 hit=63%" {
		t.Fatalf("%q %q", short, common)
	}
}

func TestPercentileOrder(t *testing.T) {
	for u, want := range map[string]float64{"p50-ns": 50, "p90-ns": 90, "p99-ns": 99, "p999-ns": 99.9, "p9999-ns": 99.99, "max-ns": 100} {
		if got, ok := percentileOrder(u); !ok || got != want {
			t.Errorf("%s: %v %v, want %v", u, got, ok, want)
		}
	}
	if _, ok := percentileOrder("ops/s"); ok {
		t.Error("ops/s is a percentile")
	}
}

// TestDraw draws a small results file and checks every chart names its
// engines and sub-benchmarks.
func TestDraw(t *testing.T) {
	var b strings.Builder
	b.WriteString("goos: linux\nUnit ops/s better=higher\n")
	for run := range 6 {
		for i, e := range []string{"Badger", "Bolt", "Pebble"} {
			for _, th := range []int{1, 16} {
				ns := float64(1000*(i+1)+10*run) / float64(th)
				fmt.Fprintf(&b, "BenchmarkReadRandom%s/valsz=1024/threads=%d-2 1000 %.0f ns/op %.0f ops/s %.0f p50-ns %.0f p99-ns %.0f p999-ns\n", e, th, ns, 1e9/ns, ns, 3*ns, 9*ns)
			}
		}
		fmt.Fprintf(&b, "BenchmarkPopulateBolt/sync=false-2 1 %d ns/op 1000 keys/s 1.5 write-amp\n", 1e9+run)
		fmt.Fprintf(&b, "BenchmarkLmdbBatch/mode=txn-2 1 %d ns/op\n", 1e9+run) // not per engine: skipped
	}
	r, err := ReadResults(strings.NewReader(b.String()), "test")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files, err := DrawAll(r, dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"readrandom-ops-s.svg", "readrandom-latency-threads1.svg", "readrandom-latency-threads16.svg", "populate-keys-s.svg"}
	if len(files) != len(want) {
		t.Fatalf("wrote %q, want %q", files, want)
	}
	for i, f := range files {
		if filepath.Base(f) != want[i] {
			t.Errorf("file %d: %s, want %s", i, f, want[i])
		}
		svg, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{"<svg", "Bolt"} {
			if !strings.Contains(string(svg), s) {
				t.Errorf("%s lacks %q", f, s)
			}
		}
	}
	svg, _ := os.ReadFile(files[0])
	for _, s := range []string{"Badger", "Pebble", "threads=16", "95% confidence interval"} {
		if !strings.Contains(string(svg), s) {
			t.Errorf("%s lacks %q", files[0], s)
		}
	}
}

// TestEveryRegisteredEngineCharted: results of every registered engine are
// read, listed in the suite's order, and drawn in a colour of their own.
// The charts keep no list of engines: they read engname's, which go
// generate writes from the registry (engname's TestRegisteredEngines holds
// the two equal), so an engine added to the registry is charted here or
// this test fails.
func TestEveryRegisteredEngineCharted(t *testing.T) {
	var b strings.Builder
	b.WriteString("goos: linux\n")
	for _, info := range engine.All() {
		fmt.Fprintf(&b, "BenchmarkReadRandom%s/threads=1-2 100 1000 ns/op\n", info.Title)
	}
	r, err := ReadResults(strings.NewReader(b.String()), "test")
	if err != nil {
		t.Fatal(err)
	}
	got := r.engines("ReadRandom", "ns/op")
	if !reflect.DeepEqual(got, engname.Titles()) || len(got) != len(engine.All()) {
		t.Fatalf("engines = %v, want every registered engine %v", got, engname.Titles())
	}
	seen := map[color.Color]string{}
	for i, e := range got {
		c := engineColor(e)
		if c == (color.Gray{Y: 128}) {
			t.Errorf("%s has the colour of an unknown engine", e)
		}
		if prev, dup := seen[c]; dup && i < len(plotutil.DefaultColors) {
			t.Errorf("%s and %s share a colour", prev, e)
		}
		seen[c] = e
	}
	files, err := DrawAll(r, t.TempDir())
	if err != nil || len(files) != 1 {
		t.Fatalf("drew %v, %v", files, err)
	}
	svg, _ := os.ReadFile(files[0])
	for _, e := range got {
		if !strings.Contains(string(svg), e) {
			t.Errorf("%s lacks %s", files[0], e)
		}
	}
}

// TestBTreesSpanBlockSizes: a B-tree's leaf (no block=) is charted beside
// the LSMs at each of their block sizes, not in a group of its own.
func TestBTreesSpanBlockSizes(t *testing.T) {
	in := `BenchmarkReadRandomBolt/valsz=1024/threads=1-2 1 1000 ns/op 300000 ops/s
BenchmarkReadRandomPebble/valsz=1024/threads=1/block=4KiB-2 1 1000 ns/op 400000 ops/s
BenchmarkReadRandomPebble/valsz=1024/threads=1/block=32KiB-2 1 1000 ns/op 240000 ops/s
`
	r, err := ReadResults(strings.NewReader(in), "x")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"valsz=1024/threads=1/block=4KiB", "valsz=1024/threads=1/block=32KiB"}
	if got := r.Configs["ReadRandom"]; !slices.Equal(got, want) {
		t.Fatalf("configs %q, want %q", got, want)
	}
	for _, c := range want {
		if v := r.Values[results.Key{Op: "ReadRandom", Engine: "Bolt", Config: c, Unit: "ops/s"}]; len(v) != 1 || v[0] != 300000 {
			t.Errorf("Bolt at %s: %v", c, v)
		}
	}
}
