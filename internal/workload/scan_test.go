package workload

import (
	"bytes"
	"io"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/core/coretest"
	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
)

// scanEnv builds a tiny bbolt fixture for Iterate and Scan in a temporary
// directory; out receives the configuration and settings lines.
func scanEnv(t *testing.T, out io.Writer) *core.Env {
	t.Helper()
	c := core.Default()
	c.KeysMil, c.ValSize, c.Dir = 0.002, 64, t.TempDir()
	scanLenFlag.Set(&c, 50)
	c.Threads = core.IntList{1, 2}
	return setup(t, c, "BenchmarkIterate(Bolt|Memory)|BenchmarkScan(Bolt|Memory)", out)
}

// TestIterateAndScanRun runs both workloads whole, every sub-benchmark, on
// the fixture and on the rail, and checks each result had its engine's
// settings line before it.
func TestIterateAndScanRun(t *testing.T) {
	var out bytes.Buffer
	e := scanEnv(t, &out)
	coretest.SetBenchtime(t, "2x")
	for _, w := range []string{"Iterate", "Scan"} {
		for _, eng := range []string{"bolt", "memory"} {
			out.Reset()
			if !runs(e, w, eng) {
				t.Errorf("%s on %s failed", w, eng)
			}
			if !strings.Contains(out.String(), "settings-"+eng+": ") {
				t.Errorf("%s on %s printed no settings line; output:\n%s", w, eng, out.String())
			}
		}
	}
}

// TestIterateReadsEveryKey times full scans on the fixture, warm and cold
// (every scan after the first reopened), with and without values, and
// checks each scan read every key and the bytes it declares.
func TestIterateReadsEveryKey(t *testing.T) {
	e := scanEnv(t, io.Discard)
	coretest.SetBenchtime(t, "3x")
	info := coretest.Engine(t, "bolt")
	f := e.KVFor(info)
	keys := e.Gen.Keys
	for _, cache := range []string{core.Warm, core.Cold} {
		for _, values := range []bool{true, false} {
			r := testing.Benchmark(func(b *testing.B) {
				h := e.Open(b, f)
				db := h.DB(b, cache, nil)
				iterate(b, e, h, db, cache, nil, values)
			})
			if r.N != 3 {
				t.Fatalf("cache=%s values=%v: the benchmark failed (N=%d)", cache, values, r.N)
			}
			per := int64(keys) * dataset.KeySize
			if values {
				per += int64(keys) * int64(e.Cfg.ValSize)
			}
			if r.Bytes != per {
				t.Errorf("cache=%s values=%v: %d bytes per scan, want %d", cache, values, r.Bytes, per)
			}
			// keys/s is keys per scan over the timed part of the scans.
			got := r.Extra["keys/s"] * r.T.Seconds() / float64(r.N)
			if math.Abs(got-float64(keys)) > 1e-6*float64(keys) {
				t.Errorf("cache=%s values=%v: keys/s says %.3f keys per scan, want %d", cache, values, got, keys)
			}
			if _, ok := r.Extra["read-B/op"]; !ok {
				t.Errorf("cache=%s values=%v: no read-B/op", cache, values)
			}
		}
	}
}

// TestScanReadsScanLenEntries runs range scans on the fixture and checks
// keys/op against the data set: each seek reads -scan_len entries, or
// fewer when the seek key is that close to the last key.
func TestScanReadsScanLenEntries(t *testing.T) {
	e := scanEnv(t, io.Discard)
	// 200 seeks: with 2,000 keys and -scan_len 50 some land within 50 of
	// the end almost surely, so the short scans are checked too.
	coretest.SetBenchtime(t, "200x")
	info := coretest.Engine(t, "bolt")
	f := e.KVFor(info)
	g := e.Gen
	// rank[i] is key i's position in key order.
	order := make([]uint64, g.Keys)
	for i := range order {
		order[i] = uint64(i)
	}
	kb := func(i uint64) string { return string(g.Key(make([]byte, dataset.KeySize), i)) }
	sort.Slice(order, func(a, b int) bool { return kb(order[a]) < kb(order[b]) })
	rank := make([]uint64, g.Keys)
	for pos, i := range order {
		rank[i] = uint64(pos)
	}
	for _, threads := range []int{1, 2} {
		r := testing.Benchmark(func(b *testing.B) {
			h := e.Open(b, f)
			h.DB(b, core.Warm, nil)
			scanLeaf(b, e, h, core.Warm, threads)
		})
		if r.N != 200 {
			t.Fatalf("threads=%d: the benchmark failed (N=%d)", threads, r.N)
		}
		var want, short int64
		for th := 0; th < threads; th++ {
			rng := e.StreamsOfCall(e.Calls("")).Rand(uint64(th) + 2000) // the last round's
			ops := r.N / threads
			if th < r.N%threads {
				ops++
			}
			for op := 0; op < ops; op++ {
				n := min(int64(scanLenFlag.Get(&e.Cfg)), int64(g.Keys-rank[rng.Below(g.Keys)]))
				want += n
				if n < int64(scanLenFlag.Get(&e.Cfg)) {
					short++
				}
			}
		}
		if got := r.Extra["keys/op"]; got != float64(want)/float64(r.N) {
			t.Errorf("threads=%d: keys/op = %v, want %v (%d of %d scans short)", threads, got, float64(want)/float64(r.N), short, r.N)
		}
		for _, m := range []string{"keys/s", "MB/s", "p50-ns", "p99-ns"} {
			if r.Extra[m] <= 0 {
				t.Errorf("threads=%d: %s = %v", threads, m, r.Extra[m])
			}
		}
		if _, ok := r.Extra["read-B/op"]; !ok {
			t.Errorf("threads=%d: no read-B/op", threads)
		}
	}
}

// TestIterateVariants checks the sub-benchmark levels Iterate adds for an
// engine's dimensions: LMDB's readahead on and off, nothing for bbolt.
func TestIterateVariants(t *testing.T) {
	if v := core.Variants(coretest.Engine(t, "bolt"), iterateCaps...); len(v) != 1 || v[0].Name != "" || v[0].Tweak != nil {
		t.Errorf("bolt: %d variants, first %q; want one, unnamed and untweaked", len(v), v[0].Name)
	}
	v := core.Variants(coretest.Engine(t, "lmdb"), iterateCaps...)
	var names, params []string
	for _, x := range v {
		names = append(names, "/"+x.Name)
		o := engine.Options{Readahead: "unset"}
		x.Tweak(&o)
		params = append(params, o.Readahead)
	}
	if got, want := strings.Join(names, " "), "/readahead=on /readahead=off"; got != want {
		t.Errorf("lmdb: variants %q, want %q", got, want)
	}
	if got, want := strings.Join(params, " "), "os off"; got != want {
		t.Errorf("lmdb: Options.Readahead %q, want %q", got, want)
	}
}
