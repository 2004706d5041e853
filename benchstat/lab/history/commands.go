package history

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kvbench/kvbench/benchstat/internal/cli"
	"github.com/kvbench/kvbench/benchstat/lab/internal/history"
)

// subcommand is history's subcommand name, whose help is history's
// usage, then its own flags.
func subcommand[O any](name string, flags func(*flag.FlagSet) O, run func(cli.Call, O, []string) int) cli.Command {
	return cli.New(cli.Spec[O]{
		Name:  "history " + name,
		Usage: usage + "\nhistory " + name + "'s flags:\n",
		Flags: flags,
		Run:   run,
	})
}

// dbFlags are the flags every subcommand but artifact has: -history
// always, -label where it takes labels.
type dbFlags struct {
	path   string
	labels labelFlag
}

func (d *dbFlags) declare(fs *flag.FlagSet, withLabels bool) {
	fs.StringVar(&d.path, "history", "", "the history database (default $XDG_DATA_HOME/kvbench/history.db, or ~/.local/share/kvbench/history.db)")
	if withLabels {
		fs.Var(&d.labels, "label", "key=value; repeat for more (add: attached to every file; list, report: runs carrying all of them)")
	}
}

func dbFlagsWith(withLabels bool) func(*flag.FlagSet) *dbFlags {
	return func(fs *flag.FlagSet) *dbFlags {
		d := &dbFlags{}
		d.declare(fs, withLabels)
		return d
	}
}

// dbPath is -history, or the default.
func dbPath(flagPath string) (string, error) {
	if flagPath != "" {
		return flagPath, nil
	}
	return history.DefaultPath()
}

// existing opens a database that must already exist: list and export
// never create one.
func existing(ctx context.Context, flagPath string) (*history.Store, error) {
	path, err := dbPath(flagPath)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("no history at %s (kvb history add creates it; -history PATH for another)", path)
	}
	return history.Open(ctx, path)
}

func add(c cli.Call, db *dbFlags, files []string) int {
	if len(files) == 0 {
		return c.Usage("no files given")
	}
	path, err := dbPath(db.path)
	if err != nil {
		fmt.Fprintln(c.Stderr, "kvb history add:", err)
		return 2
	}
	// Every file is read and parsed before the database is touched: one
	// bad file refuses the whole add.
	var parsed []*history.File
	for _, name := range files {
		raw, err := os.ReadFile(name)
		if err != nil {
			fmt.Fprintln(c.Stderr, "kvb history add:", err)
			return 1
		}
		f, err := history.Parse(name, raw)
		if err != nil {
			fmt.Fprintf(c.Stderr, "kvb history add: %v; nothing added\n", err)
			return 1
		}
		parsed = append(parsed, f)
	}
	ctx := context.Background()
	s, err := history.Open(ctx, path)
	if err != nil {
		fmt.Fprintln(c.Stderr, err)
		return 1
	}
	defer s.Close()
	a, err := s.Add(ctx, parsed, db.labels)
	if err != nil {
		fmt.Fprintf(c.Stderr, "%v; nothing added\n", err)
		return 1
	}
	fmt.Fprintf(c.Stdout, "history: %s, %d results -> %s (%s)\n", plural(len(parsed), "file"), a.Results, s.Path(), runIDs(a.Runs))
	return 0
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// runIDs says "run 4" or "runs 4-6".
func runIDs(ids []int64) string {
	if len(ids) == 1 {
		return fmt.Sprintf("run %d", ids[0])
	}
	return fmt.Sprintf("runs %d-%d", ids[0], ids[len(ids)-1])
}

func list(c cli.Call, db *dbFlags, rest []string) int {
	if len(rest) > 0 {
		return c.Usage("unexpected argument %q (filter with -label k=v)", rest[0])
	}
	ctx := context.Background()
	s, err := existing(ctx, db.path)
	if err != nil {
		fmt.Fprintln(c.Stderr, "kvb history list:", err)
		return 1
	}
	defer s.Close()
	runs, err := s.List(ctx, db.labels)
	if err != nil {
		fmt.Fprintln(c.Stderr, err)
		return 1
	}
	if len(runs) == 0 {
		fmt.Fprintf(c.Stderr, "kvb history list: no runs%s in %s\n", map[bool]string{true: " with " + db.labels.String(), false: ""}[len(db.labels) > 0], s.Path())
		return 0
	}
	tw := tabwriter.NewWriter(c.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tDATE\tFILE\tROLE\tCOMMIT\tBRANCH\tMACHINE\tGO\tRESULTS")
	for _, r := range runs {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n", r.ID, date(r), r.File, dash(r.Role),
			dash(commit(r)), dash(r.Label("branch")), dash(machine(r)), dash(r.Label("go")), r.Results)
	}
	tw.Flush()
	return 0
}

// date is the run's own date label when it has one (in local time like
// the rest when it is RFC 3339), else when it was added.
func date(r history.Run) string {
	if d := r.Label("date"); d != "" {
		if t, err := time.Parse(time.RFC3339, d); err == nil {
			return t.Local().Format(time.DateTime)
		}
		return d
	}
	return r.AddedAt.Local().Format(time.DateTime)
}

// commit is the commit label, with "+dirty" when the tree was.
func commit(r history.Run) string {
	c := r.Label("commit")
	if c != "" {
		if d, _ := strconv.ParseBool(r.Label("dirty")); d {
			c += "+dirty"
		}
	}
	return c
}

// machine is the machine label, or the CPU and its count from the
// suite's configuration lines.
func machine(r history.Run) string {
	if m := r.Label("machine"); m != "" {
		return m
	}
	var parts []string
	if c := r.Label("cpu-model"); c != "" {
		parts = append(parts, c)
	}
	if n := r.Label("cpus"); n != "" {
		parts = append(parts, "x"+n)
	}
	return strings.Join(parts, " ")
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func export(c cli.Call, db *dbFlags, rest []string) int {
	if len(rest) != 1 {
		return c.Usage("give one RUN-ID")
	}
	id, err := strconv.ParseInt(rest[0], 10, 64)
	if err != nil || id < 1 {
		return c.Usage("RUN-ID %q is not a run id (a number from kvb history list)", rest[0])
	}
	ctx := context.Background()
	s, err := existing(ctx, db.path)
	if err != nil {
		fmt.Fprintln(c.Stderr, "kvb history export:", err)
		return 1
	}
	defer s.Close()
	raw, err := s.Export(ctx, id)
	if err != nil {
		fmt.Fprintln(c.Stderr, err)
		return 1
	}
	if _, err := c.Stdout.Write(raw); err != nil {
		fmt.Fprintln(c.Stderr, "kvb history export:", err)
		return 1
	}
	return 0
}
