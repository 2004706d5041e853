package dataset

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// OwnedName is the one directory the suite creates inside -dir. Nothing
// outside it is ever written or removed.
const OwnedName = "kvbench"

// ownerMark proves a directory named OwnedName was made by this suite.
const ownerMark = ".kvbench-owner"

// Root is the suite's own directory inside a user's -dir. Its zero value is
// none: using it panics (Sub) or fails (Ensure, RemoveAll) rather than
// name paths in the working directory.
type Root struct {
	Path string
	// FullCheck makes Ensure verify every file's checksum however large
	// the fixture (-verify full), not only up to checksumAll bytes.
	FullCheck bool
}

// errNotOpen is the error of a Root that OpenRoot did not make.
var errNotOpen = errors.New("the suite's directory under -dir was never opened (a benchmark outside the run plan?): nothing is written outside <dir>/" + OwnedName)

// OpenRoot returns <dir>/kvbench, creating it (with its owner mark, under a
// lock on dir) when it does not exist. A directory of that name without
// the mark belongs to someone else and is refused.
func OpenRoot(dir string) (Root, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Root{}, err
	}
	p := filepath.Join(abs, OwnedName)
	mark := filepath.Join(p, ownerMark)
	if IsOwned(p) {
		return Root{Path: p}, nil
	}
	// Without a lock, of two runs started together on a fresh -dir, the
	// second could see the directory before its mark and call it foreign.
	// A flock on -dir itself writes nothing outside <dir>/kvbench.
	d, err := os.Open(abs)
	if err != nil {
		return Root{}, err
	}
	defer d.Close()
	if err := syscall.Flock(int(d.Fd()), syscall.LOCK_EX); err != nil {
		return Root{}, fmt.Errorf("lock %s: %w", abs, err)
	}
	defer syscall.Flock(int(d.Fd()), syscall.LOCK_UN)
	if IsOwned(p) {
		return Root{Path: p}, nil // made by a run that held the lock first
	}
	if err := os.Mkdir(p, 0o755); err != nil {
		if errors.Is(err, os.ErrExist) {
			return Root{}, fmt.Errorf("%s exists but was not created by kvbench (no %s); refusing to use it: choose another -dir or move it away", p, ownerMark)
		}
		return Root{}, err
	}
	f, err := os.OpenFile(mark, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return Root{}, err
	}
	_, err = f.WriteString("This directory and everything in it were created by kvbench and may be removed by it.\n")
	return Root{Path: p}, cmp.Or(err, f.Close())
}

// Sub returns a path inside the root; it panics on a Root OpenRoot did not
// make.
func (r Root) Sub(elem ...string) string {
	if !r.IsOpen() {
		panic("dataset: " + errNotOpen.Error())
	}
	return filepath.Join(append([]string{r.Path}, elem...)...)
}

// IsOpen reports whether OpenRoot made r.
func (r Root) IsOpen() bool { return filepath.IsAbs(r.Path) }

// RemoveAll removes path, which must lie strictly inside the root, and only
// while the root still carries its owner mark.
func (r Root) RemoveAll(path string) error {
	if !r.IsOpen() {
		return errNotOpen
	}
	rel, err := filepath.Rel(r.Path, path)
	if err != nil || rel == "." || !filepath.IsLocal(rel) {
		return fmt.Errorf("refusing to touch %s: not inside %s", path, r.Path)
	}
	if !IsOwned(r.Path) {
		return fmt.Errorf("refusing to remove %s: %s has no owner mark", path, r.Path)
	}
	return os.RemoveAll(path)
}

// IsOwned reports whether p, a directory named OwnedName, carries the
// suite's owner mark: only then may the suite remove anything in it.
func IsOwned(p string) bool {
	_, err := os.Stat(filepath.Join(p, ownerMark))
	return err == nil
}
