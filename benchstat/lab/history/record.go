package history

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/kvbench/kvbench/benchstat/internal/cli"
	"github.com/kvbench/kvbench/benchstat/lab/internal/history"
)

// Record is kvb record: a checkout's results files into the store.
var Record = cli.New(cli.Spec[*recordOptions]{
	Name:    "record",
	Summary: "keep results files in the history store, labelled with this checkout's commit, branch and state",
	Usage:   recordUsage,
	Flags:   recordFlags,
	Run:     runRecord,
})

// recordOptions are kvb record's flags.
type recordOptions struct {
	role, date, path string
}

func recordFlags(fs *flag.FlagSet) *recordOptions {
	o := &recordOptions{}
	fs.StringVar(&o.role, "role", "", "what produced the files: bench, memfloor, seed003, ... (the role label)")
	fs.StringVar(&o.date, "date", "", "when the run was made (the date label; default each file's modification time, when the run last wrote it)")
	fs.StringVar(&o.path, "history", "", "the history store (default $XDG_DATA_HOME/kvbench/history.db)")
	return o
}

const recordUsage = `usage: kvb record -role ROLE [-date WHEN] [-history PATH] FILE...

Adds each results file to the history store (docs/history.md) as a run
of its own, with the labels role, commit, commit-date, branch, dirty
(tracked files differ from the commit) of the checkout it runs in, and
date (-date, else the file's modification time), and says in one line
which runs it added and where. Run it in the checkout whose results the
files are, as make history-record does after make bench. A failure to
record is reported and exits 0: it never fails the run whose results
these are.

`

func runRecord(c cli.Call, o *recordOptions, files []string) int {
	if o.role == "" || len(files) == 0 {
		return c.Usage("give -role and at least one results file")
	}
	recordCheckout(context.Background(), o.path, files, o.role, o.date, c.Stderr)
	return 0
}

// git runs git in the current directory and returns its output, trimmed.
func git(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, "git", args...).Output()
	return strings.TrimSpace(string(out)), err
}

// checkoutLabels are the labels of a run of the checkout in the current
// directory (docs/history.md): its role, the commit and its date, the
// branch, and whether tracked files differ from the commit; "none" for
// what git cannot say (no repository, no commit).
func checkoutLabels(ctx context.Context, role string) []history.Label {
	orNone := func(s string, err error) string {
		if err != nil || s == "" {
			return "none"
		}
		return s
	}
	dirty := "none"
	if st, err := git(ctx, "status", "--porcelain", "--untracked-files=no"); err == nil {
		dirty = fmt.Sprint(st != "")
	}
	return []history.Label{
		{Key: "role", Value: role},
		{Key: "commit", Value: orNone(git(ctx, "rev-parse", "HEAD"))},
		{Key: "commit-date", Value: orNone(git(ctx, "show", "-s", "--format=%cI", "HEAD"))},
		{Key: "branch", Value: orNone(git(ctx, "rev-parse", "--abbrev-ref", "HEAD"))},
		{Key: "dirty", Value: dirty},
	}
}

// recordCheckout keeps a run's results files in the history store at
// path (the default store when empty), each a run of its own labelled
// with this checkout and date (each file's modification time when
// empty), and says in one line which runs it added; a failure is
// reported and never fails the run.
func recordCheckout(ctx context.Context, path string, files []string, role, date string, stderr io.Writer) {
	logf := func(format string, args ...any) {
		fmt.Fprintf(stderr, "kvb record: "+format+"\n", args...)
	}
	path, err := dbPath(path)
	if err != nil {
		logf("not recorded in the history store: %v", err)
		return
	}
	s, err := history.Open(ctx, path)
	if err != nil {
		logf("not recorded in the history store: %v", err)
		return
	}
	defer s.Close()
	labels := checkoutLabels(ctx, role)
	var done []string
	for _, name := range files {
		a, err := recordFile(ctx, s, name, labels, date)
		if err != nil {
			logf("%s was not recorded in the history store: %v", name, err)
			continue
		}
		done = append(done, fmt.Sprintf("%s (run %d)", filepath.Base(name), a.Runs[0]))
	}
	if len(done) > 0 {
		logf("recorded %s in the history store %s", strings.Join(done, ", "), s.Path())
	}
}

// recordFile adds one file as a run with labels and its date label.
func recordFile(ctx context.Context, s *history.Store, name string, labels []history.Label, date string) (history.Added, error) {
	st, err := os.Stat(name)
	if err != nil {
		return history.Added{}, err
	}
	raw, err := os.ReadFile(name)
	if err != nil {
		return history.Added{}, err
	}
	f, err := history.Parse(name, raw)
	if err != nil {
		return history.Added{}, err
	}
	if date == "" {
		date = st.ModTime().UTC().Format(time.RFC3339)
	}
	return s.Add(ctx, []*history.File{f}, append(labels, history.Label{Key: "date", Value: date}))
}
