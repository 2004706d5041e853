package report

import (
	"html"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/benchstat/internal/charts"
	"github.com/kvbench/kvbench/benchstat/internal/summary"
	"golang.org/x/perf/benchfmt"
)

// rawOpsPerSec reads the ops/s values of the sample's results whose name
// has every one of parts, with benchfmt, apart from the summary and the
// charts.
func rawOpsPerSec(t *testing.T, parts ...string) []float64 {
	t.Helper()
	f, err := os.Open(sample)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []float64
	r := benchfmt.NewReader(f, sample)
	for r.Scan() {
		res, ok := r.Result().(*benchfmt.Result)
		if !ok {
			continue
		}
		name := "Benchmark" + string(res.Name.Full())
		if !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(name, p) }) {
			if v, ok := res.Value("ops/s"); ok {
				out = append(out, v)
			}
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

var svgText = regexp.MustCompile(`<text[^>]*font-size:([0-9.]+)px[^>]*>([^<]*)</text>`)

// TestPageHasBudgetChart: the sample has a memory-budget row, so the page
// has its chart, on an axis scaled to that row (thousands of ops/s, not
// the warm reads' millions), with the disk's rate as its line.
func TestPageHasBudgetChart(t *testing.T) {
	budget := rawOpsPerSec(t, "BenchmarkReadRandom", "/mem=")
	disk := rawOpsPerSec(t, "BenchmarkDisk/op=randread-4k/threads=1-")
	if len(budget) == 0 || len(disk) == 0 {
		t.Fatalf("the sample lacks a memory-budget row (%d values) or the disk's random reads (%d)", len(budget), len(disk))
	}
	page, err := Build(sample)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(page.Charts, charts.BudgetFile) {
		t.Fatalf("charts %q: no %s, though the results have a mem= row", page.Charts, charts.BudgetFile)
	}
	doc := string(page.HTML)
	at := strings.Index(doc, `data-chart="`+charts.BudgetFile+`"`)
	fig := doc[at : at+strings.Index(doc[at:], "</figure>")]
	var texts []string
	top := 0.0
	for _, m := range svgText.FindAllStringSubmatch(fig, -1) {
		s := html.UnescapeString(m[2])
		texts = append(texts, s)
		if v, err := strconv.ParseFloat(s, 64); err == nil && m[1] == "10" { // a tick label of the axis
			top = max(top, v)
		}
	}
	if !slices.Contains(texts, "k ops/s") {
		t.Errorf("the budget chart's axis is not in thousands of ops/s: %q", texts)
	}
	rowMax := slices.Max(budget)
	if top*1e3 < rowMax/2 || top*1e3 > 2*rowMax {
		t.Errorf("the axis's top tick is %gk ops/s, want within a factor 2 of the row's largest value %g", top, rowMax)
	}
	sort.Float64s(disk)
	median := (disk[(len(disk)-1)/2] + disk[len(disk)/2]) / 2
	want := "disk " + summary.Number(median)
	if !slices.Contains(texts, want) {
		t.Errorf("the budget chart has no line tagged %q: %q", want, texts)
	}
}
