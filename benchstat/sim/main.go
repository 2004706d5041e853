// Command sim runs a suite test binary under Valgrind's callgrind and
// prints its benchmark results with the CPU work of each leaf's timed loop
// in place of times: instr/op (instructions executed, every thread, Go and
// C alike) and est-cycles/op (instructions plus simulated cache misses).
// Counted work repeats within about 1 % from run to run where times on a
// shared machine vary by tens of percent, so the regression gate can see a
// 1 % change (docs/gating.md, "Simulation mode").
//
//	go run ./benchstat/sim [-cache=false] [-keep DIR] [-benchtime 2000x,Scan=100x] BINARY -test.bench PATTERN [test flags]
//
// Each family runs at a fixed b.N (-benchtime), one process per count, so
// both sides of a comparison count the same iterations. The binary runs
// with GOMAXPROCS=1 (Valgrind runs one thread at a time:
// idle Go processors would spin and count) and with asynchronous
// preemption off (callgrind mishandles Go's preemption signal). Each
// leaf's window is marked by the suite itself (internal/core.StartSim):
// counters are zeroed where its timed loop starts and dumped where it
// ends, so setup, warm-up and other leaves stay out. Leaves without a
// window (families that stay on time mode: cold, budget, fixed-rate,
// knee) and leaves with more than one thread are left out, each with a
// line on stderr saying why.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// The simulated caches, fixed so that est-cycles/op does not depend on
// the host's: a common x86 L1 and an 8 MiB last level.
const cacheArgs = "--I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64"

// SimUnits are the units sim mode reports; the regression gate gates them.
var simUnits = []string{"instr/op", "est-cycles/op"}

func main() {
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	cache := fs.Bool("cache", true, "simulate the caches and report est-cycles/op (about 1.6x slower than instructions alone)")
	keep := fs.String("keep", "", "keep callgrind's dumps in this directory (default: a temporary one, removed)")
	benchtime := fs.String("benchtime", defaultIterations, "fixed iterations counted: a default and overrides by family (the top-level name's prefix after Benchmark)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: sim [-cache=false] [-keep DIR] [-benchtime 2000x,Scan=100x] BINARY -test.bench PATTERN [test flags]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	it, err := parseIterations(*benchtime)
	if fs.NArg() < 1 || err != nil {
		if err != nil {
			fmt.Fprintln(os.Stderr, "sim:", err)
		}
		fs.Usage()
		os.Exit(2)
	}
	os.Exit(run(fs.Arg(0), fs.Args()[1:], it, *cache, *keep, os.Stdout, os.Stderr))
}

// run runs binary under callgrind, one process per iteration count, and
// writes the converted results to stdout; it returns the exit status.
func run(binary string, args []string, it iterations, cache bool, keep string, stdout, stderr io.Writer) int {
	vg, err := exec.LookPath("valgrind")
	if err != nil {
		fmt.Fprintln(stderr, "sim: valgrind is not installed: make valgrind-deps installs it")
		return 2
	}
	pattern, rest, err := benchFlag(args)
	if err != nil {
		fmt.Fprintln(stderr, "sim:", err)
		return 2
	}
	gs, err := groups(binary, pattern, it, rest)
	if err != nil {
		fmt.Fprintln(stderr, "sim:", err)
		return 2
	}
	dir := keep
	if dir == "" {
		if dir, err = os.MkdirTemp("", "kvbench-sim."); err != nil {
			fmt.Fprintln(stderr, "sim:", err)
			return 2
		}
		defer os.RemoveAll(dir)
	}
	bw := bufio.NewWriter(stdout)
	defer bw.Flush()
	header(bw, cache)
	for i, g := range gs {
		gdir := filepath.Join(dir, strconv.Itoa(i))
		if err := os.MkdirAll(gdir, 0o755); err != nil {
			fmt.Fprintln(stderr, "sim:", err)
			return 2
		}
		vargs := []string{"-q", "--tool=callgrind", "--instr-atstart=no",
			"--callgrind-out-file=" + filepath.Join(gdir, "cg.%p"), "--cache-sim=" + map[bool]string{true: "yes", false: "no"}[cache]}
		if cache {
			vargs = append(vargs, strings.Fields(cacheArgs)...)
		}
		targs := append([]string{"-test.bench", g.pattern, "-test.benchtime", strconv.Itoa(g.n) + "x"}, rest...)
		cmd := exec.Command(vg, append(append(vargs, binary), targs...)...)
		cmd.Env = append(os.Environ(), "GOMAXPROCS=1", "GODEBUG="+godebug())
		var out bytes.Buffer
		cmd.Stdout = &out
		cmd.Stderr = quiet{stderr}
		runErr := cmd.Run()
		ws, err := readWindows(gdir)
		if err == nil {
			err = convert(&out, ws, cache, bw, stderr)
		}
		if err != nil {
			fmt.Fprintln(stderr, "sim:", err)
			return 2
		}
		if runErr != nil {
			fmt.Fprintf(stderr, "sim: %s under valgrind: %v\n", binary, runErr)
			if x, ok := runErr.(*exec.ExitError); ok && x.ExitCode() > 0 {
				return x.ExitCode()
			}
			return 2
		}
	}
	return 0
}

// benchFlag takes the -test.bench pattern out of the test flags; sim sets
// each process's own, and its -test.benchtime.
func benchFlag(args []string) (pattern string, rest []string, err error) {
	for i := 0; i < len(args); i++ {
		a := strings.TrimPrefix(args[i], "-")
		name, val, hasVal := strings.Cut(strings.TrimPrefix(a, "-"), "=")
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

// godebug adds asyncpreemptoff=1 to the caller's GODEBUG.
func godebug() string {
	if g := os.Getenv("GODEBUG"); g != "" {
		return g + ",asyncpreemptoff=1"
	}
	return "asyncpreemptoff=1"
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
