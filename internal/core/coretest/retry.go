package coretest

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// ErrPaused marks a try's failure that a pause of the machine explains:
// one the try saw itself (WatchPauses) at least as long as what it times.
var ErrPaused = errors.New("the machine paused")

// Retry runs try until it passes, up to tries runs, and runs it again only
// after a failure that wraps ErrPaused: any other failure fails t at once.
// Each failed try's reason goes to t's log as it fails, so a pass after a
// failure still logs that failure, and a last failure logs them all.
func Retry(t testing.TB, tries int, try func() error) {
	t.Helper()
	for n := 1; n <= tries; n++ {
		err := try()
		if err == nil {
			return
		}
		t.Logf("try %d of %d failed: %v", n, tries, err)
		if !errors.Is(err, ErrPaused) {
			t.Errorf("try %d failed, and no pause of the machine explains it", n)
			return
		}
	}
	t.Errorf("each of %d tries failed in a pause of the machine", tries)
}

// WatchPauses appends to the file at path, for as long as the process
// runs, one line for each time a goroutine sleeping 1 ms at a time woke
// 1 ms or more late (under 1 ms on an idle machine): how long the machine
// (or the process) did not run it. Pauses reads them.
func WatchPauses(path string) {
	go func() {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return // no file: no pause is read, and no failure is explained
		}
		for {
			t := time.Now()
			time.Sleep(time.Millisecond)
			if late := time.Since(t) - time.Millisecond; late >= time.Millisecond {
				fmt.Fprintln(f, late)
			}
		}
	}()
}

// Pauses is how many pauses of at least atLeast WatchPauses wrote to path.
func Pauses(path string, atLeast time.Duration) int {
	b, _ := os.ReadFile(path)
	n := 0
	for _, line := range strings.Fields(string(b)) {
		if d, err := time.ParseDuration(line); err == nil && d >= atLeast {
			n++
		}
	}
	return n
}
