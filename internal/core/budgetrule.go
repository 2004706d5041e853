package core

import (
	"fmt"
	"strings"

	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/memlimit"
)

// The budget rule (docs/methodology.md, "One budget rule"): under
// -mem_limit every engine's fixed memory takes the share of the budget that
// it takes of the machine at full scale, seed 001's. There the suite's
// defaults give each LSM a 64 MiB memtable and a 64 MiB block cache on a
// 16 GiB-class machine (an i3.large has 15.25 GiB): 1/256 of it each. A
// budget of a fifth of the data is then a machine of a fifth of the data,
// and the LSMs flush, compact and cache as they would there, whichever
// engine it is.
const (
	// budgetShare: the memtable and the block cache are each 1/budgetShare
	// of the budget...
	budgetShare = 256
	// ...but no less than budgetFloorMB: below a MiB per-flush and
	// per-table costs that do not scale (a file, an index, a footer, a
	// sync) would dominate; the floor binds below a 256 MiB budget.
	budgetFloorMB = 1
	// budgetInFlight memtables may exist at once in every LSM: the one
	// filling, one being flushed, one queued. Badger's is the fewest it
	// allows without risking a stalled writer (NumMemtables 1).
	budgetInFlight = 3
	// budgetCompactions caps background compactions at seed 001's machine's
	// cores. Badger's default is 4, each holding the table it builds; its
	// minimum short of none is 2. Pebble's and RocksDB's defaults (1) are
	// below it.
	budgetCompactions = 2
	// budgetL0Tables level-0 tables start a compaction in every LSM
	// (Pebble's and RocksDB's default; Badger's is 5), and the level below
	// holds that many memtables: RocksDB's tuning rule, and what its
	// defaults give at full scale (256 MiB for 64 MiB memtables). Left at
	// the engines' defaults (RocksDB 256 MiB, Pebble 64 MiB, Badger 10 MiB)
	// beside 1 MiB memtables, every compaction from level 0 rewrote up to
	// 64 times its size: write-amp 25 for RocksDB, 14 Pebble, 13 Badger.
	budgetL0Tables = 4
	// The Go runtime's soft memory limit is budgetGoNum/budgetGoDen of the
	// budget for every engine, leaving the rest to the page cache and C
	// allocations: with the whole budget Badger's heap took all of it and
	// was killed; at 3/4 and 1/2 every engine completed (methodology.md).
	budgetGoNum, budgetGoDen = 3, 4
)

// budgetRule is what the rule gives one run: every value the engines are
// opened with under -mem_limit.
type budgetRule struct {
	MemtableMB, CacheMB int   // each engine's, after any explicit flag
	InFlight            int   // memtables at once
	Compactions         int   // background compactions at most
	L0Tables            int   // level-0 tables that start a compaction
	BuildTableBytes     int64 // the largest table built whole in memory: half a memtable
	BaseLevelBytes      int64 // the level below L0: what L0 holds when it compacts
	GoLimit             int64 // the Go runtime's soft memory limit, bytes

	ruleMemtableMB, ruleCacheMB int      // the rule's own, before the flags
	overridden                  []string // explicit flags that override the rule
}

// budget is the rule for c's -mem_limit; ok is false without one.
func (c *Config) budget() (r budgetRule, ok bool) {
	n := int64(c.MemLimit)
	if n == 0 {
		return r, false
	}
	share := max(budgetFloorMB, int((n/budgetShare+1<<19)>>20)) // to the nearest MiB
	r = budgetRule{
		MemtableMB: share, CacheMB: share, ruleMemtableMB: share, ruleCacheMB: share,
		InFlight: budgetInFlight, Compactions: budgetCompactions, L0Tables: budgetL0Tables,
		GoLimit: n / budgetGoDen * budgetGoNum,
	}
	if c.Explicit["memtable_mb"] {
		r.MemtableMB = c.MemtableMB
		r.overridden = append(r.overridden, "memtable_mb")
	}
	if c.Explicit["cache_mb"] {
		r.CacheMB = c.CacheMB
		r.overridden = append(r.overridden, "cache_mb")
	}
	r.BuildTableBytes = int64(r.MemtableMB) << 19
	r.BaseLevelBytes = int64(r.L0Tables*r.MemtableMB) << 20
	return r, true
}

// apply sets o's memory from the rule.
func (r budgetRule) apply(o *engine.Options) {
	o.MemtableMB, o.CacheMB = r.MemtableMB, r.CacheMB
	o.MemtablesInFlight, o.MaxCompactions = r.InFlight, r.Compactions
	o.L0CompactionTables, o.BuildTableBytes = r.L0Tables, r.BuildTableBytes
	o.BaseLevelBytes = r.BaseLevelBytes
}

// fixedMB is the LSMs' memtables and cache under the rule, MiB.
func (r budgetRule) fixedMB() int { return r.CacheMB + r.InFlight*r.MemtableMB }

// String is the rule as the settings line and the configuration state it:
// every value, where it came from, and any flag that overrides it.
func (r budgetRule) String() string {
	src := func(flag string, v, rule int) string {
		if v != rule {
			return fmt.Sprintf("%dMiB (-%s; the rule's is %dMiB)", v, flag, rule)
		}
		return fmt.Sprintf("%dMiB (1/%d of the budget, at least %dMiB)", v, budgetShare, budgetFloorMB)
	}
	parts := []string{
		"memtable " + src("memtable_mb", r.MemtableMB, r.ruleMemtableMB),
		fmt.Sprintf("memtables_in_flight %d", r.InFlight),
		"block_cache " + src("cache_mb", r.CacheMB, r.ruleCacheMB),
		fmt.Sprintf("max_compactions %d", r.Compactions),
		fmt.Sprintf("l0_compaction_tables %d", r.L0Tables),
		"base_level " + memlimit.FormatSize(r.BaseLevelBytes) + " (what level 0 holds when it compacts)",
		"build_table " + memlimit.FormatSize(r.BuildTableBytes) + " (half a memtable; Badger's base tables)",
		fmt.Sprintf("go_memory_limit %s (%d/%d of the budget)", memlimit.FormatSize(r.GoLimit), budgetGoNum, budgetGoDen),
	}
	if len(r.overridden) > 0 {
		parts = append(parts, "overridden by -"+strings.Join(r.overridden, ", -"))
	}
	return strings.Join(parts, ", ")
}

// withBudget adds the rule to an engine's settings under -mem_limit, so
// each result carries the values its engine was opened with and why.
func (e *Env) withBudget(s []engine.Setting) []engine.Setting {
	r, ok := e.Cfg.budget()
	if !ok {
		return s
	}
	return append(s[:len(s):len(s)], engine.Setting{Key: "budget_rule", Value: "mem=" + e.Cfg.MemLimit.String() + ": " + r.String()})
}
