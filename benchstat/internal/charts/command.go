// Package charts draws kvbench results, and is kvb charts: for each
// operation, every engine's throughput per sub-benchmark as bars with
// confidence whiskers, and its latency percentiles per sub-benchmark; the
// memory-budget row's ops/s on an axis of their own, beside the disk's
// one-thread 4 KiB random reads; populate over its run; throughput
// timelines.
package charts

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/kvbench/kvbench/benchstat/internal/cli"
	"github.com/kvbench/kvbench/benchstat/internal/results"
	"github.com/kvbench/kvbench/benchstat/internal/summary"
)

// Command is kvb charts.
var Command = cli.New(cli.Spec[*options]{
	Name:    "charts",
	Summary: "SVG (or PNG) charts of results files: throughput, latency percentiles, the memory budget",
	Usage:   usage,
	Flags:   flags,
	Run:     run,
})

const usage = `usage: kvb charts [-o dir] [-format svg|png] results.txt...

Draws every chart of the results files, taken together, into a directory
and prints each file's path.

`

type options struct {
	out, format string
}

func flags(fs *flag.FlagSet) *options {
	o := &options{}
	fs.StringVar(&o.out, "o", "docs/img", "directory the SVG files are written to")
	fs.StringVar(&o.format, "format", "svg", "image format: svg or png")
	return o
}

func run(c cli.Call, o *options, files []string) int {
	if len(files) == 0 {
		return c.Usage("no results files given")
	}
	if o.format != "svg" && o.format != "png" {
		return c.Usage("-format %s: must be svg or png", o.format)
	}
	// Format is the package's, put back after the run.
	defer func(was string) { Format = was }(Format)
	Format = o.format
	if err := drawFiles(files, o.out, c.Stdout); err != nil {
		fmt.Fprintln(c.Stderr, "kvb charts:", err)
		return 1
	}
	return 0
}

// drawFiles draws the charts of every file together into dir and prints each
// chart's path.
func drawFiles(files []string, dir string, stdout io.Writer) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	all := &Results{results.Series{Values: map[results.Key][]float64{}, Configs: map[string][]string{}}}
	var raw [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		raw = append(raw, b)
		r, err := ReadResults(bytes.NewReader(b), f)
		if err != nil {
			return err
		}
		all.Merge(r)
	}
	if len(all.Ops) == 0 {
		return fmt.Errorf("%v: no per-engine benchmark results", files)
	}
	drawn, err := DrawAll(all, dir)
	if err == nil {
		var f string
		if f, err = budgetChart(raw, dir); f != "" {
			drawn = append(drawn, f)
		}
	}
	for _, f := range drawn {
		fmt.Fprintln(stdout, f)
	}
	return err
}

// budgetChart draws the memory-budget row of the summary of every file
// together, as one results file; "" when they have none.
func budgetChart(raw [][]byte, dir string) (string, error) {
	res, err := summary.Read(bytes.Join(raw, []byte("\n")), "results")
	if err != nil {
		return "", err
	}
	b, ok := BudgetOf(summary.Build(res))
	if !ok {
		return "", nil
	}
	return BudgetChart(b, dir)
}
