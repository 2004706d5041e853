package engine

import (
	"fmt"
	"time"
)

// One settle rule for every engine with background work (Flush): poll the
// engine's own "flushes or compactions running or due" signal every
// settlePoll, and call it settled after settleQuiet quiet polls in a row.
// A second quiet poll is asked for because a compaction that has written
// its tables but not yet installed them shows in no signal for a moment.
// Every engine pays the same (at least one settlePoll of waiting), so the
// rule does not tilt populate rates.
const (
	settlePoll    = 10 * time.Millisecond
	settleQuiet   = 2
	settleTimeout = 10 * time.Minute
)

// settle waits until busy has reported false settleQuiet times in a row.
func settle(engine string, busy func() (bool, error)) error {
	deadline := time.Now().Add(settleTimeout)
	quiet := 0
	for {
		b, err := busy()
		if err != nil {
			return err
		}
		if b {
			quiet = 0
		} else if quiet++; quiet >= settleQuiet {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: Flush: compactions did not settle within %v", engine, settleTimeout)
		}
		time.Sleep(settlePoll)
	}
}
