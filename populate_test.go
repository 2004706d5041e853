package kvbench

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/core"
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
	// 50k keys in commits of 50: about 2 s to build here, the first
	// MiB of the file in a small part of that.
	const keys = 50_000
	dir := t.TempDir()
	args := []string{"-test.run=^$", "-test.bench=BenchmarkReadRandomBolt", "-test.benchtime=1x",
		"-keys_mil", strconv.FormatFloat(keys/1e6, 'f', -1, 64), "-valsz", "256", "-batch", "50", "-threads", "1", "-dir", dir}
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
	if err != nil || m.KeyCount != keys || m.Params.Engine != "bolt" {
		t.Fatalf("manifest after rebuild: %+v, %v", m, err)
	}
	// Every key is there, once, with its own value. The engine's own
	// options are at their defaults, as the child's were.
	g, _ := dataset.New(dataset.Spec{Keys: keys, ValueSize: 256, ValueRatio: 1, Seed: 1})
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
	if n != keys {
		t.Fatalf("rebuilt fixture has %d keys, want %d", n, keys)
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

// mountTmpfs mounts a tmpfs of size (as mount takes it: 256m) on a fresh
// directory, unmounted when the test ends; without root, or where the
// kernel refuses, the test is skipped with the reason.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root to mount a small filesystem of its own (tmpfs)")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "kvbench-test", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// freeBytes is the space left under dir.
func freeBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bavail) * int64(st.Bsize)
}

// fill writes path until the free space under dir is at most leave: the
// other process that takes the space.
func fill(t *testing.T, dir, path string, leave int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for freeBytes(t, dir) > leave+int64(len(buf)) {
		if _, err := f.Write(buf); err != nil {
			t.Fatalf("filler: %v", err)
		}
	}
}

// crashMarks are what a crash prints instead of the suite's error; a
// stack trace's goroutines head their lines ("one writer goroutine" is in
// a settings line).
var crashMarks = []string{"panic:", "fatal error", "SIGBUS", "SIGSEGV", "signal: ", "\ngoroutine "}

// TestDiskFillsDuringWrites: another process fills the filesystem under
// -dir while an engine builds its fixture, and while it populates. Every
// engine stops with the suite's error naming the lack of space, without a
// crash, and the next run, with the space back, completes (rebuilding the
// fixture the first left incomplete). The B-trees, which write in place
// and fail a write with an error, also build a fixture without the guard
// (-space_guard=false) while the filler leaves under 1 MiB, so that the
// engine's own write fails (LMDB's a short write, "input/output error"):
// the error still names the lack of space.
//
// The writer is stopped (SIGSTOP) while the filler takes the space, and
// continued once its guard's next read of the free space is due: however
// fast the engine or slow the filler, the space goes while the engine
// still has most of its keys to write, and the guard's first read after
// it sees the space gone, as when another process fills the disk faster
// than the guard reads.
func TestDiskFillsDuringWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("builds fixtures in child processes")
	}
	t.Parallel()          // beside TestEveryBenchmarkWritesOnlyUnderDir
	cfg := core.Default() // diskFillTry's -keys_mil and -memtable_mb
	cfg.KeysMil, cfg.MemtableMB = 0.05, 2
	for _, info := range engine.All() {
		if info.Reference || info.Missing != "" {
			continue
		}
		margin := cfg.WriteMargin(info)
		cases := []struct {
			name, bench string
			leave       int64
			guard       bool
		}{
			{"fixture", "^BenchmarkReadRandom" + info.Title + "$", margin * 3 / 4, true},
			{"populate", "^BenchmarkPopulate" + info.Title + "$/valsz/batch/sync=false", margin * 3 / 4, true},
		}
		if info.WriteReserve == nil {
			cases = append(cases, cases[0])
			cases[2].name, cases[2].leave, cases[2].guard = "fixture-unguarded", 0, false
		}
		for _, c := range cases {
			t.Run(info.Title+"/"+c.name, func(t *testing.T) {
				// A try counts only when the test stopped the writer early:
				// a machine that holds the test back for the build's
				// quarter of a second lets the build complete.
				for try := 1; !diskFillTry(t, c.bench, c.guard, c.leave, c.name != "populate"); try++ {
					if try == 5 {
						t.Skip("the test stopped the writer too late, five tries")
					}
				}
			})
		}
	}
}

// diskFillTry is one try of TestDiskFillsDuringWrites's case; it returns
// false, having checked nothing, when the test stopped the writer too
// late for the check.
func diskFillTry(t *testing.T, bench string, guard bool, leave int64, rebuilds bool) bool {
	// 50k keys of 1 KiB: the writer is stopped at 4 MiB of about 50, so
	// the test has the rest of the build (a quarter of a second for the
	// fastest engine) to see the 4 MiB; the next run builds all 50.
	const keysMil, memtable = "0.05", "2"
	// A filesystem of 320 MiB holds what a run estimates it needs (three
	// times the data set, 52 MB, and the writer's margin, up to 83 MiB);
	// its guard waits at most 320 MiB / 4 GiB/s between reads of the free
	// space, the rate it allows a writer (core.SpaceGuard.nextPoll).
	const size, guardWait = "320m", 320 * time.Second / 4096
	dir := mountTmpfs(t, size)
	args := []string{"-test.run=^$", "-test.bench=" + bench, "-test.benchtime=1x", "-keys_mil", keysMil,
		"-memtable_mb", memtable, "-cache", "warm", "-threads", "1", "-hit_rate", "1", "-dir", dir}
	child := exec.Command(os.Args[0], append(args, "-space_guard="+strconv.FormatBool(guard))...)
	var out strings.Builder
	child.Stdout, child.Stderr = &out, &out
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	// Once the engine has written 4 MiB, it is stopped and the
	// filler takes all but leave (up to 1 MiB more); it goes
	// on once its guard's next read is due.
	own := filepath.Join(dir, "kvbench")
	filled, at := false, int64(0)
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if at, _ = engine.DirSize(own); at > 4<<20 {
			child.Process.Signal(syscall.SIGSTOP)
			stopped := time.Now()
			func() {
				defer child.Process.Signal(syscall.SIGCONT)
				fill(t, dir, filepath.Join(dir, "filler"), leave)
				time.Sleep(guardWait - time.Since(stopped))
			}()
			filled = true
			break
		}
	}
	err := child.Wait()
	s := out.String()
	// Stopped past 16 MiB, or never, the writer had most of its keys
	// written before the space went: a run that then completes says
	// nothing of the guard.
	if err == nil && (!filled || at > 16<<20) {
		t.Logf("the test stopped the writer at %d MiB of its writes (filled %v), not at 4", at>>20, filled)
		return false
	}
	if !filled || err == nil || !strings.Contains(s, "no space left for writing") {
		t.Fatalf("filled %v, exit %v:\n%s", filled, err, s)
	}
	for _, m := range crashMarks {
		if strings.Contains(s, m) {
			t.Fatalf("the run crashed (%q) instead of stopping:\n%s", m, s)
		}
	}
	if err := os.Remove(filepath.Join(dir, "filler")); err != nil {
		t.Fatal(err)
	}
	again, err := exec.Command(os.Args[0], args...).CombinedOutput()
	if err != nil || !strings.Contains(string(again), "Benchmark") {
		t.Fatalf("the next run, with the space back: %v\n%s", err, again)
	}
	if rebuilds && !strings.Contains(string(again), "incomplete or stale; rebuilding") {
		t.Errorf("the next run did not rebuild the incomplete fixture:\n%s", again)
	}
	return true
}

// TestHalfBuiltFixtureIsReclaimed: a build killed on a nearly full
// filesystem leaves a fixture without its manifest. Its space counts as
// free in the next run's estimate (the suite would remove it before the
// rebuild), so the next run rebuilds it instead of refusing.
func TestHalfBuiltFixtureIsReclaimed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a fixture in a child process")
	}
	dir := mountTmpfs(t, "200m")
	args := []string{"-test.run=^$", "-test.bench=^BenchmarkReadRandomPebble$", "-test.benchtime=1x", "-keys_mil", "0.04",
		"-memtable_mb", "2", "-cache", "warm", "-threads", "1", "-hit_rate", "1", "-batch", "100", "-dir", dir}
	child := exec.Command(os.Args[0], args...)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	var fixture string
	for deadline := time.Now().Add(60 * time.Second); fixture == "" && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		matches, _ := filepath.Glob(filepath.Join(dir, "kvbench", "fixtures", "pebble-*"))
		for _, m := range matches {
			if n, _ := engine.DirSize(m); n > 12<<20 && !strings.HasSuffix(m, ".lock") {
				fixture = m
			}
		}
	}
	child.Process.Signal(syscall.SIGKILL)
	child.Wait()
	if fixture == "" {
		t.Fatal("no fixture grew past 12 MiB within 60s")
	}
	if _, err := os.Stat(filepath.Join(fixture, dataset.ReadyName)); err == nil {
		t.Fatal("the build finished before it was killed: make the data set larger")
	}
	// The estimate is three times the data set's logical bytes plus the
	// writer's free-space margin (Plan.DiskEstimate); leave less than that
	// free, but more once the half-built fixture is counted.
	half, _ := engine.DirSize(fixture)
	cfg := core.Default()
	cfg.KeysMil, cfg.MemtableMB, cfg.Batch = 0.04, 2, 100
	pebble, _ := engine.Lookup("pebble")
	need := int64(3*40_000*(dataset.KeySize+1024)) + cfg.WriteMargin(pebble)
	fill(t, dir, filepath.Join(dir, "filler"), need-half/2)
	out, code := runSelf(t, args[1:]...)
	if code != 0 || !strings.Contains(out, "incomplete or stale; rebuilding") || !strings.Contains(out, "BenchmarkReadRandomPebble/") {
		t.Fatalf("exit %d with %s free and %s half-built:\n%s", code, core.Human(freeBytes(t, dir)), core.Human(half), out)
	}
}
