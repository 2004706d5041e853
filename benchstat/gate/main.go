// Command gate fails when head results are slower than base results:
// a benchmark regresses when a Mann-Whitney U test finds the two samples
// differ (alpha, default 0.05) and head's median is worse than base's by
// more than a threshold (default 5%) in the unit's bad direction. Units
// declared exact (benchfmt "Unit x assume=exact") fail on any worsening.
// Benchmarks in only one side are reported, never failed. It prints a
// markdown summary on stdout.
//
//	go run ./benchstat/gate [-alpha 0.05] [-threshold 5] [-holm] [-units regexp] base.txt head.txt
//
// Several files may be given per side as base1.txt,base2.txt. Exit status:
// 0 pass, 1 regression, 2 bad usage or unreadable input.
package main

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
)

func main() {
	fs := flag.NewFlagSet("gate", flag.ContinueOnError)
	alpha := fs.Float64("alpha", 0.05, "significance level of the Mann-Whitney U test")
	threshold := fs.Float64("threshold", 5, "percent change in the bad direction that fails")
	holm := fs.Bool("holm", false, "Holm-Bonferroni correction across all compared series (fewer false alarms when many benchmarks are gated)")
	units := fs.String("units", "", "regular expression: gate only the units it matches, e.g. '^(ns/op|cpu-ns/op)$' (default every unit)")
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
	o := Options{Alpha: *alpha, Threshold: *threshold / 100, Holm: *holm}
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
	base, err := ReadFiles(strings.Split(fs.Arg(0), ",")...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gate: base:", err)
		os.Exit(2)
	}
	head, err := ReadFiles(strings.Split(fs.Arg(1), ",")...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gate: head:", err)
		os.Exit(2)
	}
	if len(base.Values) == 0 || len(head.Values) == 0 {
		fmt.Fprintf(os.Stderr, "gate: no benchmark results in %s\n", map[bool]string{true: fs.Arg(0), false: fs.Arg(1)}[len(base.Values) == 0])
		os.Exit(2)
	}
	rows := Compare(base, head, o)
	Markdown(os.Stdout, rows, o, fs.Arg(0), fs.Arg(1))
	if Failed(rows) {
		os.Exit(1)
	}
}
