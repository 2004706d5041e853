package summary

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/benchstat/internal/engname"
	"github.com/kvbench/kvbench/benchstat/internal/results"
	"golang.org/x/perf/benchmath"
)

// Stat is a median and the spread shown beside it.
type Stat struct {
	Center, Lo, Hi float64
	N              int
	// CI: Lo..Hi is the 95% confidence interval of the median (6 or
	// more rounds); otherwise it is the range of the rounds.
	CI bool
}

// Of summarises the rounds of one series with benchmath.
func Of(vals []float64) Stat {
	s := benchmath.NewSample(vals, &benchmath.DefaultThresholds)
	sum := benchmath.AssumeNothing.Summary(s, 0.95)
	st := Stat{Center: sum.Center, Lo: sum.Lo, Hi: sum.Hi, N: len(vals), CI: true}
	if math.IsInf(sum.Lo, 0) || math.IsInf(sum.Hi, 0) {
		st.Lo, st.Hi, st.CI = s.Values[0], s.Values[len(s.Values)-1], false
	}
	return st
}

// Spread is the widest distance from the median to Lo or Hi, in percent
// of the median; -1 when there is none to show (one round, or a zero
// median).
func (s Stat) Spread() float64 {
	if s.N < 2 || s.Center == 0 {
		return -1
	}
	return math.Max(s.Hi-s.Center, s.Center-s.Lo) / math.Abs(s.Center) * 100
}

// Cell is one engine's figure on one row, and the series it came from.
type Cell struct {
	Src  Key
	Stat Stat
	// Note is shown instead of a figure: how a benchmark with no result
	// ended in its memory budget (KillText). Stat is zero then.
	Note string
	// Sched: the leaf's scheduler p99 is close to this p99 (SchedMark).
	Sched bool
}

// Row is one unit at one combination of a block's dimensions.
type Row struct {
	Label string
	Unit  string // the raw unit, as in the results file
	Cells map[string]Cell
}

// Table is one answered question.
type Table struct {
	Title   string
	Columns []string
	Rows    []Row
	Common  string   // name parts every row shares ("sync=false")
	Notes   []string // which variant stood for an engine, and why
}

// Summary is every table of one results file.
type Summary struct {
	Results *Results
	Columns []string // engines with any figure, in the suite's order
	Tables  []Table
}

// Build answers every question of Questions from r.
func Build(r *Results) *Summary {
	s := &Summary{Results: r}
	have := map[string]bool{}
	placed := map[string]bool{} // kills a cell shows
	for _, q := range Questions {
		t := buildTable(r, q, placed)
		for _, row := range t.Rows {
			for c := range row.Cells {
				have[c] = true
			}
		}
		s.Tables = append(s.Tables, t)
	}
	s.Columns = slices.DeleteFunc(engname.Titles(), func(e string) bool { return !have[e] })
	for i := range s.Tables {
		cols := slices.Clone(s.Columns)
		if ref := Questions[i].Reference; ref != nil && slices.ContainsFunc(s.Tables[i].Rows, func(r Row) bool { _, ok := r.Cells[ref.Column]; return ok }) {
			cols = append(cols, ref.Column)
		}
		s.Tables[i].Columns = cols
	}
	s.noteUnplaced(placed)
	return s
}

// oversubscribed notes the thread counts of t's rows above the run's
// CPUs: there the Go scheduler's queue, not only the engine, shapes the
// tail (docs/methodology.md, "The scheduler's wait").
func oversubscribed(r *Results, t Table) []string {
	cpus, err := strconv.Atoi(r.Run["cpus"])
	if err != nil || cpus < 1 {
		return nil
	}
	var labels []string // the rows', then the common parts
	for _, row := range t.Rows {
		labels = append(labels, row.Label)
	}
	var notes []string
	for _, l := range append(labels, t.Common) {
		for _, p := range results.SplitConfig(strings.ReplaceAll(l, " ", "/")) {
			if n, err := strconv.Atoi(p.Value); err == nil && p.Key == "threads" && n > cpus {
				notes = appendNew(notes, fmt.Sprintf("threads=%d: %s the run's %d CPUs, oversubscribed: the scheduler's queue, not only the engine, makes its tail (sched-p99-ns)",
					n, strconv.FormatFloat(float64(n)/float64(cpus), 'g', 3, 64)+"×", cpus))
			}
		}
	}
	return notes
}

// appendNew appends to list each of add it does not have yet.
func appendNew[T comparable](list []T, add ...T) []T {
	for _, a := range add {
		if !slices.Contains(list, a) {
			list = append(list, a)
		}
	}
	return list
}

// candidate is one sub-benchmark an engine ran for a row.
type candidate struct {
	config string
	rest   results.Parts // name parts neither filtered nor a dimension
}

func buildTable(r *Results, q Section, placed map[string]bool) Table {
	t := Table{Title: q.Title}
	var commons []string
	for _, b := range q.Blocks {
		rows, common, notes := buildBlock(r, b, placed)
		t.Rows = append(t.Rows, rows...)
		if common != "" {
			commons = appendNew(commons, common)
		}
		t.Notes = appendNew(t.Notes, notes...)
	}
	t.Common = strings.Join(commons, "; ")
	t.Notes = append(t.Notes, oversubscribed(r, t)...)
	if slices.ContainsFunc(t.Rows, func(r Row) bool {
		return slices.ContainsFunc(slices.Collect(maps.Values(r.Cells)), func(c Cell) bool { return c.Sched })
	}) {
		t.Notes = append(t.Notes, SchedNote)
	}
	if q.Reference != nil {
		addReference(r, &t, q)
	}
	return t
}

// buildBlock makes a block's rows. An engine whose sub-benchmark ended in
// its budget with no result (r.Kills) shows how in its cell, and one with
// some rounds ended so says in a note; placed records both.
func buildBlock(r *Results, b Block, placed map[string]bool) (rows []Row, common string, notes []string) {
	engines := enginesOf(r, b.Op)
	var rowKeys []string
	dimVals := map[string][]string{} // each dimension's values, in order
	cands := map[string]map[string][]candidate{}
	filtered := map[string]bool{}
	for _, w := range b.Where {
		k, _ := results.FilterKey(w)
		filtered[k] = true
	}
	all := slices.Clone(r.Configs[b.Op]) // then those with kills and no result
	for _, k := range r.Kills {
		if k.Op == b.Op {
			all = appendNew(all, k.Config)
		}
	}
	var configs []candidate // with every name part, in rest
	for _, config := range all {
		ps := results.SplitConfig(config)
		for k, v := range b.Defaults {
			if _, ok := ps.Get(k); !ok {
				ps = append(ps, results.Part{Key: k, Value: v})
			}
		}
		if ps.Match(b.Where) {
			configs = append(configs, candidate{config, ps})
			for _, d := range b.Dims {
				if v, ok := ps.Get(d); ok {
					dimVals[d] = appendNew(dimVals[d], v)
				}
			}
		}
	}
	var spanned []string // engines shown on every value of spanDim
	for _, c := range configs {
		ps, config := c.rest, c.config
		// The config's row keys: one, or one per value of spanDim when
		// it lacks it.
		keys := []string{""}
		missing := false
		for _, d := range b.Dims {
			vs := []string{}
			if v, ok := ps.Get(d); ok {
				vs = append(vs, v)
			} else if d == spanDim {
				vs, missing = dimVals[d], missing || len(dimVals[d]) > 0
			}
			var next []string
			for _, k := range keys {
				for _, v := range vs {
					next = append(next, strings.TrimPrefix(k+"/"+d+"="+v, "/"))
				}
				if len(vs) == 0 {
					next = append(next, k)
				}
			}
			keys = next
		}
		rest := slices.DeleteFunc(slices.Clone(ps), func(p results.Part) bool { return filtered[p.Key] || slices.Contains(b.Dims, p.Key) })
		for _, rk := range keys {
			if _, ok := cands[rk]; !ok {
				cands[rk] = map[string][]candidate{}
				rowKeys = append(rowKeys, rk)
			}
			for _, e := range engines {
				if hasSeries(r, b.Op, e, config) || len(r.killsOf(b.Op, e, config)) > 0 {
					cands[rk][e] = append(cands[rk][e], candidate{config, rest})
					if missing {
						spanned = appendNew(spanned, e)
					}
				}
			}
		}
	}
	// lsmsRan: some engine has the span dimension (not only those without).
	lsmsRan := false
	for _, byEngine := range cands {
		for e := range byEngine {
			lsmsRan = lsmsRan || !slices.Contains(spanned, e)
		}
	}
	if len(spanned) > 0 {
		notes = append(notes, fmt.Sprintf("%s: no %s; each result is shown on every %s row", strings.Join(spanned, ", "), spanDim, spanDim))
	}
	// Dimensions with one value in the whole block are said once.
	var shared []string
	varies := map[string]bool{}
	for _, d := range b.Dims {
		switch vs := dimVals[d]; len(vs) {
		case 0:
		case 1:
			shared = append(shared, d+"="+vs[0])
		default:
			varies[d] = true
		}
	}
	if len(shared) > 0 {
		common = strings.TrimSpace(b.Label + " " + strings.Join(shared, " "))
	}
	for _, rk := range rowKeys {
		label := strings.Fields(b.Label)
		for _, p := range results.SplitConfig(rk) {
			if varies[p.Key] {
				label = append(label, p.Key+"="+p.Value)
			}
		}
		var prefer map[string]string // the variant shown of an engine that ran several
		if b.Prefer != nil {
			prefer = b.Prefer(results.SplitConfig(rk))
		}
		chosen := map[string]string{}
		for _, e := range engines {
			cs := cands[rk][e]
			if len(cs) == 0 {
				continue
			}
			c, note := pick(r, cs, prefer)
			chosen[e] = c.config
			if note != "" {
				notes = appendNew(notes, e+": "+note)
			}
		}
		killedAt := map[string]string{} // the row that tells an engine's kill
		for _, u := range b.Units {
			row := Row{Label: strings.Join(append([]string{DisplayOf(u).Label}, label...), " "), Unit: u, Cells: map[string]Cell{}}
			for e, config := range chosen {
				k := Key{Op: b.Op, Engine: e, Config: config, Unit: u}
				ks := r.killsOf(b.Op, e, config)
				if len(ks) > 0 {
					placed[b.Op+"\x00"+e+"\x00"+config] = true
				}
				switch vals := r.Values[k]; {
				case len(vals) > 0:
					st := Of(vals)
					row.Cells[e] = Cell{Src: k, Stat: st, Sched: schedBound(r, k, st)}
					if len(ks) > 0 {
						notes = appendNew(notes, e+": "+KillText(ks)+" (its other rounds shown)")
					}
				case len(ks) > 0 && killedAt[e] == "":
					row.Cells[e] = Cell{Src: k, Note: KillText(ks)}
					killedAt[e] = row.Label
				case len(ks) > 0:
					row.Cells[e] = Cell{Src: k, Note: "killed: see " + killedAt[e]}
				}
			}
			// A row only engines without its span dimension fill (the
			// B-trees' on a block size no LSM ran at) says nothing new.
			own := len(spanned) == 0
			for e := range row.Cells {
				own = own || !slices.Contains(spanned, e)
			}
			if len(row.Cells) > 0 && (own || !lsmsRan) {
				rows = append(rows, row)
			}
		}
	}
	if b.Note != "" && len(rows) > 0 {
		notes = append(notes, b.Note)
	}
	return rows, common, notes
}

// pick chooses the sub-benchmark that stands for an engine on a row when
// it ran several: on each name key they differ in, the one whose value is
// the run's own setting of that key (readahead=off under -readahead off),
// else the block's preferred value of it (prefer), otherwise the first
// the file has. The note says which and why.
func pick(r *Results, cs []candidate, prefer map[string]string) (candidate, string) {
	if len(cs) == 1 {
		return cs[0], ""
	}
	var differ []string
	for _, p := range cs[0].rest {
		for _, c := range cs[1:] {
			if v, _ := c.rest.Get(p.Key); v != p.Value {
				differ = appendNew(differ, p.Key)
			}
		}
	}
	// match is the first candidate whose every differing key has want's
	// value.
	match := func(want map[string]string) (candidate, bool) {
		for _, c := range cs {
			if !slices.ContainsFunc(differ, func(k string) bool { v, _ := c.rest.Get(k); return want[k] == "" || want[k] != v }) {
				return c, true
			}
		}
		return candidate{}, false
	}
	shown := func(c candidate, why string) (candidate, string) {
		var parts []string
		for _, k := range differ {
			v, _ := c.rest.Get(k)
			parts = append(parts, k+"="+v)
		}
		return c, fmt.Sprintf("%s shown (%s)", strings.Join(parts, " "), why)
	}
	if c, ok := match(r.Run); ok && len(differ) > 0 {
		return shown(c, "the run's own setting")
	}
	if c, ok := match(prefer); ok {
		return c, "" // the block's Note says which
	}
	return shown(cs[0], "the first the results have")
}

func addReference(r *Results, t *Table, q Section) {
	ref := q.Reference
	for i, row := range t.Rows {
		var src Cell
		for _, c := range row.Cells {
			src = c
			break
		}
		want, ok := results.SplitConfig(src.Src.Config).Get(ref.Match)
		if !ok {
			continue
		}
		for _, config := range r.Configs[ref.Op] {
			ps := results.SplitConfig(config)
			if v, _ := ps.Get(ref.Match); !ps.Match(ref.Where) || v != want {
				continue
			}
			k := Key{Op: ref.Op, Config: config, Unit: row.Unit}
			if vals := r.Values[k]; len(vals) > 0 {
				t.Rows[i].Cells[ref.Column] = Cell{Src: k, Stat: Of(vals)}
			}
		}
	}
}

func enginesOf(r *Results, op string) []string {
	es := r.Distinct(func(k Key) string { return k.Engine }, func(k Key) bool { return k.Op == op && k.Engine != "" })
	for _, k := range r.Kills {
		if k.Op == op && k.Engine != "" {
			es = append(es, k.Engine)
		}
	}
	slices.Sort(es)
	return slices.Compact(es)
}

func hasSeries(r *Results, op, engine, config string) bool {
	return slices.ContainsFunc(slices.Collect(maps.Keys(r.Values)), func(k Key) bool { return k.Op == op && k.Engine == engine && k.Config == config })
}
