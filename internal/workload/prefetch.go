package workload

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/measure"
)

// Prefetch is seed 000: a prefix lookup per trace ID, reading every span
// under it, on a data set of trace:span keys. With Badger's iterator
// prefetch on and no prefix bound, a lookup that misses seeks onto the
// next trace's keys and reads their values ahead for nothing.
// BenchmarkPrefetch<Engine> measures that in disk bytes, memory and time,
// for every engine's prefix scan; its dimensions besides hit and cache are
// the engine's own (core.Variants; docs/engines.md, the fairness table).
func init() {
	core.Register(&core.Workload{
		Name:    "Prefetch",
		Engines: core.Stores,
		Fixtures: func(e *core.Env, info engine.Info) []*core.Fixture {
			return []*core.Fixture{traceFixture(e, info)}
		},
		Units: []core.Unit{core.Lower("read-B/op"), core.Lower("read-MB"), core.Info("values/op"), core.Lower("majflt/op"),
			core.Lower("rss-grow-MB"), core.Lower("peak-rss-MB"), core.Info("cold-resident-MB")},
		Options: []core.Option{prefetchTracesFlag, prefetchValSizeFlag},
		Run:     runPrefetch,
	})
}

// traceFixture is the engine's fixture of the trace data set.
func traceFixture(e *core.Env, info engine.Info) *core.Fixture {
	return e.NewFixture(info, "trace", TraceSource{traces(e)}, nil)
}

// prefetchCase is one lookup sub-benchmark.
type prefetchCase struct {
	name      string
	hit       bool // the prefix is an existing trace ID
	bound     bool // bound=prefix: the iterator is bounded to the prefix
	cold      bool // page cache emptied of the store's files before the loop
	pre, post core.Variant
}

// prefetchCases is every lookup sub-benchmark of info, its name's
// dimensions in the order prefetch, hit, bound, readahead, cache.
func prefetchCases(info engine.Info) []prefetchCase {
	var out []prefetchCase
	for _, pre := range core.Variants(info, engine.ValuePrefetch) {
		for _, hit := range []bool{true, false} {
			for _, post := range core.Variants(info, engine.IteratorBound, engine.MapReadahead, engine.IteratorReadahead) {
				for _, cache := range []string{core.Cold, core.Warm} { // cold first, as the seed ran it
					parts := []string{pre.Name, core.SubName("hit", hit), post.Name, core.SubName("cache", cache)}
					out = append(out, prefetchCase{name: strings.Join(slices.DeleteFunc(parts, func(p string) bool { return p == "" }), "/"), hit: hit,
						bound: strings.Contains(post.Name, "bound=prefix"), cold: cache == core.Cold, pre: pre, post: post})
				}
			}
		}
	}
	return out
}

// options are the case's open and iterator options over o.
func (c prefetchCase) options(o engine.Options) (engine.Options, engine.IterOptions) {
	var it engine.IterOptions
	for _, v := range []core.Variant{c.pre, c.post} {
		if v.Tweak != nil {
			v.Tweak(&o)
		}
		if v.Iter != nil {
			v.Iter(&it)
		}
	}
	return o, it
}

func runPrefetch(b *testing.B, e *core.Env, info engine.Info) {
	h := e.Open(b, traceFixture(e, info))
	// Every leaf opens the fixture itself; the parent prints each leaf's
	// settings, from an open made here once per set of options.
	settings := map[string][]engine.Setting{}
	show := func(o engine.Options) {
		key := fmt.Sprintf("%+v", o)
		s, ok := settings[key]
		if !ok {
			var err error
			s, err = h.Settings(o)
			fatalIf(b, err)
			settings[key] = s
		}
		e.ShowFixtureSettings(info, s, h.Fixture())
	}
	o := h.Options(nil)
	show(o)
	b.Run(core.BlockLeaf("open-only/cache=cold", info, o), func(b *testing.B) { prefetchOpenOnly(b, e, info, o) })
	for _, c := range prefetchCases(info) {
		o, it := c.options(h.Options(nil))
		show(o)
		b.Run(core.BlockLeaf(c.name, info, o), func(b *testing.B) { prefetchLookups(b, e, info, o, it, c) })
	}
}

// prefetchOpen opens the trace fixture with o (read-only).
func prefetchOpen(b *testing.B, info engine.Info, o engine.Options) engine.DB {
	db, err := engine.Open(info.Name, o)
	if err != nil {
		b.Fatalf("open trace fixture %s: %v", o.Dir, err)
	}
	return db
}

// prefetchOpenOnly is the seed's baseline: an op opens the store cold and reads nothing.
func prefetchOpenOnly(b *testing.B, e *core.Env, info engine.Info, o engine.Options) {
	var sum procUse
	var resident int64
	b.StopTimer()
	for i := 0; i < b.N; i++ {
		r, err := e.Evict(o.Dir)
		fatalIf(b, err)
		resident += r
		var db engine.DB
		u := measureProc(b, func() {
			b.StartTimer()
			db = prefetchOpen(b, info, o)
			b.StopTimer()
		})
		fatalIf(b, db.Close())
		sum = procUse{sum.read + u.read, sum.major + u.major, sum.grow + u.grow, max(sum.peak, u.peak)}
	}
	n := float64(b.N)
	sum.report(b, 0, n, float64(resident)/n, true)
}

// prefetchLookups is every lookup sub-benchmark's body: op i looks up
// trace start+i mod -prefetch_traces, start drawn per call.
func prefetchLookups(b *testing.B, e *core.Env, info engine.Info, o engine.Options, it engine.IterOptions, c prefetchCase) {
	t := traces(e)
	rng := e.CallStreams(b).Rand(7000)
	start := int(rng.Below(uint64(t.N)))
	var resident int64
	if c.cold {
		var err error
		resident, err = e.Evict(o.Dir) // no handle is open on the fixture here
		fatalIf(b, err)
	}
	db := prefetchOpen(b, info, o)
	defer db.Close()
	rd, err := db.NewReader()
	fatalIf(b, err)
	defer rd.Close()
	l := &traceLookup{t: t, rd: rd, o: it, bound: c.bound, hit: c.hit, chk: t.Gen.NewChecker(e.FullCheck)}
	if !c.cold {
		for i := 0; i < min(b.N, t.N); i++ {
			fatalIf(b, l.lookup((start+i)%t.N))
		}
	}
	l.values = 0
	if c.hit {
		b.SetBytes(int64(dataset.SpansPerTrace * t.Gen.ValueSize))
	}
	u := measureProc(b, func() {
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if err := l.lookup((start + i) % t.N); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
	})
	want := int64(0)
	if c.hit {
		want = int64(b.N) * dataset.SpansPerTrace
	}
	if l.values != want {
		b.Fatalf("%d values read, want %d", l.values, want)
	}
	u.report(b, l.values, 1, float64(resident), c.cold)
}

// procUse is a stretch's disk reads, major faults and RSS growth, and the peak RSS at its end.
type procUse struct{ read, major, grow, peak int64 }

// report reports u over b.N ops that read values values, its growth a
// mean over stretches; cold, resident is the fixture's bytes the page
// cache held after eviction.
func (u procUse) report(b *testing.B, values int64, stretches, resident float64, cold bool) {
	n := float64(b.N)
	if core.ReadsCounted() {
		b.ReportMetric(float64(u.read)/n, "read-B/op")
		b.ReportMetric(float64(u.read)/1e6, "read-MB")
	}
	b.ReportMetric(float64(values)/n, "values/op")
	b.ReportMetric(float64(u.major)/n, "majflt/op")
	b.ReportMetric(float64(u.grow)/stretches/(1<<20), "rss-grow-MB")
	b.ReportMetric(float64(u.peak)/(1<<20), "peak-rss-MB")
	if cold {
		b.ReportMetric(resident/(1<<20), "cold-resident-MB")
	}
}

// measureProc returns what the process used while fn ran, memory released
// first (so RSS does not fall as the heap is scavenged) and peak reset.
func measureProc(b *testing.B, fn func()) procUse {
	engine.ReleaseMemory()
	fatalIf(b, measure.ResetPeakRSS())
	m0, _ := measure.ReadRSS()
	f0 := measure.ReadFaults()
	io0, _ := measure.ReadIO()
	fn()
	io1, _ := measure.ReadIO()
	f1 := measure.ReadFaults()
	m1, _ := measure.ReadRSS()
	return procUse{io1.Sub(io0).ReadBytes, f1.Major - f0.Major, m1.Total() - m0.Total(), m1.Peak}
}

// traceLookup looks trace prefixes up through one reader, reusing its buffers.
type traceLookup struct {
	t      *dataset.Traces
	rd     engine.Reader
	o      engine.IterOptions // prefetch and readahead; bounds are set per lookup
	bound  bool               // the iterator is bounded to the prefix
	hit    bool
	chk    *dataset.Checker
	values int64

	prefix [dataset.TracePrefixSize]byte
	want   [dataset.TraceKeySize]byte
}

// lookup reads and verifies every span under trace tr's hit or miss prefix, in order.
func (l *traceLookup) lookup(tr int) (err error) {
	p := l.t.Prefix(l.prefix[:], tr, l.hit)
	o := l.o
	if l.bound {
		o.Prefix = p
	} else {
		o.Start = p
	}
	it, err := l.rd.NewIter(o)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := it.Close(); err == nil {
			err = cerr
		}
	}()
	s := 0
	for ; it.Valid(); it.Next() {
		k := it.Key()
		if !bytes.HasPrefix(k, p) {
			if l.bound {
				return fmt.Errorf("iterator bounded to %q returned %q", p, k)
			}
			break // the next trace: an unbounded lookup ends here
		}
		if s >= dataset.SpansPerTrace || !bytes.Equal(k, l.t.Key(l.want[:], tr, s)) {
			return fmt.Errorf("prefix %q: key %q at position %d", p, k, s)
		}
		v, err := it.Value()
		if err == nil {
			err = l.chk.Check(l.t.Index(tr, s), v)
		}
		if err != nil {
			return err
		}
		s++
	}
	if err := it.Err(); err != nil {
		return err
	}
	want := 0
	if l.hit {
		want = dataset.SpansPerTrace
	}
	if s != want {
		return fmt.Errorf("prefix %q: %d values, want %d", p, s, want)
	}
	l.values += int64(s)
	return nil
}

// TraceSource is the trace data set as a Source: entry i is span
// i mod SpansPerTrace of trace i / SpansPerTrace, so entries are in key
// order and a fixture is written trace by trace, as the seed did.
type TraceSource struct{ T *dataset.Traces }

func (s TraceSource) Len() uint64         { return s.T.Keys() }
func (s TraceSource) ValueSize() int      { return s.T.Gen.ValueSize }
func (s TraceSource) LogicalBytes() int64 { return s.T.LogicalBytes() }
func (s TraceSource) Entry(i uint64, kb, vb []byte) ([]byte, []byte) {
	return s.T.Key(kb, int(i/dataset.SpansPerTrace), int(i%dataset.SpansPerTrace)), s.T.Gen.Value(vb, i)
}
func (s TraceSource) NewChecker(full bool) core.Checker {
	return traceChecker{t: s.T, c: s.T.Gen.NewChecker(full)}
}

// traceChecker maps a trace key back to its entry to verify it.
type traceChecker struct {
	t *dataset.Traces
	c *dataset.Checker
}

func (c traceChecker) CheckKey(k []byte) error {
	_, err := traceIndex(c.t, k)
	return err
}

func (c traceChecker) CheckKV(k, v []byte) error {
	i, err := traceIndex(c.t, k)
	if err != nil {
		return err
	}
	return c.c.Check(i, v)
}

// traceIndex is the entry of trace key k: the inverse of Traces.Key.
func traceIndex(t *dataset.Traces, k []byte) (uint64, error) {
	if len(k) == dataset.TraceKeySize && k[dataset.TracePrefixSize-1] == ':' {
		id, err1 := strconv.Atoi(string(k[:dataset.TracePrefixSize-1]))
		span, err2 := strconv.Atoi(string(k[dataset.TracePrefixSize:]))
		tr, s := (id-dataset.TraceFirst)/dataset.TraceStep, (span-dataset.SpanFirst)/dataset.SpanStep
		var kb [dataset.TraceKeySize]byte
		if err1 == nil && err2 == nil && tr >= 0 && tr < t.N && s >= 0 && s < dataset.SpansPerTrace &&
			bytes.Equal(t.Key(kb[:], tr, s), k) {
			return t.Index(tr, s), nil
		}
	}
	return 0, fmt.Errorf("key %q is not in the trace data set", k)
}

// Seed 000's trace data set's size and value size (in its fixtures' names).
var (
	prefetchTracesFlag = &core.Flag[int]{Name: "prefetch_traces", Default: 600, Shapes: true,
		Usage: "trace IDs in the prefix-lookup data set, 90 keys each; 9000 is the seed's full size (810,000 keys)",
		Check: core.Within(1, dataset.MaxTraces, fmt.Sprintf("must be from 1 to %d (the seed's full size)", dataset.MaxTraces)),
		Echo: func(n int, _ *core.Config, line func(string, any)) {
			line("prefetch-traces", n)
			line("prefetch-keys", fmt.Sprintf("%d (%d spans per trace)", n*dataset.SpansPerTrace, dataset.SpansPerTrace))
		}}
	prefetchValSizeFlag = &core.Flag[int]{Name: "prefetch_valsz", Default: 2500, Shapes: true,
		Usage: "value size in bytes of the prefix-lookup data set",
		Check: core.Within(1, 64<<20, "must be from 1 to 67108864 bytes"),
		Echo: func(v int, _ *core.Config, line func(string, any)) {
			line("prefetch-valsz", v)
			line("prefetch-order", "lookups visit trace IDs in ascending order, as the seed did; op i is trace i mod prefetch-traces")
			line("prefetch-cold", "before the timed loop: store closed, its files evicted from the page cache (fadvise DONTNEED), store reopened untimed")
			line("prefetch-warm", "before the timed loop: the same lookups run once, untimed")
		}}
)

// traces is the run's trace data set (the flags validated: it cannot fail).
func traces(e *core.Env) *dataset.Traces {
	c := &e.Cfg
	t, err := dataset.NewTraces(prefetchTracesFlag.Get(c), prefetchValSizeFlag.Get(c), c.ValueRatio, c.Seed)
	if err != nil {
		panic("prefetch: the validated flags make no trace data set: " + err.Error())
	}
	return t
}
