package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kvbench/kvbench/benchstat/internal/history"
)

// historyPath is the store results are recorded in: path, else the
// default.
func historyPath(path string) (string, error) {
	if path != "" {
		return path, nil
	}
	return history.DefaultPath()
}

// sayHistory says up front whether what will be recorded, and where.
func (b *builder) sayHistory(off bool, path, what string) {
	if off {
		b.logf("not recording in the history store (-no-history or HISTORY=off)")
		return
	}
	path, err := historyPath(path)
	if err != nil {
		path = fmt.Sprintf("(none: %v)", err)
	}
	b.logf("%s will be recorded in the history store %s (-no-history: not)", what, path)
}

// recording is a results file and the labels it is recorded with.
type recording struct {
	file   string
	labels []history.Label
}

// recordRuns adds each file to the history store (docs/history.md) as a
// run of its own. A failure to record is reported; it never changes the
// run's outcome.
func recordRuns(ctx context.Context, path string, recs []recording, logf func(string, ...any)) {
	path, err := historyPath(path)
	if err != nil {
		logf("not recorded in the history store: %v", err)
		return
	}
	s, err := history.Open(ctx, path)
	if err != nil {
		logf("not recorded in the history store: %v", err)
		return
	}
	defer s.Close()
	var done []string
	for _, r := range recs {
		raw, err := os.ReadFile(r.file)
		if err == nil {
			var f *history.File
			if f, err = history.Parse(r.file, raw); err == nil {
				var a history.Added
				a, err = s.Add(ctx, []*history.File{f}, r.labels)
				if err == nil {
					done = append(done, fmt.Sprintf("%s (run %d)", filepath.Base(r.file), a.Runs[0]))
				}
			}
		}
		if err != nil {
			logf("%s was not recorded in the history store: %v", r.file, err)
		}
	}
	if len(done) > 0 {
		logf("recorded %s in the history store %s", strings.Join(done, ", "), s.Path())
	}
}

// record adds each side's results of each mode to the history store,
// labelled with its role, ref, commit and mode.
func (c *comparison) record(ctx context.Context) {
	var recs []recording
	for _, m := range c.args.modes() {
		for _, sd := range c.sides() {
			recs = append(recs, recording{filepath.Join(c.args.out, c.prefix(m)+sd.role+".txt"), c.labels(sd, m)})
		}
	}
	recordRuns(ctx, c.args.history, recs, c.logf)
}

// labels are a side's history labels: commit is the commit a ref names,
// else the spec itself (a module version, a binary), and the commit's
// date only when there is a commit.
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
