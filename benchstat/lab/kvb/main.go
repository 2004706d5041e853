// Command kvb here is the lab's kvb: the tools that study the suite
// itself rather than the engines, and the history store that follows
// results over time, each a package of this module, with the flags and
// output they had in the product's kvb. It is built from this module and
// run from the repository's root, where the tools find the suite (make
// audit, memfloor, history-record, gate-e2e, gate-sim-power, versions,
// report-screenshot and history-screenshot build it as
// results/kvb-lab):
//
//	go build -C benchstat/lab -o "$PWD/results/kvb-lab" ./kvb
//	results/kvb-lab power [-mode time|sim] ... [-- kvb compare flags]
//	results/kvb-lab record -role bench results/bench.txt
//	results/kvb-lab screenshot report|history
//	results/kvb-lab versions -module go.etcd.io/bbolt v1.4.3 v1.5.0
//	results/kvb-lab help [COMMAND]
package main

import (
	"os"

	"github.com/kvbench/kvbench/benchstat/internal/cli"
	"github.com/kvbench/kvbench/benchstat/lab/audit"
	"github.com/kvbench/kvbench/benchstat/lab/history"
	"github.com/kvbench/kvbench/benchstat/lab/memfloor"
	"github.com/kvbench/kvbench/benchstat/lab/power"
	"github.com/kvbench/kvbench/benchstat/lab/screenshot"
	"github.com/kvbench/kvbench/benchstat/lab/spectrum"
	"github.com/kvbench/kvbench/benchstat/lab/versions"
)

// program dispatches to the lab's commands.
var program = cli.Program{
	Commands: map[string]cli.Command{},
	Heading:  "the lab's commands (the product's: go run ./benchstat/kvb help):",
}

func init() {
	for _, c := range []cli.Command{audit.Command, history.Command, history.Record, memfloor.Command, power.Command, screenshot.Command, spectrum.Command, versions.Command} {
		program.Commands[c.Name] = c
	}
}

func main() {
	os.Exit(program.Run(os.Args[1:], os.Stdout, os.Stderr))
}
