package charts

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	ksummary "github.com/kvbench/kvbench/benchstat/internal/summary"
)

// sampleResults is the raw results of one make bench, the summary's test
// data: it has a memory-budget row and the disk's own random reads.
const sampleResults = "../summary/testdata/bench.txt"

func budgetOfFile(t *testing.T, path string) Budget {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return budgetOfData(t, data, path)
}

func budgetOfData(t *testing.T, data []byte, name string) Budget {
	t.Helper()
	r, err := ksummary.Read(data, name)
	if err != nil {
		t.Fatal(err)
	}
	b, ok := BudgetOf(ksummary.Build(r))
	if !ok {
		t.Fatalf("%s: no memory-budget row found", name)
	}
	return b
}

// rawOps reads, apart from the summary, every ops/s value of the lines
// whose benchmark name starts with prefix and contains each of parts.
func rawOps(t *testing.T, path, prefix string, parts ...string) []float64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []float64
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || !strings.HasPrefix(f[0], prefix) {
			continue
		}
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(f[0], p)
		}
		for i := 1; ok && i < len(f); i++ {
			if f[i] == "ops/s" {
				v, err := strconv.ParseFloat(f[i-1], 64)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, v)
			}
		}
	}
	return out
}

func medianOf(v []float64) float64 {
	s := slices.Clone(v)
	sort.Float64s(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

// TestBudgetChartOfSample: the sample's budget row gets an axis of its
// own, scaled to its largest value and not to the warm reads', and the
// disk line sits at the disk's one-thread 4 KiB random-read rate.
func TestBudgetChartOfSample(t *testing.T) {
	b := budgetOfFile(t, sampleResults)
	budget := rawOps(t, sampleResults, "BenchmarkReadRandom", "/mem=")
	warm := rawOps(t, sampleResults, "BenchmarkReadRandom", "/cache=warm/hit=63%")
	disk := rawOps(t, sampleResults, "BenchmarkDisk/", "op=randread-4k", "threads=1")
	if len(budget) == 0 || len(warm) == 0 || len(disk) == 0 {
		t.Fatalf("the sample lacks a budget row (%d), warm reads (%d) or the disk's random reads (%d)", len(budget), len(warm), len(disk))
	}
	rowMax, warmMax := slices.Max(budget), slices.Max(warm)
	bp := drawBudget(b)
	if axis := bp.Y.Max * bp.scale; axis < rowMax || axis > 2*rowMax {
		t.Errorf("axis maximum %g ops/s: want within 1-2x the row's largest value %g (the warm reads' is %g)", axis, rowMax, warmMax)
	}
	if want := medianOf(disk); bp.ref != want {
		t.Errorf("disk line at %g ops/s, want the median of BenchmarkDisk randread-4k threads=1, %g", bp.ref, want)
	}
	for _, e := range []string{"Badger", "Bolt", "Lmdb", "Pebble", "RocksDB"} {
		if s := b.Ops[e]; len(s) != 1 || s[0].N == 0 {
			t.Errorf("%s: %+v, want one figure", e, s)
		}
	}
	f, err := BudgetChart(b, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(f) != BudgetFile+".svg" {
		t.Errorf("wrote %s", f)
	}
	svg, _ := os.ReadFile(f)
	for _, s := range []string{"<svg", "k ops/s", "disk " + ksummary.Number(medianOf(disk)), "BenchmarkDisk", "mem=26MiB", "RocksDB"} {
		if !strings.Contains(string(svg), s) {
			t.Errorf("%s lacks %q", f, s)
		}
	}
}

// budgetResults has warm reads of three engines and a budget row at two
// budgets in which Bolt has no result (killed), and no disk figure.
const budgetResults = `goos: linux
BenchmarkReadRandomBadger/valsz=1024/cache=warm/hit=63%/threads=1-2 1000 1000 ns/op 1000000 ops/s
BenchmarkReadRandomBolt/valsz=1024/cache=warm/hit=63%/threads=1-2 1000 500 ns/op 2000000 ops/s
BenchmarkReadRandomPebble/valsz=1024/cache=warm/hit=63%/threads=1-2 1000 800 ns/op 1250000 ops/s
BenchmarkReadRandomBadger/valsz=1024/mem=26MiB/cache=warm/hit=100%/threads=1-2 100 200000 ns/op 5000 ops/s
BenchmarkReadRandomPebble/valsz=1024/mem=26MiB/cache=warm/hit=100%/threads=1-2 100 100000 ns/op 10000 ops/s
BenchmarkReadRandomBadger/valsz=1024/mem=52MiB/cache=warm/hit=100%/threads=1-2 100 100000 ns/op 10000 ops/s
BenchmarkReadRandomPebble/valsz=1024/mem=52MiB/cache=warm/hit=100%/threads=1-2 100 50000 ns/op 20000 ops/s
`

// TestBudgetChartKeepsEnginesWithoutResult: an engine the summary has
// but the budget row does not is drawn as "no result", each budget is a
// group, and with no disk figure there is no line and a note says so.
func TestBudgetChartKeepsEnginesWithoutResult(t *testing.T) {
	b := budgetOfData(t, []byte(budgetResults), "test")
	if !slices.Equal(b.Groups, []string{"mem=26MiB", "mem=52MiB"}) {
		t.Errorf("groups %q, want one per budget", b.Groups)
	}
	if !slices.Contains(b.Engines, "Bolt") || len(b.Ops["Bolt"]) != 2 || b.Ops["Bolt"][0].N != 0 {
		t.Errorf("engines %q, Bolt %+v: want Bolt kept without a figure", b.Engines, b.Ops["Bolt"])
	}
	if b.Disk != nil {
		t.Errorf("disk %+v from results with no BenchmarkDisk", b.Disk)
	}
	bp := drawBudget(b)
	if axis := bp.Y.Max * bp.scale; axis < 20000 || axis > 40000 {
		t.Errorf("axis maximum %g ops/s, want within 1-2x the row's largest, 20000", axis)
	}
	if bp.ref != 0 {
		t.Errorf("a disk line at %g with no disk figure", bp.ref)
	}
	f, err := BudgetChart(b, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	svg, _ := os.ReadFile(f)
	for _, s := range []string{"no result", "no disk line", "Bolt", "mem=52MiB", "20.0k"} {
		if !strings.Contains(string(svg), s) {
			t.Errorf("%s lacks %q", f, s)
		}
	}
	if strings.Contains(string(svg), "disk 0") {
		t.Errorf("%s tags a disk line", f)
	}
}

// TestThroughputChartLeavesTheBudgetOut: the warm reads' bars do not
// carry the budget row, which has its own chart.
func TestThroughputChartLeavesTheBudgetOut(t *testing.T) {
	r, err := ReadResults(strings.NewReader(budgetResults), "test")
	if err != nil {
		t.Fatal(err)
	}
	files, err := DrawAll(r, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 || filepath.Base(files[0]) != "readrandom-ops-s.svg" {
		t.Fatalf("wrote %q", files)
	}
	svg, _ := os.ReadFile(files[0])
	if strings.Contains(string(svg), "mem=") {
		t.Errorf("%s has the budget row's bars", files[0])
	}
}

// TestNoBudgetRow: results without a mem= row have no budget chart.
func TestNoBudgetRow(t *testing.T) {
	in := "BenchmarkReadRandomBolt/valsz=1024/cache=warm/hit=63%/threads=1-2 1000 500 ns/op 2000000 ops/s\n"
	r, err := ksummary.Read([]byte(in), "test")
	if err != nil {
		t.Fatal(err)
	}
	if b, ok := BudgetOf(ksummary.Build(r)); ok {
		t.Errorf("a budget row from warm reads alone: %+v", b)
	}
}
