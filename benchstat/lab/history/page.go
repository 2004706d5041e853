package history

import (
	"bytes"
	"fmt"
	"html/template"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/benchstat/internal/summary"
	"github.com/kvbench/kvbench/benchstat/lab/internal/history"
)

// page is a rendered report and what it must show: the data-table and
// data-chart names of its tables and charts, for the tests.
type page struct {
	HTML   []byte
	Tables []string
	Charts []string
}

type link struct{ Text, Href string } // no Href: plain text

type changeView struct {
	Class, Machine, Family, Engine, Unit string
	Before, After, Delta, P              string
	From, To                             link
	Chart                                string
}

type chartView struct {
	ID  string
	SVG template.HTML
}

type familyView struct {
	Name, ID   string
	Shown      []chartView
	Quiet      []chartView
	QuietUnits string
}

type machineView struct {
	Name, ID string
	Families []familyView
}

// renderPage draws every chart and fills the page template.
func renderPage(h *history.History, m *model, store, filter, commitURL string) (*page, error) {
	p := &page{}
	data := map[string]any{
		"Store": store, "Filter": filter, "Runs": len(h.Runs), "Machines": len(m.machines), "Series": m.series,
	}
	var changes, regressions []changeView
	for _, r := range m.changes {
		cv := changeView{
			Class: r.class, Machine: r.chart.machine, Family: r.chart.family, Engine: r.line.label, Unit: r.chart.unit,
			Before: summary.Number(r.before), After: summary.Number(r.after), Delta: deltaText(r.delta),
			P: pText(r.p), From: runLink(r.from, commitURL), To: runLink(r.to, commitURL), Chart: r.chart.id,
		}
		changes = append(changes, cv)
		if r.class == "regression" {
			regressions = append(regressions, cv)
		}
	}
	if len(changes) > 0 {
		p.Tables = append(p.Tables, "changes")
	}
	var machines []machineView
	charts := 0
	for _, ms := range m.machines {
		mv := machineView{Name: ms.name, ID: ms.id}
		for _, f := range ms.families {
			fv := familyView{Name: f.name, ID: f.id}
			var quiet []string
			for _, c := range f.charts {
				cv := chartView{ID: c.id, SVG: template.HTML(svgChart(c))} // our own SVG, its text escaped
				p.Charts = append(p.Charts, c.id)
				charts++
				if c.primary || len(c.changes) > 0 {
					fv.Shown = append(fv.Shown, cv)
				} else {
					fv.Quiet = append(fv.Quiet, cv)
					quiet = append(quiet, c.unit)
				}
			}
			fv.QuietUnits = strings.Join(dedup(quiet), ", ")
			mv.Families = append(mv.Families, fv)
		}
		machines = append(machines, mv)
	}
	data["Charts"] = charts
	data["Changes"] = changes
	data["Regressions"] = regressions
	data["MachineList"] = machines
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, data); err != nil {
		return nil, err
	}
	p.HTML = b.Bytes()
	return p, nil
}

// dedup keeps the first of each string, in order.
func dedup(s []string) []string {
	var out []string
	for _, x := range s {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

func pText(p float64) string {
	if math.IsNaN(p) {
		return "-"
	}
	return strconv.FormatFloat(p, 'g', 2, 64) // 0.0002 with 4,999 shuffles, not 0.000
}

// runLink is a run's commit (linked through -commit_url when given) or,
// in a release series, its version, linked to pkg.go.dev.
func runLink(r *history.RunMeta, commitURL string) link {
	switch {
	case r.Release && r.Module != "":
		return link{r.Version, "https://pkg.go.dev/" + r.Module + "@" + r.Version}
	case r.Release:
		return link{Text: r.Version}
	case r.Commit == "":
		return link{Text: fmt.Sprintf("run %d", r.ID)}
	}
	l := link{Text: history.ShortCommit(r.Commit)}
	if r.Dirty {
		l.Text += "+dirty"
	}
	if commitURL != "" {
		l.Href = fmt.Sprintf(commitURL, r.Commit)
	}
	return l
}

var pageTemplate = template.Must(template.New("history").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>kvbench history</title>
<style>
body { font-family: sans-serif; margin: 1.5em auto; max-width: 72em; padding: 0 1em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; } h3 { font-size: 1em; margin: 1.2em 0 0.4em; overflow-wrap: anywhere; }
table { border-collapse: collapse; margin: 0.4em 0; font-size: 0.85em; width: 100%; }
th, td { padding: 0.2em 0.5em; border-bottom: 1px solid #ddd; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.wrap { overflow-wrap: anywhere; }
tr.regression td.delta { color: #b2182b; font-weight: bold; }
tr.improvement td.delta { color: #1b7837; font-weight: bold; }
tr.change td.delta { color: #5e3c99; }
p.note { margin: 0.2em 0; font-size: 0.85em; color: #555; overflow-wrap: anywhere; }
ul.links { font-size: 0.9em; padding-left: 1.2em; } ul.links li { overflow-wrap: anywhere; }
nav.families { font-size: 0.85em; line-height: 1.6; overflow-wrap: anywhere; }
nav.families a { margin-right: 0.8em; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(30em, 1fr)); gap: 1em; }
figure { margin: 0; min-width: 0; } figure svg { width: 100%; height: auto; display: block; }
details { margin: 0.4em 0; } summary { cursor: pointer; font-size: 0.9em; color: #444; overflow-wrap: anywhere; }
code { overflow-wrap: anywhere; }
</style>
</head>
<body>
<h1>kvbench history</h1>
<p>Store: <code>{{.Store}}</code>. Runs: {{if .Filter}}those with <code>{{.Filter}}</code>{{else}}every run{{end}}.
{{.Runs}} runs, {{.Machines}} machine{{if ne .Machines 1}}s{{end}}, {{.Series}} series, {{.Charts}} charts.</p>
<p class="note">A point is one run: the median of its values, its bar the 95% confidence interval of the median (benchmath), or the values' min to max when a run has too few for one (the tooltip says which). Each line is in percent of its first point. A dashed line marks a change of environment (Go, kernel, an engine's version); a solid one with a triangle, a change point (benchstat/internal/changepoint, over the medians with the run's drift across every engine taken out). Hover a point, mark or label for its values.</p>

<h2>Change points</h2>
{{if .Regressions}}<p>Regressions only:</p>
<ul class="links">{{range .Regressions}}<li><a href="#{{.Chart}}">{{.Engine}} {{.Family}} {{.Unit}} {{.Delta}}</a>{{if ne $.Machines 1}} on {{.Machine}}{{end}}</li>
{{end}}</ul>{{end}}
{{if .Changes}}<table data-table="changes">
<thead><tr><th>machine</th><th>family</th><th>engine</th><th>unit</th><th title="medians of the segments either side, the run's drift taken out">before → after</th><th>change</th><th>p</th><th>last before</th><th>first after</th><th>chart</th></tr></thead>
<tbody>{{range .Changes}}<tr class="{{.Class}}"><td class="wrap">{{.Machine}}</td><td class="wrap">{{.Family}}</td><td>{{.Engine}}</td><td>{{.Unit}}</td>
<td class="num">{{.Before}} → {{.After}}</td><td class="num delta" title="{{.Class}}">{{.Delta}}</td><td class="num">{{.P}}</td>
<td>{{with .From}}{{if .Href}}<a href="{{.Href}}">{{.Text}}</a>{{else}}{{.Text}}{{end}}{{end}}</td>
<td>{{with .To}}{{if .Href}}<a href="{{.Href}}">{{.Text}}</a>{{else}}{{.Text}}{{end}}{{end}}</td>
<td><a href="#{{.Chart}}">chart</a></td></tr>
{{end}}</tbody></table>
{{else}}<p>None: no series has a change point.</p>{{end}}

<h2>Machines</h2>
<ul class="links">{{range .MachineList}}<li><a href="#{{.ID}}">{{.Name}}</a> ({{len .Families}} families)</li>
{{end}}</ul>
{{range .MachineList}}
<section id="{{.ID}}">
<h2>{{.Name}}</h2>
<nav class="families">{{range .Families}}<a href="#{{.ID}}">{{.Name}}</a> {{end}}</nav>
{{range .Families}}
<h3 id="{{.ID}}">{{.Name}}</h3>
<div class="charts">
{{range .Shown}}<figure id="{{.ID}}" data-chart="{{.ID}}">{{.SVG}}</figure>
{{end}}</div>
{{if .Quiet}}<details><summary>{{len .Quiet}} more without a change point: {{.QuietUnits}}</summary>
<div class="charts">
{{range .Quiet}}<figure id="{{.ID}}" data-chart="{{.ID}}">{{.SVG}}</figure>
{{end}}</div></details>{{end}}
{{end}}
</section>
{{end}}
</body>
</html>
`))
