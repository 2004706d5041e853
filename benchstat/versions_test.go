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

// TestE2EVersionsRecordsARelease runs kvb versions on two bbolt releases
// and a tiny workload, one round each (the matrix has no gate to feed):
// both files hold reads and populates from a fixture of their own
// version, and the history store holds both as points of the release
// series. Its usage errors are tested in benchstat/kvb.
func TestE2EVersionsRecordsARelease(t *testing.T) {
	e2e(t, "builds the suite with two bbolt releases and benchmarks them")
	tmp := t.TempDir()
	data, out, xdg := filepath.Join(tmp, "data"), filepath.Join(tmp, "out"), filepath.Join(tmp, "xdg")
	os.Mkdir(data, 0o755)
	releases := []string{"v1.4.3", "v1.5.0"}
	code, log := kvb(t, []string{"HISTORY=on", "XDG_DATA_HOME=" + xdg},
		"versions", "-module", "go.etcd.io/bbolt", releases[0], releases[1], "-count", "1", "-benchtime", e2eSize.benchtime,
		"-keys_mil", e2eSize.keysMil, "-dir", data, "-o", out)
	if code != 0 {
		t.Fatalf("kvb versions: exit %d:\n%s", code, log)
	}
	if !strings.Contains(log, "will be recorded in the history store "+filepath.Join(xdg, "kvbench", "history.db")) {
		t.Errorf("kvb versions did not say where it records:\n%s", log)
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
		if n := strings.Count(s, "\nBenchmarkReadRandomBolt/"); n != 1 {
			t.Errorf("%s.txt: %d read results, want one a round (1)", v, n)
		}
	}
	for file, want := range map[string]string{"order.txt": "1 v1.4.3 v1.5.0\n", "benchstat.txt": "kvb versions: go.etcd.io/bbolt v1.4.3 v1.5.0, 1 rounds interleaved"} {
		if b, err := os.ReadFile(filepath.Join(out, file)); err != nil || !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %q (%v):\n%s", file, want, err, b)
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
