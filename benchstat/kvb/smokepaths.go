package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
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
	code := runBench([]string{"-tags", c.tags, "-keys_mil", "0.002", "-count", "1", "-results", d, "-dir", missing, "-no-history"}, &out, &out)
	if want := "-dir " + missing + ": does not exist"; code == 0 || !strings.Contains(out.String(), want) {
		return fmt.Errorf("kvb bench with a missing -dir did not stop with the suite's error (%q), exit %d:\n%s", want, code, out.String())
	}
	return nil
}

// budgetPathRuns runs the memory-limited row on a tiny data set: a
// budget is made, or the row says why not, and nothing else fails.
func (c *testConfig) budgetPathRuns(_ context.Context, stdout, stderr io.Writer) error {
	d, err := os.MkdirTemp("", "kvbench-smoke-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(d)
	args := []string{"mem", "-tags", c.tags, "-keys_mil", "0.002", "-valsz", "256", "-mem_limit", "24MiB", "-mem_benchtime", "100x",
		"-count", "1", "-results", filepath.Join(d, "results"), "-dir", d, "-no-history"}
	if code := runBench(args, stdout, stderr); code != 0 {
		return fmt.Errorf("kvb bench %s: exit %d", strings.Join(args, " "), code)
	}
	return nil
}
