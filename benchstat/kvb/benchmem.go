package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/families"
)

// The memory-limited row (docs/methodology.md, "A memory budget"): the
// data set in a budget of a quarter of it, readahead off; random reads
// (one thread, all hits, steady state after a warm-up pass) and populate
// (sync off). Each round of each benchmark runs in a process of its own,
// starting from the same empty budget, so an engine its budget kills (the
// kernel's out-of-memory killer) costs no other result: it is reported
// and the row goes on; so is a round that does not finish in -mem_timeout
// seconds. The report is the budget's watcher's (a process the round
// starts outside its budget): what the budget held at the end, printed,
// and its kill line, which stays in the results for the summary. The
// whole row is skipped, with the reason, where the machine cannot make a
// memory cgroup.

// memGroup is one benchmark of the row at one block size, and its rounds'
// command (each round runs it once).
type memGroup struct {
	target, sub, block string
	info               engine.Info
	args               []string
}

// Exit statuses of a budget round, as a shell reports them.
const (
	noBudget    = 3   // the suite could not make a memory cgroup
	roundKilled = 137 // SIGKILL: the out-of-memory killer
	roundTimout = 124 // stopped at -mem_timeout (timeout(1)'s status)
)

// memGroups lists the row's benchmarks: each top-level benchmark of each
// workload, in the order given, at each of blocks (comma-separated) on an
// engine with data blocks, once at the suite's default size otherwise.
func (c *benchConfig) memGroups(workloads, benchtime, blocks, dist string) []memGroup {
	flags := []string{"-mem_limit", c.memLimit, "-readahead", "off", "-threads", "1", "-hit_rate", "1", "-cache", "warm"}
	if dist != "" {
		flags = append(flags, "-dist", dist)
	}
	var out []memGroup
	for _, w := range strings.FieldsFunc(workloads, func(r rune) bool { return r == ' ' || r == ',' }) {
		for _, t := range families.StepTargets(w) {
			sub, bt := "/valsz/mem/cache=warm", benchtime
			if strings.Contains(t.Name(), "Populate") {
				sub, bt = "/valsz/mem/batch/sync=false", "1x"
			}
			sizes := []string{""}
			if t.Info.DataBlocks && blocks != "" {
				sizes = strings.Split(blocks, ",")
			}
			for _, bs := range sizes {
				args := append([]string{c.binary(), "-test.run", "^$", "-test.bench", "^" + t.Name() + "$" + sub, "-test.benchtime", bt}, c.suiteFlags()...)
				args = append(args, flags...)
				if bs != "" {
					args = append(args, "-block_size", bs)
				}
				out = append(out, memGroup{target: t.Name(), sub: sub, block: bs, info: t.Info, args: args})
			}
		}
	}
	return out
}

// memRow is the row as a step: count rounds of each group, their result
// lines added to RESULTS/bench.txt.
func (c *benchConfig) memRow(workloads string, count int, benchtime, blocks, dist string) task {
	groups := c.memGroups(workloads, benchtime, blocks, dist)
	out := c.resultsFile("bench.txt")
	return task{
		show: func() []string {
			var l []string
			for _, g := range groups {
				l = append(l, "echo "+shellQuote(g.say(c.memLimit))+" >&2")
				for range count {
					l = append(l, fmt.Sprintf("timeout %d %s >> %s 2>&1", c.memTimeout, shellJoin(g.args), shellQuote(out)))
				}
			}
			return l
		},
		do: func(ctx context.Context, r *runner) error {
			for _, g := range groups {
				fmt.Fprintln(r.stderr, g.say(c.memLimit))
				for range count {
					skip, err := c.memRound(ctx, g, out, r)
					if skip || err != nil {
						return err
					}
				}
			}
			return nil
		},
	}
}

func (g memGroup) say(limit string) string {
	s := "kvbench: " + g.target + g.sub
	if g.block != "" {
		s += " -block_size " + g.block
	}
	return s + " under -mem_limit " + limit
}

// memRound runs one round and keeps its result lines; skip says the
// machine cannot make a budget (the row ends, said once); an error is a
// round that failed otherwise, its output on stderr.
func (c *benchConfig) memRound(ctx context.Context, g memGroup, results string, r *runner) (skip bool, err error) {
	rc, output := runRound(ctx, g.args, time.Duration(c.memTimeout)*time.Second)
	if rc == roundTimout {
		output = stoppedToTimeout.ReplaceAll(output, []byte("$1 cause=timeout "))
	}
	kept, shown, report := sortRoundLines(output)
	f, err := os.OpenFile(results, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return false, err
	}
	_, err = f.Write(kept)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, err
	}
	r.stdout.Write(shown)
	if report == "" {
		report = "its watcher left no report"
	}
	switch {
	case rc == noBudget:
		fmt.Fprintf(r.stderr, "kvbench: skipping the memory-limited row, this machine cannot make a memory budget: %s\n", firstLineWith(output, "error:"))
		return true, nil
	case rc == roundKilled || bytes.Contains(output, []byte("signal: killed")):
		fmt.Fprintf(r.stderr, "kvbench: %s was killed inside its %s budget: %s\n", g.target, c.memLimit, report)
	case rc == roundTimout:
		fmt.Fprintf(r.stderr, "kvbench: %s did not finish a round in %d s inside its %s budget; stopped (MEM_TIMEOUT): %s\n", g.target, c.memTimeout, c.memLimit, report)
	case rc != 0:
		r.stderr.Write(output)
		return false, &stepError{name: g.target, err: fmt.Errorf("exit status %d", rc), code: rc}
	}
	return false, nil
}

// runRound runs a round's command, standard output and error together,
// and stops it (SIGTERM) after timeout; it returns the status a shell
// would see, roundTimout when it was stopped. The output ends when every
// process holding it has gone, the budget's watcher too, which writes
// its report just after the round ends.
func runRound(ctx context.Context, args []string, timeout time.Duration) (int, []byte) {
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(&out, "%v\n", err)
		return 127, out.Bytes()
	}
	var stopped atomic.Bool
	timer := time.AfterFunc(timeout, func() {
		stopped.Store(true)
		cmd.Process.Signal(syscall.SIGTERM)
	})
	err := cmd.Wait()
	timer.Stop()
	if stopped.Load() {
		return roundTimout, out.Bytes()
	}
	return exitCode(err), out.Bytes()
}

var (
	stoppedToTimeout = regexp.MustCompile(`(?m)^(\[kvbench-kill\] [^ ]*) cause=stopped `)
	// Lines of a round that are not results: the fixture's log, go test's
	// verdict, and a benchmark's name printed before a result that never came.
	roundNoise   = regexp.MustCompile(`^(\[kvbench\] building|\[kvbench\] fixture|PASS$|ok |Benchmark\S+\s*$)`)
	roundShown   = regexp.MustCompile(`^Benchmark|error`)
	budgetReport = regexp.MustCompile(`^\[kvbench\] .* inside its -mem_limit .* budget; at the last sample`)
)

// sortRoundLines splits a round's output into the lines kept in the
// results, the lines shown (results and errors) and the watcher's report.
func sortRoundLines(output []byte) (kept, shown []byte, report string) {
	var reports []string
	for _, l := range strings.SplitAfter(string(output), "\n") {
		if l == "" {
			continue
		}
		line := strings.TrimSuffix(l, "\n")
		if !strings.HasSuffix(l, "\n") {
			l += "\n"
		}
		if !roundNoise.MatchString(line) {
			kept = append(kept, l...)
		}
		if roundShown.MatchString(line) {
			shown = append(shown, l...)
		}
		if budgetReport.MatchString(line) {
			reports = append(reports, line)
		}
	}
	return kept, shown, strings.Join(reports, "\n")
}

func firstLineWith(output []byte, s string) string {
	for _, l := range strings.Split(string(output), "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}

func itoa(n int) string { return strconv.Itoa(n) }

// mkdirStep makes dir (and its parents).
func mkdirStep(dir string) func(context.Context, *runner) error {
	return func(context.Context, *runner) error { return os.MkdirAll(dir, 0o755) }
}
