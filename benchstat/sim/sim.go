// Package sim is kvb sim: it runs a suite test binary under Valgrind's
// callgrind and prints its benchmark results with the CPU work of each
// leaf's timed loop in place of times, instr/op and est-cycles/op
// (docs/gating.md, "Simulation mode"). kvb compare -mode sim calls Count
// in process.
package sim

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/benchstat/internal/cli"
)

// The simulated caches, fixed so that est-cycles/op does not depend on
// the host's: a common x86 L1 and an 8 MiB last level.
const cacheArgs = "--I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64"

// simUnits are the units sim mode reports; the regression gate gates them.
var simUnits = []string{"instr/op", "est-cycles/op"}

// Command is kvb sim.
var Command = cli.New(cli.Spec[*Options]{
	Name:    "sim",
	Summary: "a test binary under callgrind: instr/op and est-cycles/op of each benchmark's timed loop",
	Usage:   usage,
	Flags:   flags,
	Leading: true,
	Run:     run,
})

const usage = `usage: kvb sim [-cache=false] [-keep DIR] [-benchtime 2000x,Scan=100x] BINARY -test.bench PATTERN [test flags]

Runs the suite's test BINARY under Valgrind's callgrind, one process per
iteration count, and prints its results with each leaf's counted work in
place of times (docs/gating.md, "Simulation mode"). Everything after
BINARY goes to it. Exit status: 0 done, 2 bad usage or a failed step, or
the binary's own when it fails.

`

// Options is one counted run.
type Options struct {
	Binary     string
	TestArgs   []string // the binary's flags; -test.bench says what to count
	Iterations string   // fixed b.N by family: 2000x,Scan=100x ("" DefaultIterations)
	Cache      bool     // simulate the caches: est-cycles/op too
	Keep       string   // keep callgrind's dumps here ("" a temporary directory, removed)
	Dir        string   // the binary's working directory ("" this process's)
	Env        []string // added to this process's environment for the binary
}

func flags(fs *flag.FlagSet) *Options {
	o := &Options{}
	fs.BoolVar(&o.Cache, "cache", true, "simulate the caches and report est-cycles/op (about 1.6x slower than instructions alone)")
	fs.StringVar(&o.Keep, "keep", "", "keep callgrind's dumps in this directory (default: a temporary one, removed)")
	fs.StringVar(&o.Iterations, "benchtime", DefaultIterations, "fixed iterations counted: a default and overrides by family (the top-level name's prefix after Benchmark)")
	return o
}

func run(c cli.Call, o *Options, rest []string) int {
	if len(rest) == 0 {
		return c.Usage("no test binary given")
	}
	o.Binary, o.TestArgs = rest[0], rest[1:]
	if _, err := ParseIterations(o.Iterations); err != nil {
		return c.Usage("%v", err)
	}
	err := Count(context.Background(), *o, c.Stdout, c.Stderr)
	if err == nil {
		return 0
	}
	fmt.Fprintln(c.Stderr, "kvb sim:", err)
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) && ee.ExitCode() > 0 {
		return ee.ExitCode() // the binary's own
	}
	return 2
}

// Count runs the binary under callgrind, one process per iteration
// count, and writes the converted results to stdout and callgrind's
// notes and every left-out leaf to stderr. The binary failing is a
// wrapped *exec.ExitError, after the results of the processes before it.
func Count(ctx context.Context, o Options, stdout, stderr io.Writer) error {
	it, err := ParseIterations(cmp.Or(o.Iterations, DefaultIterations))
	if err != nil {
		return err
	}
	vg, err := exec.LookPath("valgrind")
	if err != nil {
		return errors.New("valgrind is not installed: make valgrind-deps installs it")
	}
	pattern, rest, err := benchFlag(o.TestArgs)
	if err != nil {
		return err
	}
	gs, err := groups(ctx, o, pattern, it, rest)
	if err != nil {
		return err
	}
	dir := o.Keep
	if dir == "" {
		if dir, err = os.MkdirTemp("", "kvbench-sim."); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	}
	bw := bufio.NewWriter(stdout)
	defer bw.Flush()
	header(bw, o.Cache)
	for i, g := range gs {
		gdir := filepath.Join(dir, strconv.Itoa(i))
		if err := os.MkdirAll(gdir, 0o755); err != nil {
			return err
		}
		vargs := []string{"-q", "--tool=callgrind", "--instr-atstart=no",
			"--callgrind-out-file=" + filepath.Join(gdir, "cg.%p"), "--cache-sim=" + map[bool]string{true: "yes", false: "no"}[o.Cache]}
		if o.Cache {
			vargs = append(vargs, strings.Fields(cacheArgs)...)
		}
		targs := append([]string{"-test.bench", g.pattern, "-test.benchtime", strconv.Itoa(g.n) + "x"}, rest...)
		cmd := o.command(ctx, vg, append(append(vargs, o.Binary), targs...)...)
		cmd.Env = append(cmd.Env, "GOMAXPROCS=1", "GODEBUG="+godebug(cmd.Env))
		var out bytes.Buffer
		cmd.Stdout = &out
		cmd.Stderr = quiet{stderr}
		runErr := cmd.Run()
		ws, err := readWindows(gdir)
		if err == nil {
			err = convert(&out, ws, o.Cache, bw, stderr)
		}
		if err != nil {
			return err
		}
		if runErr != nil {
			return fmt.Errorf("%s under valgrind: %w", o.Binary, runErr)
		}
	}
	return bw.Flush()
}

// command is a process of the run: in o.Dir, with o.Env added to this
// process's environment.
func (o Options) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = o.Dir
	cmd.Env = append(os.Environ(), o.Env...)
	return cmd
}

// benchFlag takes the -test.bench pattern out of the test flags; sim sets
// each process's own, and its -test.benchtime.
func benchFlag(args []string) (pattern string, rest []string, err error) {
	for i := 0; i < len(args); i++ {
		name, val, hasVal := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(args[i], "-"), "-"), "=")
		switch name {
		case "test.bench", "test.benchtime":
			if !hasVal {
				if i+1 == len(args) {
					return "", nil, fmt.Errorf("%s needs a value", args[i])
				}
				i++
				val = args[i]
			}
			if name == "test.benchtime" {
				return "", nil, fmt.Errorf("-test.benchtime %s: sim counts fixed iterations; use sim's -benchtime", val)
			}
			pattern = val
		default:
			rest = append(rest, args[i])
		}
	}
	if pattern == "" {
		return "", nil, fmt.Errorf("no -test.bench pattern: say which benchmarks to count")
	}
	return pattern, rest, nil
}

// quiet drops the notes callgrind prints on every run when its caches
// are given (the host's cache it did not use) and passes the rest.
type quiet struct{ w io.Writer }

var callgrindNotes = regexp.MustCompile(`(?m)^(==\d+== Using source line as position\.|--\d+-- warning: (L3 cache found, using its data for the LL simulation\.|specified LL cache: .*|simulated LL cache: .*))\n`)

func (q quiet) Write(p []byte) (int, error) {
	if _, err := q.w.Write(callgrindNotes.ReplaceAll(p, nil)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// header starts the output: every result below is counted.
func header(w io.Writer, cache bool) {
	fmt.Fprintf(w, "mode: sim\nsim: callgrind, GOMAXPROCS=1; est-cycles = instructions + 10 x L1 misses + 100 x last-level misses (%s)\n", cacheArgs)
	for _, u := range units(cache) {
		fmt.Fprintf(w, "Unit %s better=lower\n", u)
	}
}

func units(cache bool) []string {
	if cache {
		return simUnits
	}
	return simUnits[:1]
}

// godebug adds asyncpreemptoff=1 and cpu.rdtscp=off to env's GODEBUG
// (its last, as exec takes it). Valgrind's CPUID may report RDTSCP on a
// CPU that lacks it (a VM's): the runtime's cputicks, which a contended
// lock calls, then ends the process with SIGILL.
func godebug(env []string) string {
	g := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GODEBUG="); ok {
			g = v
		}
	}
	if g != "" {
		g += ","
	}
	return g + "asyncpreemptoff=1,cpu.rdtscp=off"
}

// multiThread matches a leaf that runs more than one goroutine of work.
var multiThread = regexp.MustCompile(`/threads=([2-9]|[1-9][0-9]+)(/|-|$)`)

// convert copies the binary's output with every benchmark line's values
// replaced by its window's counts per iteration; gate lines name the sim
// units, and a "mode: sim" line marks every result as counted.
func convert(r io.Reader, ws []window, cache bool, w, stderr io.Writer) error {
	byLeaf := map[string][]window{}
	for _, x := range ws {
		k := x.leaf + " " + strconv.FormatInt(x.n, 10)
		byLeaf[k] = append(byLeaf[k], x)
	}
	units := units(cache)
	bw := bufio.NewWriter(w)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<22)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "gate: "):
			fmt.Fprintf(bw, "gate: %s\n", strings.Join(units, " "))
		case strings.HasPrefix(line, "Benchmark"):
			f := strings.Fields(line)
			if len(f) < 2 {
				fmt.Fprintln(bw, line)
				continue
			}
			name, n := f[0], f[1]
			if multiThread.MatchString(name) {
				fmt.Fprintf(stderr, "sim: %s left out: more than one thread under GOMAXPROCS=1 measures scheduling, not parallel work (time mode only)\n", name)
				continue
			}
			k := name + " " + n
			q := byLeaf[k]
			if len(q) == 0 {
				fmt.Fprintf(stderr, "sim: %s left out: its family marks no window for callgrind (time mode only)\n", name)
				continue
			}
			x := q[0]
			byLeaf[k] = q[1:]
			iters := float64(x.n)
			fmt.Fprintf(bw, "%s\t%d\t%.1f instr/op", name, x.n, float64(x.events["Ir"])/iters)
			if c, ok := x.estCycles(); ok && cache {
				fmt.Fprintf(bw, "\t%.1f est-cycles/op", float64(c)/iters)
			}
			for i := 2; i+1 < len(f); i += 2 { // allocations are counted, not timed: keep them
				if f[i+1] == "B/op" || f[i+1] == "allocs/op" {
					fmt.Fprintf(bw, "\t%s %s", f[i], f[i+1])
				}
			}
			fmt.Fprintln(bw)
		default:
			fmt.Fprintln(bw, line)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return bw.Flush()
}
