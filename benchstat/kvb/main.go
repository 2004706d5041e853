// Command kvb is the suite's tooling in one program, a subcommand each
// (go run ./benchstat/kvb help lists them): a file here that registers
// itself from init, or a package benchstat/<name> listed in packaged.
// docs/architecture.md, "Layout", says why it is kvb and what goes where.
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

// commands holds every subcommand by name.
var commands = map[string]cli.Command{}

// packaged are the subcommands that are packages of their own.
var packaged = []cli.Command{charts.Command, gate.Command, report.Command, sim.Command, summary.Command}

// lab are the lab's commands: asked for here, kvb says where they are.
var lab = []string{"audit", "history", "memfloor", "power", "record", "screenshot", "spectrum", "versions"}

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
