package versions

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/benchstat/internal/results"
)

// TestE2EVersionsLabelsARelease runs kvb versions on two bbolt releases
// and a tiny workload, one round each (the matrix has no gate to feed):
// both files hold reads and populates from a fixture of their own
// version, and every result in them carries the configuration lines that
// make the file a point of the module's release series, as the lab's
// history store records it: 2,000 reads of 2,000 keys (make lab-test);
// -short skips it.
func TestE2EVersionsLabelsARelease(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the suite with two bbolt releases and benchmarks them")
	}
	const benchtime, keysMil = "2000x", "0.002"
	tmp := t.TempDir()
	data, out := filepath.Join(tmp, "data"), filepath.Join(tmp, "out")
	os.Mkdir(data, 0o755)
	releases := []string{"v1.4.3", "v1.5.0"}
	var log bytes.Buffer
	code := Command.Run([]string{"-module", "go.etcd.io/bbolt", releases[0], releases[1], "-count", "1", "-benchtime", benchtime,
		"-keys_mil", keysMil, "-dir", data, "-o", out}, &log, &log)
	if code != 0 {
		t.Fatalf("kvb versions: exit %d:\n%s", code, log.String())
	}
	head, _ := exec.Command("git", "rev-parse", "HEAD").Output()
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
		f, err := results.Read(strings.NewReader(s), v+".txt")
		if err != nil || len(f.Skipped) > 0 || len(f.Results) == 0 {
			t.Fatalf("%s.txt: %v, skipped %v, %d results", v, err, f.Skipped, len(f.Results))
		}
		for _, r := range f.Results {
			for k, want := range map[string]string{
				"role": "versions", "series": "release", "module": "go.etcd.io/bbolt", "version": v,
				"commit": strings.TrimSpace(string(head)), "engine-bolt": "go.etcd.io/bbolt " + v,
			} {
				if got := r.Label(k); got != want {
					t.Errorf("%s.txt, %s: %s=%q, want %q", v, r.Name, k, got, want)
				}
			}
			if r.Label("commit-date") == "" {
				t.Errorf("%s.txt, %s: no commit-date", v, r.Name)
			}
		}
	}
	for file, want := range map[string]string{"order.txt": "1 v1.4.3 v1.5.0\n", "benchstat.txt": "kvb versions: go.etcd.io/bbolt v1.4.3 v1.5.0, 1 rounds interleaved"} {
		if b, err := os.ReadFile(filepath.Join(out, file)); err != nil || !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %q (%v):\n%s", file, want, err, b)
		}
	}
}
