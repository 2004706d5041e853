package history

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/kvbench/kvbench/benchstat/internal/engname"
	"github.com/kvbench/kvbench/benchstat/internal/results"
	"github.com/kvbench/kvbench/benchstat/lab/internal/changepoint"
	"github.com/kvbench/kvbench/benchstat/lab/internal/history"
)

// chartKey is one chart: a family's unit on one machine, over commits or
// over one module's releases at one suite commit. Each engine is a line
// of it.
type chartKey struct {
	machine, family, procs, unit string
	axisKey
}

// axisKey is what the charts of one x axis share: the machine, and for a
// release series the module and the suite's commit. The run drift is
// estimated over the series of one axis.
type axisKey struct {
	machine       string
	release       bool
	module, suite string
}

// chart is what one chart shows.
type chart struct {
	chartKey
	id      string
	better  int
	lines   []*line
	runs    []*history.RunMeta // the x axis: every run of any line, in x order
	changes []*changeRow       // the change points of its lines
	primary bool               // the family's headline unit: shown even when nothing changed
}

// line is one engine's series in a chart.
type line struct {
	engine string // "" for a benchmark without an engine (BenchmarkDisk)
	label  string
	series *history.Series
}

// changeRow is one change point of one line.
type changeRow struct {
	class         string // "regression", "improvement" or "change" (no known good direction)
	chart         *chart
	line          *line
	before, after float64 // the segments' medians
	delta         float64 // after/before - 1; NaN when before is 0
	p             float64
	from, to      *history.RunMeta // the last run before the change and the first after it
}

// family is a machine's charts of one benchmark family.
type family struct {
	name   string
	id     string
	charts []*chart
}

// machineSection is one machine's families.
type machineSection struct {
	name     string
	id       string
	families []*family
}

// model is the report's content, before it is drawn.
type model struct {
	machines []*machineSection
	changes  []*changeRow // regressions first, each class by size of change
	series   int
}

var procsSuffix = regexp.MustCompile(`-[0-9]+$`)

// splitName turns "BenchmarkReadRandomBolt/valsz=1024/threads=1-2" into
// the family "ReadRandom/valsz=1024/threads=1", the engine "Bolt" and the
// GOMAXPROCS suffix "-2". A benchmark without an engine (BenchmarkDisk/...)
// is its own family with no engine.
func splitName(name string) (fam, engine, procs string) {
	procs = procsSuffix.FindString(name)
	n := strings.TrimPrefix(name, "Benchmark")
	fam, engine, cfg := results.Split(n)
	if cfg != "" {
		fam += "/" + cfg
	}
	return fam, engine, procs
}

// primaryUnits are a family's headline units, the first it reports.
var primaryUnits = []string{"ops/s", "keys/s", "MB/s", "ns/op"}

// buildModel groups the series into charts, finds each line's change
// points and classifies them by the unit's good direction.
func buildModel(h *history.History) *model {
	charts := map[chartKey]*chart{}
	var order []*chart
	for _, s := range h.Series {
		fam, eng, procs := splitName(s.Name)
		k := chartKey{s.Machine, fam, procs, s.Unit, axisKey{s.Machine, s.Release, s.Module, s.Suite}}
		c := charts[k]
		if c == nil {
			c = &chart{chartKey: k, better: h.BetterOf(s.Unit)}
			charts[k] = c
			order = append(order, c)
		}
		label := eng
		if label == "" {
			label, _, _ = strings.Cut(fam, "/")
		}
		c.lines = append(c.lines, &line{engine: eng, label: label, series: s})
	}
	m := &model{series: len(h.Series)}
	drift := runDrift(order)
	order = append(order, driftCharts(order, drift)...)
	machines := map[string]*machineSection{}
	families := map[[2]string]*family{}
	for _, c := range order {
		sortLines(c.lines)
		c.runs = xAxis(c.lines)
		ms := machines[c.machine]
		if ms == nil {
			ms = &machineSection{name: c.machine, id: anchor("m", c.machine, c.machine)}
			machines[c.machine] = ms
			m.machines = append(m.machines, ms)
		}
		f := families[[2]string{c.machine, c.family}]
		if f == nil {
			f = &family{name: c.family, id: anchor("f", c.family, c.machine, c.family)}
			families[[2]string{c.machine, c.family}] = f
			ms.families = append(ms.families, f)
		}
		f.charts = append(f.charts, c)
	}
	for _, ms := range m.machines {
		slices.SortFunc(ms.families, func(a, b *family) int { return cmp.Compare(a.name, b.name) })
		for _, f := range ms.families {
			multiProcs := false
			for _, c := range f.charts {
				multiProcs = multiProcs || c.procs != f.charts[0].procs
			}
			primary := ""
			for _, u := range primaryUnits {
				if slices.ContainsFunc(f.charts, func(c *chart) bool { return c.unit == u }) {
					primary = u
					break
				}
			}
			for _, c := range f.charts {
				id := []string{c.machine, c.family, c.unit, c.module, c.suite, fmt.Sprint(c.release)}
				slug := c.family + " " + c.unit
				if c.release {
					slug += " releases"
				}
				if multiProcs {
					id = append(id, c.procs)
					slug += c.procs
				}
				c.id = anchor("c", slug, id...)
				c.primary = c.unit == primary || (primary == "" && c == f.charts[0])
				for _, l := range c.lines {
					c.changes = append(c.changes, detectChanges(c, l, drift[c.axisKey].of(l))...)
				}
				m.changes = append(m.changes, c.changes...)
			}
			slices.SortStableFunc(f.charts, func(a, b *chart) int {
				return cmp.Or(history.CompareBool(!a.primary, !b.primary), history.CompareBool(a.release, b.release),
					cmp.Compare(a.module, b.module), cmp.Compare(a.suite, b.suite), cmp.Compare(unitRank(a.unit), unitRank(b.unit)),
					cmp.Compare(a.unit, b.unit), cmp.Compare(a.procs, b.procs))
			})
		}
	}
	sortChanges(m.changes)
	return m
}

// driftFamily is the family of the charts of each machine's run drift.
const driftFamily = "Run drift (every engine)"

// driftCharts are the run drift every engine shared, per axis over
// commits, as a series of its own: the report takes each engine's drift
// out of its series, so a change that slows every engine at once (the
// harness, the machine, the kernel) shows here and nowhere else.
func driftCharts(order []*chart, drift map[axisKey]drift) []*chart {
	var out []*chart
	seen := map[axisKey]bool{}
	for _, c := range order {
		k := c.axisKey
		if seen[k] || k.release {
			continue
		}
		seen[k] = true
		d := drift[k]
		s := &history.Series{SeriesKey: history.SeriesKey{Machine: k.machine, Name: "run drift", Unit: "ns/op drift"}}
		for i, r := range d.runs {
			if d.n[i] >= changepoint.MinOthers {
				f := d.shared[i]
				s.Points = append(s.Points, history.Point{Run: r, N: d.n[i], Median: f, Lo: f, Hi: f})
			}
		}
		if len(s.Points) < 2 {
			continue
		}
		dc := &chart{chartKey: chartKey{machine: k.machine, family: driftFamily, unit: s.Unit, axisKey: k}, better: -1}
		dc.lines = []*line{{label: "every engine", series: s}}
		out = append(out, dc)
	}
	return out
}

// unitRank puts the headline units first, in their order.
func unitRank(u string) int {
	if i := slices.Index(primaryUnits, u); i >= 0 {
		return i
	}
	return len(primaryUnits)
}

// sortLines orders a chart's lines as every other chart of the suite
// does (engname.Titles), other lines after them by label.
func sortLines(ls []*line) {
	titles := engname.Titles()
	rank := func(l *line) int {
		if i := slices.Index(titles, l.engine); i >= 0 {
			return i
		}
		return len(titles)
	}
	slices.SortStableFunc(ls, func(a, b *line) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(a.label, b.label), cmp.Compare(a.series.Name, b.series.Name))
	})
}

// xAxis is every run of the chart's lines, once each, in x order.
func xAxis(ls []*line) []*history.RunMeta {
	seen := map[int64]bool{}
	var runs []*history.RunMeta
	for _, l := range ls {
		for _, p := range l.series.Points {
			if !seen[p.Run.ID] {
				seen[p.Run.ID] = true
				runs = append(runs, p.Run)
			}
		}
	}
	slices.SortFunc(runs, history.Compare)
	return runs
}

// drift is one axis's run drift: per engine a factor per run of the
// axis (changepoint.Drift), and each run's place on it.
type drift struct {
	factors map[string][]float64
	at      map[int64]int
	runs    []*history.RunMeta // the axis's runs, in x order
	shared  []float64          // every engine's drift together (changepoint.Shared)
	n       []int              // ns/op series behind each run's estimate
}

// of is the factors at each point of l, or nil when its engine has none.
func (d drift) of(l *line) []float64 {
	f, ok := d.factors[l.engine]
	if !ok || l.engine == "" {
		return nil
	}
	out := make([]float64, len(l.series.Points))
	for i, p := range l.series.Points {
		out[i] = f[d.at[p.Run.ID]]
	}
	return out
}

// runDrift estimates, per axis, how much each run was faster or slower
// in every engine at once: for each engine from the other engines' ns/op
// series on it (changepoint.Drift), which the report takes out before
// looking for change points, so that a slow run of the machine is not a
// change; and over all of them (changepoint.Shared), its own chart.
func runDrift(charts []*chart) map[axisKey]drift {
	lines := map[axisKey][]*line{}
	var keys []axisKey
	for _, c := range charts {
		if _, ok := lines[c.axisKey]; !ok {
			keys = append(keys, c.axisKey)
		}
		lines[c.axisKey] = append(lines[c.axisKey], c.lines...)
	}
	out := map[axisKey]drift{}
	for _, k := range keys {
		runs := xAxis(lines[k])
		d := drift{at: map[int64]int{}}
		for i, r := range runs {
			d.at[r.ID] = i
		}
		var samples []changepoint.Sample
		for _, l := range lines[k] {
			if l.engine == "" || l.series.Unit != "ns/op" {
				continue
			}
			pts := make([]float64, len(runs))
			for i := range pts {
				pts[i] = math.NaN()
			}
			for _, p := range l.series.Points {
				pts[d.at[p.Run.ID]] = p.Median
			}
			samples = append(samples, changepoint.Sample{Engine: l.engine, Points: pts})
		}
		d.factors = changepoint.Drift(samples, len(runs))
		d.shared = changepoint.Shared(samples, len(runs))
		d.runs = runs
		d.n = make([]int, len(runs))
		for _, smp := range samples {
			for i, x := range smp.Points {
				if !math.IsNaN(x) {
					d.n[i]++
				}
			}
		}
		out[k] = d
	}
	return out
}

// detectChanges runs benchstat/lab/internal/changepoint over the line's
// medians in x order, the run drift taken out (factors, nil for none). A
// change may start only where the code or the environment changed
// (mayChange). The seed is the series' own, so a report made twice marks
// the same points.
func detectChanges(c *chart, l *line, factors []float64) []*changeRow {
	pts := l.series.Points
	xs := make([]float64, len(pts))
	splits := make([]bool, len(pts))
	for i, p := range pts {
		xs[i] = p.Median
		splits[i] = i > 0 && mayChange(pts[i-1].Run, p.Run)
	}
	if factors != nil && changepoint.Drifts(c.unit) {
		changepoint.Correct(c.unit, xs, factors)
	}
	// A release series has one point per release, too few to split; its
	// rounds ran interleaved in one run of kvb versions, so each value is a
	// measurement of its release with the machine's drift spread over all
	// of them: the test runs on the values, a change allowed only between
	// releases.
	owner := make([]int, len(pts)) // the point a value of xs belongs to
	for i := range owner {
		owner[i] = i
	}
	if c.release {
		xs, splits, owner = xs[:0], splits[:0], owner[:0]
		for i, p := range pts {
			for j, v := range p.Values {
				xs = append(xs, v)
				splits = append(splits, j == 0 && i > 0)
				owner = append(owner, i)
			}
		}
	}
	seed := fnv.New64a()
	fmt.Fprintf(seed, "%s\x00%s\x00%s\x00%s\x00%s", c.machine, l.series.Name, c.unit, c.module, c.suite)
	var rows []*changeRow
	for _, ch := range detect(xs, splits, seed.Sum64()) {
		if ch.Index < 1 || ch.Index >= len(xs) {
			continue // not between two points
		}
		at := owner[ch.Index]
		r := &changeRow{chart: c, line: l, before: ch.Before, after: ch.After, p: ch.P,
			from: pts[at-1].Run, to: pts[at].Run, delta: math.NaN()}
		if ch.Before != 0 {
			r.delta = ch.After/ch.Before - 1
		}
		switch {
		case c.better == 0 || math.IsNaN(r.delta):
			r.class = "change"
		case float64(c.better)*r.delta < 0:
			r.class = "regression"
		default:
			r.class = "improvement"
		}
		rows = append(rows, r)
	}
	return rows
}

// mayChange says whether a change may start between two neighbouring
// runs: runs of one clean commit in one environment measure the same
// code, so only their noise differs. A run without a commit label, or
// of a dirty tree, may differ from anything.
func mayChange(a, b *history.RunMeta) bool {
	return a.Commit == "" || b.Commit == "" || a.Commit != b.Commit || a.Dirty || b.Dirty ||
		a.Version != b.Version || len(history.EnvChanges(a, b)) > 0
}

// detect finds a series' change points; a variable so that tests can
// place them where they need them.
var detect = func(xs []float64, splits []bool, seed uint64) []changepoint.Change {
	return changepoint.DetectAt(xs, splits, changepoint.Default, seed)
}

// sortChanges puts regressions first, then improvements, then changes of
// units without a good direction; within each, the largest relative
// change first.
func sortChanges(rows []*changeRow) {
	rank := map[string]int{"regression": 0, "improvement": 1, "change": 2}
	size := func(r *changeRow) float64 {
		if math.IsNaN(r.delta) {
			return math.Inf(1)
		}
		return math.Abs(r.delta)
	}
	slices.SortStableFunc(rows, func(a, b *changeRow) int {
		return cmp.Or(cmp.Compare(rank[a.class], rank[b.class]), cmp.Compare(size(b), size(a)))
	}) // ties keep the page's order: machine, family, chart, line
}

var unsafeID = regexp.MustCompile(`[^a-z0-9]+`)

// anchor is an element id: kind, the readable slug cut to 64 characters,
// and a hash of every part that tells it apart, so ids stay short and
// distinct ("c-readrandom-valsz-1024-threads-1-ns-op-fcf8b5d4").
func anchor(kind, slug string, parts ...string) string {
	h := fnv.New32a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	slug = strings.Trim(unsafeID.ReplaceAllString(strings.ToLower(slug), "-"), "-")
	if len(slug) > 64 {
		slug = strings.TrimRight(slug[:64], "-")
	}
	return fmt.Sprintf("%s-%s-%08x", kind, slug, h.Sum32())
}
