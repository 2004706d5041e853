package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/benchstat/internal/sides"
)

// repoRoot is the top of the repository the tests run in.
func repoRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skip("not in a git checkout:", err)
	}
	return strings.TrimSpace(string(out))
}

// offline turns the module proxy off for the rest of t, after the
// repository's own modules are in the module cache (go mod download, with
// the proxy still on): a fresh machine's cache may not yet hold a module
// that only a tagged build (-tags rocksdb) needs, and a test of what the
// go command says about a missing version must not fail for that.
func offline(t *testing.T, repo string) {
	t.Helper()
	cmd := exec.Command(goTool(), "mod", "download")
	cmd.Dir = repo
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go mod download: %v\n%s", err, out)
	}
	t.Setenv("GOPROXY", "off")
}

// unchanged fails the test if the user's go.mod or go.sum changed.
func unchanged(t *testing.T, repo string) {
	t.Helper()
	var before [][]byte
	for _, f := range []string{"go.mod", "go.sum"} {
		b, _ := os.ReadFile(filepath.Join(repo, f))
		before = append(before, b)
	}
	t.Cleanup(func() {
		for i, f := range []string{"go.mod", "go.sum"} {
			if b, _ := os.ReadFile(filepath.Join(repo, f)); !bytes.Equal(b, before[i]) {
				t.Errorf("the repository's %s changed", f)
			}
		}
	})
}

// TestBadModuleVersionStopsTheRun: a module version that does not exist
// stops the comparison with the go command's own error, before anything
// is built, run or written. The module proxy is off, so the version
// cannot be found and the test needs no network.
func TestBadModuleVersionStopsTheRun(t *testing.T) {
	repo := repoRoot(t)
	unchanged(t, repo)
	offline(t, repo)
	out := filepath.Join(t.TempDir(), "out")
	for _, args := range [][]string{
		{"-module", "go.etcd.io/bbolt", "v1.99.99", "v1.5.0", "-o", out},
		{"-module", "go.etcd.io/bbolt", "v1.5.0", "v1.99.99", "-o", out},
	} {
		var stdout, stderr bytes.Buffer
		code := commands["compare"].Run(args, &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), "go: go.etcd.io/bbolt@v1.99.99: ") {
			t.Errorf("%q: exit %d, want 2 with go's error about v1.99.99:\n%s", args, code, stderr.String())
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%q: the run wrote %s", args, out)
		}
	}
}

// TestBadModuleVersionStopsTheBuild: a side built at a version that does
// not exist fails with the go command's error, and the version goes into
// a copy of go.mod, never the repository's.
func TestBadModuleVersionStopsTheBuild(t *testing.T) {
	repo := repoRoot(t)
	unchanged(t, repo)
	offline(t, repo)
	scratch := t.TempDir()
	t.Setenv("TMPDIR", scratch)
	c := &sides.Builder{Prog: "kvb compare", Module: "go.etcd.io/bbolt", Stderr: &bytes.Buffer{}, Repo: repo}
	if err := c.Scratch(); err != nil {
		t.Fatal(err)
	}
	s := &sides.Side{Role: "base", Kind: sides.Version, Spec: "v1.99.99", Label: "v1.99.99"}
	err := c.Build(context.Background(), s)
	if err == nil || !strings.Contains(err.Error(), "building base with go.etcd.io/bbolt v1.99.99: go test: ") || !strings.Contains(err.Error(), "module lookup disabled by GOPROXY=off") {
		t.Fatalf("build at v1.99.99: %v", err)
	}
	mods, _ := filepath.Glob(filepath.Join(scratch, "kvbench-compare.*", "base.mod"))
	if len(mods) != 1 {
		t.Fatalf("copies of go.mod in the scratch directory: %q, want one", mods)
	}
	if mod, _ := os.ReadFile(mods[0]); !strings.Contains(string(mod), "go.etcd.io/bbolt v1.99.99") {
		t.Errorf("the copy of go.mod does not require v1.99.99:\n%s", mod)
	}
}

// TestUnknownRefStopsTheRun: a ref that names no commit stops the run
// before anything is built, naming the ref.
func TestUnknownRefStopsTheRun(t *testing.T) {
	repoRoot(t)
	out := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	code := commands["compare"].Run([]string{"HEAD", "no-such-ref-anywhere", "-o", out}, &stdout, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "head no-such-ref-anywhere: not a commit in ") {
		t.Errorf("exit %d, want 2 naming the ref:\n%s", code, stderr.String())
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("the run wrote %s", out)
	}
}
