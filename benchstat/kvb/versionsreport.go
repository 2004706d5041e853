package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
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

// header is the configuration lines a version's file starts with, which
// make it a point of the module's release series: the lab's kvb history
// add keeps them as the run's labels (docs/history.md, "Release
// matrix"). benchstat's table across the versions stays one table, as
// the engine's own line differs between the files too.
func (m *matrix) header(v *side) string {
	var h strings.Builder
	for _, kv := range [][2]string{{"role", "versions"}, {"series", "release"}, {"module", m.module}, {"version", v.label},
		{"commit", m.suiteCommit}, {"commit-date", m.commitDate}, {"dirty", map[bool]string{true: "true"}[m.dirtyTree]}} {
		if kv[1] != "" {
			fmt.Fprintf(&h, "%s: %s\n", kv[0], kv[1])
		}
	}
	return h.String()
}
