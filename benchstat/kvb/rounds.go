package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/kvbench/kvbench/benchstat/internal/gate"
)

// runCmd is one run of a side's test binary in mode: the benchmarks
// once, with the suite's flags and the mode's run length.
func (c *comparison) runCmd(ctx context.Context, mode string, s *side, benchtime string) *exec.Cmd {
	test := []string{"-test.run=^$", "-test.bench=" + c.args.bench, "-test.count=1"}
	test = append(test, c.args.suite...)
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
// measured: it builds or reuses the fixtures (keyed by the data, the
// options that shape files and the engine's version, so the sides share
// them unless the engine's version differs), and a side that fails or
// runs no benchmark stops the comparison here rather than after rounds.
func (c *comparison) warmUp(ctx context.Context) error {
	for _, s := range c.sides() {
		var out, errb bytes.Buffer
		cmd := c.runCmd(ctx, "time", s, "1x")
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			for _, l := range lastLines(out.String()+errb.String(), 20) {
				fmt.Fprintln(c.stderr, l)
			}
			return fmt.Errorf("%s %s fails its warm-up run: %v", s.role, s.name(c.args.module), err)
		}
		set := gate.NewSet()
		if err := set.Read(bytes.NewReader(out.Bytes()), s.role); err != nil || len(set.Values) == 0 {
			return fmt.Errorf("-bench %s: no benchmark of %s %s ran", c.args.bench, s.role, s.name(c.args.module))
		}
	}
	return nil
}

// lastLines is the end of a run's output without its settings lines,
// which fill a screen and say nothing about a failure.
func lastLines(out string, n int) []string {
	var keep []string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if !strings.HasPrefix(l, "settings-") {
			keep = append(keep, l)
		}
	}
	return keep[max(0, len(keep)-n):]
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
	files := map[string]*os.File{}
	for _, name := range []string{"base", "head", "order"} {
		f, err := os.Create(filepath.Join(c.args.out, prefix+name+".txt"))
		if err != nil {
			return err
		}
		defer f.Close()
		files[name] = f
	}
	for i := 1; i <= n; i++ {
		order := c.sides()
		if i%2 == 0 {
			order[0], order[1] = order[1], order[0]
		}
		c.logf("%s round %d of %d (%s %s)", mode, i, n, order[0].role, order[1].role)
		fmt.Fprintf(files["order"], "%d %s %s\n", i, order[0].role, order[1].role)
		for _, s := range order {
			cmd := c.runCmd(ctx, mode, s, benchtime)
			cmd.Stdout = files[s.role]
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("%s fails in %s round %d (%v); its output is in %s", s.role, mode, i, err, files[s.role].Name())
			}
		}
	}
	for _, f := range files {
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}
