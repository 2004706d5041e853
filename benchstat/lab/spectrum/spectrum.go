// Package spectrum is kvb spectrum: it draws HdrHistogram percentile
// spectra (the .hgrm files -latency_dir writes) as one SVG chart: latency
// against percentile on HdrHistogram's usual axis, 1/(1-p), log scale, so
// the tail is as wide as the body (docs/seed-003.md).
//
//	results/kvb-lab spectrum -o chart.svg name=file.hgrm ...
package spectrum

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kvbench/kvbench/benchstat/internal/cli"
)

// Command is kvb spectrum.
var Command = cli.New(cli.Spec[*options]{
	Name:    "spectrum",
	Summary: "latency spectra (-latency_dir's .hgrm files) as one SVG chart, latency against percentile",
	Usage:   usage,
	Flags:   flags,
	Run:     run,
})

const usage = `usage: kvb spectrum [-o chart.svg] [-title T] name=file.hgrm ...

Draws each spectrum file, under its name (the file's path when no name=
is given), as one line of one SVG chart, written to -o or printed.
Every file is read before anything is written. Exit status: 0 done, 1 a
file that cannot be read or holds no spectrum, 2 bad usage.

`

type options struct {
	out, title string
}

func flags(fs *flag.FlagSet) *options {
	o := &options{}
	fs.StringVar(&o.out, "o", "", "output SVG file (default: standard output)")
	fs.StringVar(&o.title, "title", "Latency by percentile (from intended start)", "chart title")
	return o
}

func run(c cli.Call, o *options, pos []string) int {
	if len(pos) == 0 {
		return c.Usage("no spectrum files given")
	}
	ss, err := read(pos)
	if err == nil {
		err = write(o.out, o.title, ss, c.Stdout)
	}
	if err != nil {
		fmt.Fprintln(c.Stderr, "kvb spectrum:", err)
		return 1
	}
	return 0
}

// read reads each name=file argument's spectrum.
func read(args []string) ([]series, error) {
	var ss []series
	for _, arg := range args {
		name, file, ok := strings.Cut(arg, "=")
		if !ok {
			name, file = arg, arg
		}
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		pts, err := parse(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if len(pts) == 0 {
			return nil, fmt.Errorf("%s: no spectrum", file)
		}
		ss = append(ss, series{name, pts})
	}
	return ss, nil
}

// write draws the chart into the file out, or to stdout when out is "".
func write(out, title string, ss []series, stdout io.Writer) error {
	if out == "" {
		render(stdout, title, ss)
		return nil
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	render(f, title, ss)
	return f.Close()
}
