package spectrum

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommand: name=file arguments drawn into -o; no file is bad usage,
// and a file without a spectrum fails before anything is written.
func TestCommand(t *testing.T) {
	dir := t.TempDir()
	hgrm := filepath.Join(dir, "a.hgrm")
	if err := os.WriteFile(hgrm, []byte("    1000.000     0.000000            1         1.00\n    9000.000     0.990000           99       100.00\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.hgrm")
	if err := os.WriteFile(empty, []byte("# no values\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	svg := filepath.Join(dir, "chart.svg")
	var stdout, stderr bytes.Buffer
	if code := Command.Run([]string{"Badger=" + hgrm, "-o", svg}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if b, err := os.ReadFile(svg); err != nil || !strings.HasPrefix(string(b), "<svg") || !strings.Contains(string(b), ">Badger<") {
		t.Errorf("%s: %v\n%s", svg, err, b)
	}
	stderr.Reset()
	if code := Command.Run(nil, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "usage: kvb spectrum") {
		t.Errorf("no files: exit %d, %q", code, stderr.String())
	}
	stderr.Reset()
	other := filepath.Join(dir, "other.svg")
	if code := Command.Run([]string{"-o", other, hgrm, empty}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "no spectrum") {
		t.Errorf("a file without a spectrum: exit %d, %q", code, stderr.String())
	}
	if _, err := os.Stat(other); err == nil {
		t.Errorf("a failed run wrote %s", other)
	}
}
