package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kvbench/kvbench/benchstat/internal/history"
)

// historyPath is the store the sides are recorded in.
func (c *comparison) historyPath() (string, error) {
	if c.args.history != "" {
		return c.args.history, nil
	}
	return history.DefaultPath()
}

// record adds each side's results of each mode to the history store
// (docs/history.md), labelled with its role, ref, commit and mode. A
// failure to record is reported; it never changes the gate's verdict.
func (c *comparison) record(ctx context.Context) {
	path, err := c.historyPath()
	if err != nil {
		c.logf("not recorded in the history store: %v", err)
		return
	}
	s, err := history.Open(ctx, path)
	if err != nil {
		c.logf("not recorded in the history store: %v", err)
		return
	}
	defer s.Close()
	var done []string
	for _, m := range c.args.modes() {
		for _, sd := range c.sides() {
			file := filepath.Join(c.args.out, c.prefix(m)+sd.role+".txt")
			raw, err := os.ReadFile(file)
			if err == nil {
				var f *history.File
				if f, err = history.Parse(file, raw); err == nil {
					var a history.Added
					a, err = s.Add(ctx, []*history.File{f}, c.labels(sd, m))
					if err == nil {
						done = append(done, fmt.Sprintf("%s (run %d)", filepath.Base(file), a.Runs[0]))
					}
				}
			}
			if err != nil {
				c.logf("%s was not recorded in the history store: %v", file, err)
			}
		}
	}
	if len(done) > 0 {
		c.logf("recorded %s in the history store %s", strings.Join(done, ", "), s.Path())
	}
}

// labels are a side's history labels, as compare.sh gave them: commit is
// the commit a ref names, else the spec itself (a module version, a
// binary), and the commit's date only when there is a commit.
func (c *comparison) labels(s *side, mode string) []history.Label {
	l := []history.Label{{Key: "role", Value: s.role}, {Key: "ref", Value: s.spec}, {Key: "mode", Value: mode}}
	commit := s.commit
	if commit == "" {
		commit = s.spec
	}
	l = append(l, history.Label{Key: "commit", Value: commit})
	if s.commit != "" {
		if d, err := git(context.Background(), c.repo, "show", "-s", "--format=%cI", s.commit); err == nil {
			l = append(l, history.Label{Key: "commit-date", Value: d})
		}
	}
	l = append(l, history.Label{Key: "date", Value: c.started})
	if c.args.module != "" {
		l = append(l, history.Label{Key: "module", Value: c.args.module})
		if c.suiteCommit != "" {
			l = append(l, history.Label{Key: "kvbench-commit", Value: c.suiteCommit})
		}
	}
	return l
}
