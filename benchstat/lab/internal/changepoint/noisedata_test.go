package changepoint

import (
	"bufio"
	"compress/gzip"
	"context"
	"embed"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/benchstat/lab/internal/history"
)

// A recorded history: every value of every series, run by run, as the
// suite measured it. testdata/make-bench.tsv.gz is written from a history
// store by
//
//	go test -C benchstat/lab ./internal/changepoint -run TestWriteRecorded -record_from PATH -record_note "..."
//
// (testdata/make-bench-sim.tsv.gz likewise, with -record_to, from make
// bench-sim's runs)
//
// and holds one line per series and run: name, unit, run (from 0, in the
// store's order), the run's values joined by commas; '#' lines say how it
// was measured.
var (
	recordFrom = flag.String("record_from", "", "history store to write -record_to from")
	recordTo   = flag.String("record_to", recordedFile, "the recorded history to write")
	recordNote = flag.String("record_note", "", "how the recorded runs were measured, for the file's header")
)

// The recorded histories: make bench's times, and make bench-sim's
// instruction counts. The tests read them from the test binary, so go
// test keys a cached result by their content (docs/testing.md, "Results
// go test keeps"), not by files a fresh clone dates anew.
const (
	recordedFile    = "testdata/make-bench.tsv.gz"
	recordedSimFile = "testdata/make-bench-sim.tsv.gz"
)

//go:embed testdata/make-bench.tsv.gz testdata/make-bench-sim.tsv.gz
var recordedFiles embed.FS

type seriesKey struct{ name, unit string }

// recorded is a history read back: per series, per run, the values.
type recorded struct {
	header []string
	runs   int
	series map[seriesKey][][]float64
}

func TestWriteRecorded(t *testing.T) {
	if *recordFrom == "" {
		t.Skip("-record_from names the history store to write -record_to from")
	}
	ctx := context.Background()
	s, err := history.Open(ctx, *recordFrom)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runs, err := s.List(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(*recordTo)
	if err != nil {
		t.Fatal(err)
	}
	zw, _ := gzip.NewWriterLevel(out, gzip.BestCompression)
	w := bufio.NewWriter(zw)
	for _, line := range strings.Split(*recordNote, "\n") {
		fmt.Fprintf(w, "# %s\n", line)
	}
	for i, r := range runs {
		fmt.Fprintf(w, "# run %d: store run %d, commit %s, added %s\n", i, r.ID, r.Label("commit"), r.AddedAt.Format("2006-01-02T15:04:05Z"))
	}
	for i, r := range runs {
		raw, err := s.Export(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		f, err := history.Parse(r.File, raw)
		if err != nil {
			t.Fatal(err)
		}
		vals := map[seriesKey][]string{}
		var order []seriesKey
		for _, res := range f.Results {
			k := seriesKey{res.Name, res.Unit}
			if _, ok := vals[k]; !ok {
				order = append(order, k)
			}
			vals[k] = append(vals[k], strconv.FormatFloat(res.Value, 'g', -1, 64))
		}
		for _, k := range order {
			fmt.Fprintf(w, "%s\t%s\t%d\t%s\n", k.name, k.unit, i, strings.Join(vals[k], ","))
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

func readRecorded(t *testing.T) *recorded { return readRecordedFile(t, recordedFile) }

func readRecordedFile(t *testing.T, file string) *recorded {
	t.Helper()
	f, err := recordedFiles.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	r := &recorded{series: map[seriesKey][][]float64{}}
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "# "); ok {
			r.header = append(r.header, rest)
			continue
		}
		parts := strings.Split(line, "\t")
		if len(parts) != 4 {
			t.Fatalf("%s: bad line %q", file, line)
		}
		run, err := strconv.Atoi(parts[2])
		if err != nil {
			t.Fatalf("%s: bad run in %q", file, line)
		}
		var vs []float64
		for _, s := range strings.Split(parts[3], ",") {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatalf("%s: bad value in %q", file, line)
			}
			vs = append(vs, v)
		}
		k := seriesKey{parts[0], parts[1]}
		for len(r.series[k]) <= run {
			r.series[k] = append(r.series[k], nil)
		}
		r.series[k][run] = vs
		r.runs = max(r.runs, run+1)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return r
}

// medians returns the series' run medians over runs [lo, hi), or nil when
// a run lacks it.
func (r *recorded) medians(k seriesKey, lo, hi int) []float64 {
	runs := r.series[k]
	if len(runs) < hi {
		return nil
	}
	var xs []float64
	for _, vs := range runs[lo:hi] {
		if len(vs) == 0 {
			return nil
		}
		xs = append(xs, median(vs))
	}
	return xs
}

func (r *recorded) keys() []seriesKey {
	var ks []seriesKey
	for k := range r.series {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b seriesKey) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		return strings.Compare(a.unit, b.unit)
	})
	return ks
}
