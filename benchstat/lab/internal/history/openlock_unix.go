//go:build unix

package history

import (
	"os"
	"syscall"
)

// lockOpen holds an exclusive lock on path+".open" while a process opens
// the database and migrates its schema. SQLite's busy timeout covers
// transactions, not every step of two processes creating one database
// and switching it to WAL at once: there one of them can get SQLITE_BUSY
// at once. Adds still run side by side; only opening is one at a time.
// Where the lock file cannot be made (a directory the reader may not
// write), opening goes on without it: only creating needs it.
func lockOpen(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path+".open", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return func() {}, nil
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
