package power

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/benchstat/internal/gate"
)

const rounds = 21

// fixture writes base.txt and head.txt of one comparison into a new
// directory: Bolt's reads 30% slower in head every round, Pebble's equal.
func fixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var b, h strings.Builder
	for _, w := range []*strings.Builder{&b, &h} {
		w.WriteString("goos: linux\npkg: github.com/kvbench/kvbench\nUnit cpu-ns/op better=lower\n")
	}
	for i := range rounds {
		lvl := 1000 + 10*float64(i)
		for _, eng := range []string{"Bolt", "Pebble"} {
			slow := map[string]float64{"Bolt": 1.3, "Pebble": 1}[eng]
			name := "ReadRandom" + eng + "/valsz=1024/cache=warm/hit=63%/threads=1-2"
			fmt.Fprintf(&b, "Benchmark%s 1000 %g ns/op %g cpu-ns/op\n", name, lvl, lvl)
			fmt.Fprintf(&h, "Benchmark%s 1000 %g ns/op %g cpu-ns/op\n", name, lvl*slow, lvl*slow)
		}
	}
	for name, text := range map[string]string{"base.txt": b.String(), "head.txt": h.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

var opts = gate.Options{Alpha: 0.05, Threshold: gate.DefaultThreshold, Holm: true}

// TestFailedRowsAreTheGatesFailures: what power reads back from gate.json
// is exactly the series the gate failed, no more and no fewer.
func TestFailedRowsAreTheGatesFailures(t *testing.T) {
	dir := fixture(t)
	base, err := gate.ReadFiles(filepath.Join(dir, "base.txt"))
	if err != nil {
		t.Fatal(err)
	}
	head, err := gate.ReadFiles(filepath.Join(dir, "head.txt"))
	if err != nil {
		t.Fatal(err)
	}
	rows := gate.Compare(base, head, opts)
	var want []string
	for _, r := range rows {
		if r.Verdict == gate.Regression || r.Verdict == gate.Missing {
			want = append(want, r.Name+" "+r.Unit)
		}
	}
	var js bytes.Buffer
	rep := gate.Report{Base: "base", Head: "head", Modes: []gate.ModeVerdict{{Mode: "time", Failed: gate.Failed(rows), Failures: gate.Failures(rows)}}}
	if err := json.NewEncoder(&js).Encode(rep); err != nil {
		t.Fatal(err)
	}
	got, err := failedRows(bytes.NewReader(js.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	slices.Sort(want)
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Fatalf("read %q from gate.json, the gate failed %q:\n%s", got, want, js.String())
	}
	if _, err := failedRows(strings.NewReader("| REGRESSION | time | `x` | ns/op |")); err == nil {
		t.Error("a Markdown table read as gate.json")
	}
	for _, f := range got {
		if !slowedRead(f, []string{"Bolt"}) {
			t.Errorf("%q failed, but only Bolt was slowed", f)
		}
	}
	if got, err := regressions(dir, opts); err != nil || len(got) != 1 || !got["ReadRandomBolt"] {
		t.Errorf("regressions = %v, %v; want ReadRandomBolt alone", got, err)
	}
}

func TestSlowedRead(t *testing.T) {
	for _, c := range []struct {
		failed string
		want   bool
	}{
		{"ReadRandomBolt/valsz=1024/threads=1 cpu-ns/op", true},
		{"ReadRandomBoltCold/valsz=1024 cpu-ns/op", false}, // another benchmark
		{"ScanBolt/valsz=1024 cpu-ns/op", false},
		{"ReadRandomPebble/valsz=1024 cpu-ns/op", false},
	} {
		if got := slowedRead(c.failed, []string{"Bolt", "Lmdb"}); got != c.want {
			t.Errorf("slowedRead(%q) = %v, want %v", c.failed, got, c.want)
		}
	}
}

// TestMeasuredChange: the per-engine medians and the median per-round
// change, against values worked out by hand from the fixture.
func TestMeasuredChange(t *testing.T) {
	dir := fixture(t)
	// Rounds at 1000, 1010, ..., 1200: the 11th of 21 is 1100.
	per, err := perRead(filepath.Join(dir, "base.txt"), "cpu-ns/op")
	if err != nil || len(per) != 2 || per["Bolt"] != 1100 || per["Pebble"] != 1100 {
		t.Errorf("perRead = %v, %v; want Bolt and Pebble at 1100", per, err)
	}
	if c, err := unitChange(dir, "Bolt", "cpu-ns/op"); err != nil || math.Abs(c-30) > 1e-9 {
		t.Errorf("Bolt's change = %v%% (%v), want +30%%", c, err)
	}
	if c, err := unitChange(dir, "Pebble", "cpu-ns/op"); err != nil || c != 0 {
		t.Errorf("Pebble's change = %v%% (%v), want 0", c, err)
	}
	if c, err := unitChange(dir, "Lmdb", "cpu-ns/op"); err != nil || c != 0 {
		t.Errorf("an engine not in the files changed by %v%% (%v)", c, err)
	}
	if _, err := unitChange(t.TempDir(), "Bolt", "cpu-ns/op"); err == nil {
		t.Error("a comparison without results: no error")
	}
}

func TestMedianAndMAD(t *testing.T) {
	if m := med([]float64{3, 1, 2}); m != 2 {
		t.Errorf("med odd = %v", m)
	}
	xs := []float64{4, 1, 2, 3}
	if m := med(xs); m != 2.5 {
		t.Errorf("med even = %v", m)
	}
	if xs[0] != 4 {
		t.Error("med sorted its argument")
	}
	// Distances from 3: 2 1 0 1 97, median 1: the outlier does not count.
	if m := mad([]float64{1, 2, 3, 4, 100}); m != 1 {
		t.Errorf("mad = %v, want 1", m)
	}
}

// TestTable: counts, rates and median changes as power.md prints them.
func TestTable(t *testing.T) {
	tally := map[float64]*count{0: {}, 5: {}}
	for _, f := range []bool{true, false, false, false} {
		tally[0].add(f, 0)
	}
	per := map[float64]map[string]*count{5: {"Bolt": {}}}
	for i, f := range []bool{true, false, true} {
		tally[5].add(f, float64(2+i))
		per[5]["Bolt"].add(f, 0)
	}
	if r := tally[5].rate(); math.Abs(r-2.0/3) > 1e-12 {
		t.Errorf("rate = %v, want 2/3", r)
	}
	if r := (&count{}).rate(); r != 0 {
		t.Errorf("rate of no trials = %v, want 0", r)
	}
	path := filepath.Join(t.TempDir(), "power.md")
	var printed bytes.Buffer
	if err := writeTable(path, tally, per, []float64{5}, []string{"Bolt", "Lmdb"}, "cpu-ns/op", &printed); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || printed.String() != string(b) {
		t.Fatalf("printed %q, wrote %q (%v)", printed.String(), b, err)
	}
	for _, want := range []string{
		"| none (A/A) | 4 | 1 | 25% | | | |",
		"| 5% | 3 | 2 | 67% | +3.00% | 2/3 | |",
	} {
		if !strings.Contains(string(b), want+"\n") {
			t.Errorf("power.md lacks %q:\n%s", want, b)
		}
	}
}

func TestShortName(t *testing.T) {
	if got := shortName("ReadRandomBolt/valsz=1024/cache=warm/hit=63%/threads=1/block=4KiB"); got != "ReadRandomBolt/block=4KiB" {
		t.Errorf("shortName = %q", got)
	}
}

// TestUsage: bad flags are refused before anything is built.
func TestUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-mode", "fast"}, "-mode fast: must be time or sim"},
		{[]string{"-slowdowns", "200"}, "-slowdowns 200"},
		{[]string{"-aa", "0"}, "-aa must be at least 1"},
		{[]string{"-sim_thresholds", "x"}, "-sim_thresholds x"},
		{[]string{"-bogus"}, "-bogus"},
	} {
		var out, errb bytes.Buffer
		if code := Command.Run(c.args, &out, &errb); code != 2 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%q: exit %d, %q; want 2 and %q", c.args, code, errb.String(), c.want)
		}
	}
}
