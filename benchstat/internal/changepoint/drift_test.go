package changepoint

import (
	"math"
	"testing"
)

func TestDriftLeavesOwnChangeAndRemovesShared(t *testing.T) {
	shared := []float64{1, 1.05, 0.95, 1.1, 1, 1}
	var samples []Sample
	for _, e := range []string{"A", "B", "C", "D", "E"} {
		for j := range 2 {
			p := make([]float64, len(shared))
			for i := range p {
				p[i] = float64(100*(j+1)) * shared[i]
			}
			samples = append(samples, Sample{e, p})
		}
	}
	// Engine A slows by half from run 4 on: its own change.
	for i := 4; i < 6; i++ {
		samples[0].Points[i] *= 1.5
		samples[1].Points[i] *= 1.5
	}
	f := Drift(samples, len(shared))
	for i, want := range shared {
		if math.Abs(f["A"][i]-want) > 1e-9 {
			t.Errorf("run %d: A's factor %.4f, want the others' shared %.4f", i, f["A"][i], want)
		}
		a := samples[0].Points[i] / f["A"][i]
		wantA := 100.0
		if i >= 4 {
			wantA = 150
		}
		if math.Abs(a-wantA) > 1e-9 {
			t.Errorf("run %d: A corrected %.2f, want %.0f", i, a, wantA)
		}
	}
}

func TestDriftNeedsOtherEngines(t *testing.T) {
	f := Drift([]Sample{{"A", []float64{1, 2, 3}}, {"B", []float64{1, 2, math.NaN()}}}, 3)
	for _, e := range []string{"A", "B"} {
		for i, x := range f[e] {
			if x != 1 {
				t.Errorf("%s run %d: factor %.3f with one other engine, want 1", e, i, x)
			}
		}
	}
}
