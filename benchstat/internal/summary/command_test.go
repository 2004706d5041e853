package summary

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommandWritesWhatItPrints: -o holds exactly the printed summary,
// and a missing file is a usage error before any work.
func TestCommandWritesWhatItPrints(t *testing.T) {
	out := filepath.Join(t.TempDir(), "summary.txt")
	var stdout, stderr bytes.Buffer
	if code := Command.Run([]string{"-o", out, "testdata/bench.txt"}, &stdout, &stderr); code != 0 {
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
