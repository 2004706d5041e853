package core

import (
	"flag"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/engine"
)

// ruleSettings is what each LSM's own settings line must say under the
// rule at a small budget (memtable and cache at the 1 MiB floor): the
// engine's own option names, so a reader checks them against its docs.
var ruleSettings = map[string][]string{
	"badger": {"memtable=1MiB", "block_cache=1MiB", "num_memtables=1 ", "at most 3 in memory",
		"num_compactors=2", "num_level_zero_tables=4", "base_table_size=524288B", "base_level_size=4MiB"},
	"pebble": {"memtable=1MiB", "block_cache=1MiB", "memtable_stop_writes_threshold=3", "l0_compaction_threshold=4", "lbase_max_bytes=4MiB"},
	"rocksdb": {"write_buffer_size=1MiB", "block_cache=1MiB LRU", "max_write_buffer_number=3",
		"level0_file_num_compaction_trigger=4", "max_bytes_for_level_base=4MiB"},
}

// TestBudgetRuleReachesEveryLSM builds each LSM compiled in with the
// options a 40 MiB budget gives it, writes to it until it has flushed
// several memtables, and checks the rule's values in its settings line.
// The rule is configuration: the cgroup that enforces the budget is
// TestMemLimitEntered's.
func TestBudgetRuleReachesEveryLSM(t *testing.T) {
	c := Default()
	c.KeysMil, c.ValSize, c.MemLimit = 0.005, 1024, 40<<20
	e, err := NewEnv(c, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, info := range engine.All() {
		want, ok := ruleSettings[info.Name]
		if !ok || info.Missing != "" { // RocksDB without -tags rocksdb: make unit runs it with
			continue
		}
		n++
		t.Run(info.Name, func(t *testing.T) {
			o := c.Options(info, filepath.Join(t.TempDir(), info.Name), e.Gen.LogicalBytes())
			db, err := engine.OpenInfo(info, o)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if err := e.WriteAll(db, GenSource{e.Gen}, 100, 1, info.Name); err != nil {
				t.Fatal(err)
			}
			line := settingsLine(e.withBudget(db.Settings()))
			for _, w := range append(want, "budget_rule=mem=40MiB: memtable 1MiB", "memtables_in_flight 3",
				"max_compactions 2", "base_level 4MiB", "go_memory_limit 30MiB (3/4 of the budget)") {
				if !strings.Contains(line, w) {
					t.Errorf("settings line lacks %q:\n%s", w, line)
				}
			}
		})
	}
	if n < 2 {
		t.Fatalf("%d LSMs compiled in; want Badger and Pebble at least", n)
	}
}

// TestBudgetRuleScalesAndYieldsToFlags: 1/256 of the budget to the
// nearest MiB above the floor; an explicit flag wins and is named; no
// budget, no rule.
func TestBudgetRuleScalesAndYieldsToFlags(t *testing.T) {
	rule := func(args ...string) (budgetRule, bool) {
		c := Default()
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		c.Bind(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		c.SetExplicit(fs)
		return c.budget()
	}
	if _, ok := rule(); ok {
		t.Error("a rule without -mem_limit")
	}
	for _, c := range []struct {
		args               []string
		memtable, cache    int
		table, goLimitMiB  int64
		overridden, String string
	}{
		{[]string{"-mem_limit", "52MiB"}, 1, 1, 512 << 10, 39, "", "memtable 1MiB (1/256 of the budget, at least 1MiB)"},
		{[]string{"-mem_limit", "164MiB", "-valsz", "16384"}, 1, 1, 512 << 10, 123, "", "memtable 1MiB (1/256 of the budget, at least 1MiB), memtables_in_flight 3, block_cache 1MiB (1/256 of the budget, at least 1MiB)"},
		{[]string{"-mem_limit", "520MiB"}, 2, 2, 1 << 20, 390, "", "block_cache 2MiB (1/256"},
		{[]string{"-mem_limit", "4GiB"}, 16, 16, 8 << 20, 3072, "", "build_table 8MiB"},
		{[]string{"-mem_limit", "156MiB", "-memtable_mb", "8"}, 8, 1, 4 << 20, 117, "memtable_mb", "memtable 8MiB (-memtable_mb; the rule's is 1MiB)"},
	} {
		r, ok := rule(c.args...)
		if !ok || r.MemtableMB != c.memtable || r.CacheMB != c.cache || r.BuildTableBytes != c.table || r.GoLimit>>20 != c.goLimitMiB {
			t.Errorf("%v: %+v", c.args, r)
		}
		// Level 1 holds what level 0 does when it compacts: its tables are
		// memtables, whatever the cache (they differ once a flag sets one).
		if want := int64(budgetL0Tables*c.memtable) << 20; r.BaseLevelBytes != want {
			t.Errorf("%v: base level %d bytes, want %d (%d memtables)", c.args, r.BaseLevelBytes, want, budgetL0Tables)
		}
		if got := strings.Join(r.overridden, ","); got != c.overridden {
			t.Errorf("%v: overridden %q, want %q", c.args, got, c.overridden)
		}
		if !strings.Contains(r.String(), c.String) {
			t.Errorf("%v: %q lacks %q", c.args, r.String(), c.String)
		}
	}
}
