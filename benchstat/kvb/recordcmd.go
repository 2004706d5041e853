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
	register(command{
		name:    "record",
		summary: "keep results files in the history store, labelled with this checkout's commit, branch and state",
		help:    printRecordHelp,
		run:     runRecord,
	})
}

func recordFlags(fs *flag.FlagSet) (role, date, path *string) {
	role = fs.String("role", "", "what produced the files: bench, memfloor, seed003, ... (the role label)")
	date = fs.String("date", time.Now().UTC().Format(time.RFC3339), "when the run started (the date label)")
	path = fs.String("history", "", "the history store (default $XDG_DATA_HOME/kvbench/history.db)")
	return
}

func printRecordHelp(w io.Writer) {
	fmt.Fprint(w, `usage: kvb record -role ROLE [-date WHEN] [-history PATH] FILE...

Adds each results file to the history store (docs/history.md) as a run
of its own, with the labels role, commit, commit-date, branch, dirty
(tracked files differ from the commit) and date, and says in one line
which runs it added and where. A failure to record is reported and exits 0: it never fails
the run whose results these are.

`)
	fs := flag.NewFlagSet("kvb record", flag.ContinueOnError)
	fs.SetOutput(w)
	recordFlags(fs)
	fs.PrintDefaults()
}

func runRecord(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("record")
	role, date, path := recordFlags(fs)
	files, status, ok := cli.Parse(fs, args, printRecordHelp, stdout, stderr)
	if !ok {
		return status
	}
	if *role == "" || len(files) == 0 {
		return cli.Usage(stderr, "record", printRecordHelp, "give -role and at least one results file")
	}
	recordCheckout(context.Background(), *path, files, *role, *date, stderr)
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
