package core

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/kvbench/kvbench/internal/engine"
)

// sharedFlags are the settings every workload shares, in the order of
// their configuration lines, each held in a field of Config.
var sharedFlags = []Option{
	&Flag[string]{Name: "dir",
		Usage: "directory for fixtures and scratch databases (default: the user cache directory); the suite works only inside <dir>/kvbench",
		Field: func(c *Config) *string { return &c.Dir },
		// Checked when Setup opens it; the machine's lines state it.
		Echo: func(string, *Config, func(string, any)) {}},
	&Flag[float64]{Name: "keys_mil", Default: 0.1, Shapes: true,
		Usage: "number of distinct keys, in millions (0.01 is 10,000)",
		Field: func(c *Config) *float64 { return &c.KeysMil },
		Check: check(func(k float64) bool { return k > 0 && k <= 10_000 && k*1e6 >= 1 },
			"must be more than 0 (at least one key) and at most 10000"),
		Echo: func(_ float64, c *Config, line func(string, any)) { line("keys", c.Keys()) }},
	&Flag[int]{Name: "valsz", Default: 1024, Shapes: true,
		Usage: "value size in bytes",
		Field: func(c *Config) *int { return &c.ValSize },
		Check: Within(1, 64<<20, "must be from 1 to 67108864 bytes")},
	&Flag[float64]{Name: "value_ratio", Default: 1, Shapes: true,
		Usage: "fraction of each value that is random: 1 is incompressible, 0.5 compresses about 2x",
		Field: func(c *Config) *float64 { return &c.ValueRatio },
		Check: check(func(r float64) bool { return r > 0 && r <= 1 }, "must be more than 0 and at most 1")},
	&Flag[uint64]{Name: "seed", Default: 1, Shapes: true,
		Usage: "seed of keys and values",
		Field: func(c *Config) *uint64 { return &c.Seed }},
	&Flag[WordList]{Name: "cache", Default: WordList{Warm, Cold},
		Usage: "comma-separated page cache states to read in: warm (one untimed pass first) and cold (fixture evicted from the page cache, then reopened)",
		Field: func(c *Config) *WordList { return &c.Caches },
		Check: func(l WordList, _ *Config) error {
			var errs []error
			for _, s := range l {
				if s != Warm && s != Cold {
					errs = append(errs, FlagError("cache", s, "must be warm or cold"))
				}
			}
			return errors.Join(errs...)
		}},
	&Flag[bool]{Name: "drop_caches",
		Usage: "cache=cold also writes 3 to /proc/sys/vm/drop_caches (root only), on top of evicting the fixture's files",
		Field: func(c *Config) *bool { return &c.DropCaches }},
	&Flag[ByteSize]{Name: "mem_limit", Shapes: true,
		Usage: "run the benchmarks in a memory cgroup of their own limited to this size (64MiB, 1GiB, or bytes): page cache, heap and engine caches share it (root or a delegated cgroup tree; default: no budget)",
		Field: func(c *Config) *ByteSize { return &c.MemLimit },
		Check: func(_ ByteSize, c *Config) error { return c.validateMemLimit() },
		Echo:  func(n ByteSize, _ *Config, line func(string, any)) { line("mem-limit", cmp.Or(n.String(), "none")) }},
	&Flag[int]{Name: "cold_ops",
		Usage: "reads (ReadRandom) or seeks (Scan) per cache=cold round, each round on a fixture closed, evicted and reopened; 0 is 1% of the keys, at least 100 and at most all of them",
		Field: func(c *Config) *int { return &c.ColdOps },
		Check: func(n int, c *Config) error {
			if keys := c.Keys(); n < 0 || uint64(n) > keys {
				return fmt.Errorf("must be from 0 (1%% of the keys, at least 100 and at most all of them) to the number of keys, %d", keys)
			}
			return nil
		},
		Echo: func(_ int, c *Config, line func(string, any)) { line("cold-ops", c.ColdRoundOps()) }},
	&Flag[string]{Name: "verify", Default: "cheap", Choices: []string{"cheap", "full"},
		Usage: "how reads are verified: cheap (length and three words) or full (every byte, and every fixture file's checksum before the run)",
		Field: func(c *Config) *string { return &c.Verify }},
	&Flag[bool]{Name: "sync",
		Usage: "make every committed batch durable before the commit returns (all engines)",
		Field: func(c *Config) *bool { return &c.Sync }},
	// Under -mem_limit the budget rule sets both unless given.
	&Flag[int]{Name: "cache_mb", Default: 64,
		Usage: "block cache of the LSM engines in MiB (B-trees read through the OS page cache)",
		Field: func(c *Config) *int { return &c.CacheMB },
		Check: Within(1, 1<<20, "must be from 1 to 1048576"),
		Echo:  budgetEcho("cache-mb", func(r budgetRule) int { return r.CacheMB })},
	&Flag[int]{Name: "memtable_mb", Default: 64, Shapes: true,
		Usage: "memtable (write buffer) of the LSM engines in MiB",
		Field: func(c *Config) *int { return &c.MemtableMB },
		Check: Within(1, 4096, "must be from 1 to 4096"),
		Echo:  budgetEcho("memtable-mb", func(r budgetRule) int { return r.MemtableMB })},
	&Flag[string]{Name: "compression", Default: "none", Choices: []string{"none", "snappy", "zstd"}, Shapes: true,
		Usage: "block compression of the LSM engines: none, snappy or zstd (B-trees never compress)",
		Field: func(c *Config) *string { return &c.Compression }},
	&Flag[int]{Name: "bloom_bits", Default: 10, Shapes: true,
		Usage: "Bloom filter bits per key of the LSM engines; 0 turns filters off",
		Field: func(c *Config) *int { return &c.BloomBits },
		Check: Within(0, 64, "must be from 0 (off) to 64")},
	&Flag[SizeList]{Name: "block_size", Default: SizeList{DefaultBlockSize}, Shapes: true,
		Usage: "comma-separated target sizes of the LSM engines' data blocks, uncompressed, one sub-benchmark each (block=4KiB; 1KiB to 1MiB); B-trees read 4 KiB pages and have none",
		Field: func(c *Config) *SizeList { return &c.BlockSizes },
		Check: func(l SizeList, _ *Config) error {
			if len(l) == 0 {
				return FlagError("block_size", "", "must list at least one size")
			}
			var errs []error
			for i, bs := range l {
				if bs < minBlockSize || bs > maxBlockSize {
					errs = append(errs, FlagError("block_size", bs.String(), "must be from 1KiB to 1MiB"))
				}
				if slices.Contains(l[:i], bs) {
					errs = append(errs, FlagError("block_size", l.String(), "lists "+bs.String()+" twice"))
				}
			}
			return errors.Join(errs...)
		}},
	&Flag[bool]{Name: "verify_checksums", Default: true,
		Usage: "LSM engines verify the checksum of every block they read from a file (Pebble always does; bbolt and LMDB keep none)",
		Field: func(c *Config) *bool { return &c.VerifyChecksums }},
	&Flag[string]{Name: "readahead", Default: engine.ReadaheadOff, Choices: engine.ReadaheadModes,
		Usage: "OS readahead on the files the engines read: off (none beyond what an engine asks for: LMDB MDB_NORDAHEAD, Badger's maps MADV_RANDOM...) or os (each engine's own default)",
		Field: func(c *Config) *string { return &c.Readahead }},
	&Flag[int]{Name: "batch", Default: 1000, Shapes: true,
		Usage: "keys per write batch in populate and fixture builds",
		Field: func(c *Config) *int { return &c.Batch },
		Check: Within(1, 10_000_000, "must be from 1 to 10000000")},
	&Flag[bool]{Name: "space_guard", Default: true,
		Usage: "while an engine writes, stop its writes with an error once the free space under -dir falls below what the engine may still write on its own (docs/reliability.md); false only to measure the guard's cost",
		Field: func(c *Config) *bool { return &c.SpaceGuard },
		Echo: func(on bool, _ *Config, line func(string, any)) {
			if on {
				line("space-guard", "on: writes stop once the free space under -dir falls below the writing engine's own reserve + 2 batches + 16 MiB")
				return
			}
			line("space-guard", "off")
		}},
	&Flag[IntList]{Name: "threads", Default: IntList{1, 16},
		Usage: "comma-separated reader goroutine counts, one sub-benchmark each",
		Field: func(c *Config) *IntList { return &c.Threads },
		Check: check(func(l IntList) bool { return len(l) > 0 }, "must list at least one count")},
}

// budgetEcho writes -cache_mb's or -memtable_mb's line key: under
// -mem_limit the rule's value (of), and after -memtable_mb's the rule.
func budgetEcho(key string, of func(budgetRule) int) func(int, *Config, func(string, any)) {
	return func(n int, c *Config, line func(string, any)) {
		r, ok := c.budget()
		if !ok {
			line(key, n)
			return
		}
		line(key, fmt.Sprintf("%d (budget rule)", of(r)))
		if key == "memtable-mb" {
			line("budget-rule", r.String())
		}
	}
}

// check fails a flag's value with want unless ok(v).
func check[T any](ok func(T) bool, want string) func(T, *Config) error {
	return func(v T, _ *Config) error {
		if !ok(v) {
			return errors.New(want)
		}
		return nil
	}
}

// Within checks that a flag's value is from lo to hi, or fails with want.
func Within[T cmp.Ordered](lo, hi T, want string) func(T, *Config) error {
	return check(func(v T) bool { return v >= lo && v <= hi }, want)
}
