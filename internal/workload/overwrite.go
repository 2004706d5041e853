package workload

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/keydist"
)

// overwritePassesFlag is -overwrite_passes: one leaf pass=P per value
// (docs/methodology.md, "What overwrite measures", says why 1,2,3).
var overwritePassesFlag = &core.Flag[core.IntList]{Name: "overwrite_passes", Default: core.IntList{1, 2, 3}, Shapes: true,
	Usage: "comma-separated pass counts P, one pass=P sub-benchmark each in BenchmarkOverwrite: the data set is rewritten P times, passes 1 to P-1 untimed, pass P measured",
	Check: func(v core.IntList, _ *core.Config) error {
		if len(v) == 0 {
			return errors.New("must list at least one pass")
		}
		var errs []error
		for i, p := range v {
			switch {
			case p < 1 || p > 4096:
				errs = append(errs, core.FlagError("overwrite_passes", p, "must be from 1 to 4096"))
			case slices.Contains(v[:i], p):
				errs = append(errs, core.FlagError("overwrite_passes", v.String(), fmt.Sprintf("lists %d twice", p)))
			}
		}
		return errors.Join(errs...)
	}}

// overwriteUnits are populate's, less the memory growths
// (docs/methodology.md, "What overwrite measures", says why).
var overwriteUnits = append([]core.Unit{core.Higher("keys/s"), core.Lower("write-amp"), core.Lower("dev-write-amp"), core.Lower("space-amp"),
	core.Lower("log-MB"), core.Higher("first-keys/s"), core.Higher("last-keys/s")}, timelineUnits...)

// Overwrite: db_bench's overwrite, the steady state an LSM reaches only
// once its whole data set has been rewritten. Leaf pass=P times the P-th
// rewrite on a copy of the fixture rewritten P-1 times (rewrittenFixture),
// counted as populate is (writeOnce), and reads every key back at version
// P (docs/methodology.md, "What overwrite measures").
func init() {
	core.Register(&core.Workload{
		Name:    "Overwrite",
		Engines: core.Stores,
		Fixtures: func(e *core.Env, info engine.Info) []*core.Fixture {
			var fs []*core.Fixture
			for _, passes := range overwritePassesFlag.Get(&e.Cfg) {
				fs = append(fs, rewrittenFixture(e, info, passes-1))
			}
			return fs
		},
		// One copy of the fixture and what a pass adds (docs/methodology.md,
		// "What overwrite measures").
		Scratch: func(e *core.Env, _ engine.Info) int64 { return 6 * e.Gen.LogicalBytes() },
		Units:   overwriteUnits,
		Options: append([]core.Option{overwritePassesFlag, writersFlag}, timelineOptions...),
		Run: func(b *testing.B, e *core.Env, info engine.Info) {
			if !e.Gen.VersionedValues() {
				b.Skipf("values of %d bytes with -value_ratio %v hold fewer than 16 random bytes: too few to carry the version each pass writes", e.Cfg.ValSize, e.Cfg.ValueRatio)
			}
			for _, passes := range overwritePassesFlag.Get(&e.Cfg) {
				f := rewrittenFixture(e, info, passes-1)
				src, err := e.FixtureDir(f)
				fatalIf(b, err)
				o := f.Options
				o.Dir, o.ReadOnly = "", false
				scratchLeaf(b, e, info, f, e.LeafName("batch", e.Cfg.Batch, "pass", passes), o, func(b *testing.B) { overwrite(b, e, info, src, o, passes) })
			}
		},
	})
}

// overwrite is leaf pass=passes's body: each op an overwriteOnce of a copy of src.
func overwrite(b *testing.B, e *core.Env, info engine.Info, src string, opts engine.Options, passes int) {
	b.StopTimer()
	rng := e.CallStreams(b).Rand(0)
	tally := writeOps(b, e, info, opts, false, func(o engine.Options, start, stop func()) (populateStats, error) {
		order := drawPassOrders(&rng, e.Keys, 1)[0]
		return overwriteOnce(e, info, src, o, passSource{g: e.Gen, order: order, version: uint64(passes)}, info.Name+" overwrite", start, stop)
	})
	reportIntervals(b, e, tally.intervals)
}

// rewrittenFixture is the engine's fixture of the data set rewritten
// passes times after its load (KVFor's for 0), where leaf pass=passes+1
// starts; its orders are drawn from -seed, so a rebuild writes the same.
func rewrittenFixture(e *core.Env, info engine.Info, passes int) *core.Fixture {
	if passes == 0 {
		return e.KVFor(info)
	}
	whole := passOrder{n: e.Keys, a: 1} // index order: the fixture's Data, to check it
	f := e.NewFixture(info, fmt.Sprintf("rewritten%d", passes), passSource{g: e.Gen, order: whole, version: uint64(passes)}, nil)
	f.Build = func(e *core.Env, db engine.DB, f *core.Fixture) error {
		if err := e.WriteAll(db, core.GenSource{G: e.Gen}, e.Cfg.Batch, 1, f.Params.Name()); err != nil {
			return err
		}
		r := dataset.NewRand(e.Cfg.Seed, rewriteStream)
		for i, order := range drawPassOrders(&r, e.Keys, passes) {
			if err := db.Flush(); err != nil {
				return err
			}
			if err := core.Reopen(db); err != nil {
				return err
			}
			p := uint64(i + 1)
			if err := e.WriteAll(db, passSource{g: e.Gen, order: order, version: p}, e.Cfg.Batch, 1, fmt.Sprintf("%s pass %d", f.Params.Name(), p)); err != nil {
				return err
			}
		}
		return nil
	}
	return f
}

// rewriteStream is the run's seed's stream of the rewritten fixtures' orders.
const rewriteStream = 0x6f76657277726974 // "overwrit"

// overwriteOnce writes pass into a copy of fixture src, timed (writeOnce), and checkVersion's it.
func overwriteOnce(e *core.Env, info engine.Info, src string, opts engine.Options, pass passSource, label string, start, stop func()) (populateStats, error) {
	st, err := writeOnce(e, info, opts, src, pass, intervalFlag.Get(&e.Cfg), label, fmt.Sprintf("%s pass %d", label, pass.version), start, stop)
	if err != nil {
		return st, fmt.Errorf("pass %d: %w", pass.version, err)
	}
	return st, checkVersion(e, info, opts, pass.version)
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
	n, _, err := core.ScanAll(db, true, passSource{g: e.Gen, version: ver}.NewChecker(e.FullCheck))
	if err != nil {
		return fmt.Errorf("after pass %d: %w", ver, err)
	}
	if n != e.Keys {
		return fmt.Errorf("after pass %d: %d keys read back, the data set has %d", ver, n, e.Keys)
	}
	return db.Close()
}

// versionChecker verifies entries read back after a pass: keys of the
// data set, each value version want of that key's.
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
func (o passOrder) at(i uint64) uint64 { return keydist.Permute(i, o.a, o.c, o.n) }

// drawPassOrders draws passes orders over n keys from r, each unlike those
// before it where n allows (an affine order is fixed by its first two
// writes), a from [2, n) once n > 2 (docs/methodology.md).
func drawPassOrders(r *dataset.Rand, n uint64, passes int) []passOrder {
	out := make([]passOrder, 0, passes)
	for len(out) < passes {
		var o passOrder
		for try := 0; ; try++ {
			o = passOrder{n: n, a: 1}
			if n > 2 {
				for {
					o.a = 2 + r.Below(n-2)
					if keydist.GCD(o.a, n) == 1 {
						break
					}
				}
			}
			o.c = r.Below(n)
			if try >= 64 || !slices.Contains(out, o) {
				break
			}
		}
		out = append(out, o)
	}
	return out
}

// passSource is one pass's writes: entry i is key order.at(i) at version version.
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
