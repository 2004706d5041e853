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
	"sort"
)

// throughputUnits are tried in order; an operation is drawn in the first
// it reports.
var throughputUnits = []string{"ops/s", "keys/s", "MB/s", "ns/op"}

func main() {
	out := flag.String("o", "docs/img", "directory the SVG files are written to")
	flag.StringVar(&format, "format", "svg", "image format: svg or png")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: charts [-o dir] results.txt...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	if format != "svg" && format != "png" {
		fmt.Fprintf(os.Stderr, "charts: -format %s: must be svg or png\n", format)
		os.Exit(2)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fatal(err)
	}
	all := &results{values: map[series][]float64{}, config: map[string][]string{}}
	for _, f := range flag.Args() {
		in, err := os.Open(f)
		if err != nil {
			fatal(err)
		}
		r, err := readResults(in, f)
		in.Close()
		if err != nil {
			fatal(err)
		}
		all.merge(r)
	}
	if len(all.ops) == 0 {
		fatal(fmt.Errorf("%v: no per-engine benchmark results", flag.Args()))
	}
	files, err := drawAll(all, *out)
	for _, f := range files {
		fmt.Println(f)
	}
	if err != nil {
		fatal(err)
	}
}

// drawAll writes every chart of r into dir and returns the files written.
func drawAll(r *results, dir string) ([]string, error) {
	var files []string
	for _, op := range r.ops {
		units := r.units(op)
		for _, u := range throughputUnits {
			if contains(units, u) {
				f, err := throughputChart(r, op, u, dir)
				if err != nil {
					return files, err
				}
				files = append(files, f)
				break
			}
		}
		var lat []string
		for _, u := range units {
			if _, ok := percentileOrder(u); ok {
				lat = append(lat, u)
			}
		}
		if len(lat) == 0 {
			continue
		}
		sort.Slice(lat, func(i, j int) bool {
			a, _ := percentileOrder(lat[i])
			b, _ := percentileOrder(lat[j])
			return a < b
		})
		short, _ := labels(r.config[op])
		for i, c := range r.config[op] {
			f, err := latencyChart(r, op, c, short[i], lat, dir)
			if err != nil {
				return files, err
			}
			files = append(files, f)
		}
	}
	return files, nil
}

// merge adds o's runs to r.
func (r *results) merge(o *results) {
	for _, op := range o.ops {
		if _, ok := r.config[op]; !ok {
			r.ops = append(r.ops, op)
		}
		for _, c := range o.config[op] {
			if !contains(r.config[op], c) {
				r.config[op] = append(r.config[op], c)
			}
		}
	}
	for k, v := range o.values {
		r.values[k] = append(r.values[k], v...)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "charts:", err)
	os.Exit(1)
}
