package bench

import (
	"os"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
)

// The worked example of docs/extending.md, registered in this package's
// tests only. TestExtendingDocQuotesTheExamples keeps the document's copy
// of it (and of the twin engine in twin_test.go) word for word true, and
// the twin test runs it.

// BEGIN workload example
// ReadAscending: b.N point reads of the engine's fixture in key order,
// each value verified.
func init() {
	Register(&Workload{
		Name:     "ReadAscending",
		Engines:  Stores,    // every real store; Everything adds the rail
		Fixtures: kvFixture, // reads the shared fixture: Setup builds it first
		Units:    []Unit{Higher("ops/s")},
		Run: func(b *testing.B, e *Env, info engine.Info) {
			h := e.Open(b, e.KVFor(info))
			for _, cache := range h.Caches() {
				h.Run(b, name("cache", cache), cache, nil, func(b *testing.B, db engine.DB) {
					rd, err := db.NewReader()
					if err != nil {
						b.Fatal(err)
					}
					defer rd.Close()
					chk := e.Gen.NewChecker(e.FullCheck)
					kb := make([]byte, dataset.KeySize)
					var i uint64
					check := func(v []byte) error { return chk.Check(i, v) }
					b.ResetTimer()
					sim := StartSim(b) // counted under callgrind in compare.sh -mode sim
					for n := 0; n < b.N; n++ {
						i = uint64(n) % e.Keys
						if found, err := rd.Get(e.Gen.Key(kb, i), check); err != nil || !found {
							b.Fatalf("key %d: found=%v err=%v", i, found, err)
						}
					}
					sim.Stop()
					b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
				})
			}
		},
	})
}

// END workload example

// TestExtendingDocQuotesTheExamples fails when docs/extending.md no
// longer shows the code that runs here.
func TestExtendingDocQuotesTheExamples(t *testing.T) {
	doc, err := os.ReadFile("../../docs/extending.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range []struct{ file, name string }{{"example_test.go", "workload"}, {"twin_test.go", "engine"}} {
		src, err := os.ReadFile(ex.file)
		if err != nil {
			t.Fatal(err)
		}
		_, rest, ok := strings.Cut(string(src), "// BEGIN "+ex.name+" example\n")
		code, _, ok2 := strings.Cut(rest, "// END "+ex.name+" example\n")
		if !ok || !ok2 {
			t.Fatalf("%s has no %s example between BEGIN and END lines", ex.file, ex.name)
		}
		if !strings.Contains(string(doc), "```go\n"+strings.TrimSpace(code)+"\n```") {
			t.Errorf("docs/extending.md does not quote the %s example of %s as it is:\n%s", ex.name, ex.file, code)
		}
	}
}
