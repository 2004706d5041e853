package summary

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/kvbench/kvbench/benchstat/internal/cli"
)

// Command is kvb summary.
var Command = cli.New(cli.Spec[*options]{
	Name:    "summary",
	Summary: "one results file, engines side by side: a short table per question make bench asks",
	Usage:   usage,
	Flags:   flags,
	Leading: true,
	Run:     run,
})

const usage = `usage: kvb summary [-o summary.txt] results.txt
       kvb summary -benchstat results.txt [benchstat flags]

Prints the summary of one results file: a short table per question make
bench asks (docs/comparing.md). With -benchstat, benchstat's tables of
every unit instead, one column per engine; flags after the file go to
benchstat.

`

type options struct {
	out  string
	full bool
}

func flags(fs *flag.FlagSet) *options {
	o := &options{}
	fs.StringVar(&o.out, "o", "", "also write the summary, exactly as printed, to this file")
	fs.BoolVar(&o.full, "benchstat", false, "print benchstat's tables of every unit, engines as columns, instead of the summary")
	return o
}

func run(c cli.Call, o *options, pos []string) int {
	if len(pos) == 0 {
		return c.Usage("no results file given")
	}
	var err error
	switch {
	case o.full:
		err = benchstat(pos[0], pos[1:], c.Stdout, c.Stderr)
	case len(pos) != 1:
		return c.Usage("one results file, not %d (benchstat's flags go with -benchstat)", len(pos))
	default:
		err = write(pos[0], o.out, c.Stdout)
	}
	if err != nil {
		fmt.Fprintln(c.Stderr, "kvb summary:", err)
		return 1
	}
	return 0
}

// write prints the summary of the results file and, with out, writes
// the same text there.
func write(file, out string, stdout io.Writer) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	r, err := Read(data, file)
	if err != nil {
		return err
	}
	var text bytes.Buffer
	if err := Build(r).Write(io.MultiWriter(stdout, &text)); err != nil {
		return err
	}
	if out != "" {
		return os.WriteFile(out, text.Bytes(), 0o644)
	}
	return nil
}
