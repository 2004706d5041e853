package charts

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kvbench/kvbench/benchstat/internal/results"
	"github.com/kvbench/kvbench/benchstat/internal/summary"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// phaseUnits are populate's write-loop rates over its run: in the first
// tenth of the keys and in the last. (keys/s, over the whole op, includes
// the final flush and sync, so it is no point on this line.)
var phaseUnits = []string{"first-keys/s", "last-keys/s"}

// PopulateOverTime draws each engine's populate write-loop rate over its
// run (in the first tenth of the keys and in the last; medians of the
// runs) and returns the file, or "" when the results have no populate
// rates by phase.
func PopulateOverTime(r *Results, dir string) (string, error) {
	const op = "Populate"
	if !slices.Contains(r.units(op), phaseUnits[0]) || !slices.Contains(r.units(op), phaseUnits[1]) {
		return "", nil
	}
	p := newPlot("Populate over its run: the write loop's keys/s in the first and the last tenth of the keys\n(median of runs)")
	p.Y.Label.Text = "k keys/s"
	p.Y.Min = 0
	p.NominalX("first tenth of the keys", "last tenth")
	short, _ := labels(r.Configs[op])
	var top float64
	for _, e := range r.engines(op, phaseUnits[0]) {
		for ci, c := range r.Configs[op] {
			var pts plotter.XYs
			for i, u := range phaseUnits {
				if v := r.Values[results.Key{Op: op, Engine: e, Config: c, Unit: u}]; len(v) > 0 {
					y := summary.Of(v).Center / 1e3
					pts = append(pts, plotter.XY{X: float64(i), Y: y})
					top = max(top, y)
				}
			}
			if len(pts) < 2 {
				continue
			}
			l, sc, err := plotter.NewLinePoints(pts)
			if err != nil {
				return "", err
			}
			l.Color, sc.Color = engineColor(e), engineColor(e)
			if ci > 0 {
				l.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
			}
			p.Add(l, sc)
			name := e
			if len(r.Configs[op]) > 1 {
				name = strings.TrimSpace(fmt.Sprintf("%s %s", e, short[ci]))
			}
			p.Legend.Add(name, l, sc)
		}
	}
	p.Y.Max = 1.4 * top // room for the legend
	return save(p, 16*vg.Centimeter, filepath.Join(dir, "populate-over-time."+Format))
}
