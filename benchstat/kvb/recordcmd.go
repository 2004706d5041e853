package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/kvbench/kvbench/benchstat/internal/cli"
	"github.com/kvbench/kvbench/benchstat/internal/history"
)

func init() {
	register(cli.New(cli.Spec[*recordOptions]{
		Name:    "record",
		Summary: "keep results files in the history store, labelled with this checkout's commit, branch and state",
		Usage:   recordUsage,
		Flags:   recordFlags,
		Run:     runRecord,
	}))
}

// recordOptions are kvb record's flags.
type recordOptions struct {
	role, date, path string
}

func recordFlags(fs *flag.FlagSet) *recordOptions {
	o := &recordOptions{}
	fs.StringVar(&o.role, "role", "", "what produced the files: bench, memfloor, seed003, ... (the role label)")
	fs.StringVar(&o.date, "date", time.Now().UTC().Format(time.RFC3339), "when the run started (the date label)")
	fs.StringVar(&o.path, "history", "", "the history store (default $XDG_DATA_HOME/kvbench/history.db)")
	return o
}

const recordUsage = `usage: kvb record -role ROLE [-date WHEN] [-history PATH] FILE...

Adds each results file to the history store (docs/history.md) as a run
of its own, with the labels role, commit, commit-date, branch, dirty
(tracked files differ from the commit) and date, and says in one line
which runs it added and where. A failure to record is reported and exits 0: it never fails
the run whose results these are.

`

func runRecord(c cli.Call, o *recordOptions, files []string) int {
	if o.role == "" || len(files) == 0 {
		return c.Usage("give -role and at least one results file")
	}
	recordCheckout(context.Background(), o.path, files, o.role, o.date, c.Stderr)
	return 0
}

// checkoutLabels are the labels of a run of the checkout at dir
// (docs/history.md): its role, the commit and its date, the branch,
// whether tracked files differ from the commit, and when the run
// started; "none" for what git cannot say (no repository, no commit).
func checkoutLabels(ctx context.Context, dir, role, date string) []history.Label {
	orNone := func(s string, err error) string {
		if err != nil || s == "" {
			return "none"
		}
		return s
	}
	dirty := "none"
	if st, err := git(ctx, dir, "status", "--porcelain", "--untracked-files=no"); err == nil {
		dirty = fmt.Sprint(st != "")
	}
	return []history.Label{
		{Key: "role", Value: role},
		{Key: "commit", Value: orNone(git(ctx, dir, "rev-parse", "HEAD"))},
		{Key: "commit-date", Value: orNone(git(ctx, dir, "show", "-s", "--format=%cI", "HEAD"))},
		{Key: "branch", Value: orNone(git(ctx, dir, "rev-parse", "--abbrev-ref", "HEAD"))},
		{Key: "dirty", Value: dirty},
		{Key: "date", Value: date},
	}
}

// recordCheckout keeps a run's results files in the history store at
// path (the default store when empty), each a run of its own labelled
// with this checkout, and says in one line which runs it added; a
// failure is reported and never fails the run.
func recordCheckout(ctx context.Context, path string, files []string, role, date string, stderr io.Writer) {
	labels := checkoutLabels(ctx, "", role, date)
	recs := make([]recording, len(files))
	for i, f := range files {
		recs[i] = recording{file: f, labels: labels}
	}
	recordRuns(ctx, path, recs, func(format string, args ...any) {
		fmt.Fprintf(stderr, "kvb record: "+format+"\n", args...)
	})
}
