// Command charts draws SVG charts from kvbench results: for each
// operation, every engine's throughput per sub-benchmark as bars with
// confidence whiskers, and every engine's latency percentiles per
// sub-benchmark.
//
//	go run ./benchstat/charts [-o docs/img] [-format svg|png] results.txt...
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/kvbench/kvbench/benchstat/internal/charts"
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
	for _, f := range flag.Args() {
		in, err := os.Open(f)
		if err != nil {
			fatal(err)
		}
		r, err := charts.ReadResults(in, f)
		in.Close()
		if err != nil {
			fatal(err)
		}
		all.Merge(r)
	}
	if all.Empty() {
		fatal(fmt.Errorf("%v: no per-engine benchmark results", flag.Args()))
	}
	files, err := charts.DrawAll(all, *out)
	for _, f := range files {
		fmt.Println(f)
	}
	if err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "charts:", err)
	os.Exit(1)
}
