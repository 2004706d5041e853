// Package changepoint finds the points where a benchmark series' level
// moves for good: E-divisive means (Matteson and James, "A Nonparametric
// Approach for Multiple Change Point Analysis of Multivariate Data", JASA
// 2014), the method MongoDB uses on its performance history (Daly et al.,
// ICPE 2020).
//
// A series is one value per run (a run's median) in commit order. The
// candidate split is the one with the largest energy statistic between the
// points before and after it; it counts only if a permutation test of the
// same points, shuffled, rarely gives as large a statistic. The test is
// the series' own noise: a quiet series turns a 1 % step into a change, a
// noisy one needs more. Splits repeat inside the segments until none is
// significant. docs/history.md ("Change points") says why this method and
// what it costs on the suite's own noise.
package changepoint
