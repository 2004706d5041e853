package benchstat

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/benchstat/internal/gate"
)

// End-to-end checks of kvb compare and the gate: a commit, or a copy of
// an engine module, that makes one engine do more work per read must
// fail the gate; the same code on both sides must pass. Each runs the
// fewest rounds the gate accepts for the series that move, on tiny data.

// timeRounds is the fewest paired timed rounds at which the gate can
// fail a Bolt read: Holm over the five of its gated units that move
// (ns/op, cpu-ns/op, p50-ns, B/op, allocs/op; read-B/op stays 0).
var timeRounds = gate.MinRounds(gate.Options{Alpha: 0.05, Holm: true}, 5)

// simRounds is the same for counted rounds: Holm over instr/op and
// est-cycles/op.
var simRounds = gate.MinRounds(gate.Options{Alpha: 0.05, Holm: true}, 2)

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

func TestE2ECommitSlowerFailsTheGate(t *testing.T) {
	e2e(t, "builds two commits and benchmarks them")
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
	code, log, md := compareBolt(t, data, out, "HEAD", slow, "-count", fmt.Sprint(timeRounds))
	t.Logf("gate summary:\n%s", md)
	if code != 1 {
		t.Fatalf("kvb compare exit %d, want 1 (regression):\n%s", code, log)
	}
	for _, want := range []string{"FAIL", "| REGRESSION | time | `ReadRandomBolt/", "cpu-ns/op"} {
		if !strings.Contains(md, want) {
			t.Errorf("gate summary lacks %q", want)
		}
	}
}

// copyModule copies the module cache's bbolt into dir, writable, with
// patch applied to cursor.go (old, new) when old is not empty.
func copyModule(t *testing.T, dir, old, new string) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "go.etcd.io/bbolt").Output()
	if err != nil {
		t.Fatalf("go list -m go.etcd.io/bbolt: %v", err)
	}
	src := strings.TrimSpace(string(out))
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			mode := os.FileMode(0o644)
			if d.IsDir() {
				mode = 0o755
			}
			os.Chmod(p, mode)
		}
		return err
	})
	if old != "" {
		f := filepath.Join(dir, "bucket.go")
		b, err := os.ReadFile(f)
		if err != nil || !strings.Contains(string(b), old) {
			t.Fatalf("bucket.go of %s lacks %q (%v)", src, old, err)
		}
		if err := os.WriteFile(f, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// compareBolt runs kvb compare on bbolt's random reads (tiny data, fixed
// iterations) and returns its exit status, its output and the gate summary.
// The sides are built without RocksDB (-tags ""), which no bbolt read
// runs: Valgrind loads and reads its library at each sim round's start,
// half of that start's instructions.
func compareBolt(t *testing.T, data, out string, args ...string) (int, string, string) {
	t.Helper()
	args = append(append([]string{"compare"}, args...), "-tags", "", "-bench", "BenchmarkReadRandomBolt", "-benchtime", e2eSize.benchtime, "-keys_mil", e2eSize.keysMil, "-valsz", "256", "-dir", data, "-o", out)
	code, log := kvb(t, nil, args...)
	md, _ := os.ReadFile(filepath.Join(out, "gate.md"))
	return code, log, string(md)
}

// compareModule runs kvb compare -module go.etcd.io/bbolt BASE HEAD (then
// more flags, -count among them) and returns its exit status and gate
// summary.
func compareModule(t *testing.T, base, head, data, out string, more ...string) (int, string) {
	t.Helper()
	code, log, md := compareBolt(t, data, out, append([]string{"-module", "go.etcd.io/bbolt", base, head}, more...)...)
	t.Logf("kvb compare -module go.etcd.io/bbolt %s %s: exit %d\n%s", filepath.Base(base), filepath.Base(head), code, md)
	if code == 2 {
		t.Fatalf("kvb compare failed:\n%s", log)
	}
	return code, md
}

// TestE2EModuleCopy gates a change to an engine, not to the suite: bbolt
// v1.5.0 against a local copy that looks every key up twice fails (the
// extra lookup is in Bucket.Get, the call the adapter's Get makes, as
// bbolt's users do); against an unmodified copy it passes. Each side reads a fixture its own
// bbolt wrote.
func TestE2EModuleCopy(t *testing.T) {
	e2e(t, "builds the suite with three copies of bbolt and benchmarks them")
	if _, err := exec.LookPath("valgrind"); err == nil && !e2eSize.full {
		// make test's time goes to what no other test checks: the module
		// path fails and passes in TestE2EModuleCopySim, time mode in
		// TestE2ECommitSlowerFailsTheGate.
		t.Skip("make gate-e2e's (KVBENCH_E2E=full); make test checks a module copy in sim mode, where valgrind is")
	}
	tmp := t.TempDir()
	const seek = "k, v, flags := b.Cursor().seek(key)"
	same := copyModule(t, filepath.Join(tmp, "bbolt-same"), "", "")
	slow := copyModule(t, filepath.Join(tmp, "bbolt-slow"), seek, "b.Cursor().seek(key) // one extra lookup per read\n\t"+seek)
	data := filepath.Join(tmp, "data")
	os.Mkdir(data, 0o755)

	count := []string{"-count", fmt.Sprint(timeRounds)}
	code, md := compareModule(t, "v1.5.0", slow, data, filepath.Join(tmp, "slow"), count...)
	if code != 1 || !strings.Contains(md, "| REGRESSION | time | `ReadRandomBolt/") {
		t.Errorf("an extra lookup per read: exit %d, want 1 with a ReadRandomBolt regression", code)
	}
	if !strings.Contains(md, "Base `go.etcd.io/bbolt v1.5.0`, head `go.etcd.io/bbolt local-") {
		t.Errorf("the report does not name each side by its module version")
	}
	head, _ := os.ReadFile(filepath.Join(tmp, "slow", "head.txt"))
	base, _ := os.ReadFile(filepath.Join(tmp, "slow", "base.txt"))
	if !strings.Contains(string(head), "fixture-bolt: go.etcd.io/bbolt local-") || !strings.Contains(string(base), "fixture-bolt: go.etcd.io/bbolt v1.5.0") {
		t.Errorf("each side must read a fixture its own bbolt wrote; fixture lines:\nbase: %s\nhead: %s",
			grepLine(string(base), "fixture-bolt:"), grepLine(string(head), "fixture-bolt:"))
	}
	// An A/A comparison in time mode fails at the gate's alpha (5 %) by
	// design, too often for make test, which runs this beside other
	// jobs: there the unmodified copy is TestE2EModuleCopySim's (counts,
	// where valgrind is), here make gate-e2e's.
	if !e2eSize.full {
		t.Log("the unmodified copy in time mode: make gate-e2e's (KVBENCH_E2E=full); make test checks it in sim mode")
		return
	}
	if code, _ := compareModule(t, "v1.5.0", same, data, filepath.Join(tmp, "same"), count...); code != 0 {
		t.Errorf("an unmodified copy of bbolt: exit %d, want 0", code)
	}
}

// TestE2EModuleCopySim is TestE2EModuleCopy in simulation mode, at 1 %:
// a loop of about 1 % of a read in Bucket.Get shows in instr/op, counted
// under callgrind, and the unmodified copy passes at sim mode's own
// threshold.
func TestE2EModuleCopySim(t *testing.T) {
	e2e(t, "builds the suite with three copies of bbolt and counts them under Valgrind")
	if _, err := exec.LookPath("valgrind"); err != nil {
		t.Skip("valgrind is not installed (make valgrind-deps installs it)")
	}
	tmp := t.TempDir()
	const seek = "k, v, flags := b.Cursor().seek(key)"
	same := copyModule(t, filepath.Join(tmp, "bbolt-same"), "", "")
	// About 1 % of a read (3,315 instr/op through Bucket.Get): 4 steps of
	// a loop at the top of Bucket.Get, the call bbolt's users make,
	// measured +39 instr/op (+1.2 %); the gate's sim threshold is 0.5 %.
	slow := copyModule(t, filepath.Join(tmp, "bbolt-slow"), seek,
		"for i := 0; i < 4; i++ {\n\t\tkvbenchSink = kvbenchSink*6364136223846793005 + 1442695040888963407\n\t}\n\t"+seek)
	f, err := os.OpenFile(filepath.Join(slow, "bucket.go"), os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteString("\nvar kvbenchSink uint64\n")
		f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	sim := []string{"-mode", "sim", "-count", fmt.Sprint(simRounds)} // -benchtime (compareBolt) is what a sim round counts
	// The two comparisons side by side: each runs one process at a time
	// under callgrind, on one CPU. Each has a -dir of its own, so neither
	// waits on the other's fixture lock.
	compare := func(t *testing.T, name, head string) (int, string) {
		data := filepath.Join(tmp, name+"-data")
		os.Mkdir(data, 0o755)
		return compareModule(t, "v1.5.0", head, data, filepath.Join(tmp, name), sim...)
	}
	t.Run("slower", func(t *testing.T) {
		t.Parallel()
		code, md := compare(t, "slow", slow)
		failed := simFailures(t, filepath.Join(tmp, "slow"))
		if code != 1 || !failed["instr/op"] || !failed["est-cycles/op"] {
			t.Errorf("Bucket.Get 1%% slower: exit %d, want 1 with ReadRandomBolt's instr/op and est-cycles/op regressed (gate.json: %v):\n%s", code, failed, md)
		}
		t.Logf("Bucket.Get 1%% slower:\n%s", grepLine(md, "| REGRESSION"))
	})
	t.Run("unmodified", func(t *testing.T) {
		t.Parallel()
		code, md := compare(t, "same", same)
		if code != 0 {
			t.Errorf("an unmodified copy of bbolt: exit %d, want 0", code)
		}
		// Passed because both counts were compared, not because none was.
		for _, unit := range []string{"instr/op", "est-cycles/op"} {
			if !strings.Contains(md, "| sim | `ReadRandomBolt/") || !strings.Contains(md, "| "+unit+" |") {
				t.Errorf("the unmodified copy's gate compared no sim %s:\n%s", unit, md)
			}
		}
	})
}

// simFailures reads gate.json in dir: the units of ReadRandomBolt's sim
// series that failed.
func simFailures(t *testing.T, dir string) map[string]bool {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "gate.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r gate.Report
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("gate.json: %v", err)
	}
	out := map[string]bool{}
	for _, m := range r.Modes {
		for _, f := range m.Failures {
			if m.Mode == "sim" && f.Verdict == "REGRESSION" && strings.HasPrefix(f.Name, "ReadRandomBolt/") {
				out[f.Unit] = true
			}
		}
	}
	return out
}

func grepLine(s, prefix string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return "(none)"
}
