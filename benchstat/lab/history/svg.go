package history

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/benchstat/internal/charts"
	"github.com/kvbench/kvbench/benchstat/internal/summary"
	"github.com/kvbench/kvbench/benchstat/lab/internal/history"
)

// The chart's frame, in SVG user units (the page scales it to its box).
const (
	svgW, svgH   = 560.0, 260.0
	padL, padR   = 48.0, 14.0
	padT, padB   = 46.0, 30.0
	plotW, plotH = svgW - padL - padR, svgH - padT - padB
	charW        = 0.62 // a sans-serif glyph's width, in ems, generously
)

// Colours of the marks: the report's palette leaves red and green to
// the bars' engines, so the marks take darker tones.
const (
	regressionColor  = "#b2182b"
	improvementColor = "#1b7837"
	changeColor      = "#5e3c99"
	envColor         = "#777"
)

// svgChart draws c: each line as a percentage of its first point's
// median, each point's interval as a vertical bar, each environment
// change as a dashed line, each change point as a solid one.
func svgChart(c *chart) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %g %g" role="img" font-family="sans-serif">`, svgW, svgH)
	title := c.unit
	switch c.better {
	case 1:
		title += ", higher is better"
	case -1:
		title += ", lower is better"
	}
	if c.release {
		title += " (releases)"
	}
	fmt.Fprintf(&b, `<text x="%g" y="14" style="font-size:12px;font-weight:bold">%s</text>`, padL, esc(fit(title, svgW-padL-padR, 12)))
	legend(&b, c.lines)

	// x: one slot per run.
	n := len(c.runs)
	slot := plotW / float64(max(n, 1))
	xOf := map[int64]float64{}
	for i, r := range c.runs {
		xOf[r.ID] = padL + (float64(i)+0.5)*slot
	}

	// y: percent of each line's first (non-zero) median.
	base := map[*line]float64{}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, l := range c.lines {
		base[l] = firstNonZero(l.series.Points)
		for _, p := range l.series.Points {
			for _, v := range []float64{p.Lo, p.Hi, p.Median} {
				y := pct(v, base[l])
				lo, hi = math.Min(lo, y), math.Max(hi, y)
			}
		}
	}
	ticks := niceTicks(lo, hi)
	ylo, yhi := ticks[0], ticks[len(ticks)-1]
	yOf := func(v float64) float64 { return padT + plotH - (v-ylo)/(yhi-ylo)*plotH }

	// Grid, axes and their labels.
	for _, t := range ticks {
		y := yOf(t)
		fmt.Fprintf(&b, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#e4e4e4"/>`, padL, y, padL+plotW, y)
		fmt.Fprintf(&b, `<text x="%g" y="%.1f" text-anchor="end" style="font-size:10px">%s%%</text>`, padL-4, y+3.5, trimFloat(t))
	}
	fmt.Fprintf(&b, `<text transform="translate(11 %g) rotate(-90)" text-anchor="middle" style="font-size:10px">%% of first point</text>`, padT+plotH/2)
	fmt.Fprintf(&b, `<rect x="%g" y="%g" width="%g" height="%g" fill="none" stroke="#999"/>`, padL, padT, plotW, plotH)
	step := int(math.Ceil(float64(n) / math.Max(1, math.Floor(plotW/64))))
	for i := 0; i < n; i += step {
		r := c.runs[i]
		fmt.Fprintf(&b, `<text x="%.1f" y="%g" text-anchor="middle" style="font-size:9px">%s<title>%s</title></text>`,
			xOf[r.ID], padT+plotH+12, esc(fit(r.XLabel(), math.Min(slot*float64(step), 64)-4, 9)), esc(runText(r)))
	}
	xCaption := "commit order"
	if c.release {
		xCaption = "version of " + c.module + " (semver order)"
		if c.suite != "" {
			xCaption += ", suite at " + history.ShortCommit(c.suite)
		}
	}
	fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="middle" style="font-size:9px;fill:#555">%s</text>`, padL+plotW/2, svgH-4, esc(fit(xCaption, plotW, 9)))

	// Environment changes between neighbouring runs of the axis.
	for i := 1; i < n; i++ {
		chs := history.EnvChanges(c.runs[i-1], c.runs[i])
		if len(chs) == 0 {
			continue
		}
		x := padL + float64(i)*slot
		var short, full []string
		for _, ch := range chs {
			short = append(short, ch.Short())
			full = append(full, ch.String())
		}
		label := short[0]
		if len(short) > 1 {
			label += fmt.Sprintf(" +%d", len(short)-1)
		}
		fmt.Fprintf(&b, `<g class="env"><title>environment change: %s</title><line x1="%.1f" y1="%g" x2="%.1f" y2="%g" stroke="%s" stroke-dasharray="4 3"/>`,
			esc(strings.Join(full, "; ")), x, padT, x, padT+plotH, envColor)
		fmt.Fprintf(&b, `<text transform="translate(%.1f %g) rotate(90)" style="font-size:9px;fill:%s">%s</text></g>`,
			x+3, padT+3, envColor, esc(fit(label, plotH-6, 9)))
	}

	// Change points, before the lines so the points stay on top.
	for _, ch := range c.changes {
		x := xOf[ch.to.ID] - slot/2
		fmt.Fprintf(&b, `<g class="change"><title>%s</title><line x1="%.1f" y1="%g" x2="%.1f" y2="%g" stroke="%s" stroke-width="2" opacity="0.7"/>`,
			esc(changeText(ch)), x, padT, x, padT+plotH, classColor(ch.class))
		fmt.Fprintf(&b, `<path d="M%.1f %g l-5 -7 h10 z" fill="%s"/></g>`, x, padT, classColor(ch.class))
	}

	for _, l := range c.lines {
		// The line's colour once, on its group: every point inherits it.
		col := charts.EngineHex(l.engine)
		fmt.Fprintf(&b, `<g stroke="%s" fill="%s">`, col, col)
		var pts []string
		for _, p := range l.series.Points {
			pts = append(pts, num(xOf[p.Run.ID])+","+num(yOf(pct(p.Median, base[l]))))
		}
		fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke-width="1.5"/>`, strings.Join(pts, " "))
		for _, p := range l.series.Points {
			x := num(xOf[p.Run.ID])
			fmt.Fprintf(&b, `<g><title>%s</title><path d="M%s %sV%s" opacity=".6"/><circle cx="%s" cy="%s" r="2"/></g>`,
				esc(pointText(l, p)), x, num(yOf(pct(p.Lo, base[l]))), num(yOf(pct(p.Hi, base[l]))), x, num(yOf(pct(p.Median, base[l]))))
		}
		b.WriteString(`</g>`)
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// legend writes the lines' names across the top, wrapping to a second
// row when they do not fit in one.
func legend(b *strings.Builder, ls []*line) {
	x, y := padL, 30.0
	for _, l := range ls {
		w := 16 + float64(len(l.label))*10*charW + 10
		if x+w > svgW-padR && x > padL {
			x, y = padL, y+11
		}
		fmt.Fprintf(b, `<rect x="%g" y="%g" width="12" height="4" fill="%s"/>`, x, y-5, charts.EngineHex(l.engine))
		fmt.Fprintf(b, `<text x="%g" y="%g" style="font-size:10px">%s</text>`, x+16, y, esc(l.label))
		x += w
	}
}

func firstNonZero(ps []history.Point) float64 {
	for _, p := range ps {
		if p.Median != 0 {
			return p.Median
		}
	}
	return 0
}

// pct is v in percent of base; a line whose medians are zero throughout
// sits at 100 % (its tooltips give the values).
func pct(v, base float64) float64 {
	if base == 0 {
		return 100
	}
	return 100 * v / base
}

// niceTicks covers lo..hi with 4 to 8 round ticks.
func niceTicks(lo, hi float64) []float64 {
	if math.IsNaN(lo) || math.IsInf(lo, 0) || math.IsNaN(hi) || math.IsInf(hi, 0) {
		lo, hi = 90, 110
	}
	if hi-lo < 2 { // a flat line: show it among ±2 %
		mid := (lo + hi) / 2
		lo, hi = mid-2, mid+2
	}
	raw := (hi - lo) / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag * 10
	for _, f := range []float64{1, 2, 2.5, 5, 10} {
		if f*mag >= raw {
			step = f * mag
			break
		}
	}
	var ticks []float64
	for t := math.Floor(lo/step) * step; t < hi+step*0.999; t += step {
		ticks = append(ticks, math.Round(t/step)*step)
	}
	return ticks
}

// num is a coordinate to a tenth of a unit, in as few characters as
// that takes: the page holds thousands of them.
func num(v float64) string {
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
}

func trimFloat(v float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"), ".")
}

// fit cuts s to what width user units hold at size, with an ellipsis.
func fit(s string, width, size float64) string {
	n := int(width / (size * charW))
	r := []rune(s)
	if len(r) <= n || n < 2 {
		return s
	}
	return string(r[:n-1]) + "…"
}

func classColor(class string) string {
	switch class {
	case "regression":
		return regressionColor
	case "improvement":
		return improvementColor
	}
	return changeColor
}

func esc(s string) string { return html.EscapeString(s) }

// pointText is a point's tooltip: the median and its interval in the
// unit, the run, its commit or version, date and environment.
func pointText(l *line, p history.Point) string {
	u := l.series.Unit
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s %s, median of %d\n", l.label, summary.Number(p.Median), u, p.N)
	if p.CI {
		fmt.Fprintf(&b, "bar: 95%% confidence interval %s to %s\n", summary.Number(p.Lo), summary.Number(p.Hi))
	} else {
		fmt.Fprintf(&b, "bar: min to max %s to %s (%d values: no 95%% interval)\n", summary.Number(p.Lo), summary.Number(p.Hi), p.N)
	}
	b.WriteString(runText(p.Run))
	if env := envText(p.Run, l.engine); env != "" {
		b.WriteString("\n" + env)
	}
	return b.String()
}

// runText names a run: id, commit or version, date.
func runText(r *history.RunMeta) string {
	s := fmt.Sprintf("run %d", r.ID)
	if r.Release {
		s += " · " + r.Module + " " + r.Version
	}
	if r.Commit != "" {
		s += " · commit " + history.ShortCommit(r.Commit)
		if r.Dirty {
			s += "+dirty"
		}
	}
	if !r.CommitTime.IsZero() {
		s += " of " + r.CommitTime.UTC().Format("2006-01-02 15:04")
	}
	return s + " · ran " + r.Time.UTC().Format("2006-01-02 15:04") + " UTC"
}

// envText is the environment that bears on one engine's line: Go, the
// kernel, the engine's own version (and RocksDB's library for RocksDB),
// and the module under test.
func envText(r *history.RunMeta, engine string) string {
	var parts []string
	for _, l := range r.Env {
		switch {
		case l.Key == "go", l.Key == "module", l.Key == "version":
			parts = append(parts, l.Value)
		case l.Key == "kernel":
			parts = append(parts, l.Value)
		case l.Key == "rocksdb-lib" && engine == "RocksDB":
			parts = append(parts, "librocksdb "+l.Value)
		case engine != "" && strings.EqualFold(l.Key, "engine-"+engine):
			parts = append(parts, l.Value)
		}
	}
	return strings.Join(parts, " · ")
}

// changeText is a change point's tooltip.
func changeText(ch *changeRow) string {
	return fmt.Sprintf("%s %s: %s → %s %s (%s, p=%.2g), between %s and %s",
		ch.line.label, ch.class, summary.Number(ch.before), summary.Number(ch.after), ch.chart.unit,
		deltaText(ch.delta), ch.p, ch.from.XLabel(), ch.to.XLabel())
}

func deltaText(d float64) string {
	if math.IsNaN(d) {
		return "from 0"
	}
	return fmt.Sprintf("%+.1f%%", 100*d)
}
