package core

import (
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"
)

// TestUnitLinesParse reads the Unit lines back the way benchstat does.
func TestUnitLinesParse(t *testing.T) {
	var b strings.Builder
	writeUnits(&b, []Unit{Higher("ops/s"), Lower("p99-ns"), Info("hit%")})
	b.WriteString("BenchmarkX-2 1 100 ns/op 5 ops/s 63 hit%\n")
	r := benchfmt.NewReader(strings.NewReader(b.String()), "units")
	for r.Scan() {
		if err, ok := r.Result().(*benchfmt.SyntaxError); ok {
			t.Fatal(err)
		}
	}
	u := r.Units()
	if got := u.GetBetter("ops/s"); got != 1 {
		t.Errorf("ops/s better = %d, want higher", got)
	}
	if got := u.GetBetter("p99-ns"); got != -1 {
		t.Errorf("p99-ns better = %d, want lower", got)
	}
	if got := u.GetBetter("hit%"); got != 0 {
		t.Errorf("hit%% better = %d, want none", got)
	}
}
