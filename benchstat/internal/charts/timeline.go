package charts

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/benchstat/internal/results"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// timeline is one leaf's throughput over time, as the suite writes it
// under -latency_dir (measure.WriteIntervals): its operation, engine and
// configuration, and each interval's start (s) and operations a second.
type timeline struct {
	op, engine, config string
	label              string // its line's name in its chart
	start, rate        []float64
}

// readTimeline reads one .tsv the suite wrote.
func readTimeline(path string) (timeline, error) {
	var t timeline
	f, err := os.Open(path)
	if err != nil {
		return t, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var head [2]string
	for i := range head {
		if sc.Scan() {
			head[i] = sc.Text()
		}
	}
	if !strings.HasPrefix(head[0], "# Benchmark") || head[1] != "start-s\tops/s\tp99-ns" {
		return t, fmt.Errorf("%s: not a throughput timeline (its first lines are # and the benchmark's name, then start-s, ops/s, p99-ns)", path)
	}
	t.op, t.engine, t.config = results.Split(strings.TrimPrefix(head[0], "# Benchmark"))
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) != 3 {
			return t, fmt.Errorf("%s: line %q has %d columns, want 3", path, sc.Text(), len(cols))
		}
		s, err1 := strconv.ParseFloat(cols[0], 64)
		r, err2 := strconv.ParseFloat(cols[1], 64)
		if err1 != nil || err2 != nil {
			return t, fmt.Errorf("%s: line %q: not numbers", path, sc.Text())
		}
		t.start, t.rate = append(t.start, s), append(t.rate, r)
	}
	return t, sc.Err()
}

// Timelines draws the throughput over time of the .tsv files in dir:
// one chart per question (an operation and the values of the dimensions
// every engine of it has), each leaf a line, named by its engine and its
// engine-only dimensions (block=, mode=; a second line of an engine
// dashed). It returns the files written into out, none when dir has no
// timeline.
func Timelines(dir, out string) ([]string, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.tsv"))
	if err != nil {
		return nil, err
	}
	byOp := map[string][]timeline{}
	for _, p := range paths {
		t, err := readTimeline(p)
		if err != nil {
			return nil, err
		}
		byOp[t.op] = append(byOp[t.op], t)
	}
	groups := map[string][]timeline{}
	for op, ts := range byOp {
		// The keys every leaf of op has: the question's dimensions.
		shared := map[string]int{}
		for _, t := range ts {
			for _, p := range results.SplitConfig(t.config) {
				shared[p.Key]++
			}
		}
		for _, t := range ts {
			var q, own []string
			for _, p := range results.SplitConfig(t.config) {
				if shared[p.Key] == len(ts) {
					q = append(q, p.Key+"="+p.Value)
				} else {
					own = append(own, p.Key+"="+p.Value)
				}
			}
			t.label = strings.TrimSpace(t.engine + " " + strings.Join(own, " "))
			k := op + " " + strings.Join(q, "/")
			groups[k] = append(groups[k], t)
		}
	}
	order := slices.Sorted(maps.Keys(groups))
	var files []string
	for i, k := range order {
		f, err := timelineChart(k, groups[k], filepath.Join(out, fmt.Sprintf("timeline-%d.%s", i+1, Format)))
		if err != nil {
			return files, err
		}
		files = append(files, f)
	}
	return files, nil
}

// timelineChart draws one question's timelines into name.
func timelineChart(title string, ts []timeline, name string) (string, error) {
	p := newPlot(title + ": operations a second in each interval")
	p.Legend.Left = false
	p.X.Label.Text = "s into the timed window"
	p.Y.Label.Text = "k ops/s"
	p.Y.Min = 0
	slices.SortFunc(ts, func(a, b timeline) int { return strings.Compare(a.label, b.label) })
	seen := map[string]bool{}
	var top float64
	for _, t := range ts {
		pts := make(plotter.XYs, len(t.start))
		for i := range t.start {
			pts[i] = plotter.XY{X: t.start[i], Y: t.rate[i] / 1e3}
			top = max(top, pts[i].Y)
		}
		if len(pts) == 0 {
			continue
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return "", err
		}
		l.Color = engineColor(t.engine)
		if seen[t.engine] {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		}
		seen[t.engine] = true
		p.Add(l)
		p.Legend.Add(t.label, l)
	}
	p.Y.Max = 1.3 * top // room for the legend
	return save(p, 16*vg.Centimeter, name)
}
