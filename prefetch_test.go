package kvbench

import (
	"bytes"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"testing"

	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/measure"
)

// Seed 000: a prefix lookup per trace ID, reading every span under it, on
// a data set of trace:span keys. With Badger's iterator prefetch on and no
// prefix bound, a lookup that misses seeks onto the next trace's keys and
// reads their values ahead for nothing. BenchmarkPrefetch<Engine> measures
// that in disk bytes, memory and time, for every engine's prefix scan.

// rocksdbReadahead is the explicit readahead_size of readahead=256KiB:
// RocksDB's own ceiling for its implicit readahead, from the first read.
const rocksdbReadahead = 256 << 10

// prefetchCase is one sub-benchmark: a dimension left empty does not apply
// to the engine and is not in the name.
type prefetchCase struct {
	prefetch  string // Badger: "true" (PrefetchValues) or "false"
	hit       bool   // the prefix is an existing trace ID
	bound     string // LSMs: "prefix" bounds the iterator to the prefix, "none" does not
	readahead string // LMDB: on/off (MDB_NORDAHEAD); RocksDB: auto/256KiB
	cold      bool   // page cache emptied of the store's files before the loop
}

func (c prefetchCase) name() string {
	var b bytes.Buffer
	add := func(k, v string) {
		if v == "" {
			return
		}
		if b.Len() > 0 {
			b.WriteByte('/')
		}
		b.WriteString(k + "=" + v)
	}
	add("prefetch", c.prefetch)
	add("hit", strconv.FormatBool(c.hit))
	add("bound", c.bound)
	add("readahead", c.readahead)
	cache := "warm"
	if c.cold {
		cache = "cold"
	}
	add("cache", cache)
	return b.String()
}

// prefetchDims are the dimensions each engine has: Badger alone prefetches
// values; only the LSMs take a real iterator bound (a B-tree cursor stops
// at the first key past the prefix either way); readahead is an option of
// LMDB's map and RocksDB's iterators.
func prefetchDims(engine string) (prefetch, bound, readahead []string) {
	prefetch, bound, readahead = []string{""}, []string{""}, []string{""}
	switch engine {
	case "badger":
		prefetch, bound = []string{"true", "false"}, []string{"none", "prefix"}
	case "pebble":
		bound = []string{"none", "prefix"}
	case "rocksdb":
		bound, readahead = []string{"none", "prefix"}, []string{"auto", "256KiB"}
	case "lmdb":
		readahead = []string{"on", "off"}
	}
	return
}

func benchPrefetch(b *testing.B, title string) {
	info := lookupTitle(b, title)
	dir, err := traceFixtureFor(info)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("open-only/cache=cold", func(b *testing.B) { prefetchOpenOnly(b, info, dir) })
	pf, bd, ra := prefetchDims(info.Name)
	for _, prefetch := range pf {
		for _, hit := range []bool{true, false} {
			for _, bound := range bd {
				for _, readahead := range ra {
					for _, cold := range []bool{true, false} {
						c := prefetchCase{prefetch: prefetch, hit: hit, bound: bound, readahead: readahead, cold: cold}
						b.Run(c.name(), func(b *testing.B) { prefetchLookups(b, info, dir, c) })
					}
				}
			}
		}
	}
}

func BenchmarkPrefetchBadger(b *testing.B)  { benchPrefetch(b, "Badger") }
func BenchmarkPrefetchBolt(b *testing.B)    { benchPrefetch(b, "Bolt") }
func BenchmarkPrefetchLmdb(b *testing.B)    { benchPrefetch(b, "Lmdb") }
func BenchmarkPrefetchRocksDB(b *testing.B) { benchPrefetch(b, "RocksDB") }
func BenchmarkPrefetchPebble(b *testing.B)  { benchPrefetch(b, "Pebble") }

// prefetchOpen opens the trace fixture read-only with the case's open-time
// options.
func prefetchOpen(b *testing.B, info engine.Info, dir string, c prefetchCase) engine.DB {
	o := traceOptions(info, dir)
	o.ReadOnly = true
	if info.Name == "lmdb" && c.readahead != "" {
		o.LmdbReadahead = c.readahead == "on"
	}
	db, err := engine.Open(info.Name, o)
	if err != nil {
		b.Fatalf("open trace fixture %s: %v", dir, err)
	}
	printEngineConfig(os.Stdout, db)
	return db
}

// prefetchOpenOnly is the seed's open-only baseline: one op opens the
// store on a cold page cache (eviction untimed) and reads nothing.
func prefetchOpenOnly(b *testing.B, info engine.Info, dir string) {
	var read, major, grow, peak, resident int64
	b.StopTimer()
	for i := 0; i < b.N; i++ {
		resident += evictCold(b, dir)
		debug.FreeOSMemory()
		measure.ResetPeakRSS()
		m0, _ := measure.ReadMem()
		f0 := measure.ReadFaults()
		io0, _ := measure.ReadIO()
		b.StartTimer()
		db := prefetchOpen(b, info, dir, prefetchCase{})
		b.StopTimer()
		io1, _ := measure.ReadIO()
		f1 := measure.ReadFaults()
		m1, _ := measure.ReadMem()
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
		read += io1.Sub(io0).ReadBytes
		major += f1.Major - f0.Major
		grow += m1.RSS - m0.RSS
		peak = max(peak, m1.PeakRSS)
	}
	n := float64(b.N)
	b.ReportMetric(float64(read)/n, "read-B/op")
	b.ReportMetric(float64(read)/1e6, "read-MB")
	b.ReportMetric(0, "values/op")
	b.ReportMetric(float64(major)/n, "majflt/op")
	b.ReportMetric(float64(grow)/n/(1<<20), "rss-grow-MB")
	b.ReportMetric(float64(peak)/(1<<20), "peak-rss-MB")
	b.ReportMetric(float64(resident)/n/(1<<20), "cold-resident-MB")
}

// prefetchLookups is the body of every lookup sub-benchmark: op i looks
// up trace i mod -prefetch_traces and reads and verifies every value under
// its prefix. Without a bound it stops, as the seed's code did, at the
// first key without the prefix.
func prefetchLookups(b *testing.B, info engine.Info, dir string, c prefetchCase) {
	var resident int64
	if c.cold {
		resident = evictCold(b, dir) // no handle is open on the fixture here
	}
	db := prefetchOpen(b, info, dir, c)
	defer db.Close()
	rd, err := db.NewReader()
	if err != nil {
		b.Fatal(err)
	}
	defer rd.Close()
	l := &traceLookup{t: traceSet, rd: rd, bound: c.bound == "prefix", hit: c.hit, chk: traceSet.Gen.NewChecker(cfg.fullCheck)}
	l.o.NoPrefetch = c.prefetch == "false"
	if c.readahead == "256KiB" {
		l.o.ReadaheadBytes = rocksdbReadahead
	}
	if !c.cold {
		for i := 0; i < min(b.N, traceSet.N); i++ {
			if err := l.lookup(i); err != nil {
				b.Fatal(err)
			}
		}
	}
	l.values = 0
	if c.hit {
		b.SetBytes(int64(dataset.SpansPerTrace * traceSet.Gen.ValueSize))
	}
	debug.FreeOSMemory() // so that RSS does not fall during the loop as the heap is scavenged
	measure.ResetPeakRSS()
	m0, _ := measure.ReadMem()
	f0 := measure.ReadFaults()
	io0, _ := measure.ReadIO()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := l.lookup(i % traceSet.N); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	io1, _ := measure.ReadIO()
	f1 := measure.ReadFaults()
	m1, _ := measure.ReadMem()
	n := float64(b.N)
	want := int64(0)
	if c.hit {
		want = int64(b.N) * dataset.SpansPerTrace
	}
	if l.values != want {
		b.Fatalf("%d values read, want %d", l.values, want)
	}
	read := io1.Sub(io0).ReadBytes
	b.ReportMetric(float64(read)/n, "read-B/op")
	b.ReportMetric(float64(read)/1e6, "read-MB")
	b.ReportMetric(float64(l.values)/n, "values/op")
	b.ReportMetric(float64(f1.Major-f0.Major)/n, "majflt/op")
	b.ReportMetric(float64(m1.RSS-m0.RSS)/(1<<20), "rss-grow-MB")
	b.ReportMetric(float64(m1.PeakRSS)/(1<<20), "peak-rss-MB")
	if c.cold {
		b.ReportMetric(float64(resident)/(1<<20), "cold-resident-MB")
	}
}

// traceLookup looks trace prefixes up through one reader and verifies
// every key and value it gets; its buffers are reused across lookups.
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

// lookup reads every value under trace tr's hit or miss prefix.
func (l *traceLookup) lookup(tr int) error {
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
	s, err := l.scan(it, tr, p)
	if cerr := it.Close(); err == nil {
		err = cerr
	}
	if err != nil {
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

// scan reads the spans of trace tr under prefix p, in order, and returns
// how many it read.
func (l *traceLookup) scan(it engine.Iterator, tr int, p []byte) (int, error) {
	s := 0
	for ; it.Valid(); it.Next() {
		k := it.Key()
		if !bytes.HasPrefix(k, p) {
			if l.bound {
				return s, fmt.Errorf("iterator bounded to %q returned %q", p, k)
			}
			break // the next trace: an unbounded lookup ends here
		}
		if s >= dataset.SpansPerTrace || !bytes.Equal(k, l.t.Key(l.want[:], tr, s)) {
			return s, fmt.Errorf("prefix %q: key %q at position %d", p, k, s)
		}
		v, err := it.Value()
		if err == nil {
			err = l.chk.Check(l.t.Index(tr, s), v)
		}
		if err != nil {
			return s, err
		}
		s++
	}
	return s, it.Err()
}
