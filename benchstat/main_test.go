// End-to-end tests of kvb, the suite's tooling, driven as a user runs it:
// the kvb binary is built once and run from the repository. They build
// the suite several times and run benchmarks briefly, so they run only
// with KVBENCH_E2E=1 (make gate-e2e).
//
//	KVBENCH_E2E=1 go test -v ./benchstat
package benchstat

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// kvbBinary is the kvb built for this test process ("" without
// KVBENCH_E2E).
var kvbBinary string

func TestMain(m *testing.M) {
	code, err := withKvb(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(code)
}

func withKvb(m *testing.M) (int, error) {
	if os.Getenv("KVBENCH_E2E") == "" {
		return m.Run(), nil
	}
	dir, err := os.MkdirTemp("", "kvbench-e2e.")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	kvbBinary = filepath.Join(dir, "kvb")
	if out, err := exec.Command("go", "build", "-o", kvbBinary, "./kvb").CombinedOutput(); err != nil {
		return 0, fmt.Errorf("building kvb: %v\n%s", err, out)
	}
	return m.Run(), nil
}

// e2e skips t unless KVBENCH_E2E is set; why says what the test builds
// and runs.
func e2e(t *testing.T, why string) {
	t.Helper()
	if kvbBinary == "" {
		t.Skip("set KVBENCH_E2E=1 (make gate-e2e): " + why)
	}
}

// kvb runs the kvb binary with args, HISTORY=off unless env says
// otherwise, and returns its exit status and combined output.
func kvb(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(kvbBinary, args...)
	cmd.Env = append(append(os.Environ(), "HISTORY=off"), env...)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}
