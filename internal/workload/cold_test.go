package workload

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/core/coretest"
	"github.com/kvbench/kvbench/internal/engine"
)

// opensCounter counts, for each db a fixture's engine opened, the reads
// (Gets and NewIters) made through it: one db is one cold round.
type opensCounter struct {
	mu    sync.Mutex
	opens []*atomic.Int64
}

// counted is f with its engine's opens counted: a handle opens the
// engine its fixture declares.
func (c *opensCounter) counted(f *core.Fixture) *core.Fixture {
	g := *f
	open := f.Engine.Open
	g.Engine.Open = func(o engine.Options) (engine.DB, error) {
		db, err := open(o)
		if err != nil {
			return nil, err
		}
		n := new(atomic.Int64)
		c.mu.Lock()
		c.opens = append(c.opens, n)
		c.mu.Unlock()
		return &countDB{DB: db, n: n}, nil
	}
	return &g
}

// counts is the reads of each db opened, in order.
func (c *opensCounter) counts() []int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]int64, len(c.opens))
	for i, n := range c.opens {
		out[i] = n.Load()
	}
	return out
}

type countDB struct {
	engine.DB
	n *atomic.Int64
}

func (d *countDB) NewReader() (engine.Reader, error) {
	r, err := d.DB.NewReader()
	if err != nil {
		return nil, err
	}
	return &countReader{Reader: r, n: d.n}, nil
}

type countReader struct {
	engine.Reader
	n *atomic.Int64
}

func (r *countReader) Get(key []byte, fn func([]byte) error) (bool, error) {
	r.n.Add(1)
	return r.Reader.Get(key, fn)
}

func (r *countReader) NewIter(o engine.IterOptions) (engine.Iterator, error) {
	r.n.Add(1)
	return r.Reader.NewIter(o)
}

// TestColdRoundsDoTheSameWorkWhateverBN runs the cold bodies of ReadRandom,
// Scan and Iterate under two b.N each, through a db that counts the reads
// made between one open and the next, and checks that every round did
// -cold_ops reads or seeks (one full scan for Iterate) on a db of its own,
// and that the open and the per-op figures are reported.
func TestColdRoundsDoTheSameWorkWhateverBN(t *testing.T) {
	e := scanEnv(t, io.Discard) // 2,000 keys: -cold_ops 0 is 100
	info := coretest.Engine(t, "bolt")
	f := e.KVFor(info)
	cases := []struct {
		name     string
		coldOps  int // -cold_ops
		perRound int64
		perOp    bool // reports ns/op, B/op, allocs/op per read or seek
		body     func(b *testing.B, h *core.Handle, db engine.DB)
	}{
		{"ReadRandom", 0, 100, true, func(b *testing.B, h *core.Handle, _ engine.DB) {
			readLeaf(b, e, h, core.Cold, readRandomRun{threads: 2, hitRate: 0.5})
		}},
		{"Scan", 37, 37, true, func(b *testing.B, h *core.Handle, _ engine.DB) { scanLeaf(b, e, h, core.Cold, 2) }},
		{"Iterate", 37, 1, false, func(b *testing.B, h *core.Handle, db engine.DB) { iterate(b, e, h, db, core.Cold, nil, true) }},
	}
	for _, c := range cases {
		e.Cfg.ColdOps = c.coldOps
		for _, bt := range []int{2, 5} {
			coretest.SetBenchtime(t, strconv.Itoa(bt)+"x")
			var opens opensCounter
			r := testing.Benchmark(func(b *testing.B) {
				h := e.Open(b, opens.counted(f))
				c.body(b, h, h.DB(b, core.Cold, nil))
			})
			if r.N != bt {
				t.Fatalf("%s N=%d: the benchmark failed (N=%d)", c.name, bt, r.N)
			}
			// testing.Benchmark calls the body with b.N=1, then b.N=bt:
			// 1+bt rounds, each on a db opened for it alone.
			counts := opens.counts()
			if len(counts) != 1+bt {
				t.Errorf("%s N=%d: %d opens, want %d (one per round)", c.name, bt, len(counts), 1+bt)
			}
			for i, n := range counts {
				if n != c.perRound {
					t.Errorf("%s N=%d: round %d read %d times, want %d", c.name, bt, i, n, c.perRound)
				}
			}
			for _, m := range []string{"open-ms", "open-read-B", "read-B/op"} {
				if _, ok := r.Extra[m]; !ok {
					t.Errorf("%s N=%d: no %s", c.name, bt, m)
				}
			}
			if r.Extra["open-ms"] <= 0 {
				t.Errorf("%s N=%d: open-ms = %v", c.name, bt, r.Extra["open-ms"])
			}
			if c.perOp {
				want := float64(r.T.Nanoseconds()) / float64(int64(r.N)*c.perRound)
				if got := r.Extra["ns/op"]; math.Abs(got-want) > 1e-9*want {
					t.Errorf("%s N=%d: ns/op = %v, want %v (the timed rounds over %d ops each)", c.name, bt, got, want, c.perRound)
				}
				for _, m := range []string{"B/op", "allocs/op"} {
					if _, ok := r.Extra[m]; !ok {
						t.Errorf("%s N=%d: no %s per op", c.name, bt, m)
					}
				}
			}
		}
	}
}

// TestColdOpsFlag checks -cold_ops's default rule, its validation and its
// configuration line.
func TestColdOpsFlag(t *testing.T) {
	for _, c := range []struct {
		keysMil float64
		flag    int
		want    int
	}{
		{0.002, 0, 100},     // 1% is 20: at least 100
		{0.00005, 0, 50},    // 50 keys: at most all of them
		{1, 0, 10_000},      // 1%
		{0.002, 7, 7},       // as given
		{0.002, 2000, 2000}, // all of them
	} {
		cfg := core.Default()
		cfg.KeysMil = c.keysMil
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		cfg.Bind(fs)
		if err := fs.Parse([]string{"-cold_ops", strconv.Itoa(c.flag)}); err != nil {
			t.Fatal(err)
		}
		if err := cfg.Validate(); err != nil && strings.Contains(err.Error(), "cold_ops") {
			t.Errorf("keys_mil=%v cold_ops=%d: %v", c.keysMil, c.flag, err)
		}
		if got := cfg.ColdRoundOps(); got != c.want {
			t.Errorf("keys_mil=%v cold_ops=%d: %d ops per round, want %d", c.keysMil, c.flag, got, c.want)
		}
	}
	for _, v := range []int{-1, 2001} {
		cfg := core.Default()
		cfg.KeysMil, cfg.ColdOps = 0.002, v
		err := cfg.Validate()
		if want := "-cold_ops " + strconv.Itoa(v) + ": must be from 0"; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("cold_ops=%d: error %v, want one containing %q", v, err, want)
		}
	}
	var out bytes.Buffer
	scanEnv(t, &out)
	if !strings.Contains(out.String(), "\ncold-ops: 100\n") {
		t.Errorf("no cold-ops: 100 line in the configuration:\n%s", out.String())
	}
}

// TestTimeLoopFailsOnAnOperationsError: an operation's error fails the
// leaf, warm and cold.
func TestTimeLoopFailsOnAnOperationsError(t *testing.T) {
	e := scanEnv(t, io.Discard)
	coretest.SetBenchtime(t, "10x")
	f := e.KVFor(coretest.Engine(t, "bolt"))
	for _, cache := range []string{core.Warm, core.Cold} {
		if passes(func(b *testing.B) {
			h := e.Open(b, f)
			h.DB(b, cache, nil)
			h.TimeLoop(b, cache, 2, core.SimReads, func(t, n int, _ engine.Reader) error {
				if t == 1 {
					return errors.New("a wrong value")
				}
				return nil
			}, nil)
		}) {
			t.Errorf("cache=%s: an operation's error did not fail the leaf", cache)
		}
	}
}
