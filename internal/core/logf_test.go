package core

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/engine"
)

// While benchmarks run, a log line waits for the next point between
// results (the next leaf's settings), so it cannot split a result line.
func TestLogfHoldsLinesWhileBenchmarksRun(t *testing.T) {
	var log, out bytes.Buffer
	e, err := NewEnv(Default(), &out, &log)
	if err != nil {
		t.Fatal(err)
	}
	e.Logf("before")
	if log.String() != "[kvbench] before\n" {
		t.Fatalf("before the run: %q", log.String())
	}
	log.Reset()
	e.Running.Store(true)
	e.Logf("cold numbers are not cold")
	if log.Len() != 0 {
		t.Fatalf("written while a result line may be open: %q", log.String())
	}
	info, _ := engine.Lookup("bolt")
	e.ShowFixtureSettings(info, []engine.Setting{{Key: "k", Value: "v"}}, nil)
	if !strings.Contains(log.String(), "cold numbers are not cold") {
		t.Errorf("not written at the next leaf's settings: %q", log.String())
	}
	log.Reset()
	e.Logf("last")
	e.FlushLog()
	if log.String() != "[kvbench] last\n" {
		t.Errorf("not written at the end: %q", log.String())
	}
}
