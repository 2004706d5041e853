// Command gate fails when head results are worse than base results. It
// pairs the rounds of the two files (the i-th result of a series in base
// with its i-th in head, as benchstat/compare.sh writes them) and tests
// the per-round changes: a series regresses when a one-sided Wilcoxon
// signed-rank test finds them centred on the bad side (alpha, default
// 0.05, Holm-corrected over the series) and their median is worse than a
// threshold (default 3%). Each
// benchmark family is gated on the units that carry its result, named by
// the "gate" line the suite prints; a gated series missing from head
// fails. Units declared exact (benchfmt "Unit x assume=exact") fail on any
// worsening. It prints a markdown summary on stdout.
//
//	go run ./benchstat/gate [-alpha 0.05] [-threshold 3] [-holm=false] [-units regexp] [-allow_removed] base.txt head.txt
//
// Several files may be given per side as base1.txt,base2.txt. Exit status:
// 0 pass, 1 regression or missing series, 2 bad usage, unreadable input,
// or too few rounds for the test to reject at alpha.
package main

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/kvbench/kvbench/benchstat/internal/gate"
)

func main() {
	fs := flag.NewFlagSet("gate", flag.ContinueOnError)
	alpha := fs.Float64("alpha", 0.05, "significance level of the one-sided signed-rank test on the per-round changes")
	threshold := fs.Float64("threshold", 100*gate.DefaultThreshold, "percent: a series fails only when the median per-round change is worse than this")
	simThreshold := fs.Float64("sim_threshold", 100*gate.DefaultSimThreshold, "percent: the same for results counted under callgrind (a \"mode: sim\" line, benchstat/sim)")
	holm := fs.Bool("holm", true, "Holm-Bonferroni correction across the tested series, so that alpha bounds the chance of any false alarm in the comparison (-holm=false: alpha per series)")
	units := fs.String("units", "", "regular expression: gate exactly the units it matches, e.g. '^(ns/op|cpu-ns/op)$' (default: each family's own units)")
	allowRemoved := fs.Bool("allow_removed", false, "a gated series in base but not in head passes (default: it fails)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: gate [flags] base.txt[,more.txt] head.txt[,more.txt]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if fs.NArg() != 2 {
		fs.Usage()
		os.Exit(2)
	}
	o := gate.Options{Alpha: *alpha, Threshold: *threshold / 100, SimThreshold: *simThreshold / 100, Holm: *holm, AllowRemoved: *allowRemoved}
	if err := o.Validate(); err != nil {
		fmt.Fprintln(os.Stderr, "gate:", err)
		os.Exit(2)
	}
	if *units != "" {
		re, err := regexp.Compile(*units)
		if err != nil {
			fmt.Fprintf(os.Stderr, "gate: -units %s: %v\n", *units, err)
			os.Exit(2)
		}
		o.Units = re
	}
	base, err := gate.ReadFiles(strings.Split(fs.Arg(0), ",")...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gate: base:", err)
		os.Exit(2)
	}
	head, err := gate.ReadFiles(strings.Split(fs.Arg(1), ",")...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gate: head:", err)
		os.Exit(2)
	}
	if len(base.Values) == 0 || len(head.Values) == 0 {
		fmt.Fprintf(os.Stderr, "gate: no benchmark results in %s\n", map[bool]string{true: fs.Arg(0), false: fs.Arg(1)}[len(base.Values) == 0])
		os.Exit(2)
	}
	rows := gate.Compare(base, head, o)
	if need, short := gate.TooFewRounds(rows, o); len(short) > 0 {
		fmt.Fprintf(os.Stderr, "gate: %s has %d paired rounds; the signed-rank test needs at least %d to reject anything at alpha %g%s, so this gate could not fail: run more rounds (compare.sh -count %d)\n",
			short[0].Key, short[0].N, need, o.Alpha, map[bool]string{true: fmt.Sprintf(" after Holm over %d series", gate.Corrected(rows)), false: ""}[o.Holm], need)
		os.Exit(2)
	}
	gate.Markdown(os.Stdout, rows, o, fs.Arg(0), fs.Arg(1))
	if gate.Failed(rows) {
		os.Exit(1)
	}
}
