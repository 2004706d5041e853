package engine

import (
	"errors"
	"testing"
)

// settle returns after two quiet polls in a row, whatever came before,
// and passes on the engine's error.
func TestSettleWantsTwoQuietPollsInARow(t *testing.T) {
	seq := []bool{true, false, true, true, false, false, true}
	polls := 0
	if err := settle("x", func() (bool, error) { polls++; return seq[polls-1], nil }); err != nil {
		t.Fatal(err)
	}
	if polls != 6 {
		t.Errorf("settled after %d polls, want 6 (the first two quiet in a row)", polls)
	}
	boom := errors.New("boom")
	if err := settle("x", func() (bool, error) { return false, boom }); !errors.Is(err, boom) {
		t.Errorf("got %v, want the engine's error", err)
	}
}
