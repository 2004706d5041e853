// Package memfloor is kvb memfloor, which finds each engine's memory
// floor: for each engine and data shape, the smallest memory budget
// (-mem_limit, a whole number of MiB) in which the engine populates the
// data set without being killed and within a multiple of its own populate
// time with memory to spare; then it measures random reads in that
// budget, beside the disk's own 4 KiB random reads.
//
//	results/kvb-lab memfloor -bin results/kvbench.test [-engines Bolt,Pebble] [-shapes 0.1x1024,0.25x128]
//	    [-multiple 3] [-resolution 10%] [-timeout 30m] [-dir DIR] [-o results/memfloor.txt] [-- test binary flags]
//
// The rule. Each engine and shape is first populated in a budget of twice
// the data (BenchmarkPopulate<Engine>/valsz/mem/batch/sync=false, one op,
// a process of its own, at least 64 MiB): its ns/op is the reference. It
// runs under the same budget rule as every trial (docs/methodology.md, "One
// budget rule"), so a trial differs from it only in memory to spare, not in
// how the engine is configured; without a budget the suite's unscaled
// defaults would make every budget look slow. A budget passes when populate in
// it (…/valsz/mem/batch/sync=false) exits 0 with a result whose ns/op is
// at most -multiple times the reference. It fails when the kernel kills
// the engine inside the budget (out of memory), when the suite refuses the
// budget as smaller than the engine's own memory (exit 2 naming
// -mem_limit), or when the run is slower than the multiple allows; a run
// still going at -multiple times the reference's wall time (plus 10 s for
// starting and entering the budget, and never past -timeout) is killed
// then and counts as too slow. Any other failure stops the command with
// the child's output, and exit 3 (this machine cannot make a memory
// budget) stops it with that message.
//
// The search. The budgets tried run from the suite's smallest
// (memlimit.Floor, 16 MiB) to the data set's logical size (keys × (key
// size + valsz), rounded up to a MiB; -max replaces it). The upper bound is
// tried first: an engine that fails there has its floor above the data
// size, which is reported as such, and nothing smaller is tried. Then the
// lower bound, then bisection between the largest failing and the smallest
// passing budget (assuming that a budget passes when any larger one does)
// until -resolution says they are close enough: a percent (the passing
// budget at most that much above the failing one, geometric midpoints) or
// a size in MiB (at most that far apart, arithmetic midpoints). The floor
// is the smallest budget that passed; one run per budget, so a floor near
// an engine's edge can move by the resolution from run to run.
//
// Why populate decides the floor: writing the whole data set is where an
// engine needs its memory (memtables filling and flushing, compaction
// buffers, the Go heap of the harness and of Badger, page cache for the
// files being written), and under -mem_limit the suite derives each
// engine's caches and memtables from the budget by one rule, so a budget
// that populates is one the engine can run in. Reads need less; they are
// measured at the floor (BenchmarkReadRandom<Engine>/valsz/mem/cache=warm,
// one thread, every key a hit, readahead off, 1 s) to show what the floor
// costs, beside BenchmarkDisk/op=randread-4k at one thread, run once
// (none where -dir is in memory, tmpfs or ramfs, which has no device).
// The command passes neither -cache_mb nor -memtable_mb; flags after --
// go to every run unchanged.
//
// The results are Go benchmark format, one line per engine and shape,
//
//	BenchmarkMemFloorBolt/valsz=1024/keys=100000 1 <populate ns/op at the floor> ns/op  37 floor-MiB  0.15 floor/data  10400 keys/s  2.1 x-reference  5200 read-ops/s  7 trials
//
// after configuration lines: memfloor-multiple, memfloor-resolution and
// the configuration the populate run printed at the floor (its
// settings-<engine> line among them; its mem-limit line is left out, as
// floor-MiB carries it, so that runs with different floors line up in
// benchstat), and followed by the read run's own result line as it
// printed it. An engine whose floor is above the data size gets a
// "# memfloor: … floor above the data size" line instead, which benchstat
// skips: there is no floor to compare. Progress (each trial's budget,
// outcome and time) goes to stderr, and so does a Markdown table at the
// end.
package memfloor

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/benchstat/internal/cli"
	"github.com/kvbench/kvbench/benchstat/lab/internal/stores"
	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/memlimit"
)

// Command is kvb memfloor.
var Command = cli.New(cli.Spec[*given]{
	Name:    "memfloor",
	Summary: "each engine's memory floor: the smallest -mem_limit it populates in, by bisection",
	Usage:   usage,
	Flags:   flags,
	Leading: true,
	Run:     run,
})

const usage = `usage: kvb memfloor -bin results/kvbench.test [-engines Bolt,Pebble] [-shapes 0.1x1024,0.25x128]
           [-multiple 3] [-resolution 10%] [-timeout 30m] [-dir DIR] [-o results/memfloor.txt] [-- test binary flags]

Finds, for each engine and data shape, the smallest whole-MiB memory
budget (-mem_limit) in which the engine populates the data set within
-multiple of its time in a budget of twice the data, then measures
random reads in that budget beside the disk's own (docs/seed-001.md).
Flags after -- go to every run of the test binary. Exit status: 0 done,
1 a run failed, 2 bad usage, 3 this machine cannot make a memory budget.

`

// config is the command's flags, checked.
type config struct {
	suite
	engines  []string
	shapes   []shape
	multiple float64
	res      resolution
	timeout  time.Duration
	maxMiB   int // -max in MiB; 0: each shape's data size
	out      string
}

// shape is a data set: keys_mil millions of keys of valsz-byte values.
type shape struct {
	keysMil string // as given, passed through
	keys    int64
	valsz   int
}

func (s shape) String() string { return s.keysMil + "x" + strconv.Itoa(s.valsz) }

// dataBytes is the data set's logical size: keys and values.
func (s shape) dataBytes() int64 { return s.keys * int64(dataset.KeySize+s.valsz) }

func parseShapes(list string) ([]shape, error) {
	var out []shape
	for _, f := range strings.Split(list, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(f), "x")
		km, err1 := strconv.ParseFloat(k, 64)
		vs, err2 := strconv.Atoi(v)
		if !ok || err1 != nil || err2 != nil || km <= 0 || vs <= 0 {
			return nil, fmt.Errorf("-shapes %s: each is keys_mil x valsz (0.1x1024)", list)
		}
		out = append(out, shape{keysMil: k, keys: int64(km*1e6 + 0.5), valsz: vs})
	}
	return out, nil
}

// rawFlags are the flags checked turns into config.
type rawFlags struct {
	engines, shapes, res, max string
}

// given is the command line as read: the flags that are config's
// fields as they are, and the raw ones.
type given struct {
	config
	raw rawFlags
}

func flags(fs *flag.FlagSet) *given {
	g := &given{}
	c, r := &g.config, &g.raw
	fs.StringVar(&c.bin, "bin", "results/kvbench.test", "the suite's test binary (go test -c -tags rocksdb -o …)")
	fs.StringVar(&r.engines, "engines", "", "comma-separated engines (default: every store the binary has a populate benchmark for)")
	fs.StringVar(&r.shapes, "shapes", "0.1x1024,0.25x128", "comma-separated data shapes, keys_mil x valsz")
	fs.StringVar(&c.dir, "dir", "", "passed to the test binary as -dir")
	fs.Float64Var(&c.multiple, "multiple", 3, "a budget passes when populate takes at most this multiple of its time in a budget of twice the data")
	fs.StringVar(&r.res, "resolution", "10%", "stop bisecting when the passing budget is within this percent (10%) or size (2MiB) of the failing one")
	fs.DurationVar(&c.timeout, "timeout", 30*time.Minute, "longest any child run may take")
	fs.StringVar(&r.max, "max", "", "the search's upper bound (default: each shape's logical data size)")
	fs.StringVar(&c.out, "o", "", "results file (default: stdout)")
	return g
}

// checked is the config of the command line, with extra (what follows
// --) and the raw flags checked; ok is false when it said why not.
func (g *given) checked(extra []string, stderr io.Writer) (c config, ok bool) {
	c = g.config
	c.extra = extra
	if err := c.check(&g.raw, stderr); err != nil {
		fmt.Fprintf(stderr, "kvb memfloor: %v\n", err)
		return c, false
	}
	return c, true
}

// check turns the raw flags into c's fields and checks them all, the
// test binary's engines last.
func (c *config) check(r *rawFlags, stderr io.Writer) error {
	var err error
	if c.shapes, err = parseShapes(r.shapes); err != nil {
		return err
	}
	if c.res, err = parseResolution(r.res); err != nil {
		return err
	}
	if c.multiple < 1 {
		return fmt.Errorf("-multiple %g: must be at least 1", c.multiple)
	}
	if c.timeout <= 0 {
		return fmt.Errorf("-timeout %v: must be positive", c.timeout)
	}
	if r.max != "" {
		n, err := memlimit.ParseSize(r.max)
		if err != nil || n < memlimit.Floor || n%(1<<20) != 0 {
			return fmt.Errorf("-max %s: a whole number of MiB, at least %s", r.max, memlimit.FormatSize(memlimit.Floor))
		}
		c.maxMiB = int(n >> 20)
	}
	for _, a := range c.extra {
		if name := strings.TrimLeft(strings.SplitN(a, "=", 2)[0], "-"); name == "cache_mb" || name == "memtable_mb" || name == "mem_limit" {
			fmt.Fprintf(stderr, "kvb memfloor: warning: -%s after -- overrides what the suite derives from the budget\n", name)
		}
	}
	have, err := stores.InBinary(c.bin, "Populate")
	if err != nil {
		return err
	}
	if r.engines == "" {
		c.engines = have
		return nil
	}
	for _, e := range strings.Split(r.engines, ",") {
		e = strings.TrimSpace(e)
		if !slices.Contains(have, e) {
			return fmt.Errorf("-engines: %s has no populate benchmark in %s (it has %s)", e, c.bin, strings.Join(have, ","))
		}
		c.engines = append(c.engines, e)
	}
	return nil
}
