package workload

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/core/coretest"
	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
)

// The worked example of docs/extending.md, registered in this package's
// tests only. TestExtendingDocQuotesTheExamples keeps the document's copy
// of it (and of the twin engine in twin_test.go) word for word true, and
// the twin test runs it.

// BEGIN workload example
// ReadAscending: point reads of the engine's fixture in key order,
// -ascending_stride keys apart, each value verified.
var strideFlag = &core.Flag[int]{Name: "ascending_stride", Default: 1,
	Usage: "keys from one read of BenchmarkReadAscending to the next",
	Check: func(n int, c *core.Config) error { // before any work
		if n < 1 || uint64(n) > c.Keys() {
			return errors.New("must be from 1 to the number of keys")
		}
		return nil
	}}

func init() {
	core.Register(&core.Workload{
		Name:     "ReadAscending",
		Engines:  core.Stores, // every real store; core.Everything adds the rail
		Fixtures: kvFixture,   // reads the shared fixture: Setup builds it first
		Units:    append([]core.Unit{core.Higher("ops/s")}, core.LoopUnits...),
		Options:  []core.Option{strideFlag}, // echoed as "ascending-stride: 1"
		Run: func(b *testing.B, e *core.Env, info engine.Info) {
			stride := uint64(strideFlag.Get(&e.Cfg))
			h := e.Open(b, e.KVFor(info))
			for _, cache := range h.Caches() {
				h.Run(b, core.SubName("cache", cache, "stride", stride), cache, nil, func(b *testing.B, _ engine.DB) {
					// reads is the loop's state and its op, made before the
					// timer starts: once for the loop, once for the warm-up
					// pass of simulation mode.
					reads := func() func(t, n int, rd engine.Reader) error {
						chk := e.Gen.NewChecker(e.FullCheck)
						kb := make([]byte, dataset.KeySize)
						var i uint64
						check := func(v []byte) error { return chk.Check(i, v) }
						return func(_, n int, rd engine.Reader) error {
							for range n {
								if found, err := rd.Get(e.Gen.Key(kb, i), check); err != nil || !found {
									return fmt.Errorf("key %d: found=%v err=%v", i, found, err)
								}
								i = (i + stride) % e.Keys
							}
							return nil
						}
					}
					timed := h.TimeLoop(b, cache, 1, core.SimReads, reads(), reads)
					b.ReportMetric(float64(timed.Ops)/timed.Elapsed.Seconds(), "ops/s")
				})
			}
		},
	})
}

// END workload example

// TestExampleFlag: the example's flag is a flag of the suite, checked
// before any work and echoed, and the workload runs with it.
func TestExampleFlag(t *testing.T) {
	if f := flag.Lookup("ascending_stride"); f == nil || f.DefValue != "1" {
		t.Fatalf("-ascending_stride is not bound: %v", f)
	}
	c := core.Default()
	c.KeysMil = 0.001
	strideFlag.Set(&c, 1001)
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "-ascending_stride 1001: must be from 1 to the number of keys") {
		t.Errorf("a stride past the keys: %v", err)
	}
	strideFlag.Set(&c, 7)
	e, err := core.NewEnv(c, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if out := coretest.ConfigLines(e); !strings.Contains(out, "\nascending-stride: 7\n") {
		t.Errorf("no ascending-stride line in\n%s", out)
	}
	c.Dir, c.Caches = t.TempDir(), core.WordList{core.Warm}
	var out strings.Builder
	e, err = core.Setup(c, "BenchmarkReadAscendingBolt", &out, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	coretest.SetBenchtime(t, "1x")
	if !runs(e, "ReadAscending", "bolt") {
		t.Fatal("ReadAscendingBolt failed")
	}
	if !strings.Contains(out.String(), "settings-bolt: ") {
		t.Errorf("ReadAscendingBolt printed no settings:\n%s", out.String())
	}
}

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
