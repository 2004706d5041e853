package engine

import (
	"cmp"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
)

// Space is what a closed database occupies on disk, by the blocks its
// files hold: data (tables, value logs, B-tree files, manifests) apart
// from logs (write-ahead logs, preallocated or kept for recycling, and
// informational logs; Info.LogFile says which).
type Space struct{ Data, Logs int64 }

// SpaceOf measures dir for engine i. Call it after Close: an open LSM may
// still hold obsolete tables it is about to delete.
func SpaceOf(i Info, dir string) (Space, error) {
	var s Space
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		// LSMs delete obsolete files in the background: a file that
		// vanishes during the walk no longer occupies space.
		if err != nil || !d.Type().IsRegular() {
			return gone(err)
		}
		fi, err := d.Info()
		if err != nil {
			return gone(err)
		}
		if i.LogFile != nil && i.LogFile(d.Name()) {
			s.Logs += allocated(fi)
		} else {
			s.Data += allocated(fi)
		}
		return nil
	})
	return s, err
}

// SyncTree makes every file and directory under dir durable (fsync), so
// data an engine left in the page cache is on the device. Files already
// clean cost a system call each.
func SyncTree(dir string) error {
	var dirs []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		switch {
		case err != nil && path != dir:
			return gone(err)
		case err != nil:
			return err
		case d.IsDir():
			dirs = append(dirs, path)
		case d.Type().IsRegular():
			return gone(SyncPath(path))
		}
		return nil
	})
	for _, d := range dirs {
		if err == nil {
			err = gone(SyncPath(d))
		}
	}
	return err
}

// gone is err, or nil for a file the engine removed meanwhile (an obsolete
// table deleted in the background).
func gone(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// SyncPath makes one file or directory durable (fsync).
func SyncPath(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	return cmp.Or(f.Sync(), f.Close())
}

// releaseC returns memory C allocators hold free to the system
// (malloc_trim); set when a cgo engine is compiled in.
var releaseC func()

// ReleaseMemory returns free memory to the system: the Go heap's
// (debug.FreeOSMemory, after a collection) and, with a cgo engine compiled
// in, the C allocator's. Resident memory measured after it counts what is
// in use, not what earlier work left cached in the allocators.
func ReleaseMemory() {
	runtime.GC()
	debug.FreeOSMemory()
	if releaseC != nil {
		releaseC()
	}
}
