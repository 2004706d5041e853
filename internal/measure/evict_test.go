package measure

import (
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// skipIfMemoryFS skips tests that need a device behind dir.
func skipIfMemoryFS(t testing.TB, dir string) {
	t.Helper()
	mem, err := InMemory(dir)
	if err != nil {
		t.Fatal(err)
	}
	if mem {
		t.Skipf("%s is on tmpfs or ramfs: its files live in memory, there is nothing to evict or read from a device", dir)
	}
}

// writeRandomFile writes size pseudo-random bytes to path and fsyncs it.
func writeRandomFile(t testing.TB, path string, size int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rng := rand.NewChaCha8([32]byte{7})
	buf := make([]byte, 1<<20)
	for left := size; left > 0; left -= len(buf) {
		b := buf[:min(left, len(buf))]
		rng.Read(b)
		if _, err := f.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func readAll(t testing.TB, path string) int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, err := io.Copy(io.Discard, f)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestEvictDirDropsPageCache(t *testing.T) {
	dir := t.TempDir()
	skipIfMemoryFS(t, dir)
	const size = 32 << 20
	sub := filepath.Join(dir, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(sub, "big")
	writeRandomFile(t, big, size)
	small := filepath.Join(dir, "small")
	writeRandomFile(t, small, 100)
	if err := os.Symlink(big, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}

	if n := readAll(t, big); n != size {
		t.Fatalf("read %d bytes", n)
	}
	res, total, err := Resident(big)
	if err != nil || total != size {
		t.Fatalf("Resident: %d of %d, %v", res, total, err)
	}
	if res < size*9/10 {
		t.Fatalf("only %d of %d bytes resident right after reading the file", res, size)
	}
	if res, total, _ := Resident(small); res != 100 || total != 100 {
		t.Fatalf("small file: %d of %d resident, want 100 of 100", res, total)
	}

	files, bytes, err := EvictDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if files != 2 || bytes != size+100 { // the symlink is not followed
		t.Fatalf("evicted %d files, %d bytes; want 2 files, %d bytes", files, bytes, size+100)
	}
	res, _, err = Resident(big)
	if err != nil {
		t.Fatal(err)
	}
	if res > size/10 {
		t.Fatalf("%d of %d bytes still resident after EvictDir", res, size)
	}

	before := mustIO(t)
	readAll(t, big)
	d := mustIO(t).Sub(before)
	if d.ReadBytes < 24<<20 {
		t.Fatalf("reading the evicted 32 MiB file fetched only %d bytes from storage", d.ReadBytes)
	}
	if res, _, _ := Resident(big); res < size*9/10 {
		t.Fatalf("%d bytes resident after reading it again", res)
	}
	t.Logf("evicted %d bytes; resident after evict %d; re-read fetched %d bytes from storage", bytes, res, d.ReadBytes)
}

func TestEvictErrors(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := EvictDir(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("EvictDir of a missing dir: %v", err)
	}
	if files, bytes, err := EvictDir(dir); err != nil || files != 0 || bytes != 0 {
		t.Fatalf("empty dir: %d %d %v", files, bytes, err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if res, total, err := Resident(empty); res != 0 || total != 0 || err != nil {
		t.Fatalf("empty file: %d %d %v", res, total, err)
	}
	if _, _, err := Resident(dir); err == nil {
		t.Fatal("Resident of a directory succeeded")
	}
}

func TestDropCaches(t *testing.T) {
	// Never drop the real caches in a test: other work shares this machine.
	err := dropCaches(1000, "/proc/sys/vm/drop_caches", func() { t.Fatal("synced without root") })
	if !errors.Is(err, ErrNotRoot) {
		t.Fatalf("non-root: %v", err)
	}
	if os.Geteuid() != 0 {
		if err := DropCaches(); !errors.Is(err, ErrNotRoot) {
			t.Fatalf("DropCaches as euid %d: %v", os.Geteuid(), err)
		}
	}
	fake := filepath.Join(t.TempDir(), "drop_caches")
	if err := os.WriteFile(fake, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	synced := false
	if err := dropCaches(0, fake, func() { synced = true }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(fake); string(b) != "3" || !synced {
		t.Fatalf("wrote %q, synced %v", b, synced)
	}
	if err := dropCaches(0, filepath.Join(t.TempDir(), "no", "such"), func() {}); err == nil {
		t.Fatal("no error for a missing drop_caches file")
	}
}
