package measure

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// onlyFiles fails unless dir holds exactly the named files.
func onlyFiles(t *testing.T, dir string, want ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, filepath.Join(dir, e.Name()))
	}
	if len(got) != len(want) {
		t.Fatalf("%s holds %v, want %v", dir, got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s holds %v, want %v", dir, got, want)
		}
	}
}

func TestRandomReadsDirect(t *testing.T) {
	dir := t.TempDir()
	const size = 16 << 20
	path, err := PrepareFile(dir, size)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(path) != dir {
		t.Fatalf("PrepareFile wrote %s, outside %s", path, dir)
	}
	onlyFiles(t, dir, path)
	if fi, err := os.Stat(path); err != nil || fi.Size() != size {
		t.Fatalf("prepared file: %v %v", fi, err)
	}
	head := make([]byte, 4096)
	f, _ := os.Open(path)
	f.ReadAt(head, size-4096)
	f.Close()
	zeros := 0
	for _, c := range head {
		if c == 0 {
			zeros++
		}
	}
	if zeros > 64 { // random bytes: ~16 zeros expected in 4 KiB
		t.Fatalf("last block of the prepared file has %d zero bytes; not random", zeros)
	}

	fs, _ := FileSystem(dir)
	// Evict first: direct reads must not bring the file back into the cache.
	if _, err := EvictFile(path); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ threads, ops int }{{1, 1000}, {8, 3001}} {
		r, err := RandomReadsDirect(path, c.threads, c.ops)
		if errors.Is(err, ErrNoDirectIO) {
			t.Skipf("no direct I/O on %s (%s): %v", dir, fs.Type, err)
		}
		if err != nil {
			t.Fatal(err)
		}
		if fs.Type == "tmpfs" {
			t.Fatal("RandomReadsDirect on tmpfs did not report ErrNoDirectIO")
		}
		if r.Ops != int64(c.ops) || r.Bytes != int64(c.ops)*4096 || r.Latency.Count() != int64(c.ops) || r.Threads != c.threads {
			t.Fatalf("%+v", r)
		}
		if r.IOPS <= 0 || r.Elapsed <= 0 || r.Latency.Min() <= 0 {
			t.Fatalf("%+v", r)
		}
		if got := float64(r.Ops) / r.Elapsed.Seconds(); got != r.IOPS {
			t.Fatalf("IOPS %v, ops/elapsed %v", r.IOPS, got)
		}
		// Busy time cannot exceed threads × wall time (Little's law bound).
		if busy := r.Latency.Histogram().Mean() * float64(r.Ops); busy > 1.01*float64(c.threads)*float64(r.Elapsed) {
			t.Fatalf("latencies sum to %v with %d threads in %v", time.Duration(busy), c.threads, r.Elapsed)
		}
		// Every read went to the device.
		if r.IO.ReadBytes < r.Bytes {
			t.Fatalf("device read %d bytes for %d bytes of direct reads", r.IO.ReadBytes, r.Bytes)
		}
		if res, _, _ := Resident(path); res > size/10 {
			t.Fatalf("%d bytes of the file cached after direct reads", res)
		}
		t.Logf("%s, threads %d: %.0f IOPS, p99 %v", fs.Type, c.threads, r.IOPS, time.Duration(r.Latency.Percentile(99)))
	}
	onlyFiles(t, dir, path)
}

func TestDiskErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := PrepareFile(dir, 0); err == nil {
		t.Fatal("PrepareFile of 0 bytes succeeded")
	}
	if _, err := PrepareFile(filepath.Join(dir, "missing"), 4096); err == nil {
		t.Fatal("PrepareFile into a missing dir succeeded")
	}
	if _, err := SeqWriteFsync(filepath.Join(dir, "missing"), 4096, WritePattern(4096)); err == nil {
		t.Fatal("SeqWriteFsync into a missing dir succeeded")
	}
	if _, err := SeqWriteFsync(dir, -1, WritePattern(4096)); err == nil {
		t.Fatal("SeqWriteFsync of -1 bytes succeeded")
	}
	onlyFiles(t, dir)
	small, err := PrepareFile(dir, 100)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := RandomReadsDirect(small, 1, 10); err == nil {
		t.Fatal("random reads of a 100-byte file succeeded")
	}
	if _, err := RandomReadsDirect(small, 0, 10); err == nil {
		t.Fatal("0 threads accepted")
	}
	if _, err := RandomReadsDirect(filepath.Join(dir, "missing"), 1, 10); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
	if _, err := SeqRead(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
	onlyFiles(t, dir, small)
}

func TestSeqWriteFsyncThenSeqRead(t *testing.T) {
	dir := t.TempDir()
	fs, _ := FileSystem(dir)
	const size = 48<<20 + 123
	pattern := WritePattern(size)
	if len(pattern) != 8<<20 {
		t.Fatalf("a %d-byte pattern for a %d-byte file, want 8 MiB", len(pattern), size)
	}
	w, err := SeqWriteFsync(dir, size, pattern)
	if err != nil {
		t.Fatal(err)
	}
	// The file is the caller's pattern over and over: nothing random is
	// made inside the call, which a benchmark times.
	if got, err := os.ReadFile(w.Path); err != nil || !bytes.Equal(got[:len(pattern)], pattern) || !bytes.Equal(got[5*len(pattern):6*len(pattern)], pattern) {
		t.Fatalf("the written file is not the pattern given (%v)", err)
	}
	if filepath.Dir(w.Path) != dir {
		t.Fatalf("SeqWriteFsync wrote %s, outside %s", w.Path, dir)
	}
	onlyFiles(t, dir, w.Path)
	if fi, err := os.Stat(w.Path); err != nil || fi.Size() != size {
		t.Fatalf("written file: %v %v", fi, err)
	}
	if w.Bytes != size || w.Ops != 49 || w.Latency.Count() != 49 {
		t.Fatalf("%+v", w)
	}
	if w.Fsync <= 0 || w.Elapsed < w.Fsync || w.BytesPerSec != float64(size)/w.Elapsed.Seconds() {
		t.Fatalf("%+v", w)
	}
	memory := fs.Type == "tmpfs" || fs.Type == "ramfs"
	if !memory && w.IO.WriteBytes < size {
		t.Fatalf("fsync done but the device got only %d of %d bytes", w.IO.WriteBytes, size)
	}
	t.Logf("%s seq write+fsync: %v", fs.Type, w)

	if _, err := EvictFile(w.Path); err != nil {
		t.Fatal(err)
	}
	cached, _, err := Resident(w.Path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := SeqRead(w.Path)
	if err != nil {
		t.Fatal(err)
	}
	if r.Bytes != size || r.Ops < 49 || r.Latency.Count() != r.Ops || r.BytesPerSec <= 0 {
		t.Fatalf("%+v", r)
	}
	if memory {
		if cached < size {
			t.Fatalf("tmpfs file reported %d bytes cached, want all", cached)
		}
		t.Skipf("%s is on %s: read speed is memory speed", dir, fs.Type)
	}
	if cached > size/10 {
		t.Fatalf("%d bytes still cached after eviction", cached)
	}
	if r.IO.ReadBytes < size*3/4 {
		t.Fatalf("sequential read of an evicted %d-byte file fetched %d bytes from the device", size, r.IO.ReadBytes)
	}
	t.Logf("%s seq read: %v", fs.Type, r)

	// SeqRead reads and nothing else: the file it just read is still in
	// the page cache, and a second read takes it from there. (Eviction
	// belongs outside whatever times the read.)
	again, err := SeqRead(w.Path)
	if err != nil {
		t.Fatal(err)
	}
	if again.IO.ReadBytes > size/10 {
		t.Fatalf("a second read of a cached %d-byte file fetched %d bytes from the device: SeqRead evicts", size, again.IO.ReadBytes)
	}
}
