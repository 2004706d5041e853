package versions

import (
	"bytes"
	"cmp"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/benchstat/internal/results"
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
	cmd := exec.Command(cmp.Or(os.Getenv("GO"), "go"), "mod", "download")
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

// leftovers lists what kvb left in scratch, the TMPDIR a test gave it:
// its scratch directories (kvbench-*) and the repository's worktrees
// inside them. A worktree elsewhere is not this run's: the repository's
// own, or one that another kvb makes beside the test (make test runs the
// end-to-end kvb compare of two commits, which builds each in a worktree
// of this repository, beside this package's tests).
func leftovers(t *testing.T, scratch string) []string {
	t.Helper()
	b, err := exec.Command("git", "worktree", "list", "--porcelain").Output()
	if err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(scratch)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for line := range strings.Lines(string(b)) {
		p, ok := strings.CutPrefix(strings.TrimSpace(line), "worktree ")
		if !ok {
			continue
		}
		for _, dir := range []string{scratch, real} {
			if strings.HasPrefix(p, dir+string(filepath.Separator)) {
				left = append(left, "worktree "+p)
				break
			}
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(scratch, "kvbench-*"))
	return append(left, dirs...)
}

// TestVersionsUsage: every mistake in a release matrix's command line is
// refused with exit 2 and a message naming it, before anything is built
// or written (no build, no worktree, no results directory). The module
// proxy is off: versions are looked up in the module cache alone.
func TestVersionsUsage(t *testing.T) {
	repo := repoRoot(t)
	unchanged(t, repo)
	offline(t, repo)
	tmp := t.TempDir()
	other := filepath.Join(tmp, "other")
	os.Mkdir(other, 0o755)
	os.WriteFile(filepath.Join(other, "go.mod"), []byte("module example.com/other\n\ngo 1.22\n"), 0o644)
	out := filepath.Join(tmp, "out")
	// kvb's scratch directory, and any worktree it makes, in a TMPDIR of
	// the test's own
	scratch := t.TempDir()
	t.Setenv("TMPDIR", scratch)
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no module", []string{"v1.4.3", "v1.5.0"}, "-module MODULE is required"},
		{"module without a path", []string{"-module"}, "-module needs a module path, not the flag -o"},
		{"a flag for a module", []string{"-module", "-count", "3", "v1.4.3", "v1.5.0"}, "-module needs a module path, not the flag -count"},
		{"module empty", []string{"-module", "", "v1.4.3", "v1.5.0"}, "-module needs a module path"},
		{"one version", []string{"-module", "go.etcd.io/bbolt", "v1.5.0", "-count", "2"}, "-module go.etcd.io/bbolt needs two versions or more to compare, got 1 (v1.5.0)"},
		{"bad count", []string{"-module", "go.etcd.io/bbolt", "v1.4.3", "v1.5.0", "-count", "0"}, "-count 0: must be a whole number"},
		{"bad benchtime", []string{"-module", "go.etcd.io/bbolt", "v1.4.3", "v1.5.0", "-benchtime", "0x"}, "-benchtime 0x: a duration"},
		{"bad bench", []string{"-module", "go.etcd.io/bbolt", "v1.4.3", "v1.5.0", "-bench", "Read(/x"}, "-bench Read(/x: error parsing regexp"},
		{"unknown flag", []string{"-module", "go.etcd.io/bbolt", "v1.4.3", "v1.5.0", "-nosuch"}, "flag provided but not defined: -nosuch"},
		{"module twice", []string{"-module", "go.etcd.io/bbolt", "v1.4.3", "v1.5.0", "-module", "x"}, "given twice (go.etcd.io/bbolt, then x)"},
		{"unknown module", []string{"-module", "example.com/no/such/engine", "v1.0.0", "v1.1.0"}, "-module example.com/no/such/engine: not a module this suite builds on"},
		{"module of no engine", []string{"-module", "golang.org/x/sys", "v0.48.0", "v0.47.0"}, "-module golang.org/x/sys: no engine of this suite is built on it"},
		{"version not on the proxy", []string{"-module", "go.etcd.io/bbolt", "v1.5.0", "v9.9.99"}, "version 2 go.etcd.io/bbolt v9.9.99: go list: go: go.etcd.io/bbolt@v9.9.99: "},
		{"no such directory", []string{"-module", "go.etcd.io/bbolt", "v1.5.0", filepath.Join(tmp, "nosuch")}, filepath.Join(tmp, "nosuch") + ": no such directory"},
		{"directory of another module", []string{"-module", "go.etcd.io/bbolt", "v1.5.0", other}, other + `: holds module "example.com/other", not go.etcd.io/bbolt`},
		{"the same version twice", []string{"-module", "go.etcd.io/bbolt", "v1.5.0", "v1.5.0"}, "v1.5.0: go.etcd.io/bbolt v1.5.0 is listed twice"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Command.Run(append(c.args, "-o", out), &stdout, &stderr)
			log := stderr.String()
			if code != 2 || !strings.Contains(log, "kvb versions: ") || !strings.Contains(log, c.want) {
				t.Errorf("exit %d, want 2 with %q:\n%s", code, c.want, log)
			}
			if strings.Contains(log, "building") {
				t.Errorf("refused after a build started:\n%s", log)
			}
		})
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused run made its results directory %s (%v)", out, err)
	}
	if left := leftovers(t, scratch); len(left) > 0 {
		t.Errorf("the refused runs left behind:\n%s", strings.Join(left, "\n"))
	}
}

// TestVersionsFlagsAnywhere: flags mean the same before, between and
// after the versions; the suite's go to every run after the defaults.
func TestVersionsFlagsAnywhere(t *testing.T) {
	want := append(slices.Clone(defaultVersionsSuiteArgs), "-keys_mil=0.005", "-test.cpu=2")
	for _, args := range [][]string{
		{"-module", "go.etcd.io/bbolt", "v1.4.3", "v1.5.0", "-count", "3", "-keys_mil", "0.005", "-cpu", "2", "-build_only"},
		{"-count=3", "v1.4.3", "-module", "go.etcd.io/bbolt", "-keys_mil=0.005", "v1.5.0", "-cpu", "2", "-build_only"},
		{"v1.4.3", "v1.5.0", "--module", "go.etcd.io/bbolt", "--count", "3", "-keys_mil", "0.005", "-cpu=2", "-build_only"},
	} {
		a, err := versionsCommand.Parse(args)
		if err != nil {
			t.Errorf("%q: %v", args, err)
			continue
		}
		if a.module != "go.etcd.io/bbolt" || !slices.Equal(a.specs, []string{"v1.4.3", "v1.5.0"}) || a.count != 3 || !a.buildOnly || !reflect.DeepEqual(a.suite, want) {
			t.Errorf("%q parsed as %+v", args, a)
		}
	}
	a, err := versionsCommand.Parse([]string{"-module", "go.etcd.io/bbolt", "v1.4.3", "v1.5.0"})
	if err != nil {
		t.Fatal(err)
	}
	if a.count != 10 || a.benchtime != "0.2s" || a.out != "results/versions" || a.buildOnly {
		t.Errorf("defaults: %+v", a)
	}
}

// TestVersionsWorkload: by default the module's own engines' warm reads
// and a populate; -bench replaces both.
func TestVersionsWorkload(t *testing.T) {
	steps, _, err := workload(&versionsArgs{module: "go.etcd.io/bbolt", benchtime: "0.2s"})
	if err != nil {
		t.Fatal(err)
	}
	want := []step{
		{"^BenchmarkReadRandom(Bolt)$", "0.2s", warmOneThread},
		{"^BenchmarkPopulate(Bolt)$/valsz/batch/sync=false", "1x", nil},
	}
	if !reflect.DeepEqual(steps, want) {
		t.Errorf("bbolt's workload: %+v, want %+v", steps, want)
	}
	steps, _, _ = workload(&versionsArgs{module: "go.etcd.io/bbolt", bench: "BenchmarkScanBolt", benchtime: "100x"})
	if !reflect.DeepEqual(steps, []step{{"BenchmarkScanBolt", "100x", warmOneThread}}) {
		t.Errorf("-bench: %+v", steps)
	}
}

// brokenCopy copies the module cache's bbolt into dir, writable, with a
// line that does not compile appended to bucket.go.
func brokenCopy(t *testing.T, dir, line string) {
	t.Helper()
	src, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "go.etcd.io/bbolt").Output()
	if err != nil {
		t.Fatalf("go list -m go.etcd.io/bbolt: %v", err)
	}
	if err := os.CopyFS(dir, os.DirFS(strings.TrimSpace(string(src)))); err != nil {
		t.Fatal(err)
	}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o755)
		} else if err == nil {
			os.Chmod(p, 0o644)
		}
		return err
	})
	f, err := os.OpenFile(filepath.Join(dir, "bucket.go"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("\n" + line + "\n"); err != nil {
		t.Fatal(err)
	}
}

// TestVersionThatDoesNotBuildStopsTheRun builds two copies of bbolt that
// do not compile: every version is built, then the run stops with exit 2
// naming each copy and the compiler's first error in it, before anything
// runs or is written, and the repository's go.mod and go.sum are
// untouched. (kvb compare's equivalents are in benchstat/kvb/side_test.go.)
func TestVersionThatDoesNotBuildStopsTheRun(t *testing.T) {
	repo := repoRoot(t)
	unchanged(t, repo)
	offline(t, repo)
	tmp := t.TempDir()
	a, b := filepath.Join(tmp, "a"), filepath.Join(tmp, "b")
	brokenCopy(t, a, "func kvbenchBrokenA() { kvbenchUndefinedA() }")
	brokenCopy(t, b, "var kvbenchBrokenB int = \"not an int\"")
	out := filepath.Join(tmp, "out")
	var stdout, stderr bytes.Buffer
	// -tags '': the build kvb's own compiled (go run's), so the failed
	// builds compile nothing but the broken copies, not RocksDB's
	// binding beside make test's other builds of it
	code := Command.Run([]string{"-module", "go.etcd.io/bbolt", "-tags", "", a, b, "-o", out}, &stdout, &stderr)
	log := stderr.String()
	if code != 2 {
		t.Fatalf("exit %d, want 2:\n%s", code, log)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`kvb versions: the suite at [0-9a-f]{7}( with uncommitted changes)? does not build with go.etcd.io/bbolt local-[0-9a-f]{12}: \S*bucket.go:\d+:\d+: undefined: kvbenchUndefinedA\n`),
		regexp.MustCompile(`kvb versions: the suite at [0-9a-f]{7}( with uncommitted changes)? does not build with go.etcd.io/bbolt local-[0-9a-f]{12}: \S*bucket.go:\d+:\d+: cannot use "not an int"`),
	} {
		if !want.MatchString(log) {
			t.Errorf("no line matching %s:\n%s", want, log)
		}
	}
	if strings.Contains(log, "every version builds:") || strings.Contains(log, "round 1 of") {
		t.Errorf("the run went on after a version failed to build:\n%s", log)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the run made its results directory %s (%v)", out, err)
	}
}

// TestFirstError: a version that does not build is named with the
// compiler's first error, not the go command's progress.
func TestFirstError(t *testing.T) {
	for _, c := range []struct{ log, want string }{
		{"go: downloading go.etcd.io/bbolt v1.3.11\n# go.etcd.io/bbolt\n../bbolt/bucket.go:12:2: undefined: x\n../bbolt/db.go:3:1: y\n", "../bbolt/bucket.go:12:2: undefined: x"},
		{"go: finding module for package go.etcd.io/bbolt/errors\ngo: go.etcd.io/bbolt@v1.3.11: missing go.sum entry\n", "go: go.etcd.io/bbolt@v1.3.11: missing go.sum entry"},
		{"", "(no output)"},
	} {
		if got := firstError(c.log); got != c.want {
			t.Errorf("firstError(%q) = %q, want %q", c.log, got, c.want)
		}
	}
}

// TestVersionsHeader: a version's file starts with the configuration
// lines that make every result in it a point of the module's release
// series; dirty only when the tree was, and an unknown commit date left
// out rather than empty.
func TestVersionsHeader(t *testing.T) {
	m := &matrix{Builder: sides.Builder{Module: "go.etcd.io/bbolt"}, suiteCommit: "0123456789abcdef0123456789abcdef01234567"}
	v := &sides.Side{Kind: sides.Version, Spec: "v1.4", Label: "v1.4.3"}
	want := "role: versions\nseries: release\nmodule: go.etcd.io/bbolt\nversion: v1.4.3\ncommit: 0123456789abcdef0123456789abcdef01234567\n"
	if got := m.header(v); got != want {
		t.Errorf("header %q, want %q", got, want)
	}
	m.commitDate, m.dirtyTree = "2026-11-24T18:16:13+00:00", true
	f, err := results.Read(strings.NewReader(m.header(v)+"BenchmarkReadRandomBolt/valsz=256-2 1000 350 ns/op\n"), "v1.4.3.txt")
	if err != nil || len(f.Results) != 1 {
		t.Fatalf("read back: %v, %d results", err, len(f.Results))
	}
	for k, want := range map[string]string{"role": "versions", "series": "release", "module": "go.etcd.io/bbolt", "version": "v1.4.3",
		"commit-date": "2026-11-24T18:16:13+00:00", "dirty": "true"} {
		if got := f.Results[0].Label(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
}
