package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// runCmd is one run of a side's test binary in mode: the benchmarks
// once, with the suite's flags and the mode's run length.
func (c *comparison) runCmd(ctx context.Context, mode string, s *side, benchtime string) *exec.Cmd {
	test := testArgs(c.args.bench, c.args.suite...)
	var cmd *exec.Cmd
	if mode == "sim" {
		// benchstat/sim runs the binary under callgrind on one CPU.
		args := append([]string{"-benchtime", benchtime, s.binary}, test...)
		cmd = exec.CommandContext(ctx, c.simBinary, append(args, "-test.cpu=1")...)
	} else {
		cmd = exec.CommandContext(ctx, s.binary, append(test, "-test.benchtime="+benchtime)...)
	}
	cmd.Dir = c.repo
	// The side a binary runs as: the power measurement's injected
	// slowdown works on head only.
	cmd.Env = append(os.Environ(), "KVBENCH_SIDE="+s.role)
	cmd.Stderr = c.stderr
	return cmd
}

// warmUp runs each side once at one iteration before anything is
// measured (warmRun): fixtures are keyed by the data, the options that
// shape files and the engine's version, so the sides share them unless
// the engine's version differs.
func (c *comparison) warmUp(ctx context.Context) error {
	for _, s := range c.sides() {
		ran, err := warmRun(c.runCmd(ctx, "time", s, "1x"), c.stderr)
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
			cmd := c.runCmd(ctx, mode, sides[i], benchtime)
			cmd.Stdout = out
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("%s fails in %s round %d (%v); its output is in %s", sides[i].role, mode, round, err, out.Name())
			}
			return nil
		})
}
