package workload

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
)

// YCSB: closed-loop mixes of reads, updates, inserts, scans, read-modify-
// writes and deletes at -threads goroutines that share one key
// distribution (docs/workloads.md): YCSB's core workloads A-F,
// db_bench's readwhilewriting, and the -mix of the command line. One op
// is one operation of the mix. Every read is verified: the value belongs
// to its key and is a version that was written, the latest where the run
// knows it; a deleted key must be a miss. A mix that writes runs on a
// private copy of the engine's fixture, made afresh, outside the timer,
// every time testing calls the body, so every round starts from the
// fixture's state; a read-only mix reads the fixture itself, warm.
func init() {
	core.Register(&core.Workload{
		Name:     "YCSB",
		Engines:  core.Stores,
		Fixtures: kvFixture,
		Scratch:  ycsbScratch,
		Units:    ycsbUnits(),
		Options:  append(append([]core.Option{ycsbFlag, mixFlag, updateFlag, rwwRateFlag, scanPrefetchFlag}, distOptions...), timelineOptions...),
		Run: func(b *testing.B, e *core.Env, info engine.Info) {
			h := e.Open(b, e.KVFor(info))
			for _, spec := range ycsbSelected(&e.Cfg) {
				def := []string{spec.Dist}
				if spec.Uniform {
					def = append(def, "uniform")
				}
				list := dists(&e.Cfg, def...)
				for _, d := range list {
					for _, threads := range e.Cfg.Threads {
						n := e.LeafName("workload", spec.Name, "dist", d, "threads", threads)
						ycsbLeaf(b, e, h, n, spec, d, threads)
					}
				}
			}
		},
	})
}

// ycsbFlag is -ycsb: the workloads BenchmarkYCSB runs.
var ycsbFlag = &core.Flag[core.WordList]{Name: "ycsb",
	Default: core.WordList{"A", "B", "C", "D", "E", "F", "readwhilewriting"},
	Usage:   "comma-separated workloads of BenchmarkYCSB, one sub-benchmark each: A-F (YCSB's core workloads), readwhilewriting (db_bench's), custom (the -mix)",
	Check: func(l core.WordList, c *core.Config) error {
		var errs []error
		for _, w := range l {
			if w == "custom" {
				if mixFlag.Get(c) == "" {
					errs = append(errs, core.FlagError("ycsb", w, "needs -mix"))
				}
				continue
			}
			if _, ok := ycsbSpecOf(w); !ok {
				errs = append(errs, core.FlagError("ycsb", w, "must be one of A, B, C, D, E, F, readwhilewriting, custom"))
			}
		}
		return errors.Join(errs...)
	}}

// mixFlag is -mix: the custom workload's operation shares.
var mixFlag = &core.Flag[string]{Name: "mix",
	Usage: "the operation shares of BenchmarkYCSB's workload=custom, in percent, e.g. read=60,update=20,insert=10,delete=5,scan=5 (also rmw=); it adds workload=custom to -ycsb",
	Check: func(s string, _ *core.Config) error {
		if s == "" {
			return nil
		}
		_, err := parseMix(s)
		return err
	}}

// updateFlag is -update: what one update of a mix is.
var updateFlag = &core.Flag[string]{Name: "update", Default: "blind", Choices: []string{"blind", "read"},
	Usage: "what an update of BenchmarkYCSB is: blind (a put of the whole value, as pebble bench ycsb's) or read (a read of the key, then the put, timed as one operation, as YCSB's and go-ycsb's key-value bindings do)",
	Echo: func(s string, _ *core.Config, line func(string, any)) {
		if s == "read" {
			line("ycsb-update", "read (a read of the key, then a put of the whole value, timed as one operation: YCSB's key-value bindings)")
			return
		}
		line("ycsb-update", "blind (a put of the whole value, no read: pebble bench ycsb's; YCSB's key-value bindings read first)")
	}}

// rwwRateFlag is readwhilewriting's writer rate.
var rwwRateFlag = &core.Flag[float64]{Name: "rww_write_mbps", Default: 2,
	Usage: "the bytes per second, in MB, of the one writer of YCSB's workload=readwhilewriting (db_bench's default 2 MB/s); its writes are not counted in ops/s",
	Check: func(r float64, _ *core.Config) error {
		if !(r > 0 && r <= 10000) {
			return errors.New("must be above 0 and at most 10000")
		}
		return nil
	}}

func ycsbSpecOf(name string) (ycsbSpec, bool) {
	for _, s := range ycsbSpecs {
		if strings.EqualFold(s.Name, name) {
			return s, true
		}
	}
	return ycsbSpec{}, false
}

// ycsbSelected lists the workloads -ycsb and -mix select, in order.
func ycsbSelected(c *core.Config) []ycsbSpec {
	var out []ycsbSpec
	custom := mixFlag.Get(c)
	for _, w := range ycsbFlag.Get(c) {
		if w == "custom" {
			continue
		}
		if s, ok := ycsbSpecOf(w); ok {
			out = append(out, s)
		}
	}
	if custom != "" {
		m, _ := parseMix(custom) // checked
		out = append(out, ycsbSpec{Name: "custom", Mix: m, Dist: "zipf"})
	}
	return out
}

// ycsbScratch is a copy of the fixture (three times the logical bytes,
// as Load's) and what a round may insert beyond it.
func ycsbScratch(e *core.Env, _ engine.Info) int64 {
	return 4 * e.Gen.LogicalBytes()
}

// ycsbUnits: every figure per operation type, and the window's.
func ycsbUnits() []core.Unit {
	u := []core.Unit{core.Higher("ops/s"), core.Lower("cpu-ns/op"), core.Lower("write-amp"), core.Lower("dev-write-amp"),
		core.Lower("space-amp"), core.Higher("write-ops/s"), core.Lower("write-p99-ns"), core.Lower("scan-keys/op"), core.Lower("sched-p99-ns")}
	for _, op := range opNames {
		u = append(u, core.Higher(op+"-ops/s"), core.Lower(op+"-p50-ns"), core.Lower(op+"-p99-ns"), core.Lower(op+"-p999-ns"))
	}
	return append(u, timelineUnits...)
}

// ycsbLeaf runs one workload at one distribution and thread count as
// sub-benchmark name: on the fixture when the mix only reads, otherwise
// on a fresh copy of it each time testing calls the body.
func ycsbLeaf(b *testing.B, e *core.Env, h *core.Handle, name string, spec ycsbSpec, dist string, threads int) {
	info := h.Fixture().Engine
	if !spec.Mix.writes() && !spec.Background {
		h.Run(b, name, core.Warm, nil, func(b *testing.B, db engine.DB) {
			runYCSB(b, e, info, db, "", spec, dist, threads)
		})
		return
	}
	if (spec.Mix[opUpdate] > 0 || spec.Mix[opRMW] > 0 || spec.Background) && !e.Gen.VersionedValues() {
		b.Run(core.BlockLeaf(name, info, h.Options(nil)), func(b *testing.B) {
			b.Skipf("values of %d bytes cannot carry a version: updates need -valsz 16 or more (and -value_ratio to match)", e.Cfg.ValSize)
		})
		return
	}
	h.Close(b) // the fixture is not read while a copy of it is written
	o := h.Options(nil)
	s, err := h.Settings(o)
	if err != nil {
		b.Fatal(err)
	}
	leaf := core.BlockLeaf(name, info, o)
	e.ShowFixtureSettings(info, s, h.Fixture()) // each round's copy of the fixture
	b.Run(leaf, func(b *testing.B) {
		w, done := copyForCall(b, e, h, nil)
		defer done()
		b.StartTimer()
		runYCSB(b, e, info, w.DB, w.Opts.Dir, spec, dist, threads)
	})
}

// checkIndex reports an index a scan met that no write made.
func checkIndex(g *dataset.Gen, key []byte) (uint64, error) {
	i, ok := g.IndexAny(key)
	if !ok {
		return 0, fmt.Errorf("%w: key %q is not the data set's", dataset.ErrWrongValue, key)
	}
	return i, nil
}
