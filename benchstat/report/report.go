// Package report is kvb report: one results file as a self-contained
// HTML page: the summary's tables (benchstat/internal/summary), every
// chart of benchstat/internal/charts inlined as SVG, the run's
// configuration and machine lines and each engine's settings line. It
// needs no network to be read.
package report

import (
	"bytes"
	_ "embed"
	"flag"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/kvbench/kvbench/benchstat/internal/charts"
	"github.com/kvbench/kvbench/benchstat/internal/cli"
	"github.com/kvbench/kvbench/benchstat/internal/summary"
)

// Command is kvb report.
var Command = cli.New(cli.Spec[*string]{
	Name:    "report",
	Summary: "one results file as a self-contained HTML page: the summary's tables and every chart",
	Usage:   usage,
	Flags:   func(fs *flag.FlagSet) *string { return fs.String("o", "results/report.html", "the page to write") },
	Run:     run,
})

const usage = `usage: kvb report [-o report.html] results.txt

Writes the results file as one HTML page with no outside references: the
summary's tables, every chart inline (SVG), the run's configuration and
each engine's settings.

`

func run(c cli.Call, out *string, pos []string) int {
	if len(pos) != 1 {
		return c.Usage("give one results file, not %d", len(pos))
	}
	page, err := Build(pos[0])
	if err == nil {
		err = os.WriteFile(*out, page.HTML, 0o644)
	}
	if err != nil {
		fmt.Fprintln(c.Stderr, "kvb report:", err)
		return 1
	}
	fmt.Fprintf(c.Stderr, "kvb report: %s (%d tables, %d charts)\n", *out, len(page.Tables), len(page.Charts))
	return 0
}

// Page is a rendered report and what it must show: the data-table and
// data-chart names of its tables and charts.
type Page struct {
	HTML   []byte
	Tables []string
	Charts []string
}

// Build reads the results file at path and renders its page.
func Build(path string) (*Page, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	res, err := summary.Read(data, path)
	if err != nil {
		return nil, err
	}
	sum := summary.Build(res)
	svgs, err := drawCharts(data, path, sum)
	if err != nil {
		return nil, err
	}
	page := &Page{}
	for _, t := range sum.Tables {
		if len(t.Rows) > 0 {
			page.Tables = append(page.Tables, t.Title)
		}
	}
	if len(res.RunKeys) > 0 {
		page.Tables = append(page.Tables, "run")
	}
	if len(res.Settings) > 0 {
		page.Tables = append(page.Tables, "settings")
	}
	for _, c := range svgs {
		page.Charts = append(page.Charts, c.Name)
	}
	var b bytes.Buffer
	err = pageTemplate.Execute(&b, map[string]any{"Results": res, "Tables": sum.Tables, "Charts": svgs, "Legend": summary.Legend})
	page.HTML = b.Bytes()
	return page, err
}

//go:embed page.html
var pageHTML string

var pageTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"rounds": summary.Rounds,
	"cell": func(r summary.Row, col string) (cell struct{ Text, Title string }) {
		x, ok := r.Cells[col]
		if cell.Text = summary.CellText(x); ok {
			cell.Title = x.Src.String()
		}
		return cell
	},
}).Parse(pageHTML))

// chart is one inlined SVG.
type chart struct {
	Name string
	SVG  template.HTML // our own charts'
}

// drawCharts draws every chart of the results file (data, read from
// path) into a temporary directory and reads them back. The memory-budget
// chart, drawn from the summary's row, follows the ReadRandom throughput
// chart.
func drawCharts(data []byte, path string, sum *summary.Summary) ([]chart, error) {
	r, err := charts.ReadResults(bytes.NewReader(data), path)
	if err != nil {
		return nil, err
	}
	if len(r.Ops) == 0 {
		return nil, nil
	}
	dir, err := os.MkdirTemp("", "kvbench-report")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	files, err := charts.DrawAll(r, dir)
	if err != nil {
		return nil, err
	}
	if b, ok := charts.BudgetOf(sum); ok {
		f, err := charts.BudgetChart(b, dir)
		if err != nil {
			return nil, err
		}
		at := 1 + slices.IndexFunc(files, func(g string) bool { return filepath.Base(g) == "readrandom-ops-s."+charts.Format })
		if at == 0 {
			at = len(files)
		}
		files = slices.Insert(files, at, f)
	}
	if f, err := charts.PopulateOverTime(r, dir); err != nil {
		return nil, err
	} else if f != "" {
		files = append(files, f)
	}
	// The writes' throughput over time, which make bench writes beside
	// its results file (-latency_dir RESULTS/timeline).
	tl, err := charts.Timelines(filepath.Join(filepath.Dir(path), "timeline"), dir)
	if err != nil {
		return nil, err
	}
	files = append(files, tl...)
	var out []chart
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, chart{strings.TrimSuffix(filepath.Base(f), ".svg"), template.HTML(bytes.TrimSpace(svgProlog.ReplaceAll(b, []byte("$1"))))})
	}
	return out, nil
}

// svgProlog is what comes before the <svg> element (the XML declaration
// and a comment), which HTML does not take.
var svgProlog = regexp.MustCompile(`(?s)^.*?(<svg\b)`)
