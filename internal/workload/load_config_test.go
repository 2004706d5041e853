package workload

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/core/coretest"
)

// TestLoadConfigFailsBeforeAnyWork: every bad load setting is an error
// that names its flag, from parsing or Validate, and Setup stops on it
// before anything is written under -dir.
func TestLoadConfigFailsBeforeAnyWork(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-rate", "0"}, "-rate"},
		{[]string{"-rate", "10,x"}, "-rate"},
		{[]string{"-write_rate", "0"}, "-write_rate 0: must be from 1"},
		{[]string{"-load_time", "0s"}, "-load_time 0s: must be from 1ms"},
		{[]string{"-knee_time", "-1s"}, "-knee_time -1s: must be from 1ms"},
		{[]string{"-load_workers", "0"}, "-load_workers 0: must be from 1"},
		{[]string{"-slo", "0s"}, "-slo 0s: must be more than 0"},
		{[]string{"-knee_start", "0"}, "-knee_start 0: must be from 1"},
		{[]string{"-knee_steps", "21"}, "-knee_steps 21: must be from 0 to 20"},
		{[]string{"-knee_flushes", "-1"}, "-knee_flushes -1: must be from 0 to 100"},
		{[]string{"-knee_flushes", "101"}, "-knee_flushes 101: must be from 0 to 100"},
		{[]string{"-knee_max_time", "1s"}, "-knee_max_time 1s: must be at least -knee_time (2s)"},
		{[]string{"-knee_time", "30s"}, "-knee_max_time 20s: must be at least -knee_time (30s)"},
		{[]string{"-knee_max_time", "25h"}, "-knee_max_time 25h0m0s: must be at most 24h"},
		{[]string{"-sst_tables", "0"}, "-sst_tables 0: must be from 1"},
		{[]string{"-sst_tables", "200", "-keys_mil", "0.0001"}, "-sst_tables 200: must not exceed the number of keys"},
		{[]string{"-bloom_fpr", "off,1.5"}, "-bloom_fpr"},
		{[]string{"-latency_dir", filepath.Join(dir, "missing")}, "-latency_dir " + filepath.Join(dir, "missing") + ": must be an existing directory"},
	} {
		cfg := core.Default()
		fs := flag.NewFlagSet("kvbench", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		cfg.Bind(fs)
		err := fs.Parse(append([]string{"-dir", dir}, c.args...))
		if err == nil {
			if err = cfg.Validate(); err == nil {
				t.Errorf("%v: valid", c.args)
				continue
			}
			if _, serr := core.Setup(cfg, "BenchmarkKneeBolt", io.Discard, io.Discard); serr == nil || serr.Error() != err.Error() {
				t.Errorf("%v: Setup: %v, want %v", c.args, serr, err)
			}
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %q, want an error containing %q", c.args, err, c.want)
		}
	}
	if ents, err := os.ReadDir(dir); err != nil || len(ents) > 0 {
		t.Errorf("bad settings changed -dir: %v %v", ents, err)
	}
}

// TestLoadConfigEcho: the defaults are valid and echo as they are.
func TestLoadConfigEcho(t *testing.T) {
	e, err := core.NewEnv(core.Default(), io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	lines := coretest.ConfigLines(e)
	for _, want := range []string{
		"rates: 10000\n", "write-rate: 1000\n", "load-time: 5s\n", "load-workers: 4\n", "slo-p99: 10ms\n",
		"knee: from 1000 ops/s doubling, then 4 bisection steps, 2s per trial (upserts on an LSM: long enough to fill 5 memtables, at most 20s), sustained = every operation due in the window done and p99 of all of them <= slo in each of 2 trials (the first failed trial fails the rate)\n",
		"sst-tables: 100\n", "bloom-fpr: off,0.01,0.03,0.5\n",
	} {
		if !strings.Contains(lines, want) {
			t.Errorf("no %q in\n%s", want, lines)
		}
	}
	if strings.Contains(lines, "latency-dir") {
		t.Errorf("latency-dir echoed without -latency_dir:\n%s", lines)
	}
}
