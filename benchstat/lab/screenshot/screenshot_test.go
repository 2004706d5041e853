package screenshot

import (
	"bytes"
	"strings"
	"testing"
)

// TestCommand: no picture or an unknown one is bad usage; without
// chromium on PATH it fails naming make report-deps, before writing any
// page.
func TestCommand(t *testing.T) {
	for _, args := range [][]string{nil, {"other"}, {"report", "history"}} {
		var stdout, stderr bytes.Buffer
		if code := Command.Run(args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "usage: kvb screenshot report|history") {
			t.Errorf("%q: exit %d, %q", args, code, stderr.String())
		}
	}
	t.Setenv("PATH", t.TempDir())
	var stdout, stderr bytes.Buffer
	if code := Command.Run([]string{"report"}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "make report-deps") || strings.Contains(stderr.String(), "kvb report") {
		t.Errorf("no chromium: exit %d, %q", code, stderr.String())
	}
}
