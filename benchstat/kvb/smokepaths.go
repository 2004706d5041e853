package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/kvbench/kvbench/internal/memlimit"
)

// missingDirStops checks that kvb bench with a -dir that does not exist
// stops with the suite's own error (docs/reliability.md: errors reach the
// user), not with a failure of its own or none.
func (c *testConfig) missingDirStops(_ context.Context, _, _ io.Writer) error {
	d, err := os.MkdirTemp("", "kvbench-smoke-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(d)
	missing := filepath.Join(d, "missing")
	var out bytes.Buffer
	code := runBench([]string{"-tags", c.tags, "-keys_mil", "0.002", "-count", "1", "-results", d, "-dir", missing}, &out, &out)
	if want := "-dir " + missing + ": does not exist"; code == 0 || !strings.Contains(out.String(), want) {
		return fmt.Errorf("kvb bench with a missing -dir did not stop with the suite's error (%q), exit %d:\n%s", want, code, out.String())
	}
	return nil
}

// budgetPathRuns runs the memory-limited row on a tiny data set. Where
// this machine can make the budget, every engine of the build must leave
// a result: one its budget killed, one stopped at -mem_timeout, one that
// skipped, or a row skipped whole, fails. Elsewhere the row must say why
// it skipped.
func (c *testConfig) budgetPathRuns(_ context.Context, stdout, stderr io.Writer) error {
	d, err := os.MkdirTemp("", "kvbench-smoke-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(d)
	const limit = "24MiB"
	results := filepath.Join(d, "results")
	args := []string{"mem", "-tags", c.tags, "-keys_mil", "0.002", "-valsz", "256", "-mem_limit", limit, "-mem_benchtime", "100x",
		"-count", "1", "-results", results, "-dir", d}
	var errb bytes.Buffer
	if code := runBench(args, stdout, io.MultiWriter(stderr, &errb)); code != 0 {
		return fmt.Errorf("kvb bench %s: exit %d", strings.Join(args, " "), code)
	}
	n, _ := memlimit.ParseSize(limit)
	p, noBudget := memlimit.Find()
	if noBudget == nil {
		noBudget = p.Check(n)
	}
	if noBudget != nil {
		if !strings.Contains(errb.String(), "skipping the memory-limited row") {
			return fmt.Errorf("kvb bench mem: this machine cannot make a budget (%v), and the row did not say it skipped", noBudget)
		}
		return nil
	}
	cfg, err := parseBench(args)
	if err != nil {
		return err
	}
	out, err := os.ReadFile(filepath.Join(results, "bench.txt"))
	if err != nil {
		return err
	}
	var missing []string
	for _, g := range cfg.memGroups(cfg.memWorkloads, cfg.memBenchtime, cfg.memBlocks, cfg.memDist) {
		if g.info.Reference || g.info.Missing != "" && !hasTag(c.tags, g.info.Name) {
			continue // not a store, or not in this build
		}
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(g.target) + `/\S+\s+\d+\s`).Match(out) {
			missing = append(missing, g.target)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("kvb bench mem: no result inside the %s budget from %s (killed, stopped or skipped: see above)", limit, strings.Join(missing, ", "))
	}
	return nil
}
