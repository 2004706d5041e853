package changepoint

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// Config sets the test. Alpha is the significance level of each split's
// permutation test, Permutations the number of shuffles behind its
// p-value, MinSize the fewest points a segment may have on either side of
// a change.
type Config struct {
	Alpha        float64
	Permutations int
	MinSize      int
}

// Default is the configuration docs/history.md measures and justifies.
var Default = Config{Alpha: 0.001, Permutations: 4999, MinSize: 3}

// Change is one change point: the series' level differs from Index on.
type Change struct {
	Index         int     // the first point of the new segment
	P             float64 // the permutation test's p-value
	Before, After float64 // medians of the segments either side
}

// Detect returns the change points of xs, sorted by Index. seed fixes the
// shuffles, so a report made twice marks the same points.
func Detect(xs []float64, cfg Config, seed uint64) []Change {
	return DetectAt(xs, nil, cfg, seed)
}

// DetectAt is Detect with the places a change may start: splits[i] says
// whether one may start at point i (nil: anywhere). Runs of one commit
// measure the same code, so a change can only start where the commit,
// the engine's version or the machine's environment changed; the
// permutation test asks the same of its shuffles.
func DetectAt(xs []float64, splits []bool, cfg Config, seed uint64) []Change {
	xs = rounded(xs)
	if cfg.MinSize < 1 {
		cfg.MinSize = 1
	}
	rng := rand.New(rand.NewPCG(seed, 0x6b7662656e6368)) // "kvbench"
	bounds := []int{0, len(xs)}                          // segment edges
	var changes []Change
	scratch := make([]float64, len(xs))
	for {
		// The segment whose best split has the largest statistic.
		best, bestQ, bestSeg := -1, 0.0, 0
		for s := 0; s+1 < len(bounds); s++ {
			tau, q := bestSplit(xs[bounds[s]:bounds[s+1]], sub(splits, bounds[s], bounds[s+1]), cfg.MinSize)
			if tau > 0 && q > bestQ {
				best, bestQ, bestSeg = bounds[s]+tau, q, s
			}
		}
		if best < 0 {
			break
		}
		lo, hi := bounds[bestSeg], bounds[bestSeg+1]
		p := permutationP(xs[lo:hi], sub(splits, lo, hi), bestQ, cfg, rng, scratch[:hi-lo])
		if p > cfg.Alpha {
			break
		}
		changes = append(changes, Change{Index: best, P: p, Before: median(xs[lo:best]), After: median(xs[best:hi])})
		bounds = append(bounds, best)
		sort.Ints(bounds)
	}
	slices.SortFunc(changes, func(a, b Change) int { return a.Index - b.Index })
	// Each segment's median is between its own neighbours, not the
	// segment it was split from.
	for i := range changes {
		lo, hi := 0, len(xs)
		if i > 0 {
			lo = changes[i-1].Index
		}
		if i+1 < len(changes) {
			hi = changes[i+1].Index
		}
		changes[i].Before = median(xs[lo:changes[i].Index])
		changes[i].After = median(xs[changes[i].Index:hi])
	}
	return changes
}

// permutationP is the share of shuffles of xs (counting the observed
// order once) whose best split's statistic reaches q. It stops as soon as
// the answer can no longer be at most cfg.Alpha.
func permutationP(xs []float64, splits []bool, q float64, cfg Config, rng *rand.Rand, buf []float64) float64 {
	copy(buf, xs)
	reach := 1
	limit := cfg.Alpha * float64(cfg.Permutations+1)
	for i := 0; i < cfg.Permutations; i++ {
		rng.Shuffle(len(buf), func(a, b int) { buf[a], buf[b] = buf[b], buf[a] })
		if _, qp := bestSplit(buf, splits, cfg.MinSize); qp >= q {
			reach++
			if float64(reach) > limit {
				return float64(reach) / float64(i+2)
			}
		}
	}
	return float64(reach) / float64(cfg.Permutations+1)
}

// bestSplit returns the split tau (the left part is xs[:tau]) with the
// largest energy statistic, each part at least minSize long and
// splits[tau] true (nil: any), and that statistic; tau is 0 when there is
// no such split.
//
// With L = xs[:tau], R = xs[tau:], n = len(xs) and d = |x - y|:
//
//	Q(tau) = |L||R|/n * (2*mean d(L,R) - mean d within L - mean d within R)
//
// The sums come from the pairwise distances' row sums, so one call is
// O(n^2).
func bestSplit(xs []float64, splits []bool, minSize int) (tau int, q float64) {
	n := len(xs)
	if n < 2*minSize || n < 4 {
		return 0, 0
	}
	// left[k] = sum_{i<k} d(i,k); right[i] = sum_{k>i} d(i,k).
	left := make([]float64, n)
	right := make([]float64, n)
	total := 0.0
	for i := 0; i < n; i++ {
		for k := i + 1; k < n; k++ {
			d := math.Abs(xs[i] - xs[k])
			left[k] += d
			right[i] += d
			total += d
		}
	}
	// withinR[t] = sum of d over pairs both in xs[t:].
	withinR := make([]float64, n+1)
	for i := n - 1; i >= 0; i-- {
		withinR[i] = withinR[i+1] + right[i]
	}
	withinL := 0.0 // pairs both in xs[:t]
	for t := 1; t < n; t++ {
		withinL += left[t-1]
		if t < minSize || n-t < minSize || (splits != nil && !splits[t]) {
			continue
		}
		nl, nr := float64(t), float64(n-t)
		between := total - withinL - withinR[t]
		e := 2 * between / (nl * nr)
		if t > 1 {
			e -= withinL / (nl * (nl - 1) / 2)
		}
		if n-t > 1 {
			e -= withinR[t] / (nr * (nr - 1) / 2)
		}
		if s := nl * nr / float64(n) * e; s > q {
			tau, q = t, s
		}
	}
	return tau, q
}

// rounded is xs to 12 significant digits: a series that is constant but
// for the last bits of a division (a drift factor taken out of equal
// values) must look constant, not perfectly split.
func rounded(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
			out[i] = x
			continue
		}
		scale := math.Pow(10, 12-math.Ceil(math.Log10(math.Abs(x))))
		out[i] = math.Round(x*scale) / scale
	}
	return out
}

// sub is splits' window [lo, hi), nil for nil.
func sub(splits []bool, lo, hi int) []bool {
	if splits == nil {
		return nil
	}
	return splits[lo:hi]
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}
