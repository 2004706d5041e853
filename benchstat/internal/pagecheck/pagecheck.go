// Package pagecheck loads a generated HTML page in headless Chromium and
// checks what a reader would see: every table and chart it promises is
// there with a size, and no text overflows its box, the window or its
// chart. benchstat/report's browser test uses it, and the lab's history
// page's (benchstat/lab/history).
package pagecheck

import (
	_ "embed"
	"encoding/json"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Chromium finds the chromium binary. Without it the test is skipped,
// unless KVBENCH_CHROMIUM=required (make report-test installs it and sets
// that); KVBENCH_CHROMIUM=skip skips it (make unit, which report-test
// follows).
func Chromium(t *testing.T) string {
	t.Helper()
	if os.Getenv("KVBENCH_CHROMIUM") == "skip" {
		t.Skip("KVBENCH_CHROMIUM=skip (make unit: make report-test runs it)")
	}
	bin, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("KVBENCH_CHROMIUM") == "required" {
			t.Fatal("chromium is not installed: make report-test installs it")
		}
		t.Skip("chromium is not installed (make report-test installs it)")
	}
	return bin
}

// script runs in the page once it is laid out and writes what it found
// into <pre id="kvbench-check"> as JSON: the tables and charts that
// render with a size, and every element whose text does not fit its box
// (or the window), and every chart text outside its chart. It opens every
// <details> first, so that the charts folded into one are measured too.
//
//go:embed check.js
var script string

// Check loads doc in Chromium (bin) at each window width, 900 px high,
// and fails t for every table or chart of tables and charts (their
// data-table and data-chart names) that is missing or has no size, for
// every text that overflows, and for a page wider than the window.
func Check(t *testing.T, bin string, doc []byte, tables, charts []string, widths ...int) {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "page.html")
	withScript := strings.Replace(string(doc), "</body>", "<script>\n"+script+"</script>\n</body>", 1)
	if err := os.WriteFile(file, []byte(withScript), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, width := range widths {
		start := time.Now()
		cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
			"--user-data-dir="+filepath.Join(dir, "profile"), "--window-size="+strconv.Itoa(width)+",900",
			"--virtual-time-budget=5000", "--dump-dom", "file://"+file)
		dom, err := cmd.Output()
		if err != nil {
			var stderr []byte // what Chromium said, kept by Output
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Fatalf("chromium at width %d: %v\n%s", width, err, stderr)
		}
		m := regexp.MustCompile(`(?s)<pre id="kvbench-check">(.*?)</pre>`).FindSubmatch(dom)
		if m == nil {
			t.Fatalf("width %d: the check script left no result in the page", width)
		}
		var got struct {
			Tables, Charts, Overflow []string
			Width, Window            int
		}
		if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &got); err != nil {
			t.Fatal(err)
		}
		for _, want := range tables {
			if !slices.Contains(got.Tables, want) {
				t.Errorf("width %d: table %q is missing or has no size (rendered: %q)", width, want, got.Tables)
			}
		}
		for _, want := range charts {
			if !slices.Contains(got.Charts, want) {
				t.Errorf("width %d: chart %q is missing or empty (rendered: %d charts)", width, want, len(got.Charts))
			}
		}
		for _, o := range got.Overflow {
			t.Errorf("width %d: %s", width, o)
		}
		if got.Width > got.Window {
			t.Errorf("width %d: the page is %d px wide", width, got.Width)
		}
		t.Logf("width %d: %d tables, %d charts, %d overflowing, in %v", width, len(got.Tables), len(got.Charts), len(got.Overflow), time.Since(start).Round(time.Millisecond))
	}
}
