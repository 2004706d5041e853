package kvbench

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
)

// TestKilledFixtureBuildIsRebuilt kills a run while it builds a fixture,
// then checks that the next run rebuilds it from scratch and that only a
// complete fixture (every key present and verified) is ever read.
func TestKilledFixtureBuildIsRebuilt(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a fixture in a child process")
	}
	dir := t.TempDir()
	args := []string{"-test.run=^$", "-test.bench=BenchmarkReadRandomBolt", "-test.benchtime=1x",
		"-keys_mil", "0.2", "-valsz", "256", "-batch", "50", "-threads", "1", "-dir", dir}
	child := exec.Command(os.Args[0], args...)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	fixtures := filepath.Join(dir, "kvbench", "fixtures")
	var fixture string
	deadline := time.Now().Add(60 * time.Second)
	for fixture == "" {
		if time.Now().After(deadline) {
			child.Process.Kill()
			t.Fatal("no fixture directory appeared within 60s")
		}
		matches, _ := filepath.Glob(filepath.Join(fixtures, "bolt-*", "*"))
		for _, m := range matches {
			if fi, err := os.Stat(m); err == nil && fi.Size() > 1<<20 {
				fixture = filepath.Dir(m)
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	if _, err := os.Stat(filepath.Join(fixture, dataset.ReadyName)); err == nil {
		t.Fatal("the build finished before it was killed: make the data set larger")
	}

	out, err := exec.Command(os.Args[0], args...).CombinedOutput()
	if err != nil {
		t.Fatalf("rerun after kill: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "incomplete or stale; rebuilding") {
		t.Fatalf("rerun did not notice the half-built fixture:\n%s", out)
	}
	if !strings.Contains(string(out), "BenchmarkReadRandomBolt/") {
		t.Fatalf("rerun ran no benchmark:\n%s", out)
	}
	m, err := dataset.ReadManifest(fixture)
	if err != nil || m.KeyCount != 200_000 || m.Params.Engine != "bolt" {
		t.Fatalf("manifest after rebuild: %+v, %v", m, err)
	}
	// Every key is there, once, with its own value. The engine's own
	// options are at their defaults, as the child's were.
	g, _ := dataset.New(dataset.Spec{Keys: 200_000, ValueSize: 256, ValueRatio: 1, Seed: 1})
	db, err := engine.Open("bolt", engine.Options{Dir: fixture, ReadOnly: true, Compression: "none"})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r, _ := db.NewReader()
	defer r.Close()
	it, err := r.NewIter(engine.IterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	chk, n := g.NewChecker(true), 0
	for ; it.Valid(); it.Next() {
		v, err := it.Value()
		if err == nil {
			err = chk.CheckKV(it.Key(), v)
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 200_000 {
		t.Fatalf("rebuilt fixture has %d keys, want 200000", n)
	}
}

// TestPopulateLeavesOnlyItsOwnDirectory runs populate benchmarks and
// checks that -dir holds nothing new outside kvbench/ and nothing of the
// user's changed, and that scratch databases are gone afterwards.
func TestPopulateLeavesOnlyItsOwnDirectory(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary")
	}
	dir := t.TempDir()
	mine := filepath.Join(dir, "users-data")
	os.MkdirAll(filepath.Join(mine, "sub"), 0o755)
	os.WriteFile(filepath.Join(mine, "sub", "db.file"), []byte("precious"), 0o644)
	before := treeState(t, mine)
	out, code := runSelf(t, "-test.bench=BenchmarkPopulate(Bolt|Lmdb)", "-test.benchtime=1x", "-keys_mil", "0.01", "-valsz", "100", "-dir", dir)
	if code != 0 || !strings.Contains(out, "write-amp") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if after := treeState(t, mine); !reflect.DeepEqual(before, after) {
		t.Fatal("populate changed a directory it did not create")
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.Name() != "users-data" && e.Name() != "kvbench" {
			t.Errorf("populate created %s outside its own directory", e.Name())
		}
	}
	if left, _ := os.ReadDir(filepath.Join(dir, "kvbench", "scratch")); len(left) != 0 {
		t.Errorf("scratch databases left behind: %v", left)
	}
}

// TestDiskFillingDuringPopulate: a write that fails partway through a
// populate (here a file-size limit makes it fail with EFBIG, as a full
// disk does with ENOSPC) ends the run with the engine's error, not a
// crash; the next run, with room, measures.
func TestDiskFillingDuringPopulate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary")
	}
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("no prlimit")
	}
	dir := t.TempDir()
	args := []string{"-test.run=^$", "-test.bench=BenchmarkPopulateBolt", "-test.benchtime=1x", "-keys_mil", "0.02", "-valsz", "256", "-dir", dir}
	out, err := exec.Command(prlimit, append([]string{"--fsize=1048576", "--", os.Args[0]}, args...)...).CombinedOutput()
	s := string(out)
	if err == nil || !strings.Contains(s, "file too large") || strings.Contains(s, "goroutine ") {
		t.Fatalf("populate past a 1 MiB file-size limit: %v\n%s", err, s)
	}
	if out, err := exec.Command(os.Args[0], args...).CombinedOutput(); err != nil || !strings.Contains(string(out), "BenchmarkPopulateBolt/") {
		t.Fatalf("the next run: %v\n%s", err, out)
	}
}
