package workload

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/engine"
)

// YCSB: closed-loop mixes at -threads goroutines sharing one key
// distribution, one op an operation of the mix, every read verified; a
// mix that writes runs on a fresh copy of the fixture each round
// (docs/workloads.md, "YCSB").
func init() {
	core.Register(&core.Workload{
		Name:     "YCSB",
		Engines:  core.Stores,
		Fixtures: kvFixture,
		// A copy of the fixture (three times the logical bytes, as Load's)
		// and what a round may insert beyond it.
		Scratch: func(e *core.Env, _ engine.Info) int64 { return 4 * e.Gen.LogicalBytes() },
		Units:   ycsbUnits(),
		Options: append(append([]core.Option{ycsbFlag, mixFlag, updateFlag, rwwRateFlag, scanPrefetchFlag}, distOptions...), timelineOptions...),
		Run: func(b *testing.B, e *core.Env, info engine.Info) {
			h := e.Open(b, e.KVFor(info))
			for _, spec := range ycsbSelected(&e.Cfg) {
				def := []string{spec.Dist}
				if spec.Uniform {
					def = append(def, "uniform")
				}
				for _, d := range dists(&e.Cfg, def...) {
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
	Check: core.Within(math.SmallestNonzeroFloat64, 10000, "must be above 0 and at most 10000")}

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
	for _, w := range ycsbFlag.Get(c) { // custom is no spec: it is -mix's
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

// ycsbUnits: every figure per operation type, and the window's.
func ycsbUnits() []core.Unit {
	u := []core.Unit{core.Higher("ops/s"), core.Lower("cpu-ns/op"), core.Lower("write-amp"), core.Lower("dev-write-amp"),
		core.Lower("space-amp"), core.Higher("write-ops/s"), core.Lower("write-p99-ns"), core.Lower("scan-keys/op"), core.Lower("sched-p99-ns")}
	for _, op := range opNames {
		u = append(u, core.Higher(op+"-ops/s"), core.Lower(op+"-p50-ns"), core.Lower(op+"-p99-ns"), core.Lower(op+"-p999-ns"))
	}
	return append(u, timelineUnits...)
}

// ycsbLeaf runs one workload as sub-benchmark name: on the fixture when
// the mix only reads, else on a fresh copy each time testing calls the body.
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
	fatalIf(b, err)
	leaf := core.BlockLeaf(name, info, o)
	e.ShowFixtureSettings(info, s, h.Fixture()) // each round's copy of the fixture
	b.Run(leaf, func(b *testing.B) {
		w, done := copyForCall(b, e, h, nil)
		defer done()
		b.StartTimer()
		runYCSB(b, e, info, w.DB, w.Opts.Dir, spec, dist, threads)
	})
}

// The operations of a mixed workload, as YCSB names them, and db_bench's
// delete (docs/workloads.md, "YCSB", says what each is).
type ycsbOp int

const (
	opRead ycsbOp = iota
	opUpdate
	opInsert
	opScan
	opRMW
	opDelete
	numOps
)

var opNames = [numOps]string{"read", "update", "insert", "scan", "rmw", "delete"}

// opMix is each operation's share of a workload's operations, in percent.
type opMix [numOps]float64

// writes says whether any operation of the mix writes.
func (m opMix) writes() bool {
	return m[opUpdate]+m[opInsert]+m[opRMW]+m[opDelete] > 0
}

// cum is the mix's cumulative shares, from 0 to 1, as pick reads them:
// the share rounding leaves over goes to the last operation the mix
// names, so an operation with no share never runs.
func (m opMix) cum() [numOps]float64 {
	var c [numOps]float64
	var acc float64
	last := opRead
	for op, share := range m {
		acc += share / 100
		c[op] = acc
		if share > 0 {
			last = ycsbOp(op)
		}
	}
	for op := last; op < numOps; op++ {
		c[op] = 2 // past any draw
	}
	return c
}

// parseMix reads -mix: op=percent pairs that add up to 100.
func parseMix(s string) (opMix, error) {
	var m opMix
	var sum float64
	for _, f := range strings.Split(s, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(f), "=")
		if !ok {
			return m, fmt.Errorf("%q is not op=percent", f)
		}
		op := ycsbOp(slices.Index(opNames[:], name))
		if op < 0 {
			return m, fmt.Errorf("unknown operation %q (have %s)", name, strings.Join(opNames[:], ", "))
		}
		p, err := strconv.ParseFloat(val, 64)
		if err != nil || !(p >= 0 && p <= 100) {
			return m, fmt.Errorf("%s=%s: the share must be a percentage from 0 to 100", name, val)
		}
		if m[op] != 0 {
			return m, fmt.Errorf("%s is listed twice", name)
		}
		m[op] = p
		sum += p
	}
	if sum < 99.999 || sum > 100.001 {
		return m, fmt.Errorf("the shares add up to %g, not 100", sum)
	}
	if m[opRead]+m[opScan]+m[opRMW] == 0 {
		return m, errors.New("the mix reads nothing, so nothing it wrote is verified")
	}
	return m, nil
}

// ycsbSpec is one workload: YCSB's core workloads A-F as its workload
// files define them (recordcount aside), db_bench's readwhilewriting, or
// the -mix of the command line.
type ycsbSpec struct {
	Name string
	Mix  opMix
	Dist string // the workload's own request distribution
	// Uniform also runs it over uniform keys by default (A and C).
	Uniform bool
	// Background: the mix is the readers', and one more goroutine writes
	// at -rww_write_mbps, not counted in ops/s (readwhilewriting).
	Background bool
}

var ycsbSpecs = []ycsbSpec{
	{Name: "A", Mix: opMix{opRead: 50, opUpdate: 50}, Dist: "zipf", Uniform: true},
	{Name: "B", Mix: opMix{opRead: 95, opUpdate: 5}, Dist: "zipf"},
	{Name: "C", Mix: opMix{opRead: 100}, Dist: "zipf", Uniform: true},
	{Name: "D", Mix: opMix{opRead: 95, opInsert: 5}, Dist: "latest"},
	{Name: "E", Mix: opMix{opScan: 95, opInsert: 5}, Dist: "zipf"},
	{Name: "F", Mix: opMix{opRead: 50, opRMW: 50}, Dist: "zipf"},
	{Name: "readwhilewriting", Mix: opMix{opRead: 100}, Dist: "zipf", Background: true},
}

// ycsbMaxScan is YCSB's maxscanlength: a scan reads a uniform 1 to 100
// records from its start key (scanlengthdistribution=uniform).
const ycsbMaxScan = 100

// ownWrites is how many of its own latest writes a goroutine remembers,
// by key: a later read of such a key must see that write or a newer one.
const ownWrites = 1024
