package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var defaults = Options{Alpha: 0.05, Threshold: 0.05}

// results writes a benchfmt file: one line per run, the runs of every
// benchmark interleaved as go test -count prints them... per benchmark.
func results(units string, bench map[string][]string) string {
	var b strings.Builder
	b.WriteString("goos: linux\npkg: github.com/kvbench/kvbench\n")
	b.WriteString(units)
	for name, lines := range bench {
		for _, l := range lines {
			fmt.Fprintf(&b, "Benchmark%s-2 1000 %s\n", name, l)
		}
	}
	return b.String()
}

// noisy returns n runs around center: ns/op and ops/s with a relative
// normal spread sd, as a tight benchmark varies on a shared VM.
func noisy(rng *rand.Rand, n int, center, sd float64) []string {
	out := make([]string, n)
	for i := range out {
		ns := center * (1 + sd*rng.NormFloat64())
		out[i] = fmt.Sprintf("%.1f ns/op %.0f ops/s", ns, 1e9/ns)
	}
	return out
}

const unitLines = "Unit ops/s better=higher\nUnit space-amp better=lower assume=exact\n"

func set(t testing.TB, text string) *Set {
	t.Helper()
	s := NewSet()
	if err := s.Read(strings.NewReader(text), "test"); err != nil {
		t.Fatal(err)
	}
	return s
}

func compare(t testing.TB, base, head string, o Options) []Row {
	t.Helper()
	return Compare(set(t, base), set(t, head), o)
}

func verdicts(rows []Row) map[string]Verdict {
	m := map[string]Verdict{}
	for _, r := range rows {
		m[r.Name+" "+r.Unit] = r.Verdict
	}
	return m
}

func TestNoChangePasses(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	f := results(unitLines, map[string][]string{"ReadRandomBolt/threads=1": noisy(rng, 10, 1000, 0.03)})
	rows := compare(t, f, f, defaults)
	if Failed(rows) {
		t.Fatalf("identical results fail: %+v", rows)
	}
	if len(rows) != 2 {
		t.Fatalf("want ns/op and ops/s compared, got %+v", rows)
	}
}

func TestTenPercentSlowerFails(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	base := results(unitLines, map[string][]string{"ReadRandomBolt/threads=1": noisy(rng, 10, 1000, 0.03)})
	head := results(unitLines, map[string][]string{"ReadRandomBolt/threads=1": noisy(rng, 10, 1100, 0.03)})
	rows := compare(t, base, head, defaults)
	v := verdicts(rows)
	if v["ReadRandomBolt/threads=1-2 ns/op"] != Regression || v["ReadRandomBolt/threads=1-2 ops/s"] != Regression {
		t.Fatalf("10%% slowdown at n=10 not caught: %v", v)
	}
	if !Failed(rows) {
		t.Fatal("gate passes")
	}
	// The same with Holm over both series.
	if !Failed(compare(t, base, head, Options{Alpha: 0.05, Threshold: 0.05, Holm: true})) {
		t.Fatal("gate passes with -holm")
	}
}

func TestFasterHeadPasses(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	base := results(unitLines, map[string][]string{"ReadRandomBolt/threads=1": noisy(rng, 10, 1000, 0.03)})
	head := results(unitLines, map[string][]string{"ReadRandomBolt/threads=1": noisy(rng, 10, 800, 0.03)})
	rows := compare(t, base, head, defaults)
	if Failed(rows) {
		t.Fatalf("faster head fails: %v", verdicts(rows))
	}
	if v := verdicts(rows); v["ReadRandomBolt/threads=1-2 ops/s"] != Improvement || v["ReadRandomBolt/threads=1-2 ns/op"] != Improvement {
		t.Fatalf("20%% speedup not an improvement: %v", v)
	}
}

// TestNoiseOnlyPasses runs many seeded A/A comparisons of the same
// distribution: the gate may fail at most 5% of them.
func TestNoiseOnlyPasses(t *testing.T) {
	const trials = 1000
	for _, sd := range []float64{0.02, 0.05, 0.09} {
		fails := 0
		for i := range trials {
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			base := results(unitLines, map[string][]string{"A": noisy(rng, 10, 1000, sd), "B": noisy(rng, 10, 50, sd)})
			head := results(unitLines, map[string][]string{"A": noisy(rng, 10, 1000, sd), "B": noisy(rng, 10, 50, sd)})
			if Failed(compare(t, base, head, defaults)) {
				fails++
			}
		}
		t.Logf("noise sd %.0f%%: %d of %d A/A comparisons failed", sd*100, fails, trials)
		if fails > trials*5/100 {
			t.Errorf("noise sd %.0f%%: %d of %d A/A comparisons failed, more than 5%%", sd*100, fails, trials)
		}
	}
}

func TestExactUnitChangeFails(t *testing.T) {
	same := []string{"1.826 space-amp", "1.826 space-amp", "1.826 space-amp"}
	base := results(unitLines, map[string][]string{"PopulateBolt": same})
	head := results(unitLines, map[string][]string{"PopulateBolt": {"1.827 space-amp", "1.827 space-amp", "1.827 space-amp"}})
	rows := compare(t, base, head, defaults)
	if !Failed(rows) || !rows[0].Exact {
		t.Fatalf("a 0.05%% worse exact unit passes: %+v", rows)
	}
	// Better is better, and the same is the same, even with 3 runs.
	better := results(unitLines, map[string][]string{"PopulateBolt": {"1.5 space-amp", "1.5 space-amp", "1.5 space-amp"}})
	if rows := compare(t, base, better, defaults); Failed(rows) || rows[0].Verdict != Improvement {
		t.Fatalf("lower space-amp: %+v", rows)
	}
	if rows := compare(t, base, base, defaults); Failed(rows) {
		t.Fatalf("unchanged exact unit fails: %+v", rows)
	}
	// allocs/op from a file with no Unit line for it is measured, not exact.
	if rows := compare(t, results("", map[string][]string{"X": {"2 allocs/op", "2 allocs/op", "2 allocs/op"}}),
		results("", map[string][]string{"X": {"3 allocs/op", "3 allocs/op", "3 allocs/op"}}), defaults); Failed(rows) {
		t.Fatalf("3 runs cannot be significant: %+v", rows)
	}
}

func TestMissingAndNewAreReported(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	base := results(unitLines, map[string][]string{"Old": noisy(rng, 10, 1000, 0.03), "Both": noisy(rng, 10, 1000, 0.03)})
	head := results(unitLines, map[string][]string{"New": noisy(rng, 10, 9000, 0.03), "Both": noisy(rng, 10, 1000, 0.03)})
	rows := compare(t, base, head, defaults)
	v := verdicts(rows)
	if Failed(rows) || v["Old-2 ns/op"] != Missing || v["New-2 ops/s"] != New {
		t.Fatalf("verdicts %v", v)
	}
}

func TestNoDirectionIsNotGated(t *testing.T) {
	base := results("", map[string][]string{"R": {"63 hit%", "63 hit%", "63 hit%", "63 hit%", "63 hit%", "63 hit%"}})
	head := results("", map[string][]string{"R": {"10 hit%", "11 hit%", "10 hit%", "12 hit%", "10 hit%", "11 hit%"}})
	rows := compare(t, base, head, defaults)
	if Failed(rows) || rows[0].Verdict != Changed {
		t.Fatalf("%+v", rows)
	}
}

// TestHolmNeedsStrongerEvidence: twenty series each just significant on
// its own are not significant after the correction.
func TestHolm(t *testing.T) {
	rows := make([]Row, 20)
	for i := range rows {
		rows[i] = Row{Better: -1, P: 0.02 + float64(i)*0.001}
	}
	holm(rows)
	for _, r := range rows {
		if r.PAdj < 0.05 || r.PAdj < r.P {
			t.Fatalf("p %.3f adjusted to %.3f", r.P, r.PAdj)
		}
	}
	rows = []Row{{Better: -1, P: 0.001}, {Better: -1, P: 0.04}}
	holm(rows)
	if rows[0].PAdj != 0.002 || rows[1].PAdj != 0.04 {
		t.Fatalf("holm of 0.001, 0.04: %+v", rows)
	}
}

// TestCommand runs the gate as CI does: exit 0, 1 and 2.
func TestCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "gate")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	rng := rand.New(rand.NewPCG(10, 11))
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := write("base.txt", results(unitLines, map[string][]string{"ReadRandomBolt": noisy(rng, 10, 1000, 0.03)}))
	slow := write("slow.txt", results(unitLines, map[string][]string{"ReadRandomBolt": noisy(rng, 10, 1200, 0.03)}))
	empty := write("empty.txt", "goos: linux\n")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{base, base}, 0, "kvbench gate: pass"},
		{[]string{base, slow}, 1, "FAIL, 2 regressions"},
		{[]string{"-threshold", "30", base, slow}, 0, "kvbench gate: pass"},
		{[]string{base}, 2, "usage"},
		{[]string{"-alpha", "2", base, base}, 2, "-alpha 2"},
		{[]string{"-units", "(", base, base}, 2, "-units ("},
		{[]string{"-units", "^ns/op$", base, slow}, 1, "FAIL, 1 regression"},
		{[]string{base, empty}, 2, "no benchmark results in " + empty},
		{[]string{base, filepath.Join(dir, "nope.txt")}, 2, "nope.txt"},
	} {
		out, err := exec.Command(bin, c.args...).CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		if code != c.code || !strings.Contains(string(out), c.want) {
			t.Errorf("gate %v: exit %d, want %d with %q:\n%s", c.args, code, c.code, c.want, out)
		}
	}
}

func TestUnitsSelectWhatIsGated(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 13))
	base := results(unitLines, map[string][]string{"R": noisy(rng, 10, 1000, 0.03)})
	head := results(unitLines, map[string][]string{"R": noisy(rng, 10, 1500, 0.03)})
	o := defaults
	o.Units = regexp.MustCompile(`^ops/s$`)
	rows := compare(t, base, head, o)
	if len(rows) != 1 || rows[0].Unit != "ops/s" || !Failed(rows) {
		t.Fatalf("-units ops/s: %+v", rows)
	}
	o.Units = regexp.MustCompile(`^p99-ns$`)
	if rows := compare(t, base, head, o); len(rows) != 0 {
		t.Fatalf("-units p99-ns: %+v", rows)
	}
}
