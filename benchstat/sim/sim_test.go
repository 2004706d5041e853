package sim

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"
)

// dump writes a callgrind dump as callgrind 3.19 does, trailing zero
// counts left out of its totals line.
func dump(t *testing.T, dir, name, trigger, totals string) {
	t.Helper()
	text := "# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\n" +
		"desc: I1 cache: 32768 B, 64 B, 8-way associative\n" +
		"desc: Trigger: " + trigger + "\n\npositions: line\n" +
		"events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\nsummary: 1 2 3\n\nfn=(1) main\n1 5\n\ntotals: " + totals + "\n"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

const output = `goos: linux
gate: ns/op cpu-ns/op p50-ns
BenchmarkReadRandomBolt/valsz=256/threads=1 	    1000	     13614 ns/op	     0 B/op	     0 allocs/op
BenchmarkReadRandomBolt/valsz=256/threads=8 	    1000	      3614 ns/op
BenchmarkReadRandomBoltCold/valsz=256/threads=1 	       2	   3614000 ns/op
PASS
`

// TestConvert: each leaf's values become its window's counts over b.N,
// taken from the dump of the run whose b.N the line reports (not the
// b.N=1 probe before it); leaves with more than one thread or without a
// window are left out, saying why; allocation counts stay; the gate line
// names the sim units; the result is valid benchfmt marked mode: sim.
func TestConvert(t *testing.T) {
	dir := t.TempDir()
	leaf := "BenchmarkReadRandomBolt/valsz=256/threads=1"
	dump(t, dir, "cg.7.1", "Client Request: kvbench "+leaf+" n=1", "9999999 5 5 5 5 5 5 5 5")
	// 1000 iterations: 2,100,000 instructions, 3,000 first-level misses
	// (I1mr+D1mr+D1mw) of which 20 last-level (DLmr; DLmw left out as 0).
	dump(t, dir, "cg.7.2", "Client Request: kvbench "+leaf+" n=1000", "2100000 400000 100000 1000 1500 500 0 20")
	dump(t, dir, "cg.7", "Program termination", "123")
	ws, err := readWindows(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 2 || ws[0].n != 1 || ws[1].n != 1000 {
		t.Fatalf("windows %+v, want the n=1 and n=1000 dumps in order", ws)
	}
	var out, stderr bytes.Buffer
	header(&out, true)
	if err := convert(strings.NewReader(output), ws, true, &out, &stderr); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	// est-cycles: 2,100,000 + 10 x 3,000 + 100 x 20 = 2,132,000.
	for _, want := range []string{
		"mode: sim\n",
		"gate: instr/op est-cycles/op\n",
		"Unit instr/op better=lower\n",
		leaf + "\t1000\t2100.0 instr/op\t2132.0 est-cycles/op",
		"\t0 B/op\t0 allocs/op\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	for _, gone := range []string{"ns/op", "threads=8", "BoltCold"} {
		if strings.Contains(got, gone) {
			t.Errorf("output still has %q:\n%s", gone, got)
		}
	}
	for _, why := range []string{"threads=8 left out: more than one thread", "BoltCold/valsz=256/threads=1 left out: its family marks no window"} {
		if !strings.Contains(stderr.String(), why) {
			t.Errorf("stderr lacks %q:\n%s", why, stderr.String())
		}
	}
	rd := benchfmt.NewReader(strings.NewReader(got), "sim")
	results := 0
	for rd.Scan() {
		switch r := rd.Result().(type) {
		case *benchfmt.SyntaxError:
			t.Errorf("not benchfmt: %v", r)
		case *benchfmt.Result:
			results++
			if r.GetConfig("mode") != "sim" {
				t.Errorf("%s: mode %q, want sim", r.Name, r.GetConfig("mode"))
			}
		}
	}
	if results != 1 {
		t.Errorf("%d results, want 1", results)
	}
}

// TestMalformedDump: a dump whose totals do not fit its events is an
// error naming the file, not a count of zero.
func TestMalformedDump(t *testing.T) {
	dir := t.TempDir()
	dump(t, dir, "cg.1.1", "Client Request: kvbench BenchmarkX n=10", "1 2 3 4 5 6 7 8 9 10 11")
	if _, err := readWindows(dir); err == nil || !strings.Contains(err.Error(), "cg.1.1") {
		t.Errorf("readWindows: %v, want an error naming cg.1.1", err)
	}
}

// TestGroups: each family runs at its own count, the longest prefix
// winning, and a pattern's alternatives and deeper levels are kept.
func TestGroups(t *testing.T) {
	it, err := ParseIterations("2000x,Scan=100x,ScanCold=3x,Batch=1x")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int{"BenchmarkReadRandomBolt": 2000, "BenchmarkScanBolt": 100, "BenchmarkScanColdBolt": 3, "BenchmarkLmdbBatch": 1} {
		if got := it.of(name); got != want {
			t.Errorf("%s: %d iterations, want %d", name, got, want)
		}
	}
	for _, bad := range []string{"1s", "Scan=100x", "2000x,Scan=fast", "0x"} {
		if _, err := ParseIterations(bad); err == nil {
			t.Errorf("ParseIterations(%q) accepted", bad)
		}
	}
	if _, _, err := benchFlag([]string{"-test.bench", "X", "-test.benchtime", "1s"}); err == nil {
		t.Error("benchFlag accepted -test.benchtime")
	}
	p, rest, err := benchFlag([]string{"-test.run", "^$", "-test.bench=X", "-dir", "d"})
	if err != nil || p != "X" || strings.Join(rest, " ") != "-test.run ^$ -dir d" {
		t.Errorf("benchFlag: %q %q %v", p, rest, err)
	}
}
