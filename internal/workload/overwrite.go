package workload

import (
	"errors"
	"fmt"
	"math/bits"
	"testing"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
)

// overwritePassesFlag is -overwrite_passes: one leaf pass=P per value.
// The default, 1,2,3, shows where each engine's steady state begins
// rather than assuming it: pass 1 starts from the bulk-loaded fixture,
// pass 2 from a data set rewritten once, and pass 3 says whether pass 2
// was steady already (docs/methodology.md, "What overwrite measures").
var overwritePassesFlag = &core.Flag[core.IntList]{Name: "overwrite_passes", Default: core.IntList{1, 2, 3},
	Usage: "comma-separated pass counts P, one pass=P sub-benchmark each in BenchmarkOverwrite: the data set is rewritten P times, passes 1 to P-1 untimed, pass P measured",
	Check: func(v core.IntList, _ *core.Config) error {
		if len(v) == 0 {
			return errors.New("must list at least one pass")
		}
		var errs []error
		seen := map[int]bool{}
		for _, p := range v {
			switch {
			case p < 1 || p > 4096:
				errs = append(errs, core.FlagError("overwrite_passes", p, "must be from 1 to 4096"))
			case seen[p]:
				errs = append(errs, core.FlagError("overwrite_passes", v.String(), fmt.Sprintf("lists %d twice", p)))
			}
			seen[p] = true
		}
		return errors.Join(errs...)
	}}

// overwriteUnits are populate's, less the memory growths: the interval
// starts on a database already open (and, after untimed passes, already
// holding its caches), so growth over that baseline is not what
// populate's growth over an empty database is.
var overwriteUnits = append([]core.Unit{core.Higher("keys/s"), core.Lower("write-amp"), core.Lower("dev-write-amp"), core.Lower("space-amp"),
	core.Lower("log-MB"), core.Higher("first-keys/s"), core.Higher("last-keys/s")}, timelineUnits...)

// overwriteScratch is one copy of the fixture at a time, counted like a
// fixture at three times the logical bytes (as loadScratch counts one),
// and what a pass may add before compactions drop the versions it
// replaced: up to what a populate writes, three times the logical bytes
// again.
func overwriteScratch(e *core.Env, _ engine.Info) int64 { return 6 * e.Gen.LogicalBytes() }

// Overwrite: db_bench's overwrite, the steady state an LSM reaches only
// once its whole data set has been rewritten. Populate measures the first
// write of the data set into an empty database; here every op starts from
// a private copy of the engine's fixture (the loaded data set) and
// rewrites every key of it, in batches of -batch through the engine's
// native batch path from -writers goroutines, in a random order that
// differs from pass to pass. Leaf pass=P rewrites the data set P times:
// passes 1 to P-1 untimed, pass P timed and counted as populate is
// (measureWrite), over an interval that starts at its first write, so its
// figures stand beside populate's under the same names. Each pass writes a version of its own of every
// value (pass p writes version p; the fixture holds version 0), and after
// the timed pass the whole database is read back: every key once, each
// holding version P.
func init() {
	core.Register(&core.Workload{
		Name:     "Overwrite",
		Engines:  core.Stores,
		Fixtures: kvFixture,
		Scratch:  overwriteScratch,
		Units:    overwriteUnits,
		Options:  append([]core.Option{overwritePassesFlag, writersFlag}, timelineOptions...),
		Run: func(b *testing.B, e *core.Env, info engine.Info) {
			if !e.Gen.VersionedValues() {
				b.Skipf("values of %d bytes with -value_ratio %v hold fewer than 16 random bytes: too few to carry the version each pass writes", e.Cfg.ValSize, e.Cfg.ValueRatio)
			}
			f := e.KVFor(info)
			src, err := e.FixtureDir(f)
			if err != nil {
				b.Fatal(err)
			}
			o := f.Options
			o.Dir, o.ReadOnly = "", false
			// The copy's settings: the fixture's options, writable.
			s, err := e.ScratchSettings(info, o)
			if err != nil {
				b.Fatal(err)
			}
			for _, passes := range overwritePassesFlag.Get(&e.Cfg) {
				name := core.BlockLeaf(e.LeafName("batch", e.Cfg.Batch, "pass", passes), info, o)
				e.WatchLeaf(b.Name() + "/" + name)
				e.ShowFixtureSettings(info, s, f)
				b.Run(name, func(b *testing.B) { overwrite(b, e, info, src, o, passes) })
			}
		},
	})
}

// overwrite is the body of leaf pass=passes: each op rewrites a fresh
// copy of the fixture in src passes times (overwriteOnce), its last pass
// the op's timed interval, and removes the copy. Every figure is a mean
// over the ops.
func overwrite(b *testing.B, e *core.Env, info engine.Info, src string, opts engine.Options, passes int) {
	b.StopTimer()
	b.SetBytes(e.Gen.LogicalBytes())
	rng := e.CallStreams(b).Rand(0)
	var tally writeTally
	core.TimeInParts(b, func(start, stop func()) {
		for n := 0; n < b.N; n++ {
			orders := drawPassOrders(&rng, e.Keys, passes)
			o := opts
			o.Dir = e.ScratchDir(info.Name)
			st, err := overwriteOnce(e, info, src, o, orders, info.Name+" overwrite", start, stop)
			if rerr := e.Root.RemoveAll(o.Dir); err == nil {
				err = rerr
			}
			if err != nil {
				b.Fatal(err)
			}
			tally.add(st)
		}
	})
	tally.report(b, e.Keys, e.Gen.LogicalBytes(), false)
	reportIntervals(b, e, tally.intervals)
}

// overwriteOnce copies the fixture in src to opts.Dir and rewrites every
// key of it once per order, pass p (from 1) in orders[p-1] with version p
// of every value. Each pass opens the database, writes, flushes and
// closes it, so each starts as the first does on the fixture's copy:
// closed with its flushes and compactions settled, nothing held in
// memory. The passes before the last are untimed; the last is counted by
// measureWrite from its first write (start) to the end of its interval
// (stop). Then the database is read back whole: every key of the data set
// once, each value the last pass's version.
func overwriteOnce(e *core.Env, info engine.Info, src string, opts engine.Options, orders []passOrder, label string, start, stop func()) (populateStats, error) {
	var st populateStats
	if len(orders) == 0 {
		return st, errors.New("no pass to run")
	}
	if err := copyTree(src, opts.Dir); err != nil {
		return st, fmt.Errorf("copy fixture: %w", err)
	}
	g, err := e.GuardSpace(label, info, opts)
	if err != nil {
		return st, err
	}
	defer g.Stop()
	open := func() (engine.DB, error) {
		inner, err := engine.OpenInfo(info, opts)
		if err != nil {
			return nil, err
		}
		return g.Wrap(inner), nil
	}
	writers := writersFlag.Get(&e.Cfg)
	write := func(db engine.DB, p int) (core.WriteTimes, error) {
		src := passSource{g: e.Gen, order: orders[p-1], version: uint64(p)}
		return e.WriteAllTimed(db, src, e.Cfg.Batch, writers, intervalFlag.Get(&e.Cfg), fmt.Sprintf("%s pass %d", label, p))
	}
	last := len(orders)
	for p := 1; p < last; p++ {
		db, err := open()
		if err != nil {
			return st, err
		}
		if _, err := write(db, p); err != nil {
			db.Close()
			return st, fmt.Errorf("pass %d: %w", p, err)
		}
		if err := db.Flush(); err != nil {
			db.Close()
			return st, fmt.Errorf("pass %d: flush: %w", p, err)
		}
		if err := db.Close(); err != nil {
			return st, fmt.Errorf("pass %d: close: %w", p, err)
		}
	}
	// The copy and the untimed passes written back, so none of it is
	// written during the timed pass and charged to it; then the database
	// opened, before the interval (the pass is what is measured).
	if err := syncFS(opts.Dir); err != nil {
		return st, fmt.Errorf("sync the fixture's copy: %w", err)
	}
	db, err := open()
	if err != nil {
		return st, err
	}
	defer db.Close() // measureWrite closes it, unless it fails first
	st, err = measureWrite(info, opts.Dir, start, stop,
		func() (engine.DB, error) { return db, nil },
		func(db engine.DB) (core.WriteTimes, error) { return write(db, last) })
	if err != nil {
		return st, fmt.Errorf("pass %d: %w", last, err)
	}
	return st, checkVersion(e, info, opts, uint64(last))
}

// checkVersion reads the closed database in opts.Dir back whole: every key
// of the data set, once, each holding version ver of its value.
func checkVersion(e *core.Env, info engine.Info, opts engine.Options, ver uint64) error {
	opts.ReadOnly = true
	db, err := engine.OpenInfo(info, opts)
	if err != nil {
		return fmt.Errorf("reopen to verify: %w", err)
	}
	defer db.Close()
	n, _, err := core.ScanAll(db, true, versionChecker{chk: e.Gen.NewChecker(e.FullCheck), g: e.Gen, want: ver})
	if err != nil {
		return fmt.Errorf("after pass %d: %w", ver, err)
	}
	if n != e.Keys {
		return fmt.Errorf("after pass %d: %d keys read back, the data set has %d", ver, n, e.Keys)
	}
	return db.Close()
}

// versionChecker verifies entries read back after a pass: keys of the
// data set, each value exactly version want of that key's.
type versionChecker struct {
	chk  *dataset.Checker
	g    *dataset.Gen
	want uint64
}

func (c versionChecker) CheckKey(k []byte) error {
	if _, ok := c.g.Index(k); !ok {
		return fmt.Errorf("key %q is not in the data set", k)
	}
	return nil
}

func (c versionChecker) CheckKV(k, v []byte) error {
	i, ok := c.g.Index(k)
	if !ok {
		return fmt.Errorf("key %q is not in the data set", k)
	}
	ver, err := c.chk.CheckV(i, v)
	if err != nil {
		return err
	}
	if ver != c.want {
		return fmt.Errorf("key %d holds version %d, want %d", i, ver, c.want)
	}
	return nil
}

// passOrder is the order of one pass over the n keys of the data set: its
// i-th write is of index (a*i + c) mod n, a bijection of [0, n) because
// gcd(a, n) = 1. A pass's order is two numbers, whatever n.
type passOrder struct{ n, a, c uint64 }

// at is the index the pass writes i-th, for i < n.
func (o passOrder) at(i uint64) uint64 {
	hi, lo := bits.Mul64(o.a, i)
	r := bits.Rem64(hi, lo, o.n) + o.c // < 2n: the data set has far fewer than 2^63 keys
	if r >= o.n {
		r -= o.n
	}
	return r
}

// drawPassOrders draws the orders of passes passes over n keys from r,
// each different from the ones before it where n allows (an affine order
// is fixed by its first two writes, so n >= 3 has several). a is drawn
// from [2, n) once n > 2, so no pass rewrites the data set in the order
// the fixture was loaded in (index order, a = 1) shifted.
func drawPassOrders(r *dataset.Rand, n uint64, passes int) []passOrder {
	out := make([]passOrder, 0, passes)
	for len(out) < passes {
		var o passOrder
		for try := 0; ; try++ {
			o = passOrder{n: n, a: 1}
			if n > 2 {
				for {
					o.a = 2 + r.Below(n-2)
					if gcd(o.a, n) == 1 {
						break
					}
				}
			}
			o.c = r.Below(n)
			if try >= 64 || !containsOrder(out, o) {
				break
			}
		}
		out = append(out, o)
	}
	return out
}

func containsOrder(have []passOrder, o passOrder) bool {
	for _, p := range have {
		if p == o {
			return true
		}
	}
	return false
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// passSource is one pass's writes as a core.Source: its i-th entry is the
// key of index order.at(i) with version version of that key's value.
type passSource struct {
	g       *dataset.Gen
	order   passOrder
	version uint64
}

func (s passSource) Len() uint64         { return s.g.Keys }
func (s passSource) ValueSize() int      { return s.g.ValueSize }
func (s passSource) LogicalBytes() int64 { return s.g.LogicalBytes() }
func (s passSource) Entry(i uint64, kb, vb []byte) ([]byte, []byte) {
	j := s.order.at(i)
	return s.g.Key(kb, j), s.g.ValueV(vb, j, s.version)
}
func (s passSource) NewChecker(full bool) core.Checker {
	return versionChecker{chk: s.g.NewChecker(full), g: s.g, want: s.version}
}
