// Package gate decides whether head results are worse than base results,
// rounds paired, and is kvb gate; kvb compare calls it in process
// (docs/gating.md, "What the gate decides").
package gate

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/aclements/go-moremath/stats"
	"golang.org/x/perf/benchmath"
)

// Options are the gate's knobs.
type Options struct {
	Alpha        float64        // significance level of the one-sided signed-rank test
	Threshold    float64        // median per-round worsening that fails, e.g. 0.03
	SimThreshold float64        // the same for counted results (a "mode: sim" line), e.g. 0.005
	Holm         bool           // Holm-Bonferroni correction over every tested series
	Units        *regexp.Regexp // gate only these units, overriding each family's own; nil: the families' units
	AllowRemoved bool           // a gated series in base only passes
}

// DefaultThreshold is the -threshold default: chosen by measurement on
// the suite's default comparison (docs/gating.md).
const DefaultThreshold = 0.03

// DefaultSimThreshold is -sim_threshold's default, for results counted
// under callgrind (benchstat/sim): chosen from their A/A spread
// (docs/gating.md, "Simulation mode").
const DefaultSimThreshold = 0.005

// ModeSim is the "mode" configuration value of counted results.
const ModeSim = "sim"

// thresholdFor is the threshold of r's mode.
func (o Options) thresholdFor(r Row) float64 {
	if r.Mode == ModeSim {
		return o.SimThreshold
	}
	return o.Threshold
}

// DefaultUnits are gated in results that do not say which of their units
// carry their result (files written before the "gate" configuration line).
var DefaultUnits = regexp.MustCompile(`^(ns/op|cpu-ns/op|p50-ns|B/op|allocs/op|read-B/op|write-amp|space-amp)$`)

// sustainedShare is the share of its target a fixed-rate run must achieve
// for its latencies to be compared: past the rate the base can serve,
// latency is queueing, not the code.
const sustainedShare = 0.97

// power is the chance of a catch that Detectable is quoted at.
const power = 0.8

// Verdict is what the gate concluded about one series.
type Verdict int

const (
	Unchanged   Verdict = iota // no significant change, or within the threshold
	Regression                 // fails the gate
	Improvement                // significant and better beyond the threshold
	Changed                    // significant, but the unit has no good direction
	Missing                    // gated, in base only: fails unless removals are allowed
	Removed                    // in base only, removal allowed
	New                        // in head only
	Skipped                    // not comparable in this run (Why says why)
)

func (v Verdict) String() string {
	return [...]string{"unchanged", "REGRESSION", "improvement", "changed", "MISSING", "removed", "new", "skipped"}[v]
}

// Row is the comparison of one series.
type Row struct {
	Key
	Mode       string // "sim" for counted results, "time" otherwise
	Verdict    Verdict
	Exact      bool    // compared strictly, without statistics
	Better     int     // +1 higher is better, -1 lower, 0 no direction
	Base, Head float64 // medians (exact units: the most common value)
	// Delta is the median of the per-round relative changes
	// (head_i-base_i)/base_i; NaN when a base value is 0.
	Delta float64
	P     float64 // one-sided signed-rank p-value in the bad direction (two-sided without one); NaN for exact units
	PAdj  float64 // P after the Holm correction (= P without it)
	N     int     // rounds paired
	// Detectable is the smallest worsening this series could have failed
	// on in 80% of runs, given its own round-to-round noise: +Inf when
	// its rounds are too few for any p-value below alpha.
	Detectable float64
	N1         int
	pBetter    float64  // the same test in the good direction
	moved      bool     // some round's head differs from its base
	Why        string   // why a series was skipped
	Notes      []string // warnings (unequal rounds, inexact values)
}

// Worse is the relative change in the bad direction: positive when head
// is worse than base.
func (r Row) Worse() float64 { return -float64(r.Better) * r.Delta }

// Files reads base's and head's results files, compares them and writes
// the Markdown report to w, naming the sides baseName and headName.
// Unreadable or empty input is an error, and so are rounds too few for
// the test to reach the level the gate needs (a gate that cannot fail):
// that error says to run more with again ("-count").
func Files(o Options, base, head []string, baseName, headName, again string, w io.Writer) ([]Row, error) {
	var sets [2]*Set
	for i, paths := range [][]string{base, head} {
		var err error
		if sets[i], err = ReadFiles(paths...); err != nil {
			return nil, fmt.Errorf("%s: %w", []string{"base", "head"}[i], err)
		}
	}
	for i, paths := range [][]string{base, head} {
		if len(sets[i].Values) == 0 {
			return nil, fmt.Errorf("no benchmark results in %s", strings.Join(paths, ","))
		}
	}
	rows := Compare(sets[0], sets[1], o)
	need := MinRounds(o, Corrected(rows))
	if i := slices.IndexFunc(rows, func(r Row) bool { return isTested(r) && r.N < need }); i >= 0 {
		holm := ""
		if o.Holm {
			holm = fmt.Sprintf(" after Holm over %d series", Corrected(rows))
		}
		return nil, fmt.Errorf("%s has %d paired rounds; the signed-rank test needs at least %d to reject anything at alpha %g%s, so this gate could not fail: run more rounds (%s %d)",
			rows[i].Key, rows[i].N, need, o.Alpha, holm, again, need)
	}
	Markdown(w, rows, o, baseName, headName)
	return rows, nil
}

// Compare pairs every gated series of head with the same series of base,
// round by round, and decides each, failures first.
func Compare(base, head *Set, o Options) []Row {
	var rows []Row
	for _, k := range base.Keys() {
		if _, ok := head.Values[k]; !ok && gated(k, base, head, o) {
			v := Missing
			if o.AllowRemoved {
				v = Removed
			}
			rows = append(rows, Row{Key: k, Verdict: v, N1: len(base.Values[k])})
		}
	}
	for _, k := range head.Keys() {
		if !gated(k, base, head, o) {
			continue
		}
		bv, ok := base.Values[k]
		if !ok {
			rows = append(rows, Row{Key: k, Verdict: New})
			continue
		}
		r := compareSeries(k, bv, head.Values[k], base, head)
		r.Mode = cmp.Or(head.Mode[k.Name], "time")
		if why := unsustained(k, base); why != "" {
			r.Verdict, r.Why = Skipped, why
		}
		rows = append(rows, r)
	}
	if o.Holm {
		holm(rows)
	}
	m := Corrected(rows)
	for i := range rows {
		rows[i].Verdict = verdict(rows[i], o)
		rows[i].Detectable = detectable(rows[i], base, head, o, m)
	}
	sort.SliceStable(rows, func(i, j int) bool { return rank[rows[i].Verdict] < rank[rows[j].Verdict] })
	return rows
}

// gated reports whether k's unit carries its benchmark's result: -units
// when given, else the family's own list from the results' "gate" line
// (head's, then base's), else DefaultUnits.
func gated(k Key, base, head *Set, o Options) bool {
	if o.Units != nil {
		return o.Units.MatchString(k.Unit)
	}
	for _, s := range []*Set{head, base} {
		if units, ok := s.Gate[k.Name]; ok {
			return slices.Contains(strings.Fields(units), k.Unit)
		}
	}
	return DefaultUnits.MatchString(k.Unit)
}

var rateDim = regexp.MustCompile(`(?:^|/)rate=(\d+)(?:/|-\d+$|$)`)

// unsustained says why a latency of a fixed-rate run is not compared: its
// base did not achieve the rate it was given.
func unsustained(k Key, base *Set) string {
	m := rateDim.FindStringSubmatch(k.Name)
	if m == nil || !strings.HasSuffix(k.Unit, "-ns") {
		return ""
	}
	rate, _ := strconv.ParseFloat(m[1], 64)
	achieved := base.Values[Key{k.Name, "achieved-ops/s"}]
	unrun := base.Values[Key{k.Name, "unrun-%"}]
	switch {
	case len(achieved) == 0:
		return "" // not a fixed-rate result after all
	case med(achieved) < sustainedShare*rate:
		return fmt.Sprintf("base achieved %.0f of %.0f ops/s: latency past the rate base sustains is queueing", med(achieved), rate)
	case len(unrun) > 0 && med(unrun) > 0:
		return fmt.Sprintf("base left %.2g%% of operations unrun", med(unrun))
	}
	return ""
}

// compareSeries measures one series present on both sides.
func compareSeries(k Key, bv, hv []float64, base, head *Set) Row {
	r := Row{Key: k, N1: len(bv), P: math.NaN(), PAdj: math.NaN(), Delta: math.NaN()}
	r.Better = base.Units.GetBetter(k.Unit) // ns/op, MB/s, B/op, allocs/op
	switch unitMeta(base, head, k.Unit, "better") {
	case "higher":
		r.Better = 1
	case "lower":
		r.Better = -1
	}
	thr := benchmath.Thresholds{CompareAlpha: 0.05}
	// NewSample sorts its values in place: give it copies, or the rounds
	// paired below would be paired in sorted order.
	b, h := benchmath.NewSample(slices.Clone(bv), &thr), benchmath.NewSample(slices.Clone(hv), &thr)
	if unitMeta(base, head, k.Unit, "assume") == "exact" {
		r.Exact = true
		a := benchmath.AssumeExact
		bs, hs := a.Summary(b, 0.95), a.Summary(h, 0.95)
		r.Base, r.Head = bs.Center, hs.Center
		for _, w := range append(bs.Warnings, hs.Warnings...) {
			r.Notes = append(r.Notes, w.Error())
		}
		if r.Base != 0 {
			r.Delta = (r.Head - r.Base) / math.Abs(r.Base)
		}
		return r
	}
	r.Base, r.Head = med(bv), med(hv)
	r.N = min(len(bv), len(hv))
	if len(bv) != len(hv) {
		r.Notes = append(r.Notes, fmt.Sprintf("%s: %d rounds in base, %d in head: the first %d paired", k, len(bv), len(hv), r.N))
	}
	d, relative := pairedChanges(bv[:r.N], hv[:r.N])
	r.moved = slices.ContainsFunc(d, func(x float64) bool { return x != 0 })
	if relative {
		r.Delta = math.Expm1(med(d))
	}
	switch r.Better {
	case 0:
		r.P = math.Min(1, 2*math.Min(signedRankP(d, 1), signedRankP(d, -1)))
	default:
		r.P = signedRankP(d, -float64(r.Better))
		r.pBetter = signedRankP(d, float64(r.Better))
	}
	r.PAdj = r.P
	return r
}

// pairedChanges are a series' per-round changes: log(head/base) when
// every value is positive (relative), else head-base.
func pairedChanges(bv, hv []float64) (d []float64, relative bool) {
	relative = !slices.ContainsFunc(append(slices.Clone(bv), hv...), func(x float64) bool { return !(x > 0) })
	d = make([]float64, len(bv))
	for i := range bv {
		if d[i] = hv[i] - bv[i]; relative {
			d[i] = math.Log(hv[i] / bv[i])
		}
	}
	return d, relative
}

// verdict decides one compared series.
func verdict(r Row, o Options) Verdict {
	switch r.Verdict {
	case Missing, Removed, New, Skipped:
		return r.Verdict
	}
	if r.Exact {
		// Strict: any change of a value that repeats exactly.
		switch {
		case r.Head == r.Base:
			return Unchanged
		case float64(r.Better)*(r.Head-r.Base) > 0:
			return Improvement
		}
		return Regression // worse, or changed with no good direction
	}
	if r.Better == 0 {
		if r.PAdj < o.Alpha {
			return Changed
		}
		return Unchanged
	}
	if r.PAdj < o.Alpha && (math.IsNaN(r.Delta) || r.Worse() > o.thresholdFor(r)) {
		return Regression
	}
	if r.pBetter < o.Alpha && (math.IsNaN(r.Delta) || -r.Worse() > o.thresholdFor(r)) {
		// Informational: the same test the other way, uncorrected.
		return Improvement
	}
	return Unchanged
}

// Tested counts the series the gate tests statistically.
func Tested(rows []Row) int { return count(rows, isTested) }

// Corrected counts the series Holm's correction divides alpha among.
func Corrected(rows []Row) int { return count(rows, isCorrected) }

func count(rows []Row, f func(Row) bool) (n int) {
	for _, r := range rows {
		if f(r) {
			n++
		}
	}
	return n
}

func isTested(r Row) bool {
	return !r.Exact && r.Better != 0 && r.Verdict != Missing && r.Verdict != Removed && r.Verdict != New && r.Verdict != Skipped
}

func isCorrected(r Row) bool { return isTested(r) && r.moved }

// holm replaces PAdj of every statistically tested series with its
// Holm-Bonferroni adjusted p-value, controlling the chance of any false
// alarm across all of them at alpha. A series whose rounds never moved
// (allocs/op 0 on both sides) can give no p-value below 1 and is left out
// of the count, as Tarone's refinement allows: it cannot raise a false
// alarm, so counting it would only cost the others power.
func holm(rows []Row) {
	var idx []int
	for i, r := range rows {
		if isCorrected(r) {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return rows[idx[a]].P < rows[idx[b]].P })
	m := len(idx)
	prev := 0.0
	for j, i := range idx {
		p := math.Min(1, float64(m-j)*rows[i].P)
		prev = math.Max(prev, p) // adjusted p-values never decrease
		rows[i].PAdj = prev
	}
}

// levelFor is the p-value a series must reach to fail: alpha, or with
// Holm over m series alpha/m for the first to fail.
func levelFor(o Options, m int) float64 {
	if o.Holm && m > 1 {
		return o.Alpha / float64(m)
	}
	return o.Alpha
}

// MinRounds is the fewest paired rounds with which the signed-rank test
// can reject at alpha (Holm over m series: alpha/m).
func MinRounds(o Options, m int) int {
	lvl := levelFor(o, m)
	n := 1
	for minSignedRankP(n) >= lvl {
		n++
	}
	return n
}

// detectable is the smallest worsening r's test would catch in 80% of
// runs with its own round-to-round spread s of log(head/base) (1.4826
// MAD, the standard deviation of normal noise): the signed-rank test
// needs a shift of (z_level + z_power)·s/sqrt(0.955·n) (its efficiency
// against the t test is 0.955), and the median of n changes must pass the
// threshold, which takes the threshold plus z_power·1.2533·s/sqrt(n). A
// normal approximation: a guide to what the run could see, not a bound.
func detectable(r Row, base, head *Set, o Options, m int) float64 {
	if !isTested(r) || math.IsNaN(r.Delta) {
		return math.NaN()
	}
	lvl := levelFor(o, m)
	if minSignedRankP(r.N) >= lvl {
		return math.Inf(1)
	}
	d, _ := pairedChanges(base.Values[r.Key][:r.N], head.Values[r.Key][:r.N])
	s := 1.4826 * mad(d)
	if s == 0 {
		s = stats.StdDev(d)
	}
	n := float64(r.N)
	zl, zp := stats.StdNormal.InvCDF(1-lvl), stats.StdNormal.InvCDF(power)
	test := (zl + zp) * s / math.Sqrt(0.955*n)
	thr := math.Log1p(o.thresholdFor(r)) + zp*1.2533*s/math.Sqrt(n)
	return math.Expm1(math.Max(test, thr))
}

func mad(xs []float64) float64 {
	c := med(xs)
	dev := make([]float64, len(xs))
	for i, x := range xs {
		dev[i] = math.Abs(x - c)
	}
	return med(dev)
}

func med(xs []float64) float64 { return stats.Sample{Xs: xs}.Quantile(0.5) } // NaN for none

func unitMeta(base, head *Set, unit, key string) string {
	for _, m := range []*Set{head, base} {
		if md := m.Units.Get(unit, key); md != nil {
			return md.Value
		}
	}
	return ""
}

// rank is the order of the rows by verdict: failures first.
var rank = [...]int{Regression: 0, Missing: 1, Improvement: 2, Changed: 3, Skipped: 4, Removed: 5, New: 6, Unchanged: 7}

// Failed reports whether any row fails the gate.
func Failed(rows []Row) bool { return slices.ContainsFunc(rows, Row.failed) }

func (r Row) failed() bool { return r.Verdict == Regression || r.Verdict == Missing }

// Validate checks the options, naming the flag at fault.
func (o Options) Validate() error {
	if !(o.Alpha > 0 && o.Alpha < 1) {
		return fmt.Errorf("-alpha %v: must be more than 0 and less than 1", o.Alpha)
	}
	if !(o.Threshold >= 0 && o.Threshold < 10) {
		return fmt.Errorf("-threshold %v%%: must be from 0%% to 1000%%", o.Threshold*100)
	}
	if !(o.SimThreshold >= 0 && o.SimThreshold < 10) {
		return fmt.Errorf("-sim_threshold %v%%: must be from 0%% to 1000%%", o.SimThreshold*100)
	}
	return nil
}
