// Command kvb is the suite's tooling in one program: each subcommand is a
// step around the benchmarks (which stay go test -bench functions), and
// steps pass Go values or benchfmt files to each other, never another
// program's Markdown.
//
//	go run ./benchstat/kvb compare BASE HEAD [-module M] [-mode time|sim|both] [flags]
//	go run ./benchstat/kvb summary results.txt
//	go run ./benchstat/kvb help [COMMAND]
//
// It is kvb, not benchstat, so that installing it never shadows
// golang.org/x/perf's benchstat in a user's PATH. A subcommand is either
// a file of its own here that registers itself from init, or a package
// benchstat/<name> whose Command is listed in packaged
// (docs/architecture.md).
package main

import (
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/kvbench/kvbench/benchstat/audit"
	"github.com/kvbench/kvbench/benchstat/charts"
	"github.com/kvbench/kvbench/benchstat/gate"
	"github.com/kvbench/kvbench/benchstat/history"
	"github.com/kvbench/kvbench/benchstat/internal/cli"
	"github.com/kvbench/kvbench/benchstat/memfloor"
	"github.com/kvbench/kvbench/benchstat/power"
	"github.com/kvbench/kvbench/benchstat/report"
	"github.com/kvbench/kvbench/benchstat/sim"
	"github.com/kvbench/kvbench/benchstat/spectrum"
	"github.com/kvbench/kvbench/benchstat/summary"
)

// commands holds every subcommand by name: the packaged ones, and each
// file here that defines one and registers it from init.
var commands = map[string]cli.Command{}

// packaged are the subcommands that are packages of their own under
// benchstat/, one directory each.
var packaged = []cli.Command{
	audit.Command,
	charts.Command,
	gate.Command,
	history.Command,
	memfloor.Command,
	power.Command,
	report.Command,
	sim.Command,
	spectrum.Command,
	summary.Command,
}

func init() {
	for _, c := range packaged {
		register(c)
	}
}

func register(c cli.Command) {
	if _, dup := commands[c.Name]; dup {
		panic("kvb: command registered twice: " + c.Name)
	}
	commands[c.Name] = c
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches to a subcommand: exit 2 for a missing or unknown one.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		overview(stderr)
		return 2
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		return help(args[1:], stdout, stderr)
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "kvb: unknown command %q\n", args[0])
		overview(stderr)
		return 2
	}
	return c.Run(args[1:], stdout, stderr)
}

func help(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		overview(stdout)
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "kvb help: unknown command %q\n", args[0])
		return 2
	}
	c.Help(stdout)
	return 0
}

func overview(w io.Writer) {
	fmt.Fprint(w, "usage: kvb COMMAND [arguments]\n\ncommands:\n")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].Summary)
	}
	fmt.Fprint(w, "\nkvb help COMMAND shows a command's flags.\n")
}
