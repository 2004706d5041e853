package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// round is the output of one budget round, as the test binary and its
// watcher print it.
const round = `[kvbench] building fixture of bolt
[kvbench] fixture ready
goos: linux
BenchmarkReadRandomBolt/valsz=1024/mem=26MiB/cache=warm-2   	
BenchmarkReadRandomBolt/valsz=1024/mem=26MiB/cache=warm-2   	  1000	  2000 ns/op
PASS
ok  	github.com/kvbench/kvbench	1.0s
`

// TestRoundLinesKeptAndShown: the results keep the round's results and
// configuration, not the fixture's log, go test's verdict or a name
// printed before a result that never came; the terminal sees results and
// errors; the watcher's report is found.
func TestRoundLinesKeptAndShown(t *testing.T) {
	report := "[kvbench] BenchmarkReadRandomBolt was killed inside its -mem_limit 26MiB budget; at the last sample: 25 MiB"
	kept, shown, got := sortRoundLines([]byte(round + report + "\nerror: x"))
	wantKept := "goos: linux\nBenchmarkReadRandomBolt/valsz=1024/mem=26MiB/cache=warm-2   \t  1000\t  2000 ns/op\n" + report + "\nerror: x\n"
	if string(kept) != wantKept {
		t.Errorf("kept %q, want %q", kept, wantKept)
	}
	if wantShown := "BenchmarkReadRandomBolt/valsz=1024/mem=26MiB/cache=warm-2   \t\nBenchmarkReadRandomBolt/valsz=1024/mem=26MiB/cache=warm-2   \t  1000\t  2000 ns/op\nerror: x\n"; string(shown) != wantShown {
		t.Errorf("shown %q, want %q", shown, wantShown)
	}
	if got != report {
		t.Errorf("report %q", got)
	}
}

// TestRoundStatuses: a round the budget kills or the timeout stops is
// reported and the row goes on; a machine without a budget ends the row
// with the reason; any other failure stops the run with the round's
// output and status.
func TestRoundStatuses(t *testing.T) {
	dir := t.TempDir()
	c := &benchConfig{results: dir, memLimit: "26MiB", memTimeout: 1}
	results := filepath.Join(dir, "bench.txt")
	for _, tc := range []struct {
		name, script string
		skip, fails  bool
		say          string
		kept         string
	}{
		{"passes", "echo 'BenchmarkX 1 2 ns/op'", false, false, "", "BenchmarkX 1 2 ns/op\n"},
		{"killed", "echo '[kvbench] X inside its -mem_limit 26MiB budget; at the last sample: full'; kill -9 $$", false, false,
			"kvbench: BenchmarkX was killed inside its 26MiB budget: [kvbench] X inside its -mem_limit 26MiB budget; at the last sample: full", ""},
		{"stopped", "trap 'kill $!; echo \"[kvbench-kill] BenchmarkX cause=stopped at 1s\"; exit 143' TERM; sleep 5 & wait", false, false,
			"kvbench: BenchmarkX did not finish a round in 1 s inside its 26MiB budget; stopped (MEM_TIMEOUT): its watcher left no report", "[kvbench-kill] BenchmarkX cause=timeout at 1s\n"},
		{"no budget", "echo 'error: cannot make a memory cgroup'; exit 3", true, false,
			"kvbench: skipping the memory-limited row, this machine cannot make a memory budget: error: cannot make a memory cgroup", ""},
		{"fails", "echo 'some failure'; exit 1", false, true, "some failure", ""},
	} {
		os.Remove(results)
		var out, errb bytes.Buffer
		g := memGroup{target: "BenchmarkX", args: []string{"sh", "-c", tc.script}}
		skip, err := c.memRound(t.Context(), g, results, &runner{stdout: &out, stderr: &errb})
		if skip != tc.skip || (err != nil) != tc.fails {
			t.Errorf("%s: skip %v, error %v", tc.name, skip, err)
		}
		if tc.fails && statusOf(err) != 1 {
			t.Errorf("%s: status %d, want the round's 1", tc.name, statusOf(err))
		}
		if !strings.Contains(errb.String(), tc.say) {
			t.Errorf("%s: said %q, want %q", tc.name, errb.String(), tc.say)
		}
		kept, _ := os.ReadFile(results)
		if !strings.Contains(string(kept), tc.kept) {
			t.Errorf("%s: kept %q, want %q in it", tc.name, kept, tc.kept)
		}
	}
}

// TestBudgetRowEndsWhenThereIsNoBudget: a machine that cannot make a
// memory budget skips the whole row, said once.
func TestBudgetRowEndsWhenThereIsNoBudget(t *testing.T) {
	dir := t.TempDir()
	c := &benchConfig{results: dir, memLimit: "26MiB", memTimeout: 5, keysMil: "0.1", valsz: "1024"}
	s := c.memRow("readrandom", 2, "1s", "", "")
	// Every round of the row is the same script that cannot make a budget.
	script := filepath.Join(dir, "kvbench.test")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho 'error: no cgroup'; exit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	if err := s.do(t.Context(), &runner{stdout: &bytes.Buffer{}, stderr: &errb}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(errb.String(), "skipping the memory-limited row"); n != 1 {
		t.Errorf("said %d times:\n%s", n, errb.String())
	}
	// Where the time went names the row in one short line, not its script.
	if got, want := s.label(), "the memory budget: 14 runs of the test binary under -mem_limit 26MiB"; got != want {
		t.Errorf("label %q, want %q", got, want)
	}
}
