package power

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSlowdownLaidOverTheSuite builds the suite as kvb power builds its
// slowed binary and runs it: KVBENCH_SLOWDOWN slows the named engines'
// reads on the head side, by the loop alone on the base side, and an
// engine that is not registered stops the binary.
func TestSlowdownLaidOverTheSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the suite's test binary")
	}
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	overlay, err := writeSlowdownOverlay(root, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	bin := filepath.Join(dir, "slow.test")
	m := &comparisons{dir: dir, stderr: io.Discard}
	if err := m.buildSuite(bin, slowdownTag, overlay); err != nil {
		t.Fatal(err)
	}
	for _, f := range slowdownFiles {
		if _, err := os.Stat(filepath.Join(root, f)); err == nil {
			t.Errorf("%s was written into the suite's tree", f)
		}
	}
	run := func(side, spec string, args ...string) (string, string, int) {
		cmd := exec.Command(bin, append([]string{"-test.run", "^$"}, args...)...)
		cmd.Env = append(os.Environ(), "KVBENCH_SIDE="+side, "KVBENCH_SLOWDOWN="+spec)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return stdout.String(), stderr.String(), code
	}
	// A delay under a nanosecond keeps its fraction (the Memory rail's
	// reads take tens of nanoseconds: 2% of one is under one).
	if _, stderr, code := run("head", "bolt=22instr,pebble=1ms,memory=0.5ns"); code != 0 ||
		!strings.Contains(stderr, "kvbench: bolt reads slowed by 22 instructions (") ||
		!strings.Contains(stderr, "kvbench: pebble reads slowed by 1ms (") ||
		!strings.Contains(stderr, "kvbench: memory reads slowed by 0.5ns (") || strings.Contains(stderr, "0.5ns (0.00 spins)") {
		t.Errorf("head side: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := run("base", "bolt=1ms"); code != 0 || !strings.Contains(stderr, "kvbench: bolt reads slowed by 1ms (0.00 spins)") {
		t.Errorf("base side: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := run("head", "nosuch=1ms"); code != 2 || !strings.Contains(stderr, `KVBENCH_SLOWDOWN "nosuch=1ms": want engine=duration`) {
		t.Errorf("an engine not registered: exit %d\n%s", code, stderr)
	}

	// Bolt's warm reads: 2 ms each on the head side, about 1 µs on the
	// base side. The loop's calibration (the best of five timings of
	// 2,000,000 spins, about 2 ms each) reads low when other work
	// preempts all five, and the slowed read is then shorter than asked
	// (1.7 ms beside make test): the sides are told apart at a quarter of
	// the delay. A pause of the machine raises a mean of reads; the base
	// side's is over 10,000 reads, so that only a pause of 5 s lifts it to
	// that bound.
	const delay = 2 * time.Millisecond
	nsPerOp := regexp.MustCompile(`(?m)^BenchmarkReadRandomBolt\S*\s+\d+\s+([0-9.]+) ns/op`)
	for _, side := range []struct{ name, reads string }{{"head", "100x"}, {"base", "10000x"}} {
		stdout, stderr, code := run(side.name, "bolt="+delay.String(), "-test.bench", "^BenchmarkReadRandomBolt$//cache=warm", "-test.benchtime", side.reads,
			"-keys_mil", "0.002", "-valsz", "256", "-threads", "1", "-dir", dir)
		lines := nsPerOp.FindAllStringSubmatch(stdout, -1)
		if code != 0 || len(lines) == 0 || strings.Contains(stdout, "cache=cold") {
			t.Fatalf("%s side: exit %d, no ReadRandomBolt result\n%s\n%s", side.name, code, stdout, stderr)
		}
		for _, l := range lines {
			ns, _ := strconv.ParseFloat(l[1], 64)
			if slowed := ns >= float64(delay.Nanoseconds())/4; slowed != (side.name == "head") {
				t.Errorf("%s side: a read took %v: %s", side.name, time.Duration(ns), l[0])
			}
		}
	}
}
