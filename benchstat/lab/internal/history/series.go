package history

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/kvbench/kvbench/benchstat/internal/results"
	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
)

// SeriesKey names a series: one benchmark and unit on one machine, over
// commits, or over the releases of one module.
type SeriesKey struct {
	Machine string
	Name    string // as written, the -GOMAXPROCS suffix kept
	Unit    string // as written
	Release bool   // a release series: its runs carry series=release and a version
	Module  string // a release series' module label
	Suite   string // a release series' suite commit: the same release measured at two commits is two series
}

// Series is a key's points in x order (Compare).
type Series struct {
	SeriesKey
	Points []Point
}

// Point is one run's value in a series: the median of the run's values
// for the benchmark and unit (go test -count N gives N), with
// benchmath's 95% confidence interval of it.
type Point struct {
	Run    *RunMeta
	N      int // values behind the median
	Median float64
	Lo, Hi float64 // the interval: the 95% confidence interval when CI, else the values' min..max
	CI     bool
	Note   string    // when not CI: benchmath's reason ("need >= 6 samples ...")
	Values []float64 // the run's values, in file order
}

// History is what a report shows: the runs that matched a filter and
// their series.
type History struct {
	Runs   []*RunMeta // by id
	Series []*Series  // by machine, name, unit, then commit series before release series
	Better map[string]int
}

// BetterOf is the unit's good direction: +1 higher is better, -1 lower,
// 0 unknown. It comes from the runs' Unit lines ("Unit ops/s
// better=higher"), newest first, and otherwise benchfmt's defaults
// (ns/op, B/op, allocs/op lower; MB/s higher).
func (h *History) BetterOf(unit string) int {
	if b, ok := h.Better[unit]; ok {
		return b
	}
	return benchfmt.UnitMetadataMap{}.GetBetter(unit)
}

// Load reads the runs carrying every filter label and builds their
// series. A run without the filter's labels is not read at all. A run
// recorded before the suite printed mem-total joins the one machine with
// its CPU and device that has it.
func (s *Store) Load(ctx context.Context, filter []Label) (*History, error) {
	runs, err := s.List(ctx, filter)
	if err != nil {
		return nil, err
	}
	h := &History{Better: map[string]int{}}
	type valuesKey struct {
		SeriesKey
		run int
	}
	values := map[valuesKey][]float64{}
	var keys []valuesKey
	for _, r := range runs {
		h.Runs = append(h.Runs, Meta(r))
	}
	joinOlderRuns(h.Runs)
	for i, m := range h.Runs {
		err := s.results(ctx, m.ID, func(name, unit string, v float64) {
			k := valuesKey{SeriesKey{Machine: m.Machine, Name: name, Unit: unit, Release: m.Release}, i}
			if m.Release {
				k.Module, k.Suite = m.Module, m.Commit
			}
			if _, ok := values[k]; !ok {
				keys = append(keys, k)
			}
			values[k] = append(values[k], v)
		})
		if err != nil {
			return nil, err
		}
		if err := s.unitLines(ctx, m.ID, h.Better); err != nil {
			return nil, err
		}
	}
	series := map[SeriesKey]*Series{}
	for _, k := range keys {
		sr := series[k.SeriesKey]
		if sr == nil {
			sr = &Series{SeriesKey: k.SeriesKey}
			series[k.SeriesKey] = sr
			h.Series = append(h.Series, sr)
		}
		sr.Points = append(sr.Points, Summarize(h.Runs[k.run], values[k]))
	}
	for _, sr := range h.Series {
		slices.SortStableFunc(sr.Points, func(a, b Point) int { return Compare(a.Run, b.Run) })
	}
	slices.SortFunc(h.Series, func(a, b *Series) int {
		return cmp.Or(cmp.Compare(a.Machine, b.Machine), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Unit, b.Unit),
			CompareBool(a.Release, b.Release), cmp.Compare(a.Module, b.Module), cmp.Compare(a.Suite, b.Suite))
	})
	return h, nil
}

// CompareBool orders false before true, for sorting.
func CompareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// Summarize is one run's point: benchmath's median of vals and its 95%
// confidence interval, or, with too few values for one (fewer than 6),
// the values' range and benchmath's reason.
func Summarize(run *RunMeta, vals []float64) Point {
	smp := benchmath.NewSample(slices.Clone(vals), &benchmath.DefaultThresholds) // NewSample sorts in place
	sum := benchmath.AssumeNothing.Summary(smp, 0.95)
	p := Point{Run: run, N: len(vals), Median: sum.Center, Lo: sum.Lo, Hi: sum.Hi, CI: true, Values: slices.Clone(vals)}
	if math.IsInf(sum.Lo, 0) || math.IsInf(sum.Hi, 0) {
		p.Lo, p.Hi, p.CI = smp.Values[0], smp.Values[len(smp.Values)-1], false
		var why []string
		for _, w := range sum.Warnings {
			why = append(why, w.Error())
		}
		p.Note = strings.Join(why, "; ")
	}
	return p
}

// results calls f with each result of run id, in the file's order.
func (s *Store) results(ctx context.Context, id int64, f func(name, unit string, v float64)) error {
	rows, err := s.db.QueryContext(ctx, `SELECT name, unit, value FROM results WHERE run_id = ? ORDER BY seq`, id)
	if err != nil {
		return fmt.Errorf("history: %s: %w", s.path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var name, unit string
		var v float64
		if err := rows.Scan(&name, &unit, &v); err != nil {
			return fmt.Errorf("history: %s: %w", s.path, err)
		}
		f(name, unit, v)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("history: %s: %w", s.path, err)
	}
	return nil
}

// unitLines reads the Unit lines of run id's file ("Unit ops/s
// better=higher") into better: the store keeps them in the raw text only.
// A later run's line wins over an earlier one's.
func (s *Store) unitLines(ctx context.Context, id int64, better map[string]int) error {
	var raw []byte
	if err := s.db.QueryRowContext(ctx, `SELECT raw FROM runs WHERE id = ?`, id).Scan(&raw); err != nil {
		return fmt.Errorf("history: %s: run %d: %w", s.path, id, err)
	}
	var lines bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if bytes.HasPrefix(sc.Bytes(), []byte("Unit ")) {
			lines.Write(sc.Bytes())
			lines.WriteByte('\n')
		}
	}
	f, err := results.Read(&lines, "units")
	if err != nil {
		return err
	}
	for _, u := range f.Units {
		if u.Key == "better" {
			switch u.Value {
			case "higher":
				better[u.OrigUnit] = 1
			case "lower":
				better[u.OrigUnit] = -1
			default:
				better[u.OrigUnit] = 0
			}
		}
	}
	return nil
}
