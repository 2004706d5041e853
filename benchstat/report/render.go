package report

import (
	"bytes"
	"html/template"
	"maps"
	"slices"
	"strings"

	"github.com/kvbench/kvbench/benchstat/internal/summary"
)

// render fills the page template.
func render(res *summary.Results, sum *summary.Summary, svgs []chart) (*Page, error) {
	type cell struct{ Text, Title string }
	type row struct {
		Label string
		Cells []cell
	}
	type table struct {
		Title, Common, Rounds string
		Columns               []string
		Rows                  []row
		Notes                 []string
	}
	type kv struct{ Key, Value string }
	type fig struct {
		Name string
		SVG  template.HTML
	}
	page := &Page{}
	var tables []table
	for _, t := range sum.Tables {
		tb := table{Title: t.Title, Common: t.Common, Columns: t.Columns, Notes: t.Notes, Rounds: summary.Rounds(t)}
		for _, r := range t.Rows {
			rw := row{Label: r.Label}
			for _, c := range t.Columns {
				if x, ok := r.Cells[c]; ok {
					rw.Cells = append(rw.Cells, cell{summary.CellText(x), x.Src.String()})
				} else {
					rw.Cells = append(rw.Cells, cell{Text: "-"})
				}
			}
			tb.Rows = append(tb.Rows, rw)
		}
		tables = append(tables, tb)
		if len(tb.Rows) > 0 {
			page.Tables = append(page.Tables, t.Title)
		}
	}
	var run []kv
	for _, k := range res.RunKeys {
		run = append(run, kv{k, res.Run[k]})
	}
	var settings []kv
	for _, e := range slices.Sorted(maps.Keys(res.Settings)) {
		settings = append(settings, kv{e, res.Settings[e]})
	}
	if len(run) > 0 {
		page.Tables = append(page.Tables, "run")
	}
	if len(settings) > 0 {
		page.Tables = append(page.Tables, "settings")
	}
	var figs []fig
	for _, c := range svgs {
		figs = append(figs, fig{c.name, template.HTML(c.svg)}) // our own charts' SVG
		page.Charts = append(page.Charts, c.name)
	}
	var b bytes.Buffer
	err := pageTemplate.Execute(&b, map[string]any{
		"Name": res.Name, "Tables": tables, "Run": run, "Settings": settings, "Charts": figs,
		"Legend": summary.Legend,
	})
	page.HTML = b.Bytes()
	return page, err
}

var pageTemplate = template.Must(template.New("report").Funcs(template.FuncMap{"lower": strings.ToLower}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>kvbench report: {{.Name}}</title>
<style>
body { font-family: sans-serif; margin: 1.5em auto; max-width: 72em; padding: 0 1em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
table { border-collapse: collapse; margin: 0.4em 0; font-size: 0.9em; }
th, td { padding: 0.2em 0.7em; border-bottom: 1px solid #ddd; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
th { text-align: right; background: #f4f4f4; } th:first-child, td:first-child { text-align: left; }
table.kv td { text-align: left; overflow-wrap: anywhere; }
table.kv td:first-child { white-space: nowrap; font-family: monospace; }
table.kv { width: 100%; table-layout: fixed; } table.kv col.key { width: 12em; }
p.note, p.common { margin: 0.2em 0; font-size: 0.85em; color: #555; overflow-wrap: anywhere; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(30em, 1fr)); gap: 1em; }
figure { margin: 0; min-width: 0; } figure svg { width: 100%; height: auto; display: block; }
.scroll { overflow-x: auto; }
code { overflow-wrap: anywhere; }
</style>
</head>
<body>
<h1>kvbench report</h1>
<p>Raw results: <code>{{.Name}}</code>. {{.Legend}}.</p>
{{range .Tables}}
<section>
<h2>{{.Title}}{{if .Rounds}} ({{.Rounds}}){{end}}</h2>
{{if .Common}}<p class="common">{{.Common}}</p>{{end}}
{{if .Rows}}<div class="scroll"><table data-table="{{.Title}}">
<thead><tr><th></th>{{range .Columns}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .Rows}}<tr><td>{{.Label}}</td>{{range .Cells}}<td class="num" title="{{.Title}}">{{.Text}}</td>{{end}}</tr>
{{end}}</tbody></table></div>
{{range .Notes}}<p class="note">{{.}}</p>{{end}}
{{else}}<p>Not in these results.</p>{{end}}
</section>
{{end}}
<h2>Charts</h2>
<div class="charts">
{{range .Charts}}<figure data-chart="{{.Name}}">{{.SVG}}</figure>
{{end}}</div>
{{if .Run}}<h2>Run configuration and machine</h2>
<table class="kv" data-table="run"><colgroup><col class="key"><col></colgroup>
{{range .Run}}<tr><td>{{.Key}}</td><td>{{.Value}}</td></tr>
{{end}}</table>{{end}}
{{if .Settings}}<h2>Engine settings</h2>
<table class="kv" data-table="settings"><colgroup><col class="key"><col></colgroup>
{{range .Settings}}<tr><td>{{.Key}}</td><td>{{.Value}}</td></tr>
{{end}}</table>{{end}}
</body>
</html>
`))
