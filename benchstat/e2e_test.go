// End-to-end check of benchstat/compare.sh and the gate: a commit that
// makes one engine do more work per read must fail the gate.
//
//	KVBENCH_E2E=1 go test -run CompareCatches -v ./benchstat   (make gate-e2e)
package benchstat

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// slower wraps the Bolt adapter so every Get looks its key up three more
// times. It is a file of its own, so it applies to any version of the
// adapter that keeps the engine interface.
const slower = `package engine

func init() {
	info := registry["bolt"]
	open := info.Open
	info.Open = func(o Options) (DB, error) {
		db, err := open(o)
		if err != nil {
			return nil, err
		}
		return slowDB{db}, nil
	}
	registry["bolt"] = info
}

type slowDB struct{ DB }

func (d slowDB) NewReader() (Reader, error) {
	r, err := d.DB.NewReader()
	return slowReader{r}, err
}

type slowReader struct{ Reader }

func (r slowReader) Get(key []byte, fn func([]byte) error) (bool, error) {
	for range 3 {
		r.Reader.Get(key, func([]byte) error { return nil })
	}
	return r.Reader.Get(key, fn)
}
`

func TestCompareCatchesSlowerEngine(t *testing.T) {
	if os.Getenv("KVBENCH_E2E") == "" {
		t.Skip("set KVBENCH_E2E=1 (make gate-e2e): builds two commits and benchmarks them")
	}
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	git := func(dir string, args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	// The slower commit lives on a detached worktree, never on a branch.
	wt := filepath.Join(tmp, "slower")
	git(repo, "worktree", "add", "--quiet", "--detach", wt, "HEAD")
	t.Cleanup(func() { exec.Command("git", "-C", repo, "worktree", "remove", "--force", wt).Run() })
	if err := os.WriteFile(filepath.Join(wt, "internal/engine/zz_slower.go"), []byte(slower), 0o644); err != nil {
		t.Fatal(err)
	}
	git(wt, "add", "internal/engine/zz_slower.go")
	git(wt, "-c", "user.name=kvbench", "-c", "user.email=kvbench@localhost", "commit", "--quiet", "--no-verify", "-m", "bolt: three extra lookups per read")
	slow := git(wt, "rev-parse", "HEAD")

	data, out := filepath.Join(tmp, "data"), filepath.Join(tmp, "out")
	os.Mkdir(data, 0o755)
	cmd := exec.Command("./compare.sh", "HEAD", slow, "-count", "5", "-bench", "BenchmarkReadRandomBolt",
		"-benchtime", "20000x", "-keys_mil", "0.01", "-valsz", "256", "-dir", data, "-o", out)
	log, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(out, "gate.md"))
	t.Logf("gate summary:\n%s", md)
	if code != 1 {
		t.Fatalf("compare.sh exit %d, want 1 (regression):\n%s", code, log)
	}
	for _, want := range []string{"FAIL", "| REGRESSION | `ReadRandomBolt/", "cpu-ns/op"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("gate summary lacks %q", want)
		}
	}
}
