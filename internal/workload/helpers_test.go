package workload

import (
	"io"
	"testing"

	"github.com/kvbench/kvbench/internal/core"
)

// withLoad sets the fixed-rate flags of c as change changes them.
func withLoad(c *core.Config, change func(*loadSettings)) {
	s := loadOf(c)
	change(&s)
	rateFlag.Set(c, s.Rates)
	writeRateFlag.Set(c, s.WriteRate)
	loadTimeFlag.Set(c, s.LoadTime)
	loadWorkersFlag.Set(c, s.LoadWorkers)
	sloFlag.Set(c, s.SLO)
	kneeTimeFlag.Set(c, s.KneeTime)
	kneeFlushesFlag.Set(c, s.KneeFlushes)
	kneeMaxTimeFlag.Set(c, s.KneeMaxTime)
	kneeStartFlag.Set(c, s.KneeStart)
	kneeStepsFlag.Set(c, s.KneeSteps)
	latencyDirFlag.Set(c, s.LatencyDir)
	sstTablesFlag.Set(c, s.SSTTables)
	bloomFPRFlag.Set(c, s.BloomFPR)
}

// defaultLoad is the fixed-rate flags at their defaults.
func defaultLoad() loadSettings {
	c := core.Default()
	return loadOf(&c)
}

// setup is core.Setup of c for the benchmarks pattern selects, its
// configuration written to out; t fails at once on its error.
func setup(t testing.TB, c core.Config, pattern string, out io.Writer) *core.Env {
	t.Helper()
	e, err := core.Setup(c, pattern, out, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// registered is the registered workload of that name.
func registered(t *testing.T, name string) *core.Workload {
	t.Helper()
	for _, w := range core.Workloads() {
		if w.Name == name {
			return w
		}
	}
	t.Fatalf("no workload %s", name)
	return nil
}

// runs reports whether workload w ran on store to the end, called as a run
// calls it (store "" for a workload of no store).
func runs(e *core.Env, w, store string) bool {
	return passes(func(b *testing.B) { core.Run(b, e, w, store) })
}

// passes reports whether body ran to the end under testing.Benchmark,
// failing nothing.
func passes(body func(b *testing.B)) bool {
	failed := true
	testing.Benchmark(func(b *testing.B) {
		defer func() { failed = b.Failed() }() // Fatal ends the function
		body(b)
	})
	return !failed
}
