// Command charts draws SVG charts from kvbench results: for each
// operation, every engine's throughput per sub-benchmark as bars with
// confidence whiskers, and every engine's latency percentiles per
// sub-benchmark; the memory-budget row's ops/s on an axis of their own,
// beside the disk's one-thread 4 KiB random reads.
//
//	go run ./benchstat/charts [-o docs/img] [-format svg|png] results.txt...
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"

	"github.com/kvbench/kvbench/benchstat/internal/charts"
	"github.com/kvbench/kvbench/benchstat/internal/summary"
)

func main() {
	out := flag.String("o", "docs/img", "directory the SVG files are written to")
	flag.StringVar(&charts.Format, "format", "svg", "image format: svg or png")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: charts [-o dir] results.txt...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	if charts.Format != "svg" && charts.Format != "png" {
		fmt.Fprintf(os.Stderr, "charts: -format %s: must be svg or png\n", charts.Format)
		os.Exit(2)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fatal(err)
	}
	all := charts.New()
	var raw [][]byte
	for _, f := range flag.Args() {
		b, err := os.ReadFile(f)
		if err != nil {
			fatal(err)
		}
		raw = append(raw, b)
		r, err := charts.ReadResults(bytes.NewReader(b), f)
		if err != nil {
			fatal(err)
		}
		all.Merge(r)
	}
	if all.Empty() {
		fatal(fmt.Errorf("%v: no per-engine benchmark results", flag.Args()))
	}
	files, err := charts.DrawAll(all, *out)
	if err == nil {
		var f string
		if f, err = budgetChart(raw, *out); f != "" {
			files = append(files, f)
		}
	}
	for _, f := range files {
		fmt.Println(f)
	}
	if err != nil {
		fatal(err)
	}
}

// budgetChart draws the memory-budget row of the summary of every file
// together, as one results file; "" when they have none.
func budgetChart(raw [][]byte, dir string) (string, error) {
	res, err := summary.Read(bytes.NewReader(bytes.Join(raw, []byte("\n"))), "results")
	if err != nil {
		return "", err
	}
	b, ok := charts.BudgetOf(summary.Build(res))
	if !ok {
		return "", nil
	}
	return charts.BudgetChart(b, dir)
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "charts:", err)
	os.Exit(1)
}
