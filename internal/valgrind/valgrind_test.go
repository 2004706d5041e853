package valgrind

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/spin"
)

var sink int

// raceBuild is set in a binary built with -race (race_test.go).
var raceBuild bool

func work(n int) {
	for i := 0; i < n; i++ {
		sink += i * i
	}
}

// underCallgrind runs the calling test again, in this test binary under
// callgrind, where it calls child; it returns the fewest instructions
// (Ir) any dump counted, by the dump's description. It skips where
// Valgrind cannot run this binary.
func underCallgrind(t *testing.T, child func()) map[string]int64 {
	if os.Getenv("KVBENCH_UNDER_VALGRIND") != "" {
		child()
		return nil
	}
	if raceBuild {
		t.Skip("a -race binary does not run under Valgrind")
	}
	vg, err := exec.LookPath("valgrind")
	if err != nil {
		t.Skip("valgrind is not installed (make valgrind-deps installs it)")
	}
	dir := t.TempDir()
	cmd := exec.Command(vg, "--tool=callgrind", "--callgrind-out-file="+filepath.Join(dir, "out.%p"),
		os.Args[0], "-test.run=^"+t.Name()+"$")
	// No asynchronous preemption: Callgrind can fail an assertion on the
	// runtime's preemption signal, more often on a busy machine.
	cmd.Env = append(os.Environ(), "KVBENCH_UNDER_VALGRIND=1", "GOMAXPROCS=1", "GODEBUG=asyncpreemptoff=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	fewest := map[string]int64{}
	files, _ := filepath.Glob(filepath.Join(dir, "out.*.*"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		desc := ""
		for _, line := range strings.Split(string(b), "\n") {
			if r, ok := strings.CutPrefix(line, "desc: Trigger: Client Request: "); ok {
				desc = r
			}
			if r, ok := strings.CutPrefix(line, "totals: "); ok && desc != "" {
				ir, _ := strconv.ParseInt(strings.Fields(r)[0], 10, 64)
				if v, seen := fewest[desc]; !seen || ir < v {
					fewest[desc] = ir
				}
			}
		}
	}
	return fewest
}

// TestNativeRequestsAreNoOps: outside Valgrind every request returns its
// default and changes nothing.
func TestNativeRequestsAreNoOps(t *testing.T) {
	if os.Getenv("KVBENCH_UNDER_VALGRIND") != "" {
		t.Skip("the child under Valgrind")
	}
	if Running() {
		t.Fatal("Running() outside Valgrind")
	}
	ZeroStats()
	DumpStatsAt([]byte("x\x00"))
}

// TestDumpsUnderValgrind: counters zeroed before a loop of 100,000 steps
// and dumped after it, then a loop of 300,000 dumped on its own, give two
// dumps of a few instructions per step each: nothing from the loop of
// 1,000,000 before the zero, nothing of one leaf in the other.
func TestDumpsUnderValgrind(t *testing.T) {
	got := underCallgrind(t, func() {
		if !Running() {
			t.Fatal("Running() is false under Valgrind")
		}
		work(1_000_000) // before the zero: must not count
		ZeroStats()
		work(100_000)
		DumpStatsAt([]byte("leaf-a\x00"))
		work(300_000)
		DumpStatsAt([]byte("leaf-b\x00"))
	})
	if got == nil {
		return
	}
	a, b := float64(got["leaf-a"])/100_000, float64(got["leaf-b"])/300_000
	if a < 3 || a > 10 || b < 3 || b > 10 {
		t.Fatalf("instructions per dump %v: want 3 to 10 per step of each leaf's loop", got)
	}
}

var steps = []int{1000, 2000, 4000}

// TestCountdownIsExact counts each spin.Countdown between two dumps, the
// same code around each: the windows differ by exactly spin.InstrPerStep
// per step, so a slowdown asked for in instructions is what a
// simulation-mode comparison counts. Each size runs five times and the
// fewest count is kept, in case another thread ran inside a window.
func TestCountdownIsExact(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("Countdown is exact on amd64 only")
	}
	fewest := underCallgrind(t, func() {
		reasons := make([][]byte, len(steps)) // made outside the windows
		for i, n := range steps {
			reasons[i] = []byte("steps=" + strconv.Itoa(n) + "\x00")
		}
		for i, n := range steps {
			for range 5 { // after the first, every window is the same loop
				spin.Countdown(n)
				DumpStatsAt(reasons[i])
			}
		}
	})
	if fewest == nil {
		return
	}
	if len(fewest) != len(steps) {
		t.Fatalf("windows %v: want one count for each of %v", fewest, steps)
	}
	first := fewest["steps="+strconv.Itoa(steps[0])]
	for _, n := range steps[1:] {
		if got, want := fewest["steps="+strconv.Itoa(n)]-first, int64(spin.InstrPerStep*(n-steps[0])); got != want {
			t.Errorf("Countdown(%d) counted %d instructions more than Countdown(%d), want %d", n, got, steps[0], want)
		}
	}
}

// BenchmarkZeroStats is what a request costs outside Valgrind.
func BenchmarkZeroStats(b *testing.B) {
	for b.Loop() {
		ZeroStats()
	}
}
