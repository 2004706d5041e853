package main

import (
	"fmt"
	"math"
	"regexp"
	"sort"

	"golang.org/x/perf/benchmath"
)

// Options are the gate's knobs.
type Options struct {
	Alpha     float64        // significance level of the Mann-Whitney U test
	Threshold float64        // relative change in the bad direction that fails, e.g. 0.05
	Holm      bool           // Holm-Bonferroni correction over every tested series
	Units     *regexp.Regexp // gate only these units; nil is every unit
}

// Verdict is what the gate concluded about one series.
type Verdict int

const (
	Unchanged   Verdict = iota // no significant change, or within the threshold
	Regression                 // fails the gate
	Improvement                // significant and better beyond the threshold
	Changed                    // significant, but the unit has no good direction
	Missing                    // in base only
	New                        // in head only
)

func (v Verdict) String() string {
	return [...]string{"unchanged", "REGRESSION", "improvement", "changed", "missing", "new"}[v]
}

// Row is the comparison of one series.
type Row struct {
	Key
	Verdict    Verdict
	Exact      bool    // compared strictly, without statistics
	Better     int     // +1 higher is better, -1 lower, 0 no direction
	Base, Head float64 // medians (exact units: the most common value)
	Delta      float64 // (head-base)/base; NaN when base is 0
	P          float64 // raw p-value; NaN for exact units
	PAdj       float64 // p-value after the Holm correction (= P without it)
	N1, N2     int
	Notes      []string // warnings from benchmath (too few runs, inexact values)
}

// Worse is the relative change in the bad direction: positive when head
// is worse than base.
func (r Row) Worse() float64 { return -float64(r.Better) * r.Delta }

// Compare compares every series of head with the same series of base.
func Compare(base, head *Set, o Options) []Row {
	thr := benchmath.Thresholds{CompareAlpha: o.Alpha}
	units := func(unit, key string) string {
		for _, m := range []*Set{head, base} {
			if md := m.Units.Get(unit, key); md != nil {
				return md.Value
			}
		}
		return ""
	}
	var rows []Row
	gated := func(k Key) bool { return o.Units == nil || o.Units.MatchString(k.Unit) }
	for _, k := range base.Keys() {
		if !gated(k) {
			continue
		}
		if _, ok := head.Values[k]; !ok {
			rows = append(rows, Row{Key: k, Verdict: Missing, N1: len(base.Values[k])})
		}
	}
	for _, k := range head.Keys() {
		if !gated(k) {
			continue
		}
		bv, ok := base.Values[k]
		if !ok {
			rows = append(rows, Row{Key: k, Verdict: New, N2: len(head.Values[k])})
			continue
		}
		b := benchmath.NewSample(bv, &thr)
		h := benchmath.NewSample(head.Values[k], &thr)
		r := Row{Key: k, N1: len(b.Values), N2: len(h.Values)}
		switch units(k.Unit, "better") {
		case "higher":
			r.Better = 1
		case "lower":
			r.Better = -1
		default:
			r.Better = base.Units.GetBetter(k.Unit) // ns/op, MB/s, B/op, allocs/op
		}
		a := benchmath.Assumption(benchmath.AssumeNothing)
		if units(k.Unit, "assume") == "exact" {
			a, r.Exact = benchmath.AssumeExact, true
		}
		bs, hs := a.Summary(b, 0.95), a.Summary(h, 0.95)
		r.Base, r.Head = bs.Center, hs.Center
		r.Delta = math.NaN()
		if r.Base != 0 {
			r.Delta = (r.Head - r.Base) / math.Abs(r.Base)
		} else if r.Head == 0 {
			r.Delta = 0
		}
		r.P, r.PAdj = math.NaN(), math.NaN()
		if r.Exact {
			for _, w := range append(bs.Warnings, hs.Warnings...) {
				r.Notes = append(r.Notes, w.Error())
			}
		} else {
			c := a.Compare(b, h)
			r.P, r.PAdj = c.P, c.P
			for _, w := range c.Warnings {
				r.Notes = append(r.Notes, w.Error())
			}
		}
		rows = append(rows, r)
	}
	if o.Holm {
		holm(rows)
	}
	for i := range rows {
		rows[i].Verdict = verdict(rows[i], o)
	}
	sort.SliceStable(rows, func(i, j int) bool { return rank(rows[i]) < rank(rows[j]) })
	return rows
}

// verdict decides one compared series.
func verdict(r Row, o Options) Verdict {
	if r.Verdict == Missing || r.Verdict == New {
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
	if !(r.PAdj < o.Alpha) {
		return Unchanged
	}
	switch {
	case r.Better == 0:
		return Changed
	case math.IsNaN(r.Delta): // base median 0: any significant worsening counts
		if float64(r.Better)*(r.Head-r.Base) < 0 {
			return Regression
		}
		return Improvement
	case r.Worse() > o.Threshold:
		return Regression
	case -r.Worse() > o.Threshold:
		return Improvement
	}
	return Unchanged
}

// holm replaces PAdj of every statistically tested series with its
// Holm-Bonferroni adjusted p-value, controlling the chance of any false
// alarm across all of them at alpha. Series without a direction are not
// gated and do not count.
func holm(rows []Row) {
	var idx []int
	for i, r := range rows {
		if !r.Exact && r.Better != 0 && r.Verdict != Missing && r.Verdict != New {
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

func rank(r Row) int {
	switch r.Verdict {
	case Regression:
		return 0
	case Improvement:
		return 1
	case Changed:
		return 2
	case Missing:
		return 3
	case New:
		return 4
	}
	return 5
}

// Failed reports whether any row fails the gate.
func Failed(rows []Row) bool {
	for _, r := range rows {
		if r.Verdict == Regression {
			return true
		}
	}
	return false
}

// Validate checks the options, naming the flag at fault.
func (o Options) Validate() error {
	if !(o.Alpha > 0 && o.Alpha < 1) {
		return fmt.Errorf("-alpha %v: must be more than 0 and less than 1", o.Alpha)
	}
	if !(o.Threshold >= 0 && o.Threshold < 10) {
		return fmt.Errorf("-threshold %v%%: must be from 0%% to 1000%%", o.Threshold*100)
	}
	return nil
}
