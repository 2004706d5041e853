package valgrind

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var sink int

// raceBuild is set in a binary built with -race (race_test.go).
var raceBuild bool

func work(n int) {
	for i := 0; i < n; i++ {
		sink += i * i
	}
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

// TestDumpsUnderValgrind runs this test binary under callgrind: counters
// zeroed before a loop of 100,000 steps and dumped after it, then a loop
// of 300,000 dumped on its own, give two dumps of a few instructions per
// step each: nothing from the loop of 1,000,000 before the zero, nothing
// of one leaf in the other.
func TestDumpsUnderValgrind(t *testing.T) {
	if os.Getenv("KVBENCH_UNDER_VALGRIND") != "" {
		if !Running() {
			t.Fatal("Running() is false under Valgrind")
		}
		work(1_000_000) // before the zero: must not count
		ZeroStats()
		work(100_000)
		DumpStatsAt([]byte("leaf-a\x00"))
		work(300_000)
		DumpStatsAt([]byte("leaf-b\x00"))
		return
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
		os.Args[0], "-test.run=^TestDumpsUnderValgrind$")
	// No asynchronous preemption: Callgrind can fail an assertion on the
	// runtime's preemption signal, more often on a busy machine.
	cmd.Env = append(os.Environ(), "KVBENCH_UNDER_VALGRIND=1", "GOMAXPROCS=1", "GODEBUG=asyncpreemptoff=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got := map[string]float64{}
	files, _ := filepath.Glob(filepath.Join(dir, "out.*"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var leaf string
		for _, line := range strings.Split(string(b), "\n") {
			if r, ok := strings.CutPrefix(line, "desc: Trigger: Client Request: "); ok {
				leaf = r
			}
			if r, ok := strings.CutPrefix(line, "totals: "); ok && leaf != "" {
				got[leaf], _ = strconv.ParseFloat(strings.Fields(r)[0], 64)
			}
		}
	}
	a, b := got["leaf-a"]/100_000, got["leaf-b"]/300_000
	if a < 3 || a > 10 || b < 3 || b > 10 {
		t.Fatalf("instructions per dump %v: want 3 to 10 per step of each leaf's loop", got)
	}
}

// BenchmarkZeroStats is what a request costs outside Valgrind.
func BenchmarkZeroStats(b *testing.B) {
	for b.Loop() {
		ZeroStats()
	}
}
