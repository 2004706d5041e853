package summary

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Display is how a raw unit is shown: a label and the factor from the
// raw value.
type Display struct {
	Label string
	Scale float64
}

// DisplayOf shows nanoseconds per op as milliseconds and latency
// percentiles (p99-ns) as microseconds; every other unit as it is.
func DisplayOf(unit string) Display {
	switch {
	case unit == "ns/op":
		return Display{"ms/op", 1e-6}
	case strings.HasSuffix(unit, "-ns"):
		return Display{strings.TrimSuffix(unit, "-ns") + " µs", 1e-3}
	}
	return Display{unit, 1}
}

// Number prints v with three significant digits and a k, M or G suffix.
func Number(v float64) string {
	a, suffix := math.Abs(v), ""
	for i, f := range []float64{1e9, 1e6, 1e3} {
		if a >= f*0.9995 {
			v, a, suffix = v/f, a/f, "GMk"[i:i+1]
			break
		}
	}
	if a == 0 {
		return "0"
	}
	for prec, lim := range []float64{99.95, 9.995, 0.9995} { // 3 significant digits
		if a >= lim {
			return strconv.FormatFloat(v, 'f', prec, 64) + suffix
		}
	}
	return fmt.Sprintf("%.3g%s", v, suffix)
}

// CellText is a cell as printed: the median in the row's display unit and
// the spread in whole percent ("12.1k ±4%"), then SchedMark where the
// scheduler's wait makes the tail, or its note (a kill); "-" for the zero
// Cell, a row's where it has none.
func CellText(c Cell) string {
	switch {
	case c.Note != "":
		return c.Note
	case c.Stat.N == 0:
		return "-"
	}
	s := Number(c.Stat.Center * DisplayOf(c.Src.Unit).Scale)
	if sp := c.Stat.Spread(); sp >= 0 {
		s += fmt.Sprintf(" ±%.0f%%", sp)
	}
	if c.Sched {
		s += SchedMark
	}
	return s
}

// Write prints the summary: a header naming the raw results, the run and
// what a cell shows, then one table per question.
func (s *Summary) Write(w io.Writer) error {
	var b strings.Builder
	r := s.Results
	fmt.Fprintf(&b, "kvbench summary of %s (every round of every benchmark is there); cell: %s\n", r.Name, Legend)
	b.WriteString(runLine(r, "data", "keys", "valsz", "value-ratio", "compression", "cache-mb", "readahead", "batch"))
	b.WriteString(runLine(r, "machine", "cpu-model", "cpus", "mem-total", "kernel", "go", "dir-fs", "dir-device"))
	if r.Skipped > 0 {
		fmt.Fprintf(&b, "%d unreadable line(s) skipped\n", r.Skipped)
	}
	said := map[string]bool{} // a note is printed under the first table it applies to
	for _, t := range s.Tables {
		b.WriteString("\n")
		writeTable(&b, t, said)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// runLine is the line, newline included, of those of keys the run has;
// "" if it has none.
func runLine(r *Results, name string, keys ...string) string {
	var parts []string
	for _, k := range keys {
		if v, ok := r.Run[k]; ok {
			parts = append(parts, k+"="+v)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return name + ": " + strings.Join(parts, " ") + "\n"
}

func writeTable(b *strings.Builder, t Table, said map[string]bool) {
	title := "== " + t.Title
	if n := Rounds(t); n != "" {
		title += " (" + n + ")"
	}
	fmt.Fprintln(b, title)
	if len(t.Rows) == 0 {
		fmt.Fprintln(b, "   not in these results")
		return
	}
	// What every row shares heads the column of row labels.
	grid := [][]string{append([]string{t.Common}, t.Columns...)}
	for _, row := range t.Rows {
		line := []string{row.Label}
		for _, c := range t.Columns {
			line = append(line, CellText(row.Cells[c]))
		}
		grid = append(grid, line)
	}
	width := make([]int, len(grid[0]))
	for _, line := range grid {
		for i, c := range line {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	for _, line := range grid { // fmt pads to a width in runes
		l := fmt.Sprintf("   %-*s", width[0], line[0])
		for i, c := range line[1:] {
			l += fmt.Sprintf("  %*s", width[i+1], c)
		}
		fmt.Fprintln(b, strings.TrimRight(l, " "))
	}
	for _, n := range t.Notes {
		if !said[n] {
			said[n] = true
			fmt.Fprintln(b, "   "+n)
		}
	}
}

// Legend says what a cell shows.
const Legend = "median of the rounds ± the widest distance from it to a round's value (its 95% CI with 6 or more rounds); n rounds; - not in the results"

// Rounds says how many rounds the table's cells have: "n=3", or
// "n=1..3" when they differ.
func Rounds(t Table) string {
	lo, hi := math.MaxInt, 0
	for _, row := range t.Rows {
		for _, c := range row.Cells {
			if c.Stat.N > 0 { // a kill's cell has no rounds
				lo, hi = min(lo, c.Stat.N), max(hi, c.Stat.N)
			}
		}
	}
	switch {
	case hi == 0:
		return ""
	case lo == hi:
		return fmt.Sprintf("n=%d", hi)
	}
	return fmt.Sprintf("n=%d..%d", lo, hi)
}
