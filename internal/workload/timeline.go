package workload

import (
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/measure"
)

// Throughput over time, for the writes that can stall (Overwrite's timed
// pass, YCSB with writes, Commit): docs/methodology.md, "Throughput over
// time".

// intervalFlag is -interval.
var intervalFlag = &core.Flag[time.Duration]{Name: "interval", Default: 100 * time.Millisecond,
	Usage: "interval of the writes' throughput over time (Overwrite, YCSB with writes, Commit): commits a second and p99 in each, the stall figures stall% and worst-interval-x, and with -latency_dir a .tsv of them per leaf",
	Check: within(time.Millisecond, math.MaxInt64, "must be at least 1ms")}

// timelineOptions are the flags of the workloads that keep a timeline.
var timelineOptions = []core.Option{intervalFlag, latencyDirFlag}

// timelineUnits are their stall figures.
var timelineUnits = []core.Unit{core.Lower("stall%"), core.Higher("worst-interval-x")}

// newTimelines makes one timeline per writer goroutine, with room for
// each one's share of ops commits.
func newTimelines(writers int, ops int) []*measure.Timeline {
	tls := make([]*measure.Timeline, writers)
	for w := range tls {
		tls[w] = measure.NewTimeline(ops/writers + 1)
	}
	return tls
}

// reportIntervals reports the stall figures of a window's intervals, when
// the window is long enough to judge (measure.Stalls), and writes them to
// <latency_dir>/<name>.tsv.
func reportIntervals(b *testing.B, e *core.Env, iv []measure.Interval) {
	if stalled, worst, ok := measure.Stalls(iv); ok {
		b.ReportMetric(stalled, "stall%")
		b.ReportMetric(worst, "worst-interval-x")
	}
	fatalIf(b, writeLatencyFile(e, b.Name(), ".tsv", func(f io.Writer) error { return measure.WriteIntervals(f, b.Name(), iv) }))
}

// writeLatencyFile writes <latency_dir>/<name><ext> with write, the
// name's slashes and spaces made file-name safe; nothing without
// -latency_dir.
func writeLatencyFile(e *core.Env, name, ext string, write func(io.Writer) error) error {
	dir := latencyDirFlag.Get(&e.Cfg)
	if dir == "" {
		return nil
	}
	f, err := os.Create(filepath.Join(dir, strings.NewReplacer("/", "_", " ", "_").Replace(name)+ext))
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
