package gate

import (
	"cmp"
	"math"
	"slices"

	"github.com/aclements/go-moremath/stats"
)

// signedRankP is the exact one-sided p-value of the Wilcoxon signed-rank
// test that the differences d, times sign (+1 or -1), are centred above
// zero: the probability, when each |d| is as likely positive as negative,
// of a sum of positive ranks at least the one observed. Zeros are dropped
// (Wilcoxon's rule); ties share their mean rank. It is 1 when no
// difference is left. No library of the module has the test
// (docs/gating.md): this counts the sign assignments by rank sum, in half
// ranks so that tied mean ranks stay integers.
func signedRankP(d []float64, sign float64) float64 {
	ds := slices.DeleteFunc(slices.Clone(d), func(x float64) bool { return x == 0 || math.IsNaN(x) })
	n := len(ds)
	if n == 0 {
		return 1
	}
	slices.SortFunc(ds, func(a, b float64) int { return cmp.Compare(math.Abs(a), math.Abs(b)) })
	// rank2[i] is twice the mean rank of |ds[i]|, which its ties share.
	rank2 := make([]int, n)
	obs, total := 0, 0
	for i := 0; i < n; {
		j := i
		for j+1 < n && math.Abs(ds[j+1]) == math.Abs(ds[i]) {
			j++
		}
		for k := i; k <= j; k++ {
			rank2[k] = i + 1 + j + 1 // twice the mean of ranks i+1..j+1
			total += rank2[k]
			if sign*ds[k] > 0 {
				obs += rank2[k]
			}
		}
		i = j + 1
	}
	if n > exactMax {
		return normalSignedRankP(obs, rank2)
	}
	// ways[s] counts the subsets of ranks (the positive ones) summing to s.
	ways := make([]float64, total+1)
	ways[0] = 1
	for _, r := range rank2 {
		for s := total; s >= r; s-- {
			ways[s] += ways[s-r]
		}
	}
	tail := 0.0
	for s := obs; s <= total; s++ {
		tail += ways[s]
	}
	return math.Min(1, tail/math.Pow(2, float64(n)))
}

// exactMax is the most differences signedRankP counts exactly (as R's
// wilcox.test does below 50); past it the normal approximation is close
// and the count's cost grows as n³.
const exactMax = 50

// normalSignedRankP is the normal approximation of the one-sided p-value,
// with the variance reduced for ties and a continuity correction; obs and
// rank2 are in half ranks.
func normalSignedRankP(obs int, rank2 []int) float64 {
	n := float64(len(rank2))
	mean := n * (n + 1) / 4
	vr := n * (n + 1) * (2*n + 1) / 24
	ties := map[int]int{}
	for _, r := range rank2 {
		ties[r]++
	}
	for _, t := range ties {
		vr -= float64(t*t*t-t) / 48
	}
	z := (float64(obs)/2 - mean - 0.5) / math.Sqrt(vr)
	return 1 - stats.StdNormal.CDF(z)
}

// minSignedRankP is the smallest p-value signedRankP can give with n
// pairs: every difference of one sign.
func minSignedRankP(n int) float64 { return math.Pow(2, -float64(n)) }
