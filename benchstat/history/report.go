package history

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/kvbench/kvbench/benchstat/internal/cli"
)

// report writes the history as one self-contained HTML page: the change
// points first, then per machine and benchmark family a chart per unit.
func report(args []string, stdout, stderr io.Writer) int {
	var labels labelFlag
	fs, hist := flags("report", &labels)
	out := fs.String("o", "results/history.html", "the page to write")
	svgDir := fs.String("svg", "", "also write each chart as DIR/<chart id>.svg (for documents)")
	commitURL := fs.String("commit_url", "", "link commits through this URL, %s for the commit (e.g. https://github.com/kvbench/kvbench/commit/%s)")
	rest, status, ok := parse(fs, args, stdout, stderr)
	if !ok {
		return status
	}
	if len(rest) > 0 {
		return cli.Usage(stderr, fs.Name(), helpOf(fs), "unexpected argument %q (filter with -label k=v)", rest[0])
	}
	if *commitURL != "" && strings.Count(*commitURL, "%s") != 1 {
		return cli.Usage(stderr, fs.Name(), helpOf(fs), "-commit_url %q needs one %%s for the commit", *commitURL)
	}
	ctx := context.Background()
	s, err := existing(ctx, *hist)
	if err != nil {
		fmt.Fprintln(stderr, "kvb history report:", err)
		return 1
	}
	defer s.Close()
	h, err := s.Load(ctx, labels)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if len(h.Runs) == 0 {
		with := ""
		if len(labels) > 0 {
			with = " with " + labels.String()
		}
		fmt.Fprintf(stderr, "kvb history report: no runs%s in %s; nothing written\n", with, s.Path())
		return 1
	}
	m := buildModel(h)
	pg, err := renderPage(h, m, s.Path(), labels.String(), *commitURL)
	if err != nil {
		fmt.Fprintln(stderr, "kvb history report:", err)
		return 1
	}
	if dir := filepath.Dir(*out); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			fmt.Fprintln(stderr, "kvb history report:", err)
			return 1
		}
	}
	if err := os.WriteFile(*out, pg.HTML, 0o644); err != nil {
		fmt.Fprintln(stderr, "kvb history report:", err)
		return 1
	}
	if *svgDir != "" {
		if err := writeSVGs(*svgDir, m); err != nil {
			fmt.Fprintln(stderr, "kvb history report:", err)
			return 1
		}
	}
	fmt.Fprintf(stdout, "history: %s (%s, %d series, %d charts, %s)\n", *out, plural(len(h.Runs), "run"), len(h.Series), len(pg.Charts), plural(len(m.changes), "change point"))
	return 0
}

// writeSVGs writes every chart of the page as a standalone SVG file named
// by its id, the page's anchor for it.
func writeSVGs(dir string, m *model) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, ms := range m.machines {
		for _, f := range ms.families {
			for _, c := range f.charts {
				if err := os.WriteFile(filepath.Join(dir, c.id+".svg"), []byte(svgChart(c)), 0o644); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
