package summary

import (
	"bytes"
	"math"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
)

// sample is the raw results of one make bench on a 2-CPU machine, six
// engines, 2026-11-27 (testdata/bench.txt, of 2026-11-23 and without the
// YCSB, overwrite, Zipfian budget and block= rows, is the history's and
// the report's).
const sample = "testdata/bench-2026-11-27.txt"

// rawSeries reads a results file with benchfmt alone, by full benchmark
// name (without "Benchmark" and the GOMAXPROCS suffix) and unit.
func rawSeries(t *testing.T, path string) (map[string][]float64, map[string]bool) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	series := map[string][]float64{}
	configs := map[string]bool{}
	rd := benchfmt.NewReader(f, path)
	for rd.Scan() {
		res, ok := rd.Result().(*benchfmt.Result)
		if !ok {
			continue
		}
		for _, c := range res.Config {
			if c.File {
				configs[c.Key+"="+string(c.Value)] = true
			}
		}
		base, parts := res.Name.Parts()
		name := string(base)
		for _, p := range parts {
			if p[0] == '/' {
				name += string(p)
			}
		}
		for _, v := range res.Values {
			unit, val := v.Unit, v.Value
			if v.OrigUnit != "" {
				unit, val = v.OrigUnit, v.OrigValue
			}
			series[name+" "+unit] = append(series[name+" "+unit], val)
		}
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	return series, configs
}

var cellRE = regexp.MustCompile(`^(-?[0-9.]+(?:e[-+][0-9]+)?)([kMG]?)(?: ±([0-9]+)%)?$`)

// parseCell reads a printed cell back into its value and spread (-1: none).
func parseCell(t *testing.T, s string) (float64, float64) {
	t.Helper()
	m := cellRE.FindStringSubmatch(strings.TrimSuffix(s, SchedMark))
	if m == nil {
		t.Fatalf("cell %q is not a number with an optional spread", s)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	v *= map[string]float64{"": 1, "k": 1e3, "M": 1e6, "G": 1e9}[m[2]]
	sp := -1.0
	if m[3] != "" {
		sp, _ = strconv.ParseFloat(m[3], 64)
	}
	return v, sp
}

// readFile reads the results file at path, or fails t.
func readFile(t *testing.T, path string) *Results {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Read(data, path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// sampleSummary is the summary of the sample results file and its text.
func sampleSummary(t *testing.T) (*Summary, string) {
	t.Helper()
	s := Build(readFile(t, sample))
	var out bytes.Buffer
	if err := s.Write(&out); err != nil {
		t.Fatal(err)
	}
	return s, out.String()
}

// TestSummaryNumbersComeFromTheRawFile prints the summary of a real run
// and checks every figure in it against that run's results file, read
// apart from the summary's own reader: each cell's median (three
// significant digits) and spread (whole percent), and every data and
// machine line's key=value as a configuration line of the file.
func TestSummaryNumbersComeFromTheRawFile(t *testing.T) {
	s, text := sampleSummary(t)
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) > 80 {
		t.Errorf("summary is %d lines, more than 80:\n%s", len(lines), text)
	}
	raw, configs := rawSeries(t, sample)

	// A data or machine line is key=value pairs; a pair starts at a word
	// "key=" whose key the file's configuration lines have (a value may
	// hold spaces and "=": "dir-device=/dev/vda (virtio_blk, rotational=1)").
	configKeys := map[string]bool{}
	for c := range configs {
		k, _, _ := strings.Cut(c, "=")
		configKeys[k] = true
	}
	for _, l := range lines {
		for _, prefix := range []string{"data: ", "machine: "} {
			rest, ok := strings.CutPrefix(l, prefix)
			if !ok {
				continue
			}
			var pairs []string
			for _, w := range strings.Split(rest, " ") {
				if k, _, ok := strings.Cut(w, "="); ok && configKeys[k] || len(pairs) == 0 {
					pairs = append(pairs, w)
				} else {
					pairs[len(pairs)-1] += " " + w
				}
			}
			for _, kv := range pairs {
				if !configs[kv] {
					t.Errorf("%q: %s is no configuration line of %s", l, kv, sample)
				}
			}
		}
	}

	// Each table's rows, in print order, against the text.
	cells, checked := 0, 0
	li := 0
	for _, tb := range s.Tables {
		for li < len(lines) && !strings.HasPrefix(lines[li], "== "+tb.Title) {
			li++
		}
		if li == len(lines) {
			t.Fatalf("table %q not printed", tb.Title)
		}
		if len(tb.Rows) == 0 {
			continue
		}
		li++ // the header: what every row shares, then the columns
		want := tb.Columns
		if tb.Common != "" {
			want = append([]string{tb.Common}, want...)
		}
		if got := splitCells(lines[li]); !slices.Equal(got, want) {
			t.Fatalf("header %q, want %q", lines[li], want)
		}
		li++
		for _, row := range tb.Rows {
			line := lines[li]
			li++
			if !strings.HasPrefix(strings.TrimSpace(line), row.Label) {
				t.Fatalf("line %q, want row %q", line, row.Label)
			}
			fields := splitCells(strings.TrimPrefix(strings.TrimSpace(line), row.Label))
			if len(fields) != len(tb.Columns) {
				t.Fatalf("row %q has %d cells, want %d", line, len(fields), len(tb.Columns))
			}
			for i, col := range tb.Columns {
				cell, ok := row.Cells[col]
				if !ok {
					if fields[i] != "-" {
						t.Errorf("row %q, %s: %q where no result is", row.Label, col, fields[i])
					}
					continue
				}
				cells++
				name := cell.Src.Op + cell.Src.Engine
				if cell.Src.Config != "" {
					name += "/" + cell.Src.Config
				}
				vals := raw[name+" "+cell.Src.Unit]
				if len(vals) == 0 {
					t.Errorf("row %q, %s: no %s %s in %s", row.Label, col, name, cell.Src.Unit, sample)
					continue
				}
				got, spread := parseCell(t, fields[i])
				want := median(vals) * DisplayOf(cell.Src.Unit).Scale
				if !within(got, want) {
					t.Errorf("row %q, %s: printed %s, the median of %s %s is %g", row.Label, col, fields[i], name, cell.Src.Unit, want)
				}
				wantSpread := rawSpread(vals)
				if (spread < 0) != (wantSpread < 0) || math.Abs(spread-wantSpread) > 0.5001 {
					t.Errorf("row %q, %s: printed spread %v%%, the rounds' is %.2f%%", row.Label, col, spread, wantSpread)
				}
				checked++
			}
		}
	}
	if cells == 0 || checked != cells {
		t.Errorf("checked %d of %d cells", checked, cells)
	}
	t.Logf("%d lines, %d figures checked against %s", len(lines), checked, sample)
}

// splitCells splits a row's cells, which are separated by two spaces or
// more (a cell holds one space, before its spread).
func splitCells(s string) []string {
	var out []string
	for _, f := range regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(s), -1) {
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}

func median(vals []float64) float64 {
	v := append([]float64(nil), vals...)
	sort.Float64s(v)
	if n := len(v); n%2 == 1 {
		return v[n/2]
	} else {
		return (v[n/2-1] + v[n/2]) / 2
	}
}

// rawSpread is the spread the summary should print, in percent: with 6
// or more rounds the 95% confidence interval of the median (benchmath),
// otherwise the range of the rounds, as the widest distance from the
// median.
func rawSpread(vals []float64) float64 {
	m := median(vals)
	if len(vals) < 2 || m == 0 {
		return -1
	}
	lo, hi := vals[0], vals[0]
	for _, v := range vals {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if len(vals) >= 6 {
		s := benchmath.AssumeNothing.Summary(benchmath.NewSample(vals, &benchmath.DefaultThresholds), 0.95)
		lo, hi = s.Lo, s.Hi
	}
	return math.Max(hi-m, m-lo) / math.Abs(m) * 100
}

// within: got is want printed to three significant digits.
func within(got, want float64) bool {
	if want == 0 {
		return got == 0
	}
	return math.Abs(got-want) <= math.Abs(want)*0.006
}

// TestDocsSampleIsTheSummary: the sample summary in docs/benchmarks.md is
// what the summary prints today for the sample file, named from the
// repository's root.
func TestDocsSampleIsTheSummary(t *testing.T) {
	const head = "kvbench summary of "
	want := strings.Replace(printedSample(t), head+sample, head+"benchstat/internal/summary/"+sample, 1)
	doc, err := os.ReadFile("../../../docs/benchmarks.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(doc), "```\n"+head+"benchstat/")
	block, _, _ = strings.Cut(block, "\n```\n")
	if got := head + "benchstat/" + block + "\n"; !ok || got != want {
		t.Errorf("docs/benchmarks.md's sample summary is not the summary of %s today; it prints:\n%s", sample, want)
	}
}

// TestOfFallsBackToRange: with too few rounds for a confidence interval
// (fewer than 6), a Stat spans the range of the rounds.
func TestOfFallsBackToRange(t *testing.T) {
	s := Of([]float64{3, 1, 2})
	if s.CI || s.Lo != 1 || s.Hi != 3 || s.Center != 2 {
		t.Fatalf("3 runs: %+v", s)
	}
	s = Of([]float64{5, 1, 2, 4, 3, 6, 7, 8, 9, 10})
	if !s.CI || s.Lo > s.Center || s.Hi < s.Center || s.Lo < 1 || s.Hi > 10 {
		t.Fatalf("10 runs: %+v", s)
	}
}
