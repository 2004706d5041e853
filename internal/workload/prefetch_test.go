package workload

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/core/coretest"
	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
)

// tinyTraceConfig is a configuration with a trace data set of n traces of
// 300-byte values, and small caches.
func tinyTraceConfig(dir string, n int) core.Config {
	c := core.Default()
	c.Dir = dir
	c.Seed = 3
	c.CacheMB, c.MemtableMB = 8, 4
	prefetchTracesFlag.Set(&c, n)
	prefetchValSizeFlag.Set(&c, 300)
	// Badger keeps 300-byte values in its value log, where prefetch reads them.
	if err := c.SetFlag("badger_vthreshold", "64"); err != nil {
		panic(err)
	}
	return c
}

// TestTraceLookupCountsAndVerifies runs the lookup of BenchmarkPrefetch*
// on every engine: a hit reads all 90 spans, a miss none, bounded or not,
// with prefetch on and off; an unbounded miss really lands on the next
// trace; and a wrong value under a prefix fails the lookup.
func TestTraceLookupCountsAndVerifies(t *testing.T) {
	e, err := core.NewEnv(tinyTraceConfig("", 4), io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	tr := traces(e)
	for _, info := range engine.All() {
		t.Run(info.Name, func(t *testing.T) {
			if info.Missing != "" {
				t.Skip(info.Missing)
			}
			src := TraceSource{tr}
			db, err := engine.Open(info.Name, e.Cfg.Options(info, t.TempDir(), src.LogicalBytes()))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if err := e.WriteAll(db, src, 50, 1, "traces"); err != nil {
				t.Fatal(err)
			}
			// Span 7 of trace 2 holds span 8's value.
			var kb [dataset.TraceKeySize]byte
			bad := db.NewBatch()
			bad.Set(tr.Key(kb[:], 2, 7), tr.Gen.Value(nil, tr.Index(2, 8)))
			if err := bad.Commit(); err != nil {
				t.Fatal(err)
			}
			rd, err := db.NewReader()
			if err != nil {
				t.Fatal(err)
			}
			defer rd.Close()

			for _, bound := range []bool{false, true} {
				for _, noPrefetch := range []bool{false, true} {
					for _, hit := range []bool{true, false} {
						l := &traceLookup{t: tr, rd: rd, bound: bound, hit: hit, chk: tr.Gen.NewChecker(true)}
						l.o.NoPrefetch = noPrefetch
						for _, i := range []int{0, 1, 3} {
							if err := l.lookup(i); err != nil {
								t.Fatalf("bound=%v noPrefetch=%v hit=%v trace %d: %v", bound, noPrefetch, hit, i, err)
							}
						}
						if want := map[bool]int64{true: 3 * dataset.SpansPerTrace, false: 0}[hit]; l.values != want {
							t.Fatalf("bound=%v hit=%v: %d values, want %d", bound, hit, l.values, want)
						}
						if hit {
							if err := l.lookup(2); err == nil || !strings.Contains(err.Error(), "does not match") {
								t.Fatalf("bound=%v noPrefetch=%v: a wrong value passed: %v", bound, noPrefetch, err)
							}
						}
					}
				}
			}

			// Every case the benchmark runs on this engine, with the
			// iterator options its dimensions set.
			for _, c := range prefetchCases(info) {
				_, it := c.options(engine.Options{})
				l := &traceLookup{t: tr, rd: rd, o: it, bound: c.bound, hit: c.hit, chk: tr.Gen.NewChecker(false)}
				for _, i := range []int{0, 3} {
					if err := l.lookup(i); err != nil {
						t.Fatalf("%s: trace %d: %v", c.name, i, err)
					}
				}
			}

			var pb [dataset.TracePrefixSize]byte
			it, err := rd.NewIter(engine.IterOptions{Start: tr.Prefix(pb[:], 1, false)})
			if err != nil {
				t.Fatal(err)
			}
			if !it.Valid() || string(it.Key()) != string(tr.Key(kb[:], 2, 0)) {
				t.Fatalf("an unbounded seek to a miss prefix did not land on the next trace")
			}
			it.Close()
		})
	}
}

// TestTraceSource: entries come in key order, trace by trace, and the
// checker accepts exactly the data set's keys and values.
func TestTraceSource(t *testing.T) {
	tr, err := dataset.NewTraces(3, 40, 1, 7)
	if err != nil {
		t.Fatal(err)
	}
	src := TraceSource{tr}
	if src.Len() != 3*dataset.SpansPerTrace || src.LogicalBytes() != tr.LogicalBytes() || src.ValueSize() != 40 {
		t.Fatalf("source of %d keys, %d bytes", src.Len(), src.LogicalBytes())
	}
	chk := src.NewChecker(true)
	kb, vb := make([]byte, dataset.KeySize), make([]byte, src.ValueSize())
	var prev string
	for i := uint64(0); i < src.Len(); i++ {
		k, v := src.Entry(i, kb, vb)
		if want := string(tr.Key(make([]byte, dataset.TraceKeySize), int(i/dataset.SpansPerTrace), int(i%dataset.SpansPerTrace))); string(k) != want {
			t.Fatalf("entry %d: key %q, want %q", i, k, want)
		}
		if string(k) <= prev {
			t.Fatalf("entry %d: %q after %q", i, k, prev)
		}
		prev = string(k)
		if err := chk.CheckKV(k, v); err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
	}
	k, _ := src.Entry(5, kb, vb)
	_, v := src.Entry(6, make([]byte, dataset.KeySize), make([]byte, 40))
	if err := chk.CheckKV(k, v); !errors.Is(err, dataset.ErrWrongValue) {
		t.Fatalf("another key's value passed: %v", err)
	}
	var pb [dataset.TracePrefixSize]byte
	for _, k := range []string{
		string(tr.Prefix(pb[:], 0, true)) + "1000x", // not digits
		"10001:1000",  // a miss trace ID
		"10030:1000",  // past the last trace
		"10000:1050",  // not a span ID
		"10000:9999",  // past the last span
		"10000:+100",  // digits only
		"10000:10000", // too long
	} {
		if err := chk.CheckKey([]byte(k)); err == nil {
			t.Errorf("key %q passed", k)
		}
	}
}

// oldPrefetchNames are the sub-benchmark names BenchmarkPrefetch<Engine>
// has always had (users gate on them), built the way they were first
// built: the per-engine dimensions, in this loop order.
func oldPrefetchNames(engineName string) []string {
	prefetch, bound, readahead := []string{""}, []string{""}, []string{""}
	switch engineName {
	case "badger":
		prefetch, bound = []string{"true", "false"}, []string{"none", "prefix"}
	case "pebble", "goleveldb":
		bound = []string{"none", "prefix"}
	case "rocksdb":
		bound, readahead = []string{"none", "prefix"}, []string{"auto", "256KiB"}
	case "lmdb":
		readahead = []string{"on", "off"}
	}
	var out []string
	for _, p := range prefetch {
		for _, hit := range []bool{true, false} {
			for _, b := range bound {
				for _, r := range readahead {
					for _, cache := range []string{"cold", "warm"} {
						var parts []string
						add := func(k, v string) {
							if v != "" {
								parts = append(parts, k+"="+v)
							}
						}
						add("prefetch", p)
						add("hit", strconv.FormatBool(hit))
						add("bound", b)
						add("readahead", r)
						add("cache", cache)
						out = append(out, strings.Join(parts, "/"))
					}
				}
			}
		}
	}
	return out
}

// TestPrefetchCases: the sub-benchmarks are the ones they always were, in
// the same order, and each sets the options its name says.
func TestPrefetchCases(t *testing.T) {
	e, err := core.NewEnv(tinyTraceConfig("", 2), io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range engine.All() {
		if !core.Stores(info) {
			continue
		}
		cases := prefetchCases(info)
		var got []string
		for _, c := range cases {
			got = append(got, c.name)
		}
		if want := oldPrefetchNames(info.Name); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s:\n got %v\nwant %v", info.Name, got, want)
		}
		ro := traceFixture(e, info).Options
		ro.Dir, ro.ReadOnly = "/fixture", true // as a Handle opens it
		for _, c := range cases {
			o, it := c.options(ro)
			has := func(s string) bool { return strings.Contains(c.name, s) }
			if c.hit != has("hit=true") || c.bound != has("bound=prefix") || c.cold != has("cache=cold") {
				t.Errorf("%s %s: %+v", info.Name, c.name, c)
			}
			if it.NoPrefetch != has("prefetch=false") {
				t.Errorf("%s %s: NoPrefetch %v", info.Name, c.name, it.NoPrefetch)
			}
			if (it.ReadaheadBytes == 256<<10) != has("readahead=256KiB") {
				t.Errorf("%s %s: ReadaheadBytes %d", info.Name, c.name, it.ReadaheadBytes)
			}
			// LMDB's readahead=on|off is Options.Readahead; every other
			// case keeps the run's -readahead.
			want := e.Cfg.Readahead
			if has("readahead=on") {
				want = engine.ReadaheadOS
			} else if has("readahead=off") {
				want = engine.ReadaheadOff
			}
			if o.Readahead != want {
				t.Errorf("%s %s: Readahead %q, want %q", info.Name, c.name, o.Readahead, want)
			}
			if o.Dir != "/fixture" || !o.ReadOnly || o.ExpectedBytes != traces(e).LogicalBytes() {
				t.Errorf("%s %s: options %+v", info.Name, c.name, o)
			}
		}
	}
}

// TestPrefetchConfig: the flags bind, validate and echo as they always did.
func TestPrefetchConfig(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-prefetch_traces", "9001"}, "-prefetch_traces 9001: must be from 1 to 9000 (the seed's full size)"},
		{[]string{"-prefetch_traces", "0"}, "-prefetch_traces 0: must be from 1 to 9000"},
		{[]string{"-prefetch_valsz", "0"}, "-prefetch_valsz 0: must be from 1 to 67108864 bytes"},
	} {
		cfg := core.Default()
		fs := flag.NewFlagSet("kvbench", flag.ContinueOnError)
		cfg.Bind(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
	cfg := core.Default()
	fs := flag.NewFlagSet("kvbench", flag.ContinueOnError)
	cfg.Bind(fs)
	if err := fs.Parse([]string{"-prefetch_traces", "7", "-prefetch_valsz", "100", "-seed", "9"}); err != nil {
		t.Fatal(err)
	}
	e, err := core.NewEnv(cfg, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if tr := traces(e); tr.N != 7 || tr.Gen.ValueSize != 100 || tr.Keys() != 7*dataset.SpansPerTrace {
		t.Fatalf("trace data set %+v", tr)
	}
	out := coretest.ConfigLines(e)
	for _, line := range []string{
		"prefetch-traces: 7\n", "prefetch-keys: 630 (90 spans per trace)\n", "prefetch-valsz: 100\n",
		"prefetch-order: lookups visit trace IDs in ascending order, as the seed did; op i is trace i mod prefetch-traces\n",
		"prefetch-cold: before the timed loop: store closed, its files evicted from the page cache (fadvise DONTNEED), store reopened untimed\n",
		"prefetch-warm: before the timed loop: the same lookups run once, untimed\n",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("config echo lacks %q:\n%s", line, out)
		}
	}
}

// TestTraceFixturePlanned: BenchmarkPrefetchBadger plans Badger's trace
// fixture of the trace data set, counted in the disk estimate with the
// free-space margin of the writes that build it. (Which
// patterns select it is tested in the root package, next to the names.)
func TestTraceFixturePlanned(t *testing.T) {
	e, err := core.NewEnv(core.Default(), io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.NewPlan("BenchmarkPrefetchBadger")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Targets) != 1 || p.Targets[0].Name() != "BenchmarkPrefetchBadger" || len(p.Fixtures) != 1 || !p.TouchesDisk() {
		t.Fatalf("plan for PrefetchBadger: %+v", p)
	}
	f := p.Fixtures[0]
	if f.Params.Engine != "trace-badger" || f.Params.Keys != 600*dataset.SpansPerTrace || f.Params.ValueSize != 2500 ||
		f.Options.ExpectedBytes != f.LogicalBytes() || f.LogicalBytes() != 600*90*(10+2500) {
		t.Fatalf("trace fixture %+v", f.Params)
	}
	if got, want := p.DiskEstimate(t.TempDir()), 3*f.LogicalBytes()+p.Margin; got != want || p.Margin <= 0 {
		t.Fatalf("disk estimate %d, want %d", got, want)
	}
}

// TestPrefetchRuns builds LMDB's trace fixture through Setup and runs
// BenchmarkPrefetchLmdb once: every sub-benchmark reads what it must, and
// the settings line before each is that of its own open options.
func TestPrefetchRuns(t *testing.T) {
	var out bytes.Buffer
	e := setup(t, tinyTraceConfig(t.TempDir(), 2), "BenchmarkPrefetchLmdb", &out)
	coretest.SetBenchtime(t, "1x")
	info, _ := engine.Lookup("lmdb")
	out.Reset()
	if !passes(func(b *testing.B) { runPrefetch(b, e, info) }) {
		t.Fatal("BenchmarkPrefetchLmdb failed")
	}
	// open-only (readahead as -readahead, off), then readahead=on (os),
	// off, on, off... across hit and cache: a line each time it changes.
	var ra, fixture []string
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, "fixture-lmdb: ") {
			fixture = append(fixture, line)
		} else if strings.HasPrefix(line, "settings-lmdb: ") {
			i := strings.Index(line, " readahead=")
			if i < 0 {
				t.Fatalf("settings line without readahead: %s", line)
			}
			ra = append(ra, strings.Fields(line[i+1:])[0])
		} else if line != "" {
			t.Fatalf("unexpected output line %q", line)
		}
	}
	// Every leaf reads the one trace fixture: its line is printed once.
	if v := coretest.Engine(t, "lmdb").Version(); len(fixture) != 1 || !strings.Contains(fixture[0], v) {
		t.Fatalf("fixture lines %q, want one naming %s", fixture, v)
	}
	want := "readahead=off readahead=os readahead=off readahead=os readahead=off"
	if got := strings.Join(ra, " "); got != want {
		t.Fatalf("settings lines: %s, want %s", got, want)
	}
}
