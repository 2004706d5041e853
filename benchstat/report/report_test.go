package report

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/benchstat/internal/pagecheck"
)

// sample is the raw results of one make bench (the summary's test reads
// the same file).
const sample = "../internal/summary/testdata/bench.txt"

func TestPageIsSelfContained(t *testing.T) {
	page, err := Build(sample)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Tables) < 5 || len(page.Charts) < 3 {
		t.Fatalf("%d tables, %d charts: want every summary table and chart", len(page.Tables), len(page.Charts))
	}
	if m := regexp.MustCompile(`(?i)\s(src|href)\s*=|@import|url\(`).Find(page.HTML); m != nil {
		t.Errorf("the page loads something from elsewhere: %q", m)
	}
	if !slices.Contains(page.Charts, "populate-over-time") {
		t.Errorf("charts %v: no populate-over-time, though the results have first-keys/s and last-keys/s", page.Charts)
	}
}

// TestPageRendersInChromium loads the page in headless Chromium at a
// laptop's width and checks that every summary table and every chart is
// there and has a size, and that no text overflows its box, the window
// or its chart (benchstat/internal/pagecheck says when it is skipped).
func TestPageRendersInChromium(t *testing.T) {
	bin := pagecheck.Chromium(t)
	page, err := Build(sample)
	if err != nil {
		t.Fatal(err)
	}
	pagecheck.Check(t, bin, page.HTML, page.Tables, page.Charts, 1280, 1024)
}

// TestCommand writes the page where -o says, flags before or after the
// file, and refuses a second file before any work.
func TestCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "report.html")
	var stdout, stderr bytes.Buffer
	if code := Command.Run([]string{sample, "-o", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if b, err := os.ReadFile(out); err != nil || !bytes.Contains(b, []byte("<svg")) {
		t.Errorf("%s: %d bytes, %v", out, len(b), err)
	}
	stderr.Reset()
	if code := Command.Run([]string{sample, sample}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "usage: kvb report") {
		t.Errorf("two files: exit %d, %q", code, stderr.String())
	}
}
