package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/kvbench/kvbench/benchstat/internal/gate"
)

// gateSmoke checks kvb compare's plumbing (the gate's own error rates,
// and building git refs and engine modules, are make gate-e2e's and
// power's): too few rounds is refused before any build; an A/A
// comparison of this tree's test binary with itself (the fewest rounds
// the gate accepts under Holm, tiny data) gives a verdict in time mode
// (not asserted: make smoke runs it beside the main package's tests, and
// times on a shared machine are no pass/fail test) and, where Valgrind is
// installed, passes in sim mode with instructions and estimated cycles
// gated.
func (c *testConfig) gateSmoke(ctx context.Context, stdout, _ io.Writer) error {
	compare := commands["compare"].run
	if code := compare([]string{"HEAD", "HEAD", "-count", "3"}, io.Discard, io.Discard); code != 2 {
		return fmt.Errorf("gate-smoke: kvb compare -count 3 was not refused (exit %d)", code)
	}
	d, err := os.MkdirTemp("", "kvbench-gate-smoke-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(d)
	bin := filepath.Join(d, "kvbench.test")
	if err := runTestCmd(ctx, testCmd{args: buildStep(c.tags, bin).args}, stdout, stdout); err != nil {
		return err
	}
	tiny := []string{"-keys_mil", "0.002", "-valsz", "256", "-dir", d}

	var log bytes.Buffer
	out := filepath.Join(d, "out")
	code := compare(append([]string{bin, bin, "-no-history", "-count", "8", "-threshold", "25", "-bench", "BenchmarkReadRandom(Bolt|Memory)", "-benchtime", "1000x", "-o", out}, tiny...), &log, &log)
	verdict, err := gateVerdict(out, "time")
	if code > 1 || err != nil {
		return fmt.Errorf("gate-smoke: time mode gave no verdict (exit %d, %v):\n%s", code, err, log.String())
	}
	fmt.Fprintf(stdout, "time mode (a verdict, not asserted: times on a shared machine): %s\n", verdict)

	if _, err := exec.LookPath("valgrind"); err != nil {
		fmt.Fprintln(stdout, "gate-smoke: sim mode skipped: valgrind is not installed (make valgrind-deps)")
		return nil
	}
	log.Reset()
	sim := filepath.Join(d, "sim")
	simArgs := append([]string{bin, bin, "-no-history", "-mode", "sim", "-count", "6", "-bench", "BenchmarkReadRandomBolt", "-sim_benchtime", "1000x", "-o", sim}, tiny...)
	if code := compare(simArgs, &log, &log); code != 0 {
		return fmt.Errorf("gate-smoke: sim mode (exit %d):\n%s", code, log.String())
	}
	if missing, err := simUnitsGated(simArgs, sim, "ReadRandomBolt/", "instr/op", "est-cycles/op"); err != nil || len(missing) > 0 {
		md, _ := os.ReadFile(filepath.Join(sim, "gate.md"))
		return fmt.Errorf("gate-smoke: sim mode gated no %s (%v):\n%s", strings.Join(missing, " or "), err, md)
	}
	verdict, err = gateVerdict(sim, "sim")
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "sim mode: %s\n", verdict)
	return nil
}

// gateVerdict is the verdict gate.json in dir gives mode: pass, or FAIL
// and the series that failed.
func gateVerdict(dir, mode string) (string, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "gate.json"))
	if err != nil {
		return "", err
	}
	var r gate.Report
	if err := json.Unmarshal(raw, &r); err != nil {
		return "", fmt.Errorf("gate.json: %w", err)
	}
	for _, m := range r.Modes {
		if m.Mode != mode {
			continue
		}
		if !m.Failed {
			return "pass", nil
		}
		var f []string
		for _, x := range m.Failures {
			f = append(f, x.Verdict+" "+x.Name+" "+x.Unit)
		}
		return "FAIL: " + strings.Join(f, ", "), nil
	}
	return "", fmt.Errorf("gate.json in %s has no %s mode", dir, mode)
}

// simUnitsGated gates the sim comparison's results again, as compare
// did, and returns those of units no counted series of a benchmark under
// prefix was compared in.
func simUnitsGated(compareArgs []string, dir, prefix string, units ...string) (missing []string, err error) {
	a, err := parseCompare(compareArgs)
	if err != nil {
		return nil, err
	}
	base, err := gate.ReadFiles(filepath.Join(dir, "base.txt"))
	if err != nil {
		return nil, err
	}
	head, err := gate.ReadFiles(filepath.Join(dir, "head.txt"))
	if err != nil {
		return nil, err
	}
	gated := map[string]bool{}
	for _, r := range gate.Compare(base, head, a.gate) {
		switch r.Verdict {
		case gate.Skipped, gate.New, gate.Removed:
			continue
		}
		if r.Mode == gate.ModeSim && strings.HasPrefix(r.Name, prefix) {
			gated[r.Unit] = true
		}
	}
	for _, u := range units {
		if !gated[u] {
			missing = append(missing, u)
		}
	}
	return missing, nil
}
