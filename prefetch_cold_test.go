package kvbench

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/kvbench/kvbench/internal/measure"
)

// evictCold empties the page cache of the closed store's files and returns
// how many of their bytes are still resident. Dirty pages cannot be
// evicted, and a fixture built moments ago may not be written back yet, so
// every file is synced first.
func evictCold(b *testing.B, dir string) (resident int64) {
	b.Helper()
	if err := syncFiles(dir); err != nil {
		b.Fatalf("sync %s: %v", dir, err)
	}
	if _, _, err := measure.EvictDir(dir); err != nil {
		b.Fatalf("evict %s: %v", dir, err)
	}
	var total int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		r, t, err := measure.Resident(p)
		resident += r
		total += t
		return err
	})
	if err != nil {
		b.Fatalf("residency of %s: %v", dir, err)
	}
	if resident > total/100 {
		b.Logf("warning: %d of %d bytes of %s stayed in the page cache after eviction (tmpfs, or mapped by another process)", resident, total, dir)
	}
	return resident
}

// syncFiles writes back every regular file under dir.
func syncFiles(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		err = f.Sync()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	})
}
