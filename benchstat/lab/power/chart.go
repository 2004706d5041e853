package power

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// chart draws the share of comparisons that failed the gate against the
// injected slowdown: the A/A rate at 0, the power above it, with the
// goals (at most 5% at 0, at least 80% at 5%) as dashed lines.
func chart(path string, tally map[float64]*count, pcts []float64, unit string) error {
	p := plot.New()
	p.Title.Text = "Regression gate on this machine: comparisons failed"
	p.X.Label.Text = "injected slowdown per read (% of the engine's " + unit + ")"
	p.Y.Label.Text = "comparisons that failed the gate (%)"
	p.Y.Min, p.Y.Max = 0, 100
	xy := plotter.XYs{{X: 0, Y: 100 * tally[0].rate()}}
	labels := plotter.XYLabels{XYs: plotter.XYs{xy[0]}, Labels: []string{fmt.Sprintf("A/A %d/%d", tally[0].failed, tally[0].n)}}
	for _, pc := range pcts {
		c := tally[pc]
		pt := plotter.XY{X: pc, Y: 100 * c.rate()}
		xy = append(xy, pt)
		labels.XYs = append(labels.XYs, pt)
		labels.Labels = append(labels.Labels, fmt.Sprintf("%d/%d", c.failed, c.n))
	}
	line, points, err := plotter.NewLinePoints(xy)
	if err != nil {
		return err
	}
	lbl, err := plotter.NewLabels(labels)
	if err != nil {
		return err
	}
	lbl.Offset.X, lbl.Offset.Y = vg.Points(4), vg.Points(4)
	p.Add(plotter.NewGrid(), line, points, lbl)
	xmax := pcts[len(pcts)-1]
	for _, g := range []plotter.XYs{{{X: 0, Y: 5}, {X: xmax, Y: 5}}, {{X: 0, Y: 80}, {X: xmax, Y: 80}}} {
		l, err := plotter.NewLine(g)
		if err != nil {
			return err
		}
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(l)
	}
	return p.Save(7*vg.Inch, 4*vg.Inch, path)
}
