package coretest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// logTB keeps what Retry logs and whether it failed the test.
type logTB struct {
	testing.TB
	log    []string
	failed bool
}

func (l *logTB) Helper()                         {}
func (l *logTB) Logf(format string, args ...any) { l.log = append(l.log, fmt.Sprintf(format, args...)) }
func (l *logTB) Errorf(format string, args ...any) {
	l.failed = true
	l.Logf(format, args...)
}

// TestRetryKeepsEveryFailure: a body that fails once in a pause and then
// passes still logs its failure; one that always fails in a pause logs
// every try's; one whose failure no pause explains is not run again.
func TestRetryKeepsEveryFailure(t *testing.T) {
	for _, c := range []struct {
		name    string
		fails   int   // tries that fail before one passes
		cause   error // each failure wraps it
		runs    int
		failed  bool
		reasons int
	}{
		{"flaky", 1, ErrPaused, 2, false, 1},
		{"always", 99, ErrPaused, 3, true, 3},
		{"no pause", 99, errors.New("a fault"), 1, true, 1},
	} {
		tb := &logTB{TB: t}
		runs := 0
		Retry(tb, 3, func() error {
			if runs++; runs <= c.fails {
				return fmt.Errorf("reason %d: %w", runs, c.cause)
			}
			return nil
		})
		log := strings.Join(tb.log, "\n")
		if runs != c.runs || tb.failed != c.failed {
			t.Errorf("%s: %d runs, failed %v; want %d, %v\n%s", c.name, runs, tb.failed, c.runs, c.failed, log)
		}
		for n := 1; n <= 3; n++ {
			if got, want := strings.Contains(log, fmt.Sprintf("reason %d:", n)), n <= c.reasons; got != want {
				t.Errorf("%s: reason %d logged %v, want %v:\n%s", c.name, n, got, want, log)
			}
		}
	}
}

// TestWatchPausesSeesAStall: the process stopped for 30 ms (SIGSTOP, then
// SIGCONT from a child), as a pause of the machine stops it, writes down
// one pause of about that length.
func TestWatchPausesSeesAStall(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pauses")
	if n := Pauses(path, 0); n != 0 {
		t.Fatalf("%d pauses read where none was written", n)
	}
	WatchPauses(path)
	time.Sleep(10 * time.Millisecond) // the watcher asleep
	cont := exec.Command("sh", "-c", fmt.Sprintf(`while ! grep -q "^State:.*T" /proc/%[1]d/status; do sleep 0.001; done; sleep 0.03; kill -CONT %[1]d`, os.Getpid()))
	if err := cont.Start(); err != nil {
		t.Fatal(err)
	}
	syscall.Kill(os.Getpid(), syscall.SIGSTOP)
	cont.Wait()
	time.Sleep(10 * time.Millisecond) // and awake again
	if n := Pauses(path, 20*time.Millisecond); n < 1 {
		t.Error("no pause of 20 ms or more after a stop of 30 ms")
	}
}
