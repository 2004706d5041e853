//go:build unix

package history

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// An Open waits while another process holds the database's open lock.
// Without the lock, two processes that create one database at once fail
// with SQLITE_BUSY a few times in a hundred: too rarely for
// TestConcurrentAddsFromTwoProcesses to be the check.
func TestOpenWaitsForTheOpenLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	// flock(2) takes each open of the file for a holder of its own, as
	// another process's.
	f, err := os.OpenFile(path+".open", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		s, err := Open(context.Background(), path)
		if err == nil {
			s.Close()
		}
		done <- err
	}()
	// An Open that does not wait returns in about 15 ms; a pause of the
	// machine can only hide that, never fail a wait.
	select {
	case err := <-done:
		t.Fatalf("Open returned (error %v) while another held %s.open", err, path)
	case <-time.After(300 * time.Millisecond):
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
