package core

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/core/coretest"
	"github.com/kvbench/kvbench/internal/measure"
	"github.com/kvbench/kvbench/internal/memlimit"
)

func TestMemLimitFlag(t *testing.T) {
	parse := func(args ...string) (Config, error) {
		c := Default()
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		c.Bind(fs)
		if err := fs.Parse(args); err != nil {
			return c, err
		}
		c.SetExplicit(fs)
		return c, c.Validate()
	}
	if _, err := parse("-mem_limit", "64MB"); err == nil || !strings.Contains(err.Error(), "-mem_limit") {
		t.Errorf("64MB: %v", err)
	}
	for _, c := range []struct {
		args []string
		want string // "" for valid
	}{
		{[]string{"-mem_limit", "8MiB"}, "-mem_limit 8MiB: is below the floor of 16MiB"},
		{[]string{"-mem_limit", "48MiB", "-cache_mb", "8", "-memtable_mb", "8"}, "-mem_limit 48MiB: the engines' own memory does not fit: block cache 8 MiB + 3 memtables in flight x 8 MiB + 16 MiB heap allowance = 48 MiB"},
		{[]string{"-mem_limit", "20MiB"}, "block cache 1 MiB + 3 memtables in flight x 1 MiB + 16 MiB heap allowance = 20 MiB"},
		{[]string{"-mem_limit", "21MiB"}, ""},
		{[]string{"-mem_limit", "64MiB", "-cache_mb", "8", "-memtable_mb", "8"}, ""},
		{[]string{"-mem_limit", "225MiB"}, ""},
		{[]string{"-mem_limit", "1073741824"}, ""},
		{nil, ""},
	} {
		cfg, err := parse(c.args...)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%v: %v; want %q", c.args, err, c.want)
		}
		if err == nil {
			e := &Env{Cfg: cfg}
			var out bytes.Buffer
			e.EchoConfig(&out)
			want := "mem-limit: none\n"
			if cfg.MemLimit != 0 {
				want = "mem-limit: " + memlimit.FormatSize(int64(cfg.MemLimit)) + "\n"
			}
			if !strings.Contains(out.String(), want) {
				t.Errorf("%v: config lines lack %q", c.args, want)
			}
		}
	}
}

// budgetConfig is a tiny run of BenchmarkProbeBolt under a 64 MiB
// budget.
func budgetConfig(t *testing.T) Config {
	c := Default()
	c.KeysMil, c.ValSize, c.Dir = 0.002, 256, t.TempDir()
	c.CacheMB, c.MemtableMB, c.MemLimit = 8, 8, 64<<20
	return c
}

// TestMemLimitRefusedBeforeAnyWork: where no budget can be made (here a
// cgroup directory that does not exist), Setup refuses naming the flag,
// and nothing is written under -dir.
func TestMemLimitRefusedBeforeAnyWork(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-cgroup")
	saved := findParent
	findParent = func() (memlimit.Parent, error) { return memlimit.Parent{Dir: missing, Version: 1}, nil }
	t.Cleanup(func() { findParent = saved })
	c := budgetConfig(t)
	before, _ := os.ReadDir(c.Dir)
	var out bytes.Buffer
	_, err := Setup(c, "BenchmarkProbeBolt", &out, io.Discard)
	if err == nil || !strings.HasPrefix(err.Error(), "-mem_limit 64MiB: ") {
		t.Fatalf("Setup: %v", err)
	}
	if after, _ := os.ReadDir(c.Dir); len(after) != len(before) {
		t.Errorf("a refused budget left %d entries in -dir (had %d)", len(after), len(before))
	}
	if out.Len() != 0 {
		t.Errorf("configuration printed before the refusal: %q", out.String())
	}
}

// TestMemLimitEntered: with the means (root and a memory controller),
// Setup builds the fixture, evicts it, and runs the rest inside the
// budget; closing it puts the process back.
func TestMemLimitEntered(t *testing.T) {
	c := budgetConfig(t)
	p, err := memlimit.Find()
	if err == nil {
		err = p.Check(int64(c.MemLimit))
	}
	if err != nil {
		t.Skipf("needs root (or a delegated cgroup tree) and a memory controller: %v", err)
	}
	e, err := Setup(c, "BenchmarkProbeBolt", io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.closeBudget() })
	b := e.Budget()
	if b == nil || b.Limit != 64<<20 {
		t.Fatalf("Budget() = %v", b)
	}
	self, _ := os.ReadFile("/proc/self/cgroup")
	if !strings.Contains(string(self), filepath.Base(b.Dir)) {
		t.Errorf("not in %s: %s", b.Dir, self)
	}
	for _, f := range e.fixtures {
		if res, total := measure.ResidentDir(f.dir); res*residentShare > total && !coretest.InMemory(t, f.dir) {
			t.Errorf("fixture %s: %d of %d bytes resident on entering the budget", f.dir, res, total)
		}
	}
	if s, err := b.Stats(); err != nil || s.Usage > b.Limit {
		t.Errorf("Stats: %+v, %v", s, err)
	}
	if err := e.closeBudget(); err != nil {
		t.Fatal(err)
	}
	if e.Budget() != nil {
		t.Error("Budget() after close")
	}
	if _, err := os.Stat(b.Dir); !os.IsNotExist(err) {
		t.Errorf("%s left: %v", b.Dir, err)
	}
}
