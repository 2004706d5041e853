package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/kvbench/kvbench/benchstat/sim"
)

// timeCmd is one timed run of a side's test binary: the benchmarks once,
// with the suite's flags, for benchtime.
func (c *comparison) timeCmd(ctx context.Context, s *side, benchtime string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, s.binary, append(testArgs(c.args.bench, c.args.suite...), "-test.benchtime="+benchtime)...)
	cmd.Dir = c.repo
	cmd.Env = append(os.Environ(), sideEnv(s))
	cmd.Stderr = c.stderr
	return cmd
}

// runSide is one round of a side in mode, its results to out: timed, or
// counted under callgrind on one CPU (kvb sim, in process).
func (c *comparison) runSide(ctx context.Context, mode string, s *side, benchtime string, out io.Writer) error {
	if mode == "sim" {
		test := append(testArgs(c.args.bench, c.args.suite...), "-test.cpu=1")
		return sim.Count(ctx, sim.Options{Binary: s.binary, TestArgs: test, Iterations: benchtime, Cache: true,
			Dir: c.repo, Env: []string{sideEnv(s)}}, out, c.stderr)
	}
	cmd := c.timeCmd(ctx, s, benchtime)
	cmd.Stdout = out
	return cmd.Run()
}

// sideEnv tells a binary the side it runs as: the power measurement's
// injected slowdown works on head only.
func sideEnv(s *side) string { return "KVBENCH_SIDE=" + s.role }

// warmUp runs each side once at one iteration before anything is
// measured (warmRun): fixtures are keyed by the data, the options that
// shape files and the engine's version, so the sides share them unless
// the engine's version differs.
func (c *comparison) warmUp(ctx context.Context) error {
	for _, s := range c.sides() {
		ran, err := warmRun(c.timeCmd(ctx, s, "1x"), c.stderr)
		if err != nil {
			return fmt.Errorf("%s %s fails its warm-up run: %v", s.role, s.name(c.args.module), err)
		}
		if !ran {
			return fmt.Errorf("-bench %s: no benchmark of %s %s ran", c.args.bench, s.role, s.name(c.args.module))
		}
	}
	return nil
}

// rounds runs n paired rounds of mode into DIR/PREFIXbase.txt and
// PREFIXhead.txt, base first in odd rounds and head first in even ones,
// so a drift within a round lands on both sides alike; the order goes to
// PREFIXorder.txt.
func (c *comparison) rounds(ctx context.Context, mode string, n int, prefix string) error {
	benchtime := c.args.timeBench
	if mode == "sim" {
		benchtime = c.args.simBench
	}
	sides := c.sides()
	var names, files []string
	for _, s := range sides {
		names = append(names, s.role)
		files = append(files, filepath.Join(c.args.out, prefix+s.role+".txt"))
	}
	return interleaved(ctx, n, names, files, filepath.Join(c.args.out, prefix+"order.txt"),
		func(round int, order []string) {
			c.logf("%s round %d of %d (%s %s)", mode, round, n, order[0], order[1])
		},
		func(ctx context.Context, i, round int, out *os.File) error {
			if err := c.runSide(ctx, mode, sides[i], benchtime, out); err != nil {
				return fmt.Errorf("%s fails in %s round %d (%v); its output is in %s", sides[i].role, mode, round, err, out.Name())
			}
			return nil
		})
}
