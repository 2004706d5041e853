// Command history keeps every benchmark run in one SQLite database
// (benchstat/internal/history), lists and exports them, and reports
// them over time.
//
//	go run ./benchstat/history add FILE... [-label k=v ...] [-history PATH]
//	go run ./benchstat/history list [-label k=v ...] [-history PATH]
//	go run ./benchstat/history export RUN-ID [-history PATH]
//	go run ./benchstat/history report [-o FILE] [-label k=v ...] [-history PATH] [-commit_url TEMPLATE]
//
// add records each file whole, with its configuration lines and the given
// labels, all files in one transaction; a file benchfmt cannot parse
// refuses the add, naming the file and line. list shows the runs that
// carry every given label. export writes a run's file back, byte for
// byte. report writes the runs' results over time as one self-contained
// HTML page: a chart per benchmark family, unit and machine, a line per
// engine, with environment changes and change points marked. The
// database is $XDG_DATA_HOME/kvbench/history.db (or
// ~/.local/share/kvbench/history.db) unless -history says otherwise.
//
// Exit status: 0 done, 1 a file or the database failed, 2 bad usage.
package main

import (
	"fmt"
	"io"
	"os"
)

const usage = `usage: history add FILE... [-label k=v ...] [-history PATH]
       history list [-label k=v ...] [-history PATH]
       history export RUN-ID [-history PATH]
       history report [-o FILE] [-label k=v ...] [-history PATH] [-commit_url TEMPLATE]
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command with its streams, for the tests.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "add":
		return add(args[1:], stdout, stderr)
	case "list":
		return list(args[1:], stdout, stderr)
	case "export":
		return export(args[1:], stdout, stderr)
	case "report":
		return report(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "history: unknown command %q\n%s", args[0], usage)
	return 2
}
