package charts

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/benchstat/internal/engname"
	"github.com/kvbench/kvbench/benchstat/internal/results"
	"github.com/kvbench/kvbench/benchstat/internal/summary"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Format is the image type written: svg, or png for slides.
var Format = "svg"

// engineColor keeps one colour per engine across every chart: the
// engine's place in the suite's order picks it.
func engineColor(engine string) color.Color {
	if i := slices.Index(engname.Titles(), engine); i >= 0 {
		return plotutil.Color(i)
	}
	return color.Gray{Y: 128}
}

// EngineHex is the engine's colour as CSS writes it ("#rrggbb"), for
// charts drawn outside gonum/plot (the lab's history report, benchstat/lab/history).
func EngineHex(engine string) string {
	r, g, b, _ := engineColor(engine).RGBA()
	return fmt.Sprintf("#%02x%02x%02x", r>>8, g>>8, b>>8)
}

// bars is one engine's bars, one per group, with whiskers. Groups sit at
// x = 0, 1, 2...; an engine's bar is offset inside its group.
type bars struct {
	sums          []summary.Stat
	scale         float64 // the values' units per axis unit
	offset, width float64 // in x data units
	color         color.Color
}

func (b *bars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for g, s := range b.sums {
		if s.N > 0 {
			x0 := float64(g) + b.offset
			drawBar(c, trX(x0), trX(x0+b.width), trY(0), trY(s.Center/b.scale), trY(s.Lo/b.scale), trY(s.Hi/b.scale), b.color, true)
		}
	}
}

// drawBar fills a bar from x0 to x1 up to y and, with whiskers, strokes
// a whisker from lo to hi at its middle.
func drawBar(c draw.Canvas, x0, x1, y0, y, lo, hi vg.Length, col color.Color, whiskers bool) {
	c.FillPolygon(col, c.ClipPolygonY([]vg.Point{{X: x0, Y: y0}, {X: x0, Y: y}, {X: x1, Y: y}, {X: x1, Y: y0}}))
	if !whiskers {
		return
	}
	xm, cap := (x0+x1)/2, (x1-x0)/4
	c.StrokeLines(draw.LineStyle{Color: color.Black, Width: vg.Points(0.8)}, c.ClipLinesY(
		[]vg.Point{{X: xm, Y: lo}, {X: xm, Y: hi}},
		[]vg.Point{{X: xm - cap, Y: lo}, {X: xm + cap, Y: lo}},
		[]vg.Point{{X: xm - cap, Y: hi}, {X: xm + cap, Y: hi}})...)
}

func (b *bars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = -0.5, float64(len(b.sums))-0.5
	for _, s := range b.sums {
		ymax = math.Max(ymax, math.Max(s.Hi, s.Center)/b.scale)
	}
	return xmin, xmax, 0, ymax
}

func (b *bars) Thumbnail(c *draw.Canvas) {
	pts := []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Min.X, Y: c.Max.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Max.X, Y: c.Min.Y}}
	c.FillPolygon(b.color, c.ClipPolygonY(pts))
}

// newPlot is a chart titled title (in 10 pt), its legend at the top left.
func newPlot(title string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(10)
	p.Legend.Top, p.Legend.Left = true, true
	return p
}

// save adds p's grid and writes it, width wide and 10 cm high, to name.
func save(p *plot.Plot, width vg.Length, name string) (string, error) {
	p.Add(plotter.NewGrid())
	return name, p.Save(width, 10*vg.Centimeter, name)
}

// prefix scales large values to k or M for readable axes.
func prefix(max float64) (float64, string) {
	switch {
	case max >= 1e6:
		return 1e6, "M "
	case max >= 1e3:
		return 1e3, "k "
	}
	return 1, ""
}

// throughputChart draws op's engines side by side for each of configs.
func throughputChart(r *Results, op string, configs []string, unit, dir string) (string, error) {
	engines := r.engines(op, unit)
	short, common := labels(configs)
	sums := map[string][]summary.Stat{}
	allCI := true
	for _, e := range engines {
		for _, c := range configs {
			var s summary.Stat
			if v := r.Values[results.Key{Op: op, Engine: e, Config: c, Unit: unit}]; len(v) > 0 {
				s = summary.Of(v)
				allCI = allCI && s.CI
			}
			sums[e] = append(sums[e], s)
		}
	}
	whiskers := "95% confidence interval of the median"
	if !allCI { // one kind of whisker per chart
		whiskers = "min-max of the runs (too few runs for a 95% interval)"
	}
	var max float64
	for _, e := range engines {
		for i, c := range configs {
			if v := r.Values[results.Key{Op: op, Engine: e, Config: c, Unit: unit}]; len(v) > 0 && !allCI {
				sums[e][i].Lo, sums[e][i].Hi = slices.Min(v), slices.Max(v)
			}
			max = math.Max(max, sums[e][i].Hi)
		}
	}
	div, pre := prefix(max)
	p := newPlot(fmt.Sprintf("%s: %s (median of runs; whiskers: %s)", op, unit, whiskers))
	if common != "" {
		p.Title.Text += "\n" + common
	}
	p.Y.Label.Text = pre + unit
	p.Y.Min = 0
	p.Y.Max = 1.3 * max / div // room for the legend above the bars
	p.NominalX(short...)
	width := 0.8 / float64(len(engines))
	for i, e := range engines {
		b := &bars{sums: sums[e], scale: div, offset: -0.4 + float64(i)*width, width: width * 0.9, color: engineColor(e)}
		p.Add(b)
		p.Legend.Add(e, b)
	}
	w := vg.Length(math.Max(16, 1.2*float64(len(configs)*len(engines)))) * vg.Centimeter
	return save(p, w, filepath.Join(dir, fileName(op, unit)+"."+Format))
}

// percentileUnit is a latency percentile's unit: p50-ns, p999-ns.
var percentileUnit = regexp.MustCompile(`^p([0-9]{1,2})([0-9]*)-ns$`)

// percentileOrder places p50-ns, p90-ns, ..., max-ns in order: p999 is
// 99.9, the digits after the first two decimals.
func percentileOrder(unit string) (float64, bool) {
	if unit == "max-ns" {
		return 100, true
	}
	m := percentileUnit.FindStringSubmatch(unit)
	if m == nil {
		return 0, false
	}
	v, _ := strconv.ParseFloat(m[1]+"."+m[2]+"0", 64)
	return v, true
}

// latencyChart draws each engine's latency percentiles for one
// sub-benchmark of op, on a log scale.
func latencyChart(r *Results, op, config, label string, units []string, dir string) (string, error) {
	p := newPlot(fmt.Sprintf("%s latency percentiles (median of runs; whiskers: range of runs)\n%s", op, strings.ReplaceAll(config, "/", " ")))
	p.Y.Label.Text = "µs (log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	names := make([]string, len(units))
	for i, u := range units {
		names[i] = strings.TrimSuffix(u, "-ns")
	}
	p.NominalX(names...)
	for _, e := range r.engines(op, units[0]) {
		var pts struct {
			plotter.XYs
			plotter.YErrors
		}
		for i, u := range units {
			v := r.Values[results.Key{Op: op, Engine: e, Config: config, Unit: u}]
			if len(v) == 0 {
				continue
			}
			s := summary.Of(v)
			lo, hi := slices.Min(v), slices.Max(v) // the range is what the title promises
			y := math.Max(s.Center/1e3, 1e-3)      // log scale: keep above 0
			pts.XYs = append(pts.XYs, plotter.XY{X: float64(i), Y: y})
			pts.YErrors = append(pts.YErrors, struct{ Low, High float64 }{y - math.Max(lo/1e3, 1e-3), hi/1e3 - y})
		}
		if len(pts.XYs) == 0 {
			continue
		}
		l, sc, err := plotter.NewLinePoints(pts.XYs)
		if err != nil {
			return "", err
		}
		l.Color, sc.Color = engineColor(e), engineColor(e)
		eb, err := plotter.NewYErrorBars(pts)
		if err != nil {
			return "", err
		}
		eb.Color = engineColor(e)
		p.Add(l, sc, eb)
		p.Legend.Add(e, l, sc)
	}
	return save(p, 16*vg.Centimeter, filepath.Join(dir, fileName(op, "latency", label)+"."+Format))
}

var unsafeName = regexp.MustCompile(`[^a-z0-9=]+`)

// fileName makes "ReadRandom", "ops/s" into "readrandom-ops-s".
func fileName(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p = strings.Trim(unsafeName.ReplaceAllString(strings.ToLower(p), "-"), "-"); p != "" {
			out = append(out, p)
		}
	}
	return strings.ReplaceAll(strings.Join(out, "-"), "=", "")
}
