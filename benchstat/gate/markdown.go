package main

import (
	"fmt"
	"io"
	"math"
	"strings"

	"golang.org/x/perf/benchunit"
)

// Markdown writes the gate's summary, fit for a pull-request comment:
// the verdict, then failures and improvements, then everything else
// folded away.
func Markdown(w io.Writer, rows []Row, o Options, baseName, headName string) {
	count := map[Verdict]int{}
	tested := 0
	for _, r := range rows {
		count[r.Verdict]++
		if r.Verdict != Missing && r.Verdict != New {
			tested++
		}
	}
	if n := count[Regression]; n > 0 {
		fmt.Fprintf(w, "### kvbench gate: FAIL, %d regression%s\n\n", n, plural(n))
	} else {
		fmt.Fprintf(w, "### kvbench gate: pass\n\n")
	}
	corr := ""
	if o.Holm {
		corr = " (Holm-corrected)"
	}
	fmt.Fprintf(w, "Base `%s`, head `%s`: %d series compared, %d improved, %d regressed, %d missing in head, %d new.\n",
		baseName, headName, tested, count[Improvement], count[Regression], count[Missing], count[New])
	fmt.Fprintf(w, "A series fails when a Mann-Whitney U test finds a difference at alpha %g%s and the head's median is worse by more than %g%%; "+
		"a unit declared `assume=exact` fails on any worsening. Values are medians.", o.Alpha, corr, o.Threshold*100)
	if o.Units != nil {
		fmt.Fprintf(w, " Only units matching `%s` are gated.", o.Units)
	}
	fmt.Fprint(w, "\n\n")

	var top, rest []Row
	for _, r := range rows {
		switch r.Verdict {
		case Regression, Improvement, Changed:
			top = append(top, r)
		case Unchanged:
			rest = append(rest, r)
		}
	}
	if len(top) > 0 {
		table(w, top)
	}
	if len(rest) > 0 {
		fmt.Fprintf(w, "<details><summary>%d unchanged</summary>\n\n", len(rest))
		table(w, rest)
		fmt.Fprintf(w, "</details>\n\n")
	}
	for _, v := range []Verdict{Missing, New} {
		var names []string
		for _, r := range rows {
			if r.Verdict == v {
				names = append(names, fmt.Sprintf("`%s` (%s)", r.Name, r.Unit))
			}
		}
		if len(names) > 0 {
			what := map[Verdict]string{Missing: "In base only (not gated)", New: "In head only (not gated)"}[v]
			fmt.Fprintf(w, "%s: %s\n\n", what, strings.Join(names, ", "))
		}
	}
	notes := map[string]bool{}
	for _, r := range rows {
		for _, n := range r.Notes {
			if !notes[n] {
				notes[n] = true
				fmt.Fprintf(w, "- note: %s\n", n)
			}
		}
	}
}

func table(w io.Writer, rows []Row) {
	fmt.Fprintf(w, "| verdict | benchmark | unit | base | head | change | p | n |\n")
	fmt.Fprintf(w, "|---|---|---|--:|--:|--:|--:|--:|\n")
	for _, r := range rows {
		sc := benchunit.CommonScale([]float64{r.Base, r.Head}, benchunit.ClassOf(r.Unit))
		p := "exact"
		if !r.Exact {
			p = fmt.Sprintf("%.3f", r.P)
			if r.PAdj != r.P {
				p += fmt.Sprintf(" (%.3f)", r.PAdj)
			}
		}
		fmt.Fprintf(w, "| %s | `%s` | %s | %s | %s | %s | %s | %d+%d |\n",
			r.Verdict, r.Name, r.Unit, sc.Format(r.Base), sc.Format(r.Head), pct(r.Delta), p, r.N1, r.N2)
	}
	fmt.Fprintln(w)
}

func pct(d float64) string {
	if math.IsNaN(d) {
		return "n/a"
	}
	return fmt.Sprintf("%+.1f%%", d*100)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
