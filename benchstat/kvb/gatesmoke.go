package main

import (
	"context"
	"fmt"
	"io"
)

// tooFewRoundsRefused: kvb compare refuses a round count the gate
// could not fail at before it builds anything. The comparisons
// themselves are the end-to-end tests' (benchstat/e2e_test.go), which
// make test runs last in smoke-paths.
func tooFewRoundsRefused(context.Context, io.Writer, io.Writer) error {
	if code := commands["compare"].Run([]string{"HEAD", "HEAD", "-count", "3"}, io.Discard, io.Discard); code != 2 {
		return fmt.Errorf("gate-smoke: kvb compare -count 3 was not refused (exit %d)", code)
	}
	return nil
}
