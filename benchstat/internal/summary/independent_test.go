package summary

import (
	"bytes"
	"fmt"
	"os"
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
// engine, and name parts a column needs beyond the printed ones.
var sectionOps = map[string]struct {
	op   string
	need map[string]map[string]string // column -> key -> value
}{
	"Writes":                         {op: "Populate"},
	"Warm point reads":               {op: "ReadRandom"},
	"Point reads in a memory budget": {op: "ReadRandom", need: map[string]map[string]string{"Disk": {"op": "randread-4k"}}},
	"Range scans":                    {op: "Scan"},
	"Open":                           {op: "Open"},
}

// rowUnits maps a row label's metric to the file's unit and the factor
// the printed figure carries.
var rowUnits = []struct {
	label, unit string
	scale       float64
}{
	{"dev-write-amp", "dev-write-amp", 1}, {"write-amp", "write-amp", 1}, {"space-amp", "space-amp", 1},
	{"keys/s", "keys/s", 1}, {"ops/s", "ops/s", 1}, {"read-B/op", "read-B/op", 1},
	{"p50 µs", "p50-ns", 1e-3}, {"p99 µs", "p99-ns", 1e-3}, {"ms/op", "ns/op", 1e-6},
}

// checkPrinted reads printed summary text as a reader would, without the
// Summary it came from: each cell's engine is its column's header, its
// benchmark the section's operation with the section's and row's printed
// key=value parts, and its figure must be that benchmark's median and
// spread in raw. It returns the mismatches and the cells checked.
func checkPrinted(text string, raw []*rawResult) (bad []string, cells int) {
	nameKeys := map[string]bool{}
	for _, r := range raw {
		for k := range r.keys {
			nameKeys[k] = true
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
		printed := map[string]string{}
		var header []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
			l := strings.TrimSpace(lines[i])
			if l == "not in these results" {
				break
			}
			if header == nil && strings.Contains(l, "=") {
				for _, kv := range strings.Fields(l) {
					k, v, _ := strings.Cut(kv, "=")
					printed[k] = v
				}
				continue
			}
			if header == nil {
				header = strings.Fields(l)
				if !found {
					bad = append(bad, fmt.Sprintf("section %q: no known benchmark", title))
				}
				continue
			}
			cols := splitCells(l)
			var ru = rowUnits[0]
			known := false
			for _, u := range rowUnits {
				if cols[0] == u.label || strings.HasPrefix(cols[0], u.label+" ") {
					ru, known = u, true
					break
				}
			}
			if !known {
				continue // a note under the table
			}
			keys := map[string]string{}
			for k, v := range printed {
				keys[k] = v
			}
			for _, kv := range strings.Fields(strings.TrimPrefix(cols[0], ru.label)) {
				k, v, _ := strings.Cut(kv, "=")
				keys[k] = v
			}
			if len(cols)-1 != len(header) {
				bad = append(bad, fmt.Sprintf("%q: %d cells under %d columns", l, len(cols)-1, len(header)))
				continue
			}
			for j, engine := range header {
				cell := cols[j+1]
				var match []*rawResult
				for _, r := range raw {
					if r.base != sectionOps[sec].op+engine && !(r.base == engine && sectionOps[sec].need[engine] != nil) {
						continue
					}
					ok := len(r.vals[ru.unit]) > 0
					for k, v := range keys {
						// A column of another benchmark (the disk's) lacks the
						// section's engine keys; it must not contradict them.
						absentOK := sectionOps[sec].need[engine] != nil
						if got, has := r.keys[k]; has && got != v || !has && nameKeys[k] && !absentOK {
							ok = false
						}
					}
					for k, v := range sectionOps[sec].need[engine] {
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
				vals := match[0].vals[ru.unit]
				got, spread := parseCellText(cell)
				if want := median(vals) * ru.scale; !within(got, want) {
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

func printedSample(t *testing.T) string {
	t.Helper()
	f, err := os.Open(sample)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Read(f, sample)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Build(r).Write(&out); err != nil {
		t.Fatal(err)
	}
	return out.String()
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
	if cells < 50 {
		t.Errorf("checked %d cells, want every one of the sample's (over 50)", cells)
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
			if len(f) > 2 && f[0] == "Badger" && f[1] == "Bolt" {
				f[0], f[1] = f[1], f[0]
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
