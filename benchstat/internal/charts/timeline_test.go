package charts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Timelines draws one chart per question: two engines' overwrite (one at
// two block sizes) share a chart, a YCSB leaf has its own; each engine's
// line is in the chart, and a file that is not a timeline is an error.
func TestTimelinesOneChartPerQuestion(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	write := func(file, name string) {
		body := "# " + name + "\nstart-s\tops/s\tp99-ns\n0.000\t1000\t5\n0.100\t800\t7\n0.200\t100\t90\n"
		if err := os.WriteFile(filepath.Join(in, file), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.tsv", "BenchmarkOverwriteBolt/valsz=1024/batch=1000/pass=2")
	write("b.tsv", "BenchmarkOverwritePebble/valsz=1024/batch=1000/pass=2/block=4KiB")
	write("c.tsv", "BenchmarkOverwritePebble/valsz=1024/batch=1000/pass=2/block=32KiB")
	write("d.tsv", "BenchmarkYCSBLmdb/valsz=1024/workload=A/threads=1")
	files, err := Timelines(in, out)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 {
		t.Fatalf("%d charts, want 2 (overwrite, YCSB A): %v", len(files), files)
	}
	svg, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Overwrite", "Bolt", "Pebble block=4KiB", "Pebble block=32KiB"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("the overwrite chart has no %q", want)
		}
	}
	if err := os.WriteFile(filepath.Join(in, "e.tsv"), []byte("not a timeline\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Timelines(in, out); err == nil {
		t.Error("a .tsv that is not a timeline was drawn")
	}
	if files, err := Timelines(filepath.Join(in, "none"), out); err != nil || len(files) != 0 {
		t.Errorf("no timeline directory: %v, %v; want nothing drawn", files, err)
	}
}
