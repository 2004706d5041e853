package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// What kvb compare and kvb versions do around their runs: read the
// command line, then run under a context an interrupt cancels.

// parseOrHelp reads args with parse, for kvb name: -h prints help on
// stdout (exit 0), a bad command line its error (exit 2); ok is false
// then.
func parseOrHelp[A any](name string, parse func([]string) (A, error), help func(io.Writer), args []string, stdout, stderr io.Writer) (a A, status int, ok bool) {
	a, err := parse(args)
	if errors.Is(err, flag.ErrHelp) {
		help(stdout)
		return a, 0, false
	}
	if err != nil {
		fmt.Fprintf(stderr, "kvb %s: %v\n", name, err)
		return a, 2, false
	}
	return a, 0, true
}

// untilInterrupted runs run under a context that an interrupt or SIGTERM
// cancels, then removes the builds' scratch. A failure is reported as
// b.prog's, "interrupted" when the signal stopped it, and is exit 2.
func (b *builder) untilInterrupted(run func(ctx context.Context) error) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	defer b.cleanup()
	err := run(ctx)
	switch {
	case err == nil:
		return 0
	case ctx.Err() != nil:
		fmt.Fprintf(b.stderr, "%s: interrupted: %v\n", b.prog, err)
	default:
		fmt.Fprintf(b.stderr, "%s: %v\n", b.prog, err)
	}
	return 2
}
