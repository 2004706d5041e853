package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/kvbench/kvbench/benchstat/internal/history"
)

// table prints what ran and benchstat's table across the versions, the
// first given the baseline, and keeps both in DIR/benchstat.txt.
func (m *matrix) table(ctx context.Context) error {
	var all bytes.Buffer
	w := io.MultiWriter(m.stdout, &all)
	fmt.Fprintf(w, "kvb versions: %s %s, %d rounds interleaved, %s, %s\n",
		m.module, strings.Join(m.labels(), " "), m.args.count, m.what, strings.Join(m.args.suite, " "))
	var cols []string
	for _, v := range m.versions {
		cols = append(cols, v.label+"="+m.file(v))
	}
	if err := benchstatTable(ctx, m.repo, 0.05, cols, w); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(m.args.out, "benchstat.txt"), all.Bytes(), 0o644)
}

// record adds each version's file to the history store as a point of the
// module's release series (docs/history.md, "Release matrix").
func (m *matrix) record(ctx context.Context) {
	var recs []recording
	for _, v := range m.versions {
		l := []history.Label{
			{Key: "role", Value: "versions"}, {Key: "series", Value: "release"},
			{Key: "module", Value: m.module}, {Key: "version", Value: v.label},
			{Key: "commit", Value: m.suiteCommit}, {Key: "commit-date", Value: m.commitDate},
		}
		if m.dirtyTree {
			l = append(l, history.Label{Key: "dirty", Value: "true"})
		}
		recs = append(recs, recording{m.file(v), l})
	}
	recordRuns(ctx, m.args.history, recs, m.logf)
}
