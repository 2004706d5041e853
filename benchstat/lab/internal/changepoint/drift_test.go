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

func TestSharedKeepsWhatEveryEngineShares(t *testing.T) {
	// Every engine 10 % slower from run 3 on: a harness change. Each
	// engine's own drift takes it out; Shared keeps it.
	var samples []Sample
	for _, e := range []string{"A", "B", "C", "D", "E"} {
		samples = append(samples, Sample{e, []float64{100, 100, 100, 110, 110, 110}})
	}
	shared := Shared(samples, 6)
	own := Drift(samples, 6)["A"]
	for i := range 6 {
		if math.Abs(shared[i]-own[i]) > 1e-12 {
			t.Errorf("run %d: shared %.4f, A's %.4f: with every engine alike they agree", i, shared[i], own[i])
		}
	}
	if r := shared[4] / shared[1]; math.Abs(r-1.1) > 1e-9 {
		t.Errorf("shared drift moves by %.4f from run 1 to 4, want 1.1", r)
	}
}

func TestEqualValuesAfterCorrectionAreNoChange(t *testing.T) {
	// 100 divided by drift factors that are equal but for their last bits.
	xs := make([]float64, 20)
	for i := range xs {
		f := math.Exp(math.Log(1.1) * float64(i%2))
		if i%2 == 1 {
			f = math.Exp(math.Log(1.1)) / 1.1 * 1.0
		}
		xs[i] = 100 * f / f
		if i >= 10 {
			xs[i] = 100 * (1 + 1e-15)
		}
	}
	if got := Detect(xs, Default, 1); len(got) != 0 {
		t.Errorf("values equal to 15 digits: %+v", got)
	}
}
