package benchstat

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/benchstat/internal/history"
)

// versions runs versions.sh with args (HISTORY=off unless env says
// otherwise) and returns its exit status and combined output.
func versions(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command("./versions.sh", args...)
	cmd.Env = append(append(os.Environ(), "HISTORY=off"), env...)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}

// TestVersionsUsage: every mistake in a release matrix's command line is
// refused with exit 2 and a message naming it, before anything is built
// or written (no worktree, no results directory).
func TestVersionsUsage(t *testing.T) {
	tmp := t.TempDir()
	other := filepath.Join(tmp, "other")
	os.Mkdir(other, 0o755)
	os.WriteFile(filepath.Join(other, "go.mod"), []byte("module example.com/other\n\ngo 1.22\n"), 0o644)
	out := filepath.Join(tmp, "out")
	worktrees := func() string {
		b, err := exec.Command("git", "worktree", "list", "--porcelain").Output()
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	before := worktrees()
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no module", []string{"v1.4.3", "v1.5.0"}, "-module MODULE goes first"},
		{"module without a path", []string{"-module"}, "-module needs a module path"},
		{"one version", []string{"-module", "go.etcd.io/bbolt", "v1.5.0", "-count", "2"}, "-module go.etcd.io/bbolt needs two versions or more to compare, got 1 (v1.5.0)"},
		{"bad count", []string{"-module", "go.etcd.io/bbolt", "v1.4.3", "v1.5.0", "-count", "0"}, "-count 0: must be a whole number"},
		{"module twice", []string{"-module", "go.etcd.io/bbolt", "v1.4.3", "v1.5.0", "-module", "x"}, "-module goes first, once"},
		{"unknown module", []string{"-module", "example.com/no/such/engine", "v1.0.0", "v1.1.0"}, "-module example.com/no/such/engine: not a module this suite builds on"},
		{"version not on the proxy", []string{"-module", "go.etcd.io/bbolt", "v1.5.0", "v9.9.99"}, "go.etcd.io/bbolt v9.9.99: not found on the module proxy"},
		{"directory of another module", []string{"-module", "go.etcd.io/bbolt", "v1.5.0", other}, other + ": holds module example.com/other, not go.etcd.io/bbolt"},
		{"the same version twice", []string{"-module", "go.etcd.io/bbolt", "v1.5.0", "v1.5.0"}, "v1.5.0: go.etcd.io/bbolt v1.5.0 is listed twice"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, log := versions(t, nil, append(c.args, "-o", out)...)
			if code != 2 || !strings.Contains(log, "versions.sh: "+c.want) {
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
	if after := worktrees(); after != before {
		t.Errorf("a refused run left a worktree:\n%s", after)
	}
}

// TestVersionsRecordsARelease runs two bbolt releases on a tiny workload:
// both files hold reads and populates from a fixture of their own
// version, and the history store holds both as points of the release
// series.
func TestVersionsRecordsARelease(t *testing.T) {
	if os.Getenv("KVBENCH_E2E") == "" {
		t.Skip("set KVBENCH_E2E=1 (make gate-e2e): builds the suite with two bbolt releases and benchmarks them")
	}
	tmp := t.TempDir()
	data, out, xdg := filepath.Join(tmp, "data"), filepath.Join(tmp, "out"), filepath.Join(tmp, "xdg")
	os.Mkdir(data, 0o755)
	releases := []string{"v1.4.3", "v1.5.0"}
	code, log := versions(t, []string{"HISTORY=on", "XDG_DATA_HOME=" + xdg},
		"-module", "go.etcd.io/bbolt", releases[0], releases[1], "-count", "2", "-benchtime", "2000x",
		"-keys_mil", "0.005", "-dir", data, "-o", out)
	if code != 0 {
		t.Fatalf("versions.sh: exit %d:\n%s", code, log)
	}
	for _, v := range releases {
		b, err := os.ReadFile(filepath.Join(out, v+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		for _, want := range []string{"\nBenchmarkReadRandomBolt/", "\nBenchmarkPopulateBolt/", "fixture-bolt: go.etcd.io/bbolt " + v + " ("} {
			if !strings.Contains(s, want) {
				t.Errorf("%s.txt lacks %q", v, want)
			}
		}
		if n := strings.Count(s, "\nBenchmarkReadRandomBolt/"); n != 2 {
			t.Errorf("%s.txt: %d read results, want one a round (2)", v, n)
		}
	}
	st, err := history.Open(context.Background(), filepath.Join(xdg, "kvbench", "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.List(context.Background(), []history.Label{{Key: "series", Value: "release"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 {
		t.Fatalf("the history store holds %d runs of the release series, want 2:\n%s", len(runs), log)
	}
	head, _ := exec.Command("git", "rev-parse", "HEAD").Output()
	for i, r := range runs {
		for k, want := range map[string]string{
			"role": "versions", "module": "go.etcd.io/bbolt", "version": releases[i],
			"commit": strings.TrimSpace(string(head)), "engine-bolt": "go.etcd.io/bbolt " + releases[i],
		} {
			if got := r.Label(k); got != want {
				t.Errorf("run %d: label %s=%q, want %q", r.ID, k, got, want)
			}
		}
		if r.Label("commit-date") == "" {
			t.Errorf("run %d has no commit-date label", r.ID)
		}
	}
}
