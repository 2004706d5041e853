package summary

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRewriteLinesEnginesUp(t *testing.T) {
	in := `goos: linux
keys: 100
BenchmarkReadRandomBadger/threads=1-2   	 100	 2000 ns/op	 63.0 hit%
BenchmarkReadRandomBolt/threads=1-2     	 100	 1000 ns/op	 63.0 hit%
BenchmarkLmdbBatch/mode=txn-2           	   1	 5000 ns/op
`
	var out bytes.Buffer
	n, err := Rewrite(strings.NewReader(in), "x", &out)
	if err != nil || n != 2 {
		t.Fatalf("renamed %d, %v", n, err)
	}
	s := out.String()
	for _, want := range []string{"BenchmarkReadRandom/engine=Badger/threads=1-2", "BenchmarkReadRandom/engine=Bolt/threads=1-2", "BenchmarkLmdbBatch/mode=txn-2", "keys: 100"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
}

// TestCommandWritesWhatItPrints: -o holds exactly the printed summary,
// and a missing file is a usage error before any work.
func TestCommandWritesWhatItPrints(t *testing.T) {
	out := filepath.Join(t.TempDir(), "summary.txt")
	var stdout, stderr bytes.Buffer
	if code := Command.Run([]string{"-o", out, "../internal/summary/testdata/bench.txt"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil || stdout.Len() == 0 || string(b) != stdout.String() {
		t.Errorf("-o holds %d bytes (%v), printed %d", len(b), err, stdout.Len())
	}
	stderr.Reset()
	if code := Command.Run(nil, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "no results file") {
		t.Errorf("no file: exit %d, %q", code, stderr.String())
	}
}
