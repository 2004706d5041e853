package measure

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestWriteBytesCountedAfterFsync(t *testing.T) {
	before, err := ReadIO()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	for i := 0; i < 4; i++ {
		f.Write(buf)
	}
	f.Sync()
	f.Close()
	d := mustIO(t).Sub(before)
	if d.WChar < 4<<20 {
		t.Fatalf("wchar grew %d, want >= 4 MiB", d.WChar)
	}
	// tmpfs and ramfs have no storage layer (InMemory); elsewhere the
	// fsynced bytes must show.
	dir := filepath.Dir(f.Name())
	mem, err := InMemory(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fs, _ := FileSystem(dir); !mem && d.WriteBytes < 4<<20 {
		t.Fatalf("write_bytes grew %d after fsync of 4 MiB on %s", d.WriteBytes, fs.Type)
	}
}

func mustIO(t *testing.T) IO {
	io, err := ReadIO()
	if err != nil {
		t.Fatal(err)
	}
	return io
}

func TestPeakRSSResets(t *testing.T) {
	big := make([]byte, 64<<20)
	for i := range big {
		big[i] = 1
	}
	m1, err := ReadRSS()
	if err != nil || m1.Peak < 64<<20 {
		t.Fatalf("peak %d after touching 64 MiB: %v", m1.Peak, err)
	}
	big = nil
	debug.FreeOSMemory()
	if err := ResetPeakRSS(); err != nil {
		t.Skipf("clear_refs not writable here: %v", err)
	}
	m2, _ := ReadRSS()
	if m2.Peak > m1.Peak-32<<20 {
		t.Fatalf("peak did not drop after freeing 64 MiB and a reset: %d, was %d", m2.Peak, m1.Peak)
	}
	if m2.Peak < m2.Total() {
		t.Fatalf("peak %d below current %d", m2.Peak, m2.Total())
	}
}

func TestSystemDescriptions(t *testing.T) {
	if Kernel() == "unknown" || CPUModel() == "" {
		t.Fatalf("kernel %q cpu %q", Kernel(), CPUModel())
	}
	fs, err := FileSystem(t.TempDir())
	if err != nil || fs.Free <= 0 || fs.MountedOn == "" {
		t.Fatalf("%+v %v", fs, err)
	}
}

// TestCPUTimeCountsWorkNotWaiting: spinning makes CPUTime grow, sleeping
// does not.
func TestCPUTimeCountsWorkNotWaiting(t *testing.T) {
	// Waiting: an order-of-magnitude check. A process asleep for 200 ms
	// uses microseconds of CPU however loaded the machine is; a CPUTime
	// that counted wall time would report the 200 ms, ten times the bound.
	runtime.GC() // no collection of earlier garbage during the sleep
	c0 := CPUTime()
	time.Sleep(200 * time.Millisecond)
	if slept := CPUTime() - c0; slept > 20*time.Millisecond {
		t.Errorf("200 ms asleep used %v of CPU", slept)
	}
	// Work: the loop's own calls are the clock, not the wall, so a busy
	// machine only makes it take longer. Each getrusage call costs well
	// over 10 ns of CPU, so 10 million of them are far beyond 20 ms.
	c0 = CPUTime()
	for i := 0; CPUTime()-c0 < 20*time.Millisecond; i++ {
		if i == 10_000_000 {
			t.Fatalf("%d calls of CPUTime used %v of CPU", i, CPUTime()-c0)
		}
	}
}
