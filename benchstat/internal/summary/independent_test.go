package summary

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"
)

// rawResult is one benchmark's values per unit, read with benchfmt alone.
type rawResult struct {
	base string            // "ReadRandomBolt"
	keys map[string]string // the name's key=value parts
	vals map[string][]float64
}

// readRaw reads a results file into one rawResult per benchmark name.
func readRaw(t *testing.T, path string) []*rawResult {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	byName := map[string]*rawResult{}
	var out []*rawResult
	rd := benchfmt.NewReader(f, path)
	for rd.Scan() {
		res, ok := rd.Result().(*benchfmt.Result)
		if !ok {
			continue
		}
		full := string(res.Name.Full())
		r := byName[full]
		if r == nil {
			base, parts := res.Name.Parts()
			r = &rawResult{base: string(base), keys: map[string]string{}, vals: map[string][]float64{}}
			for _, p := range parts {
				if k, v, ok := strings.Cut(string(p[1:]), "="); ok && p[0] == '/' {
					r.keys[k] = v
				}
			}
			byName[full] = r
			out = append(out, r)
		}
		for _, v := range res.Values {
			unit, val := v.Unit, v.Value
			if v.OrigUnit != "" {
				unit, val = v.OrigUnit, v.OrigValue
			}
			r.vals[unit] = append(r.vals[unit], val)
		}
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// sectionOps says, apart from the summary's code, which benchmark each
// section shows: its title's start, the benchmark's name before the
// engine, the benchmark of the rows whose label names it after the unit
// ("keys/s overwrite"), the value a name part has where the name leaves it
// out (docs/benchmarks.md: a ReadRandom name has dist= for every -dist but
// uniform), and name parts a column needs beyond the printed ones.
var sectionOps = map[string]struct {
	op      string
	labeled map[string]string            // row label -> benchmark
	absent  map[string]string            // key -> value when the name has none
	need    map[string]map[string]string // column -> key -> value
}{
	"Writes":                         {op: "Populate", labeled: map[string]string{"overwrite": "Overwrite"}},
	"Warm point reads":               {op: "ReadRandom", absent: map[string]string{"dist": "uniform"}},
	"Point reads in a memory budget": {op: "ReadRandom", absent: map[string]string{"dist": "uniform"}, need: map[string]map[string]string{"Disk": {"op": "randread-4k"}}},
	"Mixed reads and writes":         {op: "YCSB"},
	"Range scans":                    {op: "Scan", labeled: map[string]string{"full scan": "Iterate"}},
	"Open":                           {op: "Open"},
}

// unitOf is the file's unit of a row label's metric and the factor the
// printed figure carries (docs/benchmarks.md): "p99 µs" is p99-ns in
// microseconds, "ms/op" ns/op in milliseconds, any other metric its unit.
func unitOf(fields []string) (unit string, scale float64, rest []string) {
	switch {
	case len(fields) > 1 && fields[1] == "µs":
		return fields[0] + "-ns", 1e-3, fields[2:]
	case fields[0] == "ms/op":
		return "ns/op", 1e-6, fields[1:]
	}
	return fields[0], 1, fields[1:]
}

// noPartRE is a note that engines lack a name part their rows print
// ("Bolt, Lmdb: no block; each result is shown on every block row"); it
// holds for every table, though printed under the first.
var noPartRE = regexp.MustCompile(`(?m)^ +(\w+(?:, \w+)*): no (\w+); each result is shown on every`)

// checkPrinted reads printed summary text as a reader would, without the
// Summary it came from: each cell's engine is its column's header, its
// benchmark the section's operation (or the one its row label names) with
// the printed key=value parts of the header's first cell (a "label k=v"
// part of it for the rows of that label only) and of the row, and its
// figure must be that benchmark's median and spread in raw. It returns the
// mismatches and the cells checked.
func checkPrinted(text string, raw []*rawResult) (bad []string, cells int) {
	nameKeys := map[string]bool{}
	for _, r := range raw {
		for k := range r.keys {
			nameKeys[k] = true
		}
	}
	lacks := map[string]bool{} // engine + " " + key
	for _, m := range noPartRE.FindAllStringSubmatch(text, -1) {
		for _, e := range strings.Split(m[1], ", ") {
			lacks[e+" "+m[2]] = true
		}
	}
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		title, ok := strings.CutPrefix(lines[i], "== ")
		if !ok {
			continue
		}
		sec, found := "", false
		for prefix := range sectionOps {
			if strings.HasPrefix(title, prefix) {
				sec, found = prefix, true
			}
		}
		so := sectionOps[sec]
		printed := map[string]map[string]string{} // row label -> key -> value
		var header []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
			l := strings.TrimSpace(lines[i])
			if l == "not in these results" {
				break
			}
			cols := splitCells(l)
			if header == nil {
				if !found {
					bad = append(bad, fmt.Sprintf("section %q: no known benchmark", title))
				}
				header = cols
				if strings.Contains(cols[0], "=") { // what every row shares
					header = cols[1:]
					for _, part := range strings.Split(cols[0], "; ") {
						label := ""
						for lb := range so.labeled {
							if strings.HasPrefix(part, lb+" ") {
								label, part = lb, strings.TrimPrefix(part, lb+" ")
							}
						}
						printed[label] = map[string]string{}
						for _, kv := range strings.Fields(part) {
							k, v, _ := strings.Cut(kv, "=")
							printed[label][k] = v
						}
					}
				}
				continue
			}
			if len(cols) == 1 {
				continue // a note under the table
			}
			if len(cols)-1 != len(header) {
				bad = append(bad, fmt.Sprintf("%q: %d cells under %d columns", l, len(cols)-1, len(header)))
				continue
			}
			unit, scale, rest := unitOf(strings.Fields(cols[0]))
			op, label := so.op, ""
			for lb, lop := range so.labeled {
				if n := len(strings.Fields(lb)); len(rest) >= n && strings.Join(rest[:n], " ") == lb {
					op, label, rest = lop, lb, rest[n:]
				}
			}
			keys := map[string]string{}
			for k, v := range printed[label] {
				keys[k] = v
			}
			for _, kv := range rest {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					bad = append(bad, fmt.Sprintf("%s %q: %q is no key=value", title, cols[0], kv))
				}
				keys[k] = v
			}
			for j, engine := range header {
				cell := cols[j+1]
				// A column of another benchmark (the disk's) lacks the
				// section's engine keys; it must not contradict them.
				other := so.need[engine] != nil
				var match []*rawResult
				for _, r := range raw {
					if r.base != op+engine && !(r.base == engine && other) {
						continue
					}
					ok := len(r.vals[unit]) > 0
					for k, v := range keys {
						got, has := r.keys[k]
						if d, isDefault := so.absent[k]; !has && isDefault && !other {
							got, has = d, true
						}
						if has && got != v || !has && nameKeys[k] && !other && !lacks[engine+" "+k] {
							ok = false
						}
					}
					for k, v := range so.need[engine] {
						ok = ok && r.keys[k] == v
					}
					if ok {
						match = append(match, r)
					}
				}
				if cell == "-" {
					if len(match) != 0 {
						bad = append(bad, fmt.Sprintf("%s %q, %s: printed -, the file has it", title, cols[0], engine))
					}
					continue
				}
				cells++
				if len(match) != 1 {
					bad = append(bad, fmt.Sprintf("%s %q, %s: %d benchmarks in the file fit", title, cols[0], engine, len(match)))
					continue
				}
				vals := match[0].vals[unit]
				got, spread := parseCellText(cell)
				if want := median(vals) * scale; !within(got, want) {
					bad = append(bad, fmt.Sprintf("%s %q, %s: printed %s, the file's median is %.3g", title, cols[0], engine, cell, want))
				}
				if want := rawSpread(vals); (spread < 0) != (want < 0) || spread >= 0 && (spread-want > 0.5001 || want-spread > 0.5001) {
					bad = append(bad, fmt.Sprintf("%s %q, %s: printed spread %v%%, the file's is %.2f%%", title, cols[0], engine, spread, want))
				}
			}
		}
	}
	return bad, cells
}

// parseCellText is parseCell returning NaN for text that is no figure.
func parseCellText(s string) (float64, float64) {
	var v, sp float64 = -1, -1
	m := cellRE.FindStringSubmatch(strings.TrimSuffix(s, SchedMark))
	if m == nil {
		return v, sp
	}
	fmt.Sscan(m[1], &v)
	v *= map[string]float64{"": 1, "k": 1e3, "M": 1e6, "G": 1e9}[m[2]]
	if m[3] != "" {
		fmt.Sscan(m[3], &sp)
	}
	return v, sp
}

// printedSample is the summary of the sample results file, as printed.
func printedSample(t *testing.T) string {
	_, text := sampleSummary(t)
	return text
}

// TestEveryCellIsItsColumnsEngine checks the printed text alone against
// the raw file: a figure printed under another engine's column, row or
// section fails, which a check of each cell against the row it was built
// from cannot see.
func TestEveryCellIsItsColumnsEngine(t *testing.T) {
	text := printedSample(t)
	raw := readRaw(t, sample)
	bad, cells := checkPrinted(text, raw)
	for _, b := range bad {
		t.Error(b)
	}
	if cells < 296 {
		t.Errorf("checked %d cells, want every one of the sample's 296", cells)
	}
	t.Logf("%d printed cells match the file", cells)
}

// TestIndependentCheckSeesASwap: the check above must fail on a copy of
// the printed text in which two engines' results trade places, as a
// column mix-up in the summary would print them.
func TestIndependentCheckSeesASwap(t *testing.T) {
	text := printedSample(t)
	raw := readRaw(t, sample)
	swaps := map[string]func([]string) []string{
		// Two columns' headers trade places: every figure under them moves.
		"header": func(f []string) []string {
			if i := slices.Index(f, "Badger"); i >= 0 && i+1 < len(f) && f[i+1] == "Bolt" {
				f[i], f[i+1] = f[i+1], f[i]
				return f
			}
			return nil
		},
		// One row's two cells trade places, the headers stay.
		"cells": func(f []string) []string {
			if len(f) > 2 && f[0] == "keys/s" {
				f[1], f[2] = f[2], f[1]
				return f
			}
			return nil
		},
	}
	for name, swap := range swaps {
		lines := strings.Split(text, "\n")
		swapped := false
		for i, l := range lines {
			if g := swap(splitCells(l)); g != nil {
				lines[i] = "   " + strings.Join(g, "  ")
				swapped = true
				break
			}
		}
		if !swapped {
			t.Fatalf("%s: nothing to swap in the printed sample", name)
		}
		if bad, _ := checkPrinted(strings.Join(lines, "\n"), raw); len(bad) == 0 {
			t.Errorf("%s swap: Badger's and Bolt's results trade places, and the check passed", name)
		} else {
			t.Logf("%s swap caught: %d mismatches, first %s", name, len(bad), bad[0])
		}
	}
}
