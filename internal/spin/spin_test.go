package spin

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/valgrind"
)

// raceBuild is set in a binary built with -race (race_test.go).
var raceBuild bool

var steps = []int{1000, 2000, 4000}

// TestCountdownIsExact runs this test binary under callgrind and counts
// each Countdown between two dumps, the same code around each: the windows
// differ by exactly InstrPerStep per step, so a slowdown asked for in instructions is what
// a simulation-mode comparison counts. Each size runs five times and the
// fewest count is kept, in case another thread ran inside a window.
func TestCountdownIsExact(t *testing.T) {
	if os.Getenv("KVBENCH_UNDER_VALGRIND") != "" {
		reasons := make([][]byte, len(steps)) // made outside the windows
		for i, n := range steps {
			reasons[i] = []byte("steps=" + strconv.Itoa(n) + "\x00")
		}
		for i, n := range steps {
			for range 5 { // after the first, every window is the same loop
				Countdown(n)
				valgrind.DumpStatsAt(reasons[i])
			}
		}
		return
	}
	if runtime.GOARCH != "amd64" {
		t.Skip("Countdown is exact on amd64 only")
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
		os.Args[0], "-test.run=^TestCountdownIsExact$")
	cmd.Env = append(os.Environ(), "KVBENCH_UNDER_VALGRIND=1", "GOMAXPROCS=1", "GODEBUG=asyncpreemptoff=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	fewest := map[int]int64{}
	files, _ := filepath.Glob(filepath.Join(dir, "out.*.*"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		n := -1
		for _, line := range strings.Split(string(b), "\n") {
			if r, ok := strings.CutPrefix(line, "desc: Trigger: Client Request: steps="); ok {
				n, _ = strconv.Atoi(r)
			}
			if r, ok := strings.CutPrefix(line, "totals: "); ok && n >= 0 {
				ir, _ := strconv.ParseInt(strings.Fields(r)[0], 10, 64)
				if v, seen := fewest[n]; !seen || ir < v {
					fewest[n] = ir
				}
			}
		}
	}
	if len(fewest) != len(steps) {
		t.Fatalf("windows %v: want one count for each of %v", fewest, steps)
	}
	for _, n := range steps[1:] {
		if got, want := fewest[n]-fewest[steps[0]], int64(InstrPerStep*(n-steps[0])); got != want {
			t.Errorf("Countdown(%d) counted %d instructions more than Countdown(%d), want %d", n, got, steps[0], want)
		}
	}
}
