package core

import (
	"testing"
	"time"
)

// The time left is the rest at the rate so far: a quarter done in 10 s
// leaves 30 s; nothing done yet leaves it unknown.
func TestTimeLeftIsTheRestAtTheRateSoFar(t *testing.T) {
	if got := timeLeft(250, 1000, 10*time.Second); got != "30s" {
		t.Errorf("a quarter done in 10s: %s left, want 30s", got)
	}
	if got := timeLeft(0, 1000, time.Second); got != "?" {
		t.Errorf("nothing done: %s left, want ?", got)
	}
}
