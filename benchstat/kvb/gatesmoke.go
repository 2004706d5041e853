package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
)

// tooFewRoundsRefused: kvb compare refuses a round count the gate
// could not fail at before it builds anything, with the reason. The
// comparisons themselves are the end-to-end tests' (benchstat/e2e_test.go,
// the jobs e2e and e2e-sim).
func tooFewRoundsRefused(context.Context, io.Writer, io.Writer) error {
	var errb bytes.Buffer
	code := commands["compare"].Run([]string{"HEAD", "HEAD", "-count", "3"}, io.Discard, &errb)
	const want = "kvb compare: -count 3: the gate's signed-rank test needs at least"
	if code != 2 || !strings.HasPrefix(errb.String(), want) {
		return fmt.Errorf("gate-smoke: kvb compare -count 3 was not refused with %q (exit %d):\n%s", want, code, errb.String())
	}
	return nil
}
