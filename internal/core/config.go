// Package core is the lifecycle every workload shares: a configuration
// parsed once, fixtures declared by the workloads and built before any
// benchmark runs, one open/warm/evict/close sequence, one batch writer,
// and output that keeps every result beside its settings. Workloads
// Register themselves; the root package's benchmarks are generated
// wrappers over Run (docs/architecture.md). Flags bind to a Config, and
// bodies read the Env they are given.
package core

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/flagreg"
)

// Config is every setting of one run: the fields are the shared settings
// (sharedflags.go), and each engine's and workload's own flags are held
// beside them.
type Config struct {
	KeysMil         float64
	ValSize         int
	Dir             string
	Seed            uint64
	ValueRatio      float64
	Sync            bool
	CacheMB         int
	MemtableMB      int
	Compression     string
	BloomBits       int
	BlockSizes      SizeList // -block_size: the LSMs' data blocks, one result each
	VerifyChecksums bool     // -verify_checksums
	Readahead       string
	Batch           int
	Verify          string
	DropCaches      bool
	ColdOps         int // 0: ColdRoundOps's default
	Threads         IntList
	Caches          WordList
	MemLimit        ByteSize // -mem_limit; 0 runs without a memory budget
	SpaceGuard      bool     // -space_guard

	// Explicit names the flags the command line gave (Main): an explicit
	// -cache_mb or -memtable_mb overrides the budget rule.
	Explicit map[string]bool

	opts map[string]flagreg.Value // the flags without a field, by name
}

// Default is the configuration with every flag at its default.
func Default() Config {
	c := Config{opts: map[string]flagreg.Value{}}
	for _, o := range Flags() {
		o.SetDefault(&c)
	}
	return c
}

// Keys is the number of distinct keys.
func (c *Config) Keys() uint64 { return uint64(c.KeysMil*1e6 + 0.5) }

// ColdRoundOps is the operations of one cache=cold round: -cold_ops, or
// 1% of the keys, at least 100 and at most all of them (small next to the
// data set, a round stays cold from its first read to its last).
func (c *Config) ColdRoundOps() int {
	if c.ColdOps > 0 {
		return c.ColdOps
	}
	keys := c.Keys()
	return int(min(max(keys/100, 100), keys))
}

// Options is the one place the configuration becomes engine options, the
// same intent for every engine, in directory dir.
func (c *Config) Options(info engine.Info, dir string, logicalBytes int64) engine.Options {
	comp := c.Compression
	if info.CheckCompression(comp) != nil {
		comp = "none" // B-trees store values as they are
	}
	o := engine.Options{
		Dir:             dir,
		Sync:            c.Sync,
		CacheMB:         c.CacheMB,
		MemtableMB:      c.MemtableMB,
		Compression:     comp,
		BloomBitsPerKey: c.BloomBits,
		BlockSize:       int(c.BlockSizes[0]), // Env.Options sets the block of the pass
		SkipChecksums:   !c.VerifyChecksums,
		Readahead:       c.Readahead,
		ExpectedBytes:   logicalBytes,
	}
	if r, ok := c.budget(); ok {
		o.MemtableMB, o.CacheMB = r.MemtableMB, r.CacheMB
		o.MemtablesInFlight, o.MaxCompactions = r.InFlight, r.Compactions
		o.L0CompactionTables, o.BuildTableBytes = r.L0Tables, r.BuildTableBytes
		o.BaseLevelBytes = r.BaseLevelBytes
	}
	for _, p := range info.Params {
		o = o.WithParam(p.FlagName(), c.value(p).String())
	}
	return o
}

// SetExplicit records which flags fs was given.
func (c *Config) SetExplicit(fs *flag.FlagSet) {
	c.Explicit = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { c.Explicit[f.Name] = true })
}

// FloatList is a comma-separated list of numbers.
type FloatList []float64

func (l *FloatList) String() string {
	return joinList(*l, ",", func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) })
}
func (l *FloatList) Set(v string) error {
	return setList((*[]float64)(l), v, func(f string) (float64, error) {
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a number", f)
		}
		return x, nil
	})
}

// WordList is a comma-separated list of words.
type WordList []string

func (l *WordList) String() string { return strings.Join(*l, ",") }
func (l *WordList) Set(v string) error {
	return setList((*[]string)(l), v, func(f string) (string, error) { return strings.TrimSpace(f), nil })
}

// IntList is a comma-separated list of whole numbers from 1 to 4096.
type IntList []int

func (l *IntList) String() string { return joinList(*l, ",", strconv.Itoa) }
func (l *IntList) Set(v string) error {
	return setList((*[]int)(l), v, func(f string) (int, error) {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 4096 {
			return 0, fmt.Errorf("%q is not a whole number from 1 to 4096", f)
		}
		return n, nil
	})
}

// joinList prints a list's items.
func joinList[T any](l []T, sep string, text func(T) string) string {
	s := make([]string, len(l))
	for i, v := range l {
		s[i] = text(v)
	}
	return strings.Join(s, sep)
}

// setList sets *l to the comma-separated items of v, parsed; on an error
// *l keeps its value.
func setList[T any](l *[]T, v string, parse func(string) (T, error)) error {
	var out []T
	for _, f := range strings.Split(v, ",") {
		x, err := parse(f)
		if err != nil {
			return err
		}
		out = append(out, x)
	}
	*l = out
	return nil
}
