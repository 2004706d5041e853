package measure

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ErrNotRoot is returned by DropCaches when the process is not root.
var ErrNotRoot = errors.New("not running as root")

// EvictDir drops every regular file under dir (symbolic links not
// followed) from the page cache with posix_fadvise(POSIX_FADV_DONTNEED),
// without privilege, so their next reads come from the device. The kernel
// keeps dirty pages (fsync first), mapped ones (close the store first), and
// everything on tmpfs; Resident tells what stayed. It visits every file even
// when some fail, and returns the files and bytes evicted and the failures,
// joined.
func EvictDir(dir string) (files int, bytes int64, err error) {
	var errs []error
	walkErr := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil && path == dir {
			return err
		}
		if err == nil && d.Type().IsRegular() {
			var n int64
			if n, err = EvictFile(path); err == nil {
				files++
				bytes += n
			}
		}
		if err != nil {
			errs = append(errs, err)
		}
		return nil
	})
	return files, bytes, errors.Join(append(errs, walkErr)...)
}

// EvictFile drops one file from the page cache, as EvictDir does, and
// returns its size.
func EvictFile(path string) (size int64, err error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return 0, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	if err := unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED); err != nil {
		return 0, &os.PathError{Op: "fadvise", Path: path, Err: err}
	}
	return st.Size, nil
}

// DropCaches empties the whole machine's page cache, dentries and inodes
// (sync, then "3" into /proc/sys/vm/drop_caches), slowing every process
// until its data is read back. Without root it returns an error wrapping
// ErrNotRoot.
func DropCaches() error {
	return dropCaches(os.Geteuid(), "/proc/sys/vm/drop_caches", unix.Sync)
}

func dropCaches(euid int, procFile string, sync func()) error {
	if euid != 0 {
		return fmt.Errorf("drop caches: %w (euid %d); writing %s needs root, use EvictDir to evict files without it", ErrNotRoot, euid, procFile)
	}
	sync()
	if err := os.WriteFile(procFile, []byte("3"), 0); err != nil {
		return fmt.Errorf("drop caches: %w", err)
	}
	return nil
}

// residentWindow is how much of a file Resident maps at a time.
const residentWindow = 1 << 30

// Resident reports how many bytes of the file at path are in the page cache
// now, and its size, with mmap and mincore(2): it faults no page in.
func Resident(path string) (resident, total int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	if !fi.Mode().IsRegular() {
		return 0, 0, fmt.Errorf("resident %s: not a regular file", path)
	}
	total = fi.Size()
	page := int64(os.Getpagesize())
	vec := make([]byte, (min(total, residentWindow)+page-1)/page)
	for off := int64(0); off < total; off += residentWindow {
		n := min(total-off, residentWindow)
		m, err := unix.Mmap(int(f.Fd()), off, int(n), unix.PROT_READ, unix.MAP_SHARED)
		if err != nil {
			return 0, total, &os.PathError{Op: "mmap", Path: path, Err: err}
		}
		vec = vec[:(n+page-1)/page]
		err = mincore(m, vec)
		unix.Munmap(m)
		if err != nil {
			return 0, total, &os.PathError{Op: "mincore", Path: path, Err: err}
		}
		for i, v := range vec {
			if v&1 != 0 {
				resident += min(page, n-int64(i)*page)
			}
		}
	}
	return resident, total, nil
}

// mincore fills vec with one byte per page of b, whose low bit says whether
// that page is resident (golang.org/x/sys/unix has no Mincore on Linux).
func mincore(b, vec []byte) error {
	_, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0])))
	if e != 0 {
		return e
	}
	return nil
}

// ResidentDir sums Resident over the regular files under dir.
func ResidentDir(dir string) (resident, total int64) {
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if r, t, err := Resident(path); err == nil {
			resident += r
			total += t
		}
		return nil
	})
	return resident, total
}

// AdviseRandom turns readahead off for the pages of s, data mapped from a
// file (an executable's read-only data): a fault then reads the page it
// needs and not the device's read_ahead_kb around it.
func AdviseRandom(s string) error {
	p := unsafe.Pointer(unsafe.StringData(s))
	off := int(uintptr(p) & uintptr(os.Getpagesize()-1)) // madvise wants a page-aligned start
	b := unsafe.Slice((*byte)(unsafe.Add(p, -off)), len(s)+off)
	if err := unix.Madvise(b, unix.MADV_RANDOM); err != nil {
		return fmt.Errorf("madvise(MADV_RANDOM) on the embedded cdb: %w", err)
	}
	return nil
}
