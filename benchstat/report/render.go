package report

import (
	"bytes"
	_ "embed"
	"html/template"

	"github.com/kvbench/kvbench/benchstat/internal/summary"
)

// render fills the page template.
func render(res *summary.Results, sum *summary.Summary, svgs []chart) (*Page, error) {
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
	err := pageTemplate.Execute(&b, map[string]any{"Results": res, "Tables": sum.Tables, "Charts": svgs, "Legend": summary.Legend})
	page.HTML = b.Bytes()
	return page, err
}

//go:embed page.html
var pageHTML string

var pageTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"rounds": summary.Rounds,
	"cell": func(r summary.Row, col string) (cell struct{ Text, Title string }) {
		x, ok := r.Cells[col]
		if !ok {
			cell.Text = "-"
			return cell
		}
		cell.Text, cell.Title = summary.CellText(x), x.Src.String()
		return cell
	},
}).Parse(pageHTML))
