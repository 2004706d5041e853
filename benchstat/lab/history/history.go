// Package history is kvb history: it keeps every benchmark run in one
// SQLite database (benchstat/lab/internal/history), lists and exports them,
// reports them over time, and prepares a comparison's results for a
// store on another machine.
//
//	results/kvb-lab history add FILE... [-label k=v ...] [-history PATH]
//	results/kvb-lab history list [-label k=v ...] [-history PATH]
//	results/kvb-lab history export RUN-ID [-history PATH]
//	results/kvb-lab history report [-o FILE] [-label k=v ...] [-history PATH] [-commit_url TEMPLATE]
//	results/kvb-lab history artifact [-mode time|sim|both] [-label k=v]... [-base k=v]... [-head k=v]... OUT_DIR COMPARE_DIR
//
// add records each file whole, with its configuration lines and the given
// labels, all files in one transaction; a file benchfmt cannot parse
// refuses the add, naming the file and line. list shows the runs that
// carry every given label. export writes a run's file back, byte for
// byte. report writes the runs' results over time as one self-contained
// HTML page: a chart per benchmark family, unit and machine, a line per
// engine, with environment changes and change points marked. artifact
// copies each side of a kvb compare run with its labels as configuration
// lines, for add on another machine (docs/history.md, "More than one
// machine"). The database is $XDG_DATA_HOME/kvbench/history.db (or
// ~/.local/share/kvbench/history.db) unless -history says otherwise.
//
// Exit status: 0 done, 1 a file or the database failed, 2 bad usage.
package history

import (
	"fmt"
	"io"

	"github.com/kvbench/kvbench/benchstat/internal/cli"
)

// Command is kvb history.
var Command = cli.Command{
	Name:    "history",
	Summary: "the history store: add, list, export, report runs over time; artifact: a comparison's results for it",
	Help:    help,
	Run:     run,
}

const usage = `usage: kvb history add FILE... [-label k=v ...] [-history PATH]
       kvb history list [-label k=v ...] [-history PATH]
       kvb history export RUN-ID [-history PATH]
       kvb history report [-o FILE] [-label k=v ...] [-history PATH] [-commit_url TEMPLATE] [-svg DIR]
       kvb history artifact [-mode time|sim|both] [-label k=v]... [-base k=v]... [-head k=v]... OUT_DIR COMPARE_DIR

Every run kept in one SQLite database (docs/history.md): add records
results files whole with labels, list shows the runs carrying every
-label, export writes a run's file back, report writes one HTML page of
every series over time, and artifact copies a kvb compare directory's
sides with their labels as configuration lines, for add on another
machine. kvb history COMMAND -h shows a command's flags.
`

func help(w io.Writer) { fmt.Fprint(w, usage) }

// subcommands are history's own, by name.
var subcommands = map[string]cli.Command{
	"add":      subcommand("add", dbFlagsWith(true), add),
	"list":     subcommand("list", dbFlagsWith(true), list),
	"export":   subcommand("export", dbFlagsWith(false), export),
	"report":   subcommand("report", reportFlagsOf, report),
	"artifact": artifactCommand,
}

// run dispatches to history's own subcommands.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return cli.Usage(stderr, "history", help, "no command given")
	}
	if c, ok := subcommands[args[0]]; ok {
		return c.Run(args[1:], stdout, stderr)
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		help(stdout)
		return 0
	}
	return cli.Usage(stderr, "history", help, "unknown command %q", args[0])
}
