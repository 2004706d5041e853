// Package kvbench compares embedded key-value stores with go test -bench:
// the same seeded data, the same machine and the same settings for every
// engine. See README.md.
//
// The benchmarks themselves are generated one-line wrappers
// (benchmarks_gen_test.go) over the workloads in internal/workload and
// below, run by internal/core; this package parses the flags and hands
// over to core.Main. docs/architecture.md has the layout.
package kvbench

//go:generate go run ./internal/cmd/genwrappers -o benchmarks_gen_test.go -engname benchstat/internal/engname/engines_gen.go

import (
	"bytes"
	"flag"
	"maps"
	"os"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/families"
	"github.com/kvbench/kvbench/internal/workload/embedded"
	"golang.org/x/perf/benchfmt"
)

// TestMain validates every flag, prints the run's configuration, and
// builds (or reuses) the fixtures the selected benchmarks declare, before
// any benchmark runs. Each family's results carry the units the gate
// judges it on (internal/families) as their "gate" line.
func TestMain(m *testing.M) {
	if embedded.IsColdChild() { // a cold-start child: one read, nothing else
		os.Exit(m.Run())
	}
	flag.Parse()
	core.Main(m.Run, cfg, benchPattern(), families.Gate)
}

func benchPattern() string {
	if f := flag.Lookup("test.bench"); f != nil {
		return f.Value.String()
	}
	return ""
}

// TestGeneratedWrappersAreCurrent fails when an engine or workload was
// added without `go generate`.
func TestGeneratedWrappersAreCurrent(t *testing.T) {
	have, err := os.ReadFile("benchmarks_gen_test.go")
	if err != nil {
		t.Fatal(err)
	}
	if want := core.Wrappers(); !bytes.Equal(have, want) {
		t.Fatal("benchmarks_gen_test.go is stale: run go generate")
	}
}

// TestEveryResultCarriesItsOwnSettings runs two engines with two option
// sets each in one process and reads the output as benchstat does: every
// result must carry exactly its own engine's settings, for the options
// that result was measured with.
func TestEveryResultCarriesItsOwnSettings(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary")
	}
	out, code := runSelf(t, "-test.bench=^Benchmark(Populate(Bolt|Lmdb)|IterateLmdb)$", "-test.benchtime=1x",
		"-keys_mil", "0.002", "-valsz", "256", "-cache", "warm", "-dir", t.TempDir())
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	r := benchfmt.NewReader(strings.NewReader(out), "run")
	n := 0
	for r.Scan() {
		res, ok := r.Result().(*benchfmt.Result)
		if !ok {
			continue
		}
		n++
		name := string(res.Name.Full())
		var own string
		for _, c := range res.Config {
			k := c.Key
			if !strings.HasPrefix(k, "settings-") {
				continue
			}
			if own != "" {
				t.Errorf("%s carries two settings lines: %s and %s", name, own, k)
			}
			own = k
			eng := strings.TrimPrefix(k, "settings-")
			if !strings.Contains(strings.ToLower(name), eng) {
				t.Errorf("%s carries %s", name, k)
			}
			// A sub-benchmark's dimension and the setting it must show.
			for dim, want := range map[string]string{"sync=true": "sync=true", "sync=false": "sync=false",
				"readahead=on": "readahead=os", "readahead=off": "readahead=off"} {
				if strings.Contains(name, "/"+dim) && !strings.Contains(" "+string(c.Value)+" ", " "+want+" ") {
					t.Errorf("%s: settings say %q", name, c.Value)
				}
			}
		}
		if own == "" {
			t.Errorf("%s has no settings line", name)
		}
		// The gate judges each family on its own units.
		want := map[bool]string{true: "keys/s write-amp space-amp", false: "ns/op read-B/op allocs/op"}[strings.HasPrefix(name, "Populate")]
		if g := res.GetConfig("gate"); g != want {
			t.Errorf("%s: gate line %q, want %q", name, g, want)
		}
	}
	if n < 8 {
		t.Fatalf("%d results:\n%s", n, out)
	}
}

// TestAlternativesPlanEveryFixture: a pattern with a sub-benchmark part and
// an alternative builds every fixture either side needs before the first
// result line, as go test runs both sides.
func TestAlternativesPlanEveryFixture(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary")
	}
	out, code := runSelf(t, "-test.bench=ReadRandomBolt/valsz=256|PrefetchBolt", "-test.benchtime=1x", "-keys_mil", "0.002", "-valsz", "256",
		"-prefetch_traces", "2", "-cache", "warm", "-dir", t.TempDir())
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	first := strings.Index(out, "\nBenchmark")
	for _, f := range []string{"fixture bolt-", "fixture trace-bolt-"} {
		i := strings.Index(out, "building "+f)
		if i < 0 || first < 0 || i > first {
			t.Errorf("%q built at %d, first result at %d:\n%s", f, i, first, out)
		}
	}
	for _, want := range []string{"BenchmarkReadRandomBolt/", "BenchmarkPrefetchBolt/"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %s results:\n%s", want, out)
		}
	}
	if strings.Contains(out, "fixture") && strings.Contains(out[first:], "building fixture") {
		t.Errorf("a fixture was built after the first result:\n%s", out)
	}
}

// TestBlockSizeIsADimension: -block_size with two sizes runs each LSM leaf
// once per size, its name ending in the size it read and its settings line
// saying the same; a B-tree, which has pages, runs once and its names say
// no block size.
func TestBlockSizeIsADimension(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary")
	}
	out, code := runSelf(t, "-test.bench=^BenchmarkReadRandom(Pebble|Bolt)$", "-test.benchtime=1x", "-keys_mil", "0.002",
		"-valsz", "256", "-cache", "warm", "-threads", "1", "-hit_rate", "1", "-block_size", "4KiB,8KiB", "-dir", t.TempDir())
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	r := benchfmt.NewReader(strings.NewReader(out), "run")
	got := map[string]int{}
	for r.Scan() {
		res, ok := r.Result().(*benchfmt.Result)
		if !ok {
			continue
		}
		base, parts := res.Name.Parts()
		name := string(base)
		for _, p := range parts {
			if p[0] != '-' { // not the GOMAXPROCS suffix
				name += string(p)
			}
		}
		_, block, lsm := strings.Cut(name, "/block=")
		if lsm != strings.HasPrefix(name, "ReadRandomPebble/") {
			t.Errorf("%s: block in the name %v", name, lsm)
		}
		if lsm && !strings.Contains(res.GetConfig("settings-pebble"), "block_size="+block+",") {
			t.Errorf("%s: settings %q", name, res.GetConfig("settings-pebble"))
		}
		got[strings.SplitN(name, "/", 2)[0]+" "+block]++
	}
	want := map[string]int{"ReadRandomPebble 4KiB": 1, "ReadRandomPebble 8KiB": 1, "ReadRandomBolt ": 1}
	if !maps.Equal(got, want) {
		t.Fatalf("results %v, want %v:\n%s", got, want, out)
	}
}
