// Command kvb is the suite's tooling in one program: each subcommand is a
// step around the benchmarks (which stay go test -bench functions), and
// steps pass Go values or benchfmt files to each other, never another
// program's Markdown (go run ./benchstat/kvb help lists them).
//
// It is kvb, not benchstat, so that installing it never shadows
// golang.org/x/perf's benchstat in a user's PATH. A subcommand is either
// a file of its own here that registers itself from init, or a package
// benchstat/<name> whose Command is listed in packaged
// (docs/architecture.md). The tools that study the suite itself are the
// lab's kvb, in a module of its own (benchstat/lab).
package main

import (
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/kvbench/kvbench/benchstat/internal/charts"
	"github.com/kvbench/kvbench/benchstat/internal/cli"
	"github.com/kvbench/kvbench/benchstat/internal/gate"
	"github.com/kvbench/kvbench/benchstat/internal/summary"
	"github.com/kvbench/kvbench/benchstat/report"
	"github.com/kvbench/kvbench/benchstat/sim"
)

// commands holds every subcommand by name: the packaged ones, and each
// file here that defines one and registers it from init.
var commands = map[string]cli.Command{}

// packaged are the subcommands that are packages of their own under
// benchstat/, one directory each.
var packaged = []cli.Command{charts.Command, gate.Command, report.Command, sim.Command, summary.Command}

// lab are the lab's commands: asked for here, kvb says where they are.
var lab = []string{"audit", "history", "memfloor", "power", "record", "spectrum"}

// program dispatches to the commands.
var program = cli.Program{Commands: commands, Heading: "commands:", Elsewhere: func(name string, stderr io.Writer) bool {
	if !slices.Contains(lab, name) {
		return false
	}
	fmt.Fprintf(stderr, "kvb: %s is the lab's kvb's (benchstat/lab, docs/architecture.md): make lab-kvb builds it as results/kvb-lab\n", name)
	return true
}}

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
	os.Exit(program.Run(os.Args[1:], os.Stdout, os.Stderr))
}
