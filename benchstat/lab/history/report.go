package history

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kvbench/kvbench/benchstat/internal/cli"
)

// reportFlags are report's flags.
type reportFlags struct {
	dbFlags
	out, svgDir, commitURL string
}

func reportFlagsOf(fs *flag.FlagSet) *reportFlags {
	r := &reportFlags{}
	r.declare(fs, true)
	fs.StringVar(&r.out, "o", "results/history.html", "the page to write")
	fs.StringVar(&r.svgDir, "svg", "", "also write each chart as DIR/<chart id>.svg (for documents)")
	fs.StringVar(&r.commitURL, "commit_url", "", "link commits through this URL, %s for the commit (e.g. https://github.com/kvbench/kvbench/commit/%s)")
	return r
}

// report writes the history as one self-contained HTML page: the change
// points first, then per machine and benchmark family a chart per unit.
func report(c cli.Call, f *reportFlags, rest []string) int {
	if len(rest) > 0 {
		return c.Usage("unexpected argument %q (filter with -label k=v)", rest[0])
	}
	if f.commitURL != "" && strings.Count(f.commitURL, "%s") != 1 {
		return c.Usage("-commit_url %q needs one %%s for the commit", f.commitURL)
	}
	ctx := context.Background()
	s, err := existing(ctx, f.path)
	if err != nil {
		fmt.Fprintln(c.Stderr, "kvb history report:", err)
		return 1
	}
	defer s.Close()
	h, err := s.Load(ctx, f.labels)
	if err != nil {
		fmt.Fprintln(c.Stderr, err)
		return 1
	}
	if len(h.Runs) == 0 {
		with := ""
		if len(f.labels) > 0 {
			with = " with " + f.labels.String()
		}
		fmt.Fprintf(c.Stderr, "kvb history report: no runs%s in %s; nothing written\n", with, s.Path())
		return 1
	}
	m := buildModel(h)
	pg, err := renderPage(h, m, s.Path(), f.labels.String(), f.commitURL)
	if err != nil {
		fmt.Fprintln(c.Stderr, "kvb history report:", err)
		return 1
	}
	if dir := filepath.Dir(f.out); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			fmt.Fprintln(c.Stderr, "kvb history report:", err)
			return 1
		}
	}
	if err := os.WriteFile(f.out, pg.HTML, 0o644); err != nil {
		fmt.Fprintln(c.Stderr, "kvb history report:", err)
		return 1
	}
	if f.svgDir != "" {
		if err := writeSVGs(f.svgDir, m); err != nil {
			fmt.Fprintln(c.Stderr, "kvb history report:", err)
			return 1
		}
	}
	fmt.Fprintf(c.Stdout, "history: %s (%s, %d series, %d charts, %s)\n", f.out, plural(len(h.Runs), "run"), len(h.Series), len(pg.Charts), plural(len(m.changes), "change point"))
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
