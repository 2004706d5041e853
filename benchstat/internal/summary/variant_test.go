package summary

import (
	"bytes"
	"strings"
	"testing"
)

// summaryOf is the summary of a results file's text, as make summary
// prints it.
func summaryOf(t *testing.T, in string) string {
	t.Helper()
	r, err := Read([]byte(in), "x")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Build(r).Write(&out); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestEngineOnlyDimensionDoesNotSplitTheTable: LMDB's Iterate has
// readahead=on|off, the other engines do not; the table keeps one row per
// unit, shows LMDB's variant that the run's -readahead names, and says so.
func TestEngineOnlyDimensionDoesNotSplitTheTable(t *testing.T) {
	in := `readahead: off
BenchmarkIterateBadger/valsz=1024/cache=warm/values=true-2 1 1000 ns/op 500000 keys/s
BenchmarkIterateLmdb/valsz=1024/cache=warm/values=true/readahead=on-2 1 1000 ns/op 900000 keys/s
BenchmarkIterateLmdb/valsz=1024/cache=warm/values=true/readahead=off-2 1 1000 ns/op 700000 keys/s
`
	s := summaryOf(t, in)
	for _, want := range []string{"keys/s full scan    500k  700k", "Lmdb: readahead=off shown (the run's own setting)"} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "900k") || strings.Count(s, "keys/s full scan") != 1 {
		t.Errorf("the readahead=on variant split or entered the table:\n%s", s)
	}
}

// TestBlockSizeRowsShowTheBTreesOnEach: the LSMs' block= makes a row per
// size; a B-tree, which has no block size, is shown on each of them, and a
// note says so.
func TestBlockSizeRowsShowTheBTreesOnEach(t *testing.T) {
	in := `BenchmarkReadRandomBolt/valsz=1024/cache=warm/hit=63%/threads=1-2 1 1000 ns/op 300000 ops/s
BenchmarkReadRandomPebble/valsz=1024/cache=warm/hit=63%/threads=1/block=4KiB-2 1 1000 ns/op 400000 ops/s
BenchmarkReadRandomPebble/valsz=1024/cache=warm/hit=63%/threads=1/block=32KiB-2 1 1000 ns/op 240000 ops/s
`
	s := summaryOf(t, in)
	words := strings.Join(strings.Fields(s), " ")
	for _, want := range []string{"ops/s block=4KiB 300k 400k", "ops/s block=32KiB 300k 240k",
		"Bolt: no block; each result is shown on every block row"} {
		if !strings.Contains(words, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
}

// A row the LSMs did not run (block=32KiB at threads=2, which make bench
// runs at 4 KiB only) is not printed for the B-trees alone, whose
// block-less result is on the rows the LSMs did run.
func TestNoRowOfBTreesAlone(t *testing.T) {
	in := `BenchmarkReadRandomBolt/valsz=1024/cache=warm/hit=63%/threads=1-2 1 1000 ns/op 300000 ops/s
BenchmarkReadRandomBolt/valsz=1024/cache=warm/hit=63%/threads=2-2 1 1000 ns/op 500000 ops/s
BenchmarkReadRandomPebble/valsz=1024/cache=warm/hit=63%/threads=1/block=4KiB-2 1 1000 ns/op 400000 ops/s
BenchmarkReadRandomPebble/valsz=1024/cache=warm/hit=63%/threads=2/block=4KiB-2 1 1000 ns/op 700000 ops/s
BenchmarkReadRandomPebble/valsz=1024/cache=warm/hit=63%/threads=1/block=32KiB-2 1 1000 ns/op 240000 ops/s
`
	words := strings.Join(strings.Fields(summaryOf(t, in)), " ")
	for _, want := range []string{"ops/s block=4KiB threads=1 300k 400k", "ops/s block=4KiB threads=2 500k 700k", "ops/s block=32KiB threads=1 300k 240k"} {
		if !strings.Contains(words, want) {
			t.Errorf("summary lacks %q:\n%s", want, words)
		}
	}
	if strings.Contains(words, "block=32KiB threads=2") {
		t.Errorf("a row of the B-trees alone is printed:\n%s", words)
	}
}
