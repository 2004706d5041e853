package core

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/measure"
)

type countBatch struct {
	engine.Batch
	commits *int
}

func (b countBatch) Commit() error { *b.commits++; return nil }

// TestSpaceGuardStopsCommits: once the free space falls below the margin
// the guard fails every later commit, before it reaches the engine, and
// its error names the free space, the margin and what another process
// took; above the margin commits go through.
func TestSpaceGuardStopsCommits(t *testing.T) {
	var free, size atomic.Int64
	free.Store(500 << 20)
	g := &SpaceGuard{dir: "/d/x", what: "fixture f", engine: "pebble", margin: 100 << 20, reserve: 80 << 20, stop: make(chan struct{}),
		freeOf: func(string) (int64, error) { return free.Load(), nil },
		sizeOf: func(string) (int64, error) { return size.Load(), nil }}
	if err := g.start(); err != nil {
		t.Fatal(err)
	}
	defer g.Stop()
	commits := 0
	b := guardedBatch{countBatch{commits: &commits}, g}
	if err := b.Commit(); err != nil || commits != 1 {
		t.Fatalf("commit with room: %v, %d commits", err, commits)
	}
	size.Store(30 << 20)
	free.Store(60 << 20) // 440 MiB gone, 30 of them the engine's
	deadline := time.Now().Add(5 * time.Second)
	for g.Err() == nil && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	err := b.Commit()
	if err == nil || commits != 1 {
		t.Fatalf("commit below the margin: %v, %d commits", err, commits)
	}
	for _, want := range []string{"no space left for writing fixture f", "60.0 MiB free under /d/x", "margin of 100.0 MiB", "another process took about 410.0 MiB"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

type failingBatch struct{ engine.Batch }

func (failingBatch) Commit() error { return syscall.EIO }

// TestWriteFailingOnAFullDeviceSaysSo: a write that fails with the free
// space below the margin (the device filled between two of the guard's
// reads) fails with the guard's error and the engine's after it; with
// room, with the engine's error alone.
func TestWriteFailingOnAFullDeviceSaysSo(t *testing.T) {
	var free atomic.Int64
	g := &SpaceGuard{dir: "/d/x", what: "fixture f", engine: "lmdb", margin: 20 << 20,
		freeOf: func(string) (int64, error) { return free.Load(), nil },
		sizeOf: func(string) (int64, error) { return 0, nil }}
	b := guardedBatch{failingBatch{}, g}
	free.Store(500 << 20)
	if err := b.Commit(); err != syscall.EIO {
		t.Errorf("a failed write with room: %v, want the engine's error alone", err)
	}
	free.Store(12 << 10)
	err := b.Commit()
	if !errors.Is(err, syscall.EIO) {
		t.Errorf("a failed write on a full device: %v, want the engine's error kept", err)
	}
	for _, want := range []string{"no space left for writing fixture f", "12.0 KiB free under /d/x", "the device filled", "input/output error"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
}

// TestSpaceGuardRefusesAtStart: below the margin before the first write,
// the guard fails at once.
func TestSpaceGuardRefusesAtStart(t *testing.T) {
	g := &SpaceGuard{dir: "/d", what: "x", margin: 100 << 20, stop: make(chan struct{}),
		freeOf: func(string) (int64, error) { return 10 << 20, nil },
		sizeOf: func(string) (int64, error) { return 0, nil }}
	if err := g.start(); err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("start with 10 MiB free and a 100 MiB margin: %v", err)
	}
	var nilGuard *SpaceGuard
	if nilGuard.Err() != nil {
		t.Fatal("a nil guard must pass every commit")
	}
	nilGuard.Stop()
}

// TestWriteReserves: each LSM's reserve counts its memtables in flight,
// a level-0 compaction and its base level (bounded by the data); the
// B-trees have none.
func TestWriteReserves(t *testing.T) {
	o := engine.Options{MemtableMB: 4, MemtablesInFlight: 3, L0CompactionTables: 4, BaseLevelBytes: 16 << 20, ExpectedBytes: 1 << 30, Compression: "none", CacheMB: 8}
	want := map[string]int64{
		"pebble":    (3+1+4)*4<<20 + 16<<20,
		"rocksdb":   (3+2+4)*4<<20 + 16<<20,
		"badger":    (1+2+1+4)*4<<20 + 16<<20, // NumMemtables = in flight - 2
		"goleveldb": (2+1+4)*4<<20 + 16<<20,   // two memtables at most
	}
	for _, info := range engine.All() {
		var got int64
		if info.WriteReserve != nil {
			got = info.WriteReserve(o)
		}
		if got != want[info.Name] {
			t.Errorf("%s: reserve %d MiB, want %d MiB", info.Name, got>>20, want[info.Name]>>20)
		}
	}
	o.ExpectedBytes = 2 << 20
	if p, _ := engine.Lookup("pebble"); p.WriteReserve(o) != (3+1+4)*4<<20+2<<20 {
		t.Errorf("pebble: the base level is not bounded by the data: %d", p.WriteReserve(o))
	}
}

// BenchmarkSpaceGuard is what the guard costs: one poll (a statfs, run
// every spacePoll by its goroutine) and one commit's check.
func BenchmarkSpaceGuard(b *testing.B) {
	dir := b.TempDir()
	b.Run("poll", func(b *testing.B) {
		for b.Loop() {
			if _, err := freeSpace(dir); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("check", func(b *testing.B) {
		g := &SpaceGuard{}
		for b.Loop() {
			if g.Err() != nil {
				b.Fatal("no error was recorded")
			}
		}
	})
}

// TestSpaceGuardPollsByHeadroom: far above the margin the guard reads the
// free space once a second; near it, every 10 ms.
func TestSpaceGuardPollsByHeadroom(t *testing.T) {
	g := &SpaceGuard{margin: 100 << 20}
	for _, c := range []struct {
		free int64
		want time.Duration
	}{
		{100 << 30, time.Second},
		{(100 << 20) + (2 << 30), 500 * time.Millisecond},
		{(100 << 20) + (4 << 20), 10 * time.Millisecond},
		{50 << 20, 10 * time.Millisecond},
	} {
		if got := g.nextPoll(c.free); got != c.want {
			t.Errorf("%d MiB free: next poll in %v, want %v", c.free>>20, got, c.want)
		}
	}
}

// TestRoomOnAFilesystemWithNoSize: ramfs has no size (statfs reports no
// blocks, so no free ones either); memory bounds it. -dir there has the
// memory available for room, not 0 B: the check of room passes a run that
// fits and refuses one that does not, saying why, the guard lets writes
// through, and the settings line says so. Needs root to mount one.
func TestRoomOnAFilesystemWithNoSize(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mount("ramfs", dir, "ramfs", 0, ""); err != nil {
		t.Skipf("mount ramfs on %s: %v", dir, err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	total, err := measure.MemTotal()
	if err != nil {
		t.Fatal(err)
	}
	fs, err := measure.FileSystem(dir)
	if err != nil || fs.Sized || fs.Free < 200<<20 || fs.Free > total {
		t.Fatalf("ramfs: %+v, %v; want no size and the memory available, 200 MiB to %d MiB", fs, err, total>>20)
	}
	if err := checkDir(dir, 100<<20, 0); err != nil {
		t.Errorf("a 100 MiB run on ramfs: %v", err)
	}
	if err := checkDir(dir, 2*total, 1<<20); err == nil || !strings.Contains(err.Error(), "of memory available") {
		t.Errorf("a run of twice the memory on ramfs: %v", err)
	}
	g := &SpaceGuard{dir: dir + "/db", what: "x", margin: 100 << 20, stop: make(chan struct{}),
		freeOf: freeSpace, sizeOf: engine.DirSize}
	if err := g.start(); err != nil {
		t.Errorf("the guard on ramfs: %v", err)
	}
	g.Stop()
	e, err := NewEnv(parseFlags(t, "-keys_mil", "0.001"), io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	e.Dir = dir
	var out bytes.Buffer
	e.EchoConfig(&out)
	if want := "\ndir-fs: ramfs on ramfs (mounted at " + dir + ", no size, "; !strings.Contains(out.String(), want) {
		t.Errorf("the settings lines lack %q:\n%s", want, out.String())
	}
}

// TestReadsElsewhereAreNotReported: on a -dir whose reads another process
// or machine does, read-B/op, which this process's counters cannot see,
// is left out of the results, never reported as 0; majflt/op stays.
// Where bindfs can mount a FUSE filesystem (as root), a run on one says
// so before any work.
func TestReadsElsewhereAreNotReported(t *testing.T) {
	t.Cleanup(func() { readsElsewhere = false })
	for _, elsewhere := range []bool{false, true} {
		readsElsewhere = elsewhere
		r := testing.Benchmark(func(b *testing.B) { DiskCounters{ReadBytes: 4096, Majflt: 1}.Report(b, 1) })
		if _, has := r.Extra["read-B/op"]; has == elsewhere || r.Extra["majflt/op"] != 1 {
			t.Errorf("reads elsewhere %v: reported %v", elsewhere, r.Extra)
		}
	}
	readsElsewhere = false
	if _, err := exec.LookPath("bindfs"); err != nil || os.Geteuid() != 0 {
		t.Skip("a FUSE mount needs bindfs and root")
	}
	src, dir := t.TempDir(), t.TempDir()
	if out, err := exec.Command("bindfs", src, dir).CombinedOutput(); err != nil {
		t.Skipf("bindfs: %v: %s", err, out)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	c := Default()
	c.KeysMil, c.ValSize, c.Dir = 0.002, 64, dir
	var log bytes.Buffer
	if _, err := Setup(c, "BenchmarkProbeBolt", io.Discard, &log); err != nil {
		t.Fatal(err)
	}
	if !readsElsewhere || !strings.Contains(log.String(), "-dir is on fuse, whose reads from storage another process or machine does") {
		t.Errorf("a run on FUSE: reads elsewhere %v, log:\n%s", readsElsewhere, log.String())
	}
}
