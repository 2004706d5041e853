package charts

import (
	"image/color"
	"math"
	"path/filepath"

	ksummary "github.com/kvbench/kvbench/benchstat/internal/summary"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// BudgetFile is the budget chart's file name, without the extension.
const BudgetFile = "readrandom-mem-budget"

var noResultGray = color.Gray{Y: 110}

// budgetPlot is the budget chart and what its axis was scaled to.
type budgetPlot struct {
	*plot.Plot
	scale float64 // ops/s per axis unit
	ref   float64 // the disk line's height in ops/s; 0: no line
}

// BudgetChart draws b on an axis of its own, the disk's one-thread 4 KiB
// random reads as a labelled line across it, and returns the file.
func BudgetChart(b Budget, dir string) (string, error) {
	w := vg.Length(math.Max(16, 1.7*(budgetXMax(b)+0.5))) * vg.Centimeter
	name := filepath.Join(dir, BudgetFile+"."+Format)
	return name, drawBudget(b).Save(w, 10*vg.Centimeter, name)
}

// slot is the x of engine i's bar in group g: the groups' bars side by
// side, one empty slot between groups.
func slot(b Budget, g, i int) float64 { return float64(g*(len(b.Engines)+1) + i) }

// budgetXMax is the right end of the x range: past the last bar, room
// for the disk line's tag.
func budgetXMax(b Budget) float64 {
	last := slot(b, len(b.Groups)-1, len(b.Engines)-1)
	if b.Disk != nil {
		return last + 1.5
	}
	return last + 0.5
}

func drawBudget(b Budget) budgetPlot {
	var top float64
	anyRounds := false
	for _, e := range b.Engines {
		for _, s := range b.Ops[e] {
			if s.N > 0 {
				top = math.Max(top, math.Max(s.Center, s.Hi))
				anyRounds = anyRounds || s.N > 1
			}
		}
	}
	var ref float64
	if b.Disk != nil {
		ref = b.Disk.Center
		top = math.Max(top, ref)
	}
	div, pre := prefix(top)
	p := newPlot(b.Title + "\n")
	if b.Common != "" {
		p.Title.Text += b.Common + "; "
	}
	p.Title.Text += "median of the rounds"
	if anyRounds {
		p.Title.Text += "; whiskers: its 95% CI with 6 or more rounds, else the range"
	}
	if b.Disk == nil {
		p.Title.Text += "\nno disk line: the results have no BenchmarkDisk op=randread-4k at threads=1"
	}
	p.Y.Label.Text = pre + "ops/s"
	p.Y.Min = 0
	p.Y.Max = 1
	if top > 0 {
		p.Y.Max = 1.35 * top / div // room for the legend and the value labels
	}
	p.X.Tick.Marker = budgetTicks(b)
	p.X.Tick.Width, p.X.Tick.Length, p.X.Width = 0, 0, 0
	label := p.X.Tick.Label
	label.Font.Size = vg.Points(8)
	p.Add(&budgetBars{b: b, scale: div, text: label})
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	if b.Disk != nil {
		l := &refLine{y: ref / div, xmin: -0.5, xmax: budgetXMax(b), tag: "disk " + ksummary.Number(ref), text: label,
			line: draw.LineStyle{Color: color.Gray{Y: 40}, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}}
		p.Add(l)
		p.Legend.Add("disk's own 4 KiB random reads, 1 thread (BenchmarkDisk): "+ksummary.Number(ref)+" ops/s", l)
	}
	return budgetPlot{Plot: p, scale: div, ref: ref}
}

// budgetTicks names each bar's engine under it and, when there are
// several groups, each group once on a second line under its middle.
func budgetTicks(b Budget) plot.ConstantTicks {
	var ticks []plot.Tick
	for g, group := range b.Groups {
		for i, e := range b.Engines {
			ticks = append(ticks, plot.Tick{Value: slot(b, g, i), Label: e})
		}
		if len(b.Groups) > 1 {
			mid := (slot(b, g, 0) + slot(b, g, len(b.Engines)-1)) / 2
			ticks = append(ticks, plot.Tick{Value: mid, Label: "\n" + group})
		}
	}
	return ticks
}

// budgetBars draws each engine's bar in each group, its median printed
// above it, or "no result" where the summary has the engine but no
// figure.
type budgetBars struct {
	b     Budget
	scale float64
	text  draw.TextStyle
}

func (bb *budgetBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for i, e := range bb.b.Engines {
		for g, s := range bb.b.Ops[e] {
			x := slot(bb.b, g, i)
			if s.N == 0 {
				st := bb.text
				st.Color, st.Rotation, st.XAlign, st.YAlign = noResultGray, math.Pi/2, draw.XLeft, draw.YCenter
				c.FillText(st, vg.Point{X: trX(x), Y: trY(0) + vg.Points(4)}, "no result")
				continue
			}
			drawBar(c, trX(x-0.35), trX(x+0.35), trY(0), trY(s.Center/bb.scale), trY(s.Lo/bb.scale), trY(s.Hi/bb.scale), engineColor(e), s.N > 1)
			above := s.Center
			if s.N > 1 {
				above = math.Max(above, s.Hi)
			}
			st := bb.text
			st.XAlign, st.YAlign = draw.XCenter, draw.YBottom
			c.FillText(st, vg.Point{X: trX(x), Y: trY(above/bb.scale) + vg.Points(2)}, ksummary.Number(s.Center))
		}
	}
}

func (bb *budgetBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	return -0.5, budgetXMax(bb.b), 0, 0 // the y axis is set by drawBudget
}

// refLine is a dashed horizontal line across the chart, tagged at its
// right end.
type refLine struct {
	y, xmin, xmax float64
	tag           string
	line          draw.LineStyle
	text          draw.TextStyle
}

func (l *refLine) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	y := trY(l.y)
	c.StrokeLine2(l.line, trX(l.xmin), y, trX(l.xmax), y)
	st := l.text
	st.XAlign, st.YAlign = draw.XRight, draw.YBottom
	c.FillText(st, vg.Point{X: trX(l.xmax) - vg.Points(2), Y: y + vg.Points(2)}, l.tag)
}

func (l *refLine) DataRange() (xmin, xmax, ymin, ymax float64) {
	return l.xmin, l.xmax, l.y, l.y
}

func (l *refLine) Thumbnail(c *draw.Canvas) {
	y := (c.Min.Y + c.Max.Y) / 2
	c.StrokeLine2(l.line, c.Min.X, y, c.Max.X, y)
}
