// End-to-end tests of kvb, the suite's tooling, driven as a user runs it:
// the kvb binary is built once and run from the repository. They build
// the suite several times and run benchmarks briefly: make test runs them
// at the smallest size whose verdicts still hold, make gate-e2e at the
// size docs/targets.md times (KVBENCH_E2E=full); -short skips them.
//
//	go test -v ./benchstat                     (make test's size)
//	KVBENCH_E2E=full go test -v ./benchstat    (make gate-e2e)
package benchstat

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// kvbBinary is the kvb built for this test process (by e2e).
var kvbBinary string

// size is how much each end-to-end comparison reads: -benchtime (also
// the iterations a sim round counts) and -keys_mil.
type size struct {
	benchtime, keysMil string
	full               bool // make gate-e2e's size
}

// e2eSize is make test's size unless KVBENCH_E2E=full asks for make
// gate-e2e's: ten times the reads over five times the keys.
var e2eSize = func() size {
	if os.Getenv("KVBENCH_E2E") == "full" {
		return size{"20000x", "0.01", true}
	}
	return size{"2000x", "0.002", false}
}()

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if kvbDir != "" {
		os.RemoveAll(kvbDir)
	}
	os.Exit(code)
}

var (
	kvbOnce sync.Once
	kvbDir  string
	kvbErr  error
)

// e2e skips t under -short (why says what the test builds and runs) and
// otherwise builds kvb, once, for every test of the process.
func e2e(t *testing.T, why string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: " + why)
	}
	if v := os.Getenv("KVBENCH_E2E"); v != "" && v != "full" {
		t.Fatalf("KVBENCH_E2E=%s: want full (make gate-e2e's size) or unset (make test's)", v)
	}
	kvbOnce.Do(func() {
		if kvbDir, kvbErr = os.MkdirTemp("", "kvbench-e2e."); kvbErr != nil {
			return
		}
		kvbBinary = filepath.Join(kvbDir, "kvb")
		kvbErr = cachedBuild("./kvb", kvbBinary)
	})
	if kvbErr != nil {
		t.Fatal(kvbErr)
	}
}

// kvb runs the kvb binary with args and env, and returns its exit status
// and combined output.
func kvb(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(kvbBinary, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}

// cachedBuild writes to dst the go command's build of the main package
// pkg as go run makes it, which the build cache keeps: -exec cp copies
// it out instead of running it, so a second build of an unchanged kvb,
// make test's own among them (go run under the same GOFLAGS), links
// nothing.
func cachedBuild(pkg, dst string) error {
	if out, err := exec.Command("go", "run", "-exec", "cp", pkg, dst).CombinedOutput(); err != nil {
		return fmt.Errorf("building %s: %v\n%s", pkg, err, out)
	}
	return nil
}
