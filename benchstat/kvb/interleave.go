package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/kvbench/kvbench/benchstat/internal/gate"
)

// testArgs run the benchmarks matching bench once each, no tests, then
// flags (the binary keeps a flag's last value).
func testArgs(bench string, flags ...string) []string {
	return append([]string{"-test.run=^$", "-test.bench=" + bench, "-test.count=1"}, flags...)
}

// warmRun runs a side's binary once before anything is measured (cmd
// runs it at one iteration): it builds or reuses the fixtures, and a side
// that fails, or runs no benchmark, stops the run here rather than after
// rounds. A failure prints the run's last lines to stderr.
func warmRun(cmd *exec.Cmd, stderr io.Writer) (ran bool, err error) {
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		for _, l := range lastLines(out.String()+errb.String(), 20) {
			fmt.Fprintln(stderr, l)
		}
		return false, err
	}
	set := gate.NewSet()
	err = set.Read(bytes.NewReader(out.Bytes()), "warm-up")
	return err == nil && len(set.Values) > 0, nil
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

// rotation is the sides' order in round r (from 0) of interleaved
// rounds: every side once, starting one side later each round, so a
// drift of the machine lands on every side alike. With two sides it
// alternates which goes first.
func rotation(r, sides int) []int {
	order := make([]int, sides)
	for k := range order {
		order[k] = (r + k) % sides
	}
	return order
}

// interleaved runs n rounds in rotation order. Each side's output goes
// to files[i], made afresh; each round's order, by names, to orderFile as
// a line "ROUND NAME...". say announces a round before it runs; a side
// that fails stops the rounds with run's error.
func interleaved(ctx context.Context, n int, names, files []string, orderFile string,
	say func(round int, order []string), run func(ctx context.Context, side, round int, out *os.File) error) error {
	outs := make([]*os.File, len(files))
	for i, name := range files {
		f, err := os.Create(name)
		if err != nil {
			return err
		}
		defer f.Close()
		outs[i] = f
	}
	of, err := os.Create(orderFile)
	if err != nil {
		return err
	}
	defer of.Close()
	for r := range n {
		order := rotation(r, len(names))
		var ns []string
		for _, i := range order {
			ns = append(ns, names[i])
		}
		say(r+1, ns)
		fmt.Fprintf(of, "%d %s\n", r+1, strings.Join(ns, " "))
		for _, i := range order {
			if err := run(ctx, i, r+1, outs[i]); err != nil {
				return err
			}
		}
	}
	for _, f := range append(outs, of) {
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}
