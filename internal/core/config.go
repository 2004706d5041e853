// Package core is the lifecycle every workload shares: a run
// configuration parsed once, fixtures declared by the workloads and built
// before any benchmark runs, one open/warm/evict/close sequence, one batch
// writer, and output that keeps every result beside the settings it was
// measured with. It knows no workload: the workloads (internal/workload
// and below) register themselves and their own flags with Register, and
// the root package's benchmarks are generated one-line wrappers over Run
// (see wrappers.go). docs/architecture.md describes the API they use.
//
// Like Pebble's bench package, it owns no flag globals: flags bind to a
// Config (Config.Bind), and bodies read the Env they are given.
package core

import (
	"errors"
	"flag"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/internal/engine"
)

// Config is every setting of one run, as flags give it: the fields are
// what every workload shares, and each workload's own flags (Flag) are
// held beside them. Validate checks it before any work starts.
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

	// Explicit names the flags given on the command line (Main fills it):
	// an explicit -cache_mb or -memtable_mb overrides the budget rule.
	Explicit map[string]bool

	// EngineParams are the engines' own options (engine.Info.Params), by
	// flag name; an option missing here is at its default.
	EngineParams map[string]string

	// opts are the workloads' own flags (Flag), by name.
	opts map[string]optionValue
}

// Default is the configuration with every flag at its default.
func Default() Config {
	c := Config{
		KeysMil: 0.1, ValSize: 1024, Seed: 1, ValueRatio: 1, CacheMB: 64, MemtableMB: 64,
		Compression: "none", BloomBits: 10, BlockSizes: SizeList{DefaultBlockSize}, VerifyChecksums: true, SpaceGuard: true, Readahead: engine.ReadaheadOff, Batch: 1000,
		Verify:  "cheap",
		Threads: IntList{1, 16}, Caches: WordList{"warm", "cold"},
		EngineParams: map[string]string{},
	}
	c.defaultOptions()
	return c
}

// Bind registers every flag of the suite on fs, each bound to a field of c
// or to its value of a workload's flag (whose current values are the
// defaults).
func (c *Config) Bind(fs *flag.FlagSet) {
	fs.Float64Var(&c.KeysMil, "keys_mil", c.KeysMil, "number of distinct keys, in millions (0.01 is 10,000)")
	fs.IntVar(&c.ValSize, "valsz", c.ValSize, "value size in bytes")
	fs.StringVar(&c.Dir, "dir", c.Dir, "directory for fixtures and scratch databases (default: the user cache directory); the suite works only inside <dir>/kvbench")
	fs.Uint64Var(&c.Seed, "seed", c.Seed, "seed of keys and values")
	fs.Float64Var(&c.ValueRatio, "value_ratio", c.ValueRatio, "fraction of each value that is random: 1 is incompressible, 0.5 compresses about 2x")
	fs.BoolVar(&c.Sync, "sync", c.Sync, "make every committed batch durable before the commit returns (all engines)")
	fs.IntVar(&c.CacheMB, "cache_mb", c.CacheMB, "block cache of the LSM engines in MiB (B-trees read through the OS page cache)")
	fs.IntVar(&c.MemtableMB, "memtable_mb", c.MemtableMB, "memtable (write buffer) of the LSM engines in MiB")
	fs.StringVar(&c.Compression, "compression", c.Compression, "block compression of the LSM engines: none, snappy or zstd (B-trees never compress)")
	fs.IntVar(&c.BloomBits, "bloom_bits", c.BloomBits, "Bloom filter bits per key of the LSM engines; 0 turns filters off")
	fs.Var(&c.BlockSizes, "block_size", "comma-separated target sizes of the LSM engines' data blocks, uncompressed, one sub-benchmark each (block=4KiB; 1KiB to 1MiB); B-trees read 4 KiB pages and have none")
	fs.BoolVar(&c.VerifyChecksums, "verify_checksums", c.VerifyChecksums, "LSM engines verify the checksum of every block they read from a file (Pebble always does; bbolt and LMDB keep none)")
	fs.StringVar(&c.Readahead, "readahead", c.Readahead, "OS readahead on the files the engines read: off (none beyond what an engine asks for: LMDB MDB_NORDAHEAD, Badger's maps MADV_RANDOM...) or os (each engine's own default)")
	fs.IntVar(&c.Batch, "batch", c.Batch, "keys per write batch in populate and fixture builds")
	fs.StringVar(&c.Verify, "verify", c.Verify, "how reads are verified: cheap (length and three words) or full (every byte, and every fixture file's checksum before the run)")
	fs.BoolVar(&c.DropCaches, "drop_caches", c.DropCaches, "cache=cold also writes 3 to /proc/sys/vm/drop_caches (root only), on top of evicting the fixture's files")
	fs.IntVar(&c.ColdOps, "cold_ops", c.ColdOps, "reads (ReadRandom) or seeks (Scan) per cache=cold round, each round on a fixture closed, evicted and reopened; 0 is 1% of the keys, at least 100 and at most all of them")
	fs.Var(&c.Threads, "threads", "comma-separated reader goroutine counts, one sub-benchmark each")
	fs.Var(&c.MemLimit, "mem_limit", "run the benchmarks in a memory cgroup of their own limited to this size (64MiB, 1GiB, or bytes): page cache, heap and engine caches share it (root or a delegated cgroup tree; default: no budget)")
	fs.BoolVar(&c.SpaceGuard, "space_guard", c.SpaceGuard, "while an engine writes, stop its writes with an error once the free space under -dir falls below what the engine may still write on its own (docs/reliability.md); false only to measure the guard's cost")
	fs.Var(&c.Caches, "cache", "comma-separated page cache states to read in: warm (one untimed pass first) and cold (fixture evicted from the page cache, then reopened)")
	for _, p := range engineParams() {
		fs.Var(&paramValue{c: c, p: p}, p.Name, p.Usage)
	}
	c.bindOptions(fs)
}

// engineParams lists every engine's own options, each name once: engines
// that share an adapter (or an option) share its flag.
func engineParams() []engine.Param {
	var out []engine.Param
	seen := map[string]bool{}
	for _, info := range engine.All() {
		for _, p := range info.Params {
			if !seen[p.Name] {
				seen[p.Name] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// paramValue binds an engine option's flag to Config.EngineParams.
type paramValue struct {
	c *Config
	p engine.Param
}

func (v *paramValue) String() string {
	if v.c == nil {
		return ""
	}
	return v.c.param(v.p)
}

func (v *paramValue) Set(s string) error {
	if v.c.EngineParams == nil {
		v.c.EngineParams = map[string]string{}
	}
	v.c.EngineParams[v.p.Name] = s
	return nil
}

func (v *paramValue) IsBoolFlag() bool { return v.p.Bool }

func (c *Config) param(p engine.Param) string {
	if v, ok := c.EngineParams[p.Name]; ok {
		return v
	}
	return p.Default
}

// FlagError is the error of a flag's bad value: it names the flag, the
// value and what the flag accepts ("-valsz 0: must be from 1 ...").
func FlagError(name string, val any, want string) error {
	return flagError{fmt.Sprintf("-%s %v: %s", name, val, want)}
}

// flagError is FlagError's: a Flag's Check may return them, joined, to
// name the bad items of a list itself.
type flagError struct{ msg string }

func (e flagError) Error() string { return e.msg }

// Validate checks every setting without touching the disk.
func (c *Config) Validate() error {
	var errs []error
	if k := c.KeysMil; !(k > 0 && k <= 10_000) || k*1e6 < 1 {
		errs = append(errs, FlagError("keys_mil", k, "must be more than 0 (at least one key) and at most 10000"))
	}
	if v := c.ValSize; v < 1 || v > 64<<20 {
		errs = append(errs, FlagError("valsz", v, "must be from 1 to 67108864 bytes"))
	}
	for _, s := range c.Caches {
		if s != Warm && s != Cold {
			errs = append(errs, FlagError("cache", s, "must be warm or cold"))
		}
	}
	if len(c.Threads) == 0 {
		errs = append(errs, FlagError("threads", "", "must list at least one count"))
	}
	intRange := func(name string, v, lo, hi int, want string) {
		if v < lo || v > hi {
			errs = append(errs, FlagError(name, v, want))
		}
	}
	if keys := c.Keys(); c.ColdOps < 0 || uint64(c.ColdOps) > keys {
		errs = append(errs, FlagError("cold_ops", c.ColdOps, fmt.Sprintf("must be from 0 (1%% of the keys, at least 100 and at most all of them) to the number of keys, %d", keys)))
	}
	intRange("cache_mb", c.CacheMB, 1, 1<<20, "must be from 1 to 1048576")
	intRange("memtable_mb", c.MemtableMB, 1, 4096, "must be from 1 to 4096")
	intRange("bloom_bits", c.BloomBits, 0, 64, "must be from 0 (off) to 64")
	errs = append(errs, c.validateBlockSizes()...)
	intRange("batch", c.Batch, 1, 10_000_000, "must be from 1 to 10000000")
	if r := c.ValueRatio; !(r > 0 && r <= 1) {
		errs = append(errs, FlagError("value_ratio", r, "must be more than 0 and at most 1"))
	}
	for _, w := range []struct {
		name, v string
		opts    []string
	}{
		{"compression", c.Compression, []string{"none", "snappy", "zstd"}},
		{"verify", c.Verify, []string{"cheap", "full"}},
		{"readahead", c.Readahead, engine.ReadaheadModes},
	} {
		if !contains(w.opts, w.v) {
			errs = append(errs, FlagError(w.name, w.v, "must be one of "+strings.Join(w.opts, ", ")))
		}
	}
	known := map[string]bool{}
	for _, p := range engineParams() {
		known[p.Name] = true
		if err := p.Validate(c.param(p)); err != nil {
			errs = append(errs, FlagError(p.Name, c.param(p), err.Error()))
		}
	}
	for name := range c.EngineParams {
		if !known[name] {
			errs = append(errs, FlagError(name, c.EngineParams[name], "is no engine's option"))
		}
	}
	errs = append(errs, c.validateMemLimit()...)
	errs = append(errs, c.validateOptions()...)
	sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	return errors.Join(errs...)
}

// Keys is the number of distinct keys.
func (c *Config) Keys() uint64 { return uint64(c.KeysMil*1e6 + 0.5) }

// ColdRoundOps is the number of operations in one cache=cold round
// (-cold_ops): as given, or by default 1% of the keys, at least 100 and at
// most all of them. A round small next to the data set stays cold from
// its first read to its last, and is the same work for every engine.
func (c *Config) ColdRoundOps() int {
	if c.ColdOps > 0 {
		return c.ColdOps
	}
	keys := c.Keys()
	return int(min(max(keys/100, 100), keys))
}

// Options is the one place the configuration becomes engine options, with
// the same intent for every engine. dir is the engine's directory.
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
		r.apply(&o)
	}
	for _, p := range info.Params {
		o = o.WithParam(p.Name, c.param(p))
	}
	return o
}

// SetExplicit records which flags fs was given.
func (c *Config) SetExplicit(fs *flag.FlagSet) {
	c.Explicit = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { c.Explicit[f.Name] = true })
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// FloatList is a comma-separated list of numbers; Validate checks their
// range so the error names the flag like every other.
type FloatList []float64

func (l *FloatList) String() string {
	s := make([]string, len(*l))
	for i, v := range *l {
		s[i] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	return strings.Join(s, ",")
}

func (l *FloatList) Set(v string) error {
	var out FloatList
	for _, f := range strings.Split(v, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", f)
		}
		out = append(out, x)
	}
	*l = out
	return nil
}

// WordList is a comma-separated list of words, checked by Validate.
type WordList []string

func (l *WordList) String() string { return strings.Join(*l, ",") }

func (l *WordList) Set(v string) error {
	var out WordList
	for _, f := range strings.Split(v, ",") {
		out = append(out, strings.TrimSpace(f))
	}
	*l = out
	return nil
}

// IntList is a comma-separated list of whole numbers from 1 to 4096.
type IntList []int

func (l *IntList) String() string {
	s := make([]string, len(*l))
	for i, v := range *l {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ",")
}

func (l *IntList) Set(v string) error {
	var out IntList
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 4096 {
			return fmt.Errorf("%q is not a whole number from 1 to 4096", f)
		}
		out = append(out, n)
	}
	*l = out
	return nil
}
