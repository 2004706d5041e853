package core

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/core/coretest"
	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
)

// damages are what a disk or a user can do to a fixture's file: cut it
// short, or flip one bit in its middle. want is what the check before
// the run says about it.
var damages = []struct {
	name string
	do   func(p string, size int64) error
	want string
}{
	{"truncated", func(p string, size int64) error { return os.Truncate(p, size/2) }, "bytes, its build left"},
	{"bit-flipped", func(p string, size int64) error {
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		var b [1]byte
		if _, err := f.ReadAt(b[:], size/2); err != nil {
			return err
		}
		b[0] ^= 0x10
		_, err = f.WriteAt(b[:], size/2)
		return err
	}, "CRC-32C"},
}

// largestFile is the biggest file a fixture's manifest records.
func largestFile(t *testing.T, dir string) (string, int64) {
	t.Helper()
	m, err := dataset.ReadManifest(dir)
	if err != nil || len(m.Files) == 0 {
		t.Fatalf("manifest of %s: %+v, %v", dir, m, err)
	}
	big := m.Files[0]
	for _, f := range m.Files {
		if f.Size > big.Size {
			big = f
		}
	}
	return filepath.Join(dir, big.Name), big.Size
}

// readsPass runs workload on the engine and reports whether it passed.
func readsPass(t *testing.T, e *Env, workload, name string) bool {
	t.Helper()
	coretest.SetBenchtime(t, "1x")
	ok := true
	testing.Benchmark(func(b *testing.B) {
		defer func() { ok = !b.Failed() }() // Fatal ends the function
		Run(b, e, workload, name)
	})
	return ok
}

// TestDamagedFixtureIsRebuilt truncates, then bit-flips, the largest file
// of each engine's fixture (the embedded package's tests do the cdb's
// file): the next run sees it before
// opening the fixture, says so, rebuilds it and reads every key verified.
// Reading a sound fixture (each engine opens it read-only, which writes
// lock files and logs) does not make it look damaged.
func TestDamagedFixtureIsRebuilt(t *testing.T) {
	run := func(t *testing.T, c Config, pattern string) (*Env, string) {
		t.Helper()
		var log strings.Builder
		e, err := Setup(c, pattern, io.Discard, &log)
		if err != nil {
			t.Fatalf("%v\n%s", err, log.String())
		}
		return e, log.String()
	}
	check := func(t *testing.T, setup func() (*Env, string), fixtureDir func(*Env) string, read func(*Env) bool) {
		e, _ := setup()
		dir := fixtureDir(e)
		if !read(e) {
			t.Fatalf("reading the new fixture %s failed", dir)
		}
		if _, log := setup(); strings.Contains(log, "rebuilding") {
			t.Fatalf("reading the fixture made it look damaged:\n%s", log)
		}
		for _, d := range damages {
			p, size := largestFile(t, dir)
			if err := d.do(p, size); err != nil {
				t.Fatal(err)
			}
			e, log := setup()
			if !strings.Contains(log, "fixture "+filepath.Base(dir)+" is damaged") || !strings.Contains(log, d.want) || !strings.Contains(log, "rebuilding") {
				t.Errorf("%s %s: the run did not see it:\n%s", d.name, filepath.Base(p), log)
			}
			if fi, err := os.Stat(p); err != nil || fi.Size() != size {
				t.Errorf("%s %s: after the rebuild %v, %v; want %d bytes", d.name, filepath.Base(p), fi, err, size)
			}
			if !read(e) {
				t.Errorf("%s %s: reading the rebuilt fixture failed", d.name, filepath.Base(p))
			}
		}
	}
	for _, info := range engine.All() {
		if info.Reference || info.Missing != "" || info.Name == "bolttwin" {
			continue
		}
		t.Run(info.Name, func(t *testing.T) {
			c := Default()
			c.KeysMil, c.ValSize, c.Dir = 0.002, 64, t.TempDir()
			c.Threads, c.Caches = IntList{1}, WordList{Warm}
			pattern := workloads["Probe"].BenchName(info)
			check(t, func() (*Env, string) { return run(t, c, pattern) },
				func(e *Env) string {
					dir, err := e.FixtureDir(e.KVFor(info))
					if err != nil {
						t.Fatal(err)
					}
					return dir
				},
				func(e *Env) bool { return readsPass(t, e, "Probe", info.Name) })
		})
	}
}

// TestFaultReadingAFixtureIsAnError: a fixture file cut short under an
// open memory map (after the checks before the run) makes the next read
// of the mapped pages fault; the benchmark fails with an error naming
// the fixture and how to rebuild it, and the process lives on. The read
// runs in RunThreads' goroutines, which hand the fault to Handle.Run.
func TestFaultReadingAFixtureIsAnError(t *testing.T) {
	c := Default()
	c.KeysMil, c.ValSize, c.Dir = 0.002, 256, t.TempDir()
	c.Threads, c.Caches = IntList{1}, WordList{Warm}
	e, err := Setup(c, "BenchmarkProbeBolt", io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	f := e.KVFor(coretest.Engine(t, "bolt"))
	dir, _ := e.FixtureDir(f)
	p, _ := largestFile(t, dir)
	coretest.SetBenchtime(t, "1x")
	failed, faulted := false, false
	var h *Handle
	testing.Benchmark(func(b *testing.B) {
		defer func() { failed = b.Failed() }()
		h = e.Open(b, f)
		h.Run(b, "damaged", Warm, nil, func(b *testing.B, db engine.DB) {
			if err := os.Truncate(p, 8192); err != nil { // bbolt's two meta pages stay
				b.Error(err)
				return
			}
			faulted = true
			RunThreads(2, 2, func(int, int) { ScanAll(db, true, GenSource{e.Gen}.NewChecker(true)) })
			faulted = false
		})
	})
	if !faulted || !failed {
		t.Fatalf("reading past the end of a truncated bbolt file: faulted %v, failed %v", faulted, failed)
	}
	msg := h.faultError("unexpected fault address").Error()
	for _, want := range []string{"fixture " + filepath.Base(dir), "-verify full", "remove " + dir} {
		if !strings.Contains(msg, want) {
			t.Errorf("the fault's error %q does not say %q", msg, want)
		}
	}
}

// TestEvictionImpossibleWarns: files on tmpfs are memory, so a cold
// start cannot evict them; the run says its cold numbers are not cold.
func TestEvictionImpossibleWarns(t *testing.T) {
	dir, err := os.MkdirTemp("/dev/shm", "kvbench-evict")
	if err != nil {
		t.Skip("no /dev/shm:", err)
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "data"), make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	e, err := NewEnv(Default(), io.Discard, &log)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Evict(dir)
	if err != nil || res == 0 || !strings.Contains(log.String(), "cold numbers are not cold") {
		t.Fatalf("evicting tmpfs: %d bytes resident, %v; log %q", res, err, log.String())
	}
}
