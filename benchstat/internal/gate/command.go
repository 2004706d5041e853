package gate

import (
	"flag"
	"fmt"
	"regexp"
	"strings"

	"github.com/kvbench/kvbench/benchstat/internal/cli"
)

// Command is kvb gate.
var Command = cli.New(cli.Spec[*options]{
	Name:    "gate",
	Summary: "the regression gate on results you already have: head against base, rounds paired",
	Usage:   usage,
	Flags:   flags,
	Run:     run,
})

const usage = `usage: kvb gate [flags] base.txt[,more.txt] head.txt[,more.txt]

Pairs the rounds of the two sides (the i-th result of a series in base
with its i-th in head) and fails a series whose per-round changes a
one-sided signed-rank test finds worse, by more than the threshold
(docs/gating.md). Prints a Markdown report. Exit status: 0 pass, 1
regression or a gated series missing from head, 2 bad usage, unreadable
input, or too few rounds for the test to reject anything.

`

// options are gate's flags as given: the thresholds in percent.
type options struct {
	Options
	units string
}

func flags(fs *flag.FlagSet) *options {
	o := &options{}
	fs.Float64Var(&o.Alpha, "alpha", 0.05, "significance level of the one-sided signed-rank test on the per-round changes")
	fs.Float64Var(&o.Threshold, "threshold", 100*DefaultThreshold, "percent: a series fails only when the median per-round change is worse than this")
	fs.Float64Var(&o.SimThreshold, "sim_threshold", 100*DefaultSimThreshold, "percent: the same for results counted under callgrind (a \"mode: sim\" line, kvb sim)")
	fs.BoolVar(&o.Holm, "holm", true, "Holm-Bonferroni correction across the tested series, so that alpha bounds the chance of any false alarm in the comparison (-holm=false: alpha per series)")
	fs.StringVar(&o.units, "units", "", "regular expression: gate exactly the units it matches, e.g. '^(ns/op|cpu-ns/op)$' (default: each family's own units)")
	fs.BoolVar(&o.AllowRemoved, "allow_removed", false, "a gated series in base but not in head passes (default: it fails)")
	return o
}

func run(c cli.Call, f *options, pos []string) int {
	if len(pos) != 2 {
		return c.Usage("want the base and the head results, got %q", pos)
	}
	o := f.Options
	o.Threshold, o.SimThreshold = f.Threshold/100, f.SimThreshold/100
	if err := o.Validate(); err != nil {
		return c.Usage("%v", err)
	}
	if f.units != "" {
		re, err := regexp.Compile(f.units)
		if err != nil {
			return c.Usage("-units %s: %v", f.units, err)
		}
		o.Units = re
	}
	rows, err := Files(o, strings.Split(pos[0], ","), strings.Split(pos[1], ","), pos[0], pos[1], "kvb compare -count", c.Stdout)
	if err != nil {
		fmt.Fprintln(c.Stderr, "kvb gate:", err)
		return 2
	}
	if Failed(rows) {
		return 1
	}
	return 0
}
