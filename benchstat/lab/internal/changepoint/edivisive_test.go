//go:build !race

// Thousands of shuffles per series: make unit runs these without -race
// (the package has no goroutines for it to watch).

package changepoint

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// noisy returns n points around level with relative noise sd (normal).
func noisy(rng *rand.Rand, n int, level, sd float64) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = level * (1 + sd*rng.NormFloat64())
	}
	return xs
}

func TestStepFoundAtItsPoint(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const sd, trials = 0.01, 100 // 1 %: see TestStepAtMeasuredNoise for the suite's own
	exact := 0
	for trial := range trials {
		xs := append(noisy(rng, 20, 1000, sd), noisy(rng, 10, 1050, sd)...)
		got := Detect(xs, Default, uint64(trial))
		if len(got) != 1 || got[0].Index < 19 || got[0].Index > 21 {
			t.Fatalf("trial %d: a 5%% step at point 20 in 1%% noise: got %+v", trial, got)
		}
		if got[0].Index == 20 {
			exact++
		}
		if got[0].After < got[0].Before*1.03 {
			t.Errorf("trial %d: medians %.1f -> %.1f, want about +5%%", trial, got[0].Before, got[0].After)
		}
	}
	// A point drawn half-way between the levels belongs to neither; at
	// 5 standard deviations that is a few in a hundred.
	if exact < 95 {
		t.Errorf("the change was at point 20 in %d of %d series, want 95 or more", exact, trials)
	}
}

func TestTwoSteps(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	xs := append(noisy(rng, 12, 100, 0.005), noisy(rng, 12, 110, 0.005)...)
	xs = append(xs, noisy(rng, 12, 104, 0.005)...)
	got := Detect(xs, Default, 7)
	if len(got) != 2 || got[0].Index != 12 || got[1].Index != 24 {
		t.Fatalf("steps at 12 and 24: got %+v", got)
	}
	if got[1].Before < 105 || got[1].After > 106 {
		t.Errorf("second change's medians are its own segments': %+v", got[1])
	}
}

// An A/A series (one level, independent noise) is flagged at about the
// test's significance level per series, at most.
func TestAAFalsePositiveRate(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const series = 4000
	flagged := 0
	for i := range series {
		if len(Detect(noisy(rng, 30, 500, 0.03), Default, uint64(i))) > 0 {
			flagged++
		}
	}
	// Alpha is Default.Alpha (0.1 %). Under no change the observed order
	// is one of 5,000 exchangeable orders, so the first split passes with
	// probability alpha, and a series is flagged only if it does: flagged
	// is at most Binomial(series, alpha), mean 4. The bound is that
	// binomial's 99.9th percentile (11), so a correct test fails one seed
	// in a thousand; an alpha of 1 % (mean 40) exceeds it every time.
	limit := binomialQuantile(series, Default.Alpha, 0.999)
	if flagged > limit {
		t.Errorf("%d of %d A/A series of 30 points flagged, want at most %d (about %.0f)", flagged, series, limit, Default.Alpha*series)
	}
	t.Logf("%d of %d A/A series flagged (limit %d)", flagged, series, limit)
}

// binomialQuantile is the smallest k with P(X <= k) >= q for X ~
// Binomial(n, p).
func binomialQuantile(n int, p, q float64) int {
	pk := math.Pow(1-p, float64(n)) // P(X = 0)
	cdf := pk
	k := 0
	for cdf < q && k < n {
		pk *= float64(n-k) / float64(k+1) * p / (1 - p)
		k++
		cdf += pk
	}
	return k
}

func TestBinomialQuantile(t *testing.T) {
	// Poisson(4)'s: P(X <= 10) = 0.9972, P(X <= 11) = 0.9991.
	if k := binomialQuantile(4000, 0.001, 0.999); k != 11 {
		t.Errorf("99.9th percentile of Binomial(4000, 0.001) = %d, want 11", k)
	}
	if k := binomialQuantile(10, 0.5, 0.5); k != 5 {
		t.Errorf("median of Binomial(10, 0.5) = %d, want 5", k)
	}
}

func TestOneOutlierIsNoChange(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	misses := 0
	for trial := range 50 {
		xs := noisy(rng, 30, 100, 0.01)
		xs[10+trial%10] *= 1.5 // one run on a busy machine
		if len(Detect(xs, Default, uint64(trial))) > 0 {
			misses++
		}
	}
	if misses > 3 {
		t.Errorf("a single outlier made a change point in %d of 50 series", misses)
	}
}

func TestFlatAndShortSeries(t *testing.T) {
	flat := make([]float64, 30)
	for i := range flat {
		flat[i] = 42
	}
	if got := Detect(flat, Default, 1); len(got) != 0 {
		t.Errorf("a constant series has no change: got %+v", got)
	}
	if got := Detect([]float64{1, 1, 9, 9, 9}, Default, 1); len(got) != 0 {
		t.Errorf("5 points cannot hold two segments of %d: got %+v", Default.MinSize, got)
	}
	if got := Detect(nil, Default, 1); len(got) != 0 {
		t.Errorf("no points: got %+v", got)
	}
}

func TestSameSeedSameAnswer(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 11))
	xs := append(noisy(rng, 10, 100, 0.02), noisy(rng, 10, 102.5, 0.02)...)
	// At Default's alpha this series has no change, and an empty answer
	// says nothing of the shuffles. At alpha 1 every best split is kept,
	// each with a p-value about 0.5: a share of shuffles that only the
	// seed fixes.
	cfg := Default
	cfg.Alpha = 1
	a, b := DetectAt(xs, nil, cfg, 99), DetectAt(xs, nil, cfg, 99)
	if len(a) == 0 || !slices.Equal(a, b) {
		t.Errorf("seed 99 twice: %+v then %+v", a, b)
	}
}
