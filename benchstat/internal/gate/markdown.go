package gate

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"golang.org/x/perf/benchunit"
)

// Markdown writes the gate's summary, fit for a pull-request comment:
// the verdict, then failures and improvements, then everything else
// folded away.
func Markdown(w io.Writer, rows []Row, o Options, baseName, headName string) {
	count := map[Verdict]int{}
	for _, r := range rows {
		count[r.Verdict]++
	}
	if n := count[Regression] + count[Missing]; n > 0 {
		fmt.Fprintf(w, "### kvbench gate: FAIL, %d regression%s, %d missing\n\n", count[Regression], map[bool]string{false: "s"}[count[Regression] == 1], count[Missing])
	} else {
		fmt.Fprintf(w, "### kvbench gate: pass\n\n")
	}
	fmt.Fprintf(w, "Base `%s`, head `%s`: %d series tested, %d improved, %d regressed, %d missing in head, %d removed, %d new, %d skipped.\n",
		baseName, headName, Tested(rows), count[Improvement], count[Regression], count[Missing], count[Removed], count[New], count[Skipped])
	thr := fmt.Sprintf("%g%%", o.Threshold*100)
	if slices.ContainsFunc(rows, func(r Row) bool { return r.Mode == ModeSim }) {
		thr = fmt.Sprintf("%g%% (time mode) or %g%% (sim mode: instructions and estimated cycles counted under callgrind)", o.Threshold*100, o.SimThreshold*100)
	}
	fmt.Fprintf(w, "Rounds are paired: a series fails when a one-sided signed-rank test finds its per-round changes worse at alpha %g%s "+
		"and their median is worse by more than %s; a gated series missing from head fails%s. "+
		"p is the test's in the direction of the verdict (worse, unless improved). *detectable* is the smallest worsening this run would have caught 4 times in 5, given the series' own noise.",
		o.Alpha, map[bool]string{true: " (Holm-corrected)"}[o.Holm], thr, map[bool]string{true: " unless removals are allowed", false: ""}[!o.AllowRemoved])
	if o.Units != nil {
		fmt.Fprintf(w, " Only units matching `%s` are gated.", o.Units)
	}
	fmt.Fprint(w, "\n\n")

	var top, rest []Row
	for _, r := range rows {
		switch r.Verdict {
		case Regression, Improvement, Changed, Missing:
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
	for _, v := range []Verdict{Removed, New} {
		var names []string
		for _, r := range rows {
			if r.Verdict == v {
				names = append(names, fmt.Sprintf("`%s` (%s)", r.Name, r.Unit))
			}
		}
		if len(names) > 0 {
			what := map[Verdict]string{Removed: "In base only, removal allowed", New: "In head only (not gated)"}[v]
			fmt.Fprintf(w, "%s: %s\n\n", what, strings.Join(names, ", "))
		}
	}
	for _, r := range rows {
		if r.Verdict == Skipped {
			fmt.Fprintf(w, "- skipped `%s` %s: %s\n", r.Name, r.Unit, r.Why)
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
	fmt.Fprintf(w, "| verdict | mode | benchmark | unit | base | head | change | p | rounds | detectable |\n")
	fmt.Fprintf(w, "|---|---|---|---|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range rows {
		mode := cmp.Or(r.Mode, "time") // a missing series has none
		if r.Verdict == Missing {
			fmt.Fprintf(w, "| %s | %s | `%s` | %s | | | | | %d+0 | |\n", r.Verdict, mode, r.Name, r.Unit, r.N1)
			continue
		}
		sc := benchunit.CommonScale([]float64{r.Base, r.Head}, benchunit.ClassOf(r.Unit))
		p := "exact"
		switch {
		case r.Exact:
		case r.Verdict == Improvement: // the test in the good direction
			p = fmt.Sprintf("%.3f", r.pBetter)
		default:
			p = fmt.Sprintf("%.3f", r.P)
			if r.PAdj != r.P {
				p += fmt.Sprintf(" (%.3f)", r.PAdj)
			}
		}
		fmt.Fprintf(w, "| %s | %s | `%s` | %s | %s | %s | %s | %s | %d | %s |\n",
			r.Verdict, mode, r.Name, r.Unit, sc.Format(r.Base), sc.Format(r.Head), pct(r.Delta), p, r.N, detect(r.Detectable))
	}
	fmt.Fprintln(w)
}

func detect(d float64) string {
	switch {
	case math.IsNaN(d):
		return ""
	case math.IsInf(d, 1):
		return "none"
	case d < 0.01:
		return fmt.Sprintf("%.2f%%", d*100)
	}
	return fmt.Sprintf("%.1f%%", d*100)
}

func pct(d float64) string {
	switch {
	case math.IsNaN(d):
		return "n/a"
	case math.Abs(d) < 0.01: // sim mode's changes are this small and still real
		return fmt.Sprintf("%+.2f%%", d*100)
	}
	return fmt.Sprintf("%+.1f%%", d*100)
}
