package core

import (
	"fmt"
	"strings"

	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/memlimit"
)

// The budget rule (docs/methodology.md, "One budget rule", says why each
// value): under -mem_limit every engine's fixed memory takes the share of
// the budget that it takes of the machine at full scale, seed 001's.
const (
	budgetShare       = 256 // the memtable and the block cache are each 1/256 of the budget
	budgetFloorMB     = 1   // and at least 1 MiB
	budgetInFlight    = 3   // memtables at once: filling, flushing, queued
	budgetCompactions = 2   // background compactions at most: seed 001's cores
	budgetL0Tables    = 4   // level-0 tables that start a compaction; the level below holds as many memtables
	// The Go runtime's soft memory limit, of the budget.
	budgetGoNum, budgetGoDen = 3, 4
)

// budgetRule is every value the engines are opened with under -mem_limit.
type budgetRule struct {
	MemtableMB, CacheMB int   // each engine's, after any explicit flag
	InFlight            int   // memtables at once
	Compactions         int   // background compactions at most
	L0Tables            int   // level-0 tables that start a compaction
	BuildTableBytes     int64 // the largest table built whole in memory: half a memtable
	BaseLevelBytes      int64 // the level below L0: what L0 holds when it compacts
	GoLimit             int64 // the Go runtime's soft memory limit, bytes

	share      int      // the rule's memtable and block cache, before the flags
	overridden []string // explicit flags that override the rule
}

// budget is the rule for c's -mem_limit; ok is false without one.
func (c *Config) budget() (r budgetRule, ok bool) {
	n := int64(c.MemLimit)
	if n == 0 {
		return r, false
	}
	share := max(budgetFloorMB, int((n/budgetShare+1<<19)>>20)) // to the nearest MiB
	r = budgetRule{
		MemtableMB: share, CacheMB: share, share: share,
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

// String is the rule as the lines state it: every value, where it came
// from, and the flags that override it.
func (r budgetRule) String() string {
	src := func(flag string, v int) string {
		if v != r.share {
			return fmt.Sprintf("%dMiB (-%s; the rule's is %dMiB)", v, flag, r.share)
		}
		return fmt.Sprintf("%dMiB (1/%d of the budget, at least %dMiB)", v, budgetShare, budgetFloorMB)
	}
	parts := []string{
		"memtable " + src("memtable_mb", r.MemtableMB),
		fmt.Sprintf("memtables_in_flight %d", r.InFlight),
		"block_cache " + src("cache_mb", r.CacheMB),
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

// withBudget adds the rule to an engine's settings under -mem_limit.
func (e *Env) withBudget(s []engine.Setting) []engine.Setting {
	r, ok := e.Cfg.budget()
	if !ok {
		return s
	}
	return append(s[:len(s):len(s)], engine.Setting{Key: "budget_rule", Value: "mem=" + e.Cfg.MemLimit.String() + ": " + r.String()})
}
