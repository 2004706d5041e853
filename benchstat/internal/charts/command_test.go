package charts

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestCommand draws the summary test's results and prints every file it
// wrote; a bad -format is refused before anything is drawn.
func TestCommand(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := Command.Run([]string{"-o", dir, "../summary/testdata/bench.txt"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	files := strings.Fields(stdout.String())
	if len(files) < 3 {
		t.Fatalf("printed %q: want every chart", stdout.String())
	}
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			t.Error(err)
		}
	}
	empty := t.TempDir()
	stderr.Reset()
	if code := Command.Run([]string{"-o", empty, "-format", "gif", "../summary/testdata/bench.txt"}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "-format gif") {
		t.Errorf("-format gif: exit %d, %q", code, stderr.String())
	}
	if ents, _ := os.ReadDir(empty); len(ents) != 0 {
		t.Errorf("a usage error drew %d files", len(ents))
	}
}
