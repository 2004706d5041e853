package kvbench

import (
	"fmt"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
)

// prefetchBenchmark is the prefix of BenchmarkPrefetch<Engine>, whose
// fixtures TestMain builds before any timing.
const prefetchBenchmark = "BenchmarkPrefetch"

// traceFixtureParams is everything that shapes an engine's trace fixture:
// the engine's own layout options plus the data set's.
func traceFixtureParams(info engine.Info) dataset.Params {
	layout := map[string]string{"set": "trace"}
	for k, v := range fixtureLayout(info) {
		layout[k] = v
	}
	return dataset.Params{
		Engine: info.Name, Keys: traceSet.Keys(), ValueSize: *flagPrefetchValSize, Seed: *flagSeed,
		ValueRatio: *flagValueRatio, Compression: engineOptions(info, "").Compression,
		FormatVersion: dataset.FormatVersion, Layout: layout,
	}
}

// traceDiskEstimate bounds what building the missing trace fixtures
// writes: three times the logical size each.
func (p *runPlan) traceDiskEstimate(dir string) int64 {
	var n int64
	for _, info := range p.traces {
		fp := traceFixtureParams(info)
		m, err := dataset.ReadManifest(filepath.Join(dir, dataset.OwnedName, "fixtures", fp.Name()))
		if err != nil || !m.Complete(fp) {
			n++
		}
	}
	return n * 3 * traceSet.LogicalBytes()
}

// traceOptions are the engine options of the trace data set.
func traceOptions(info engine.Info, dir string) engine.Options {
	o := engineOptions(info, dir)
	o.ExpectedBytes = traceSet.LogicalBytes()
	return o
}

// traceFixtureFor returns the directory of the engine's trace fixture,
// building it when needed.
func traceFixtureFor(info engine.Info) (string, error) {
	fixturesMu.Lock()
	defer fixturesMu.Unlock()
	key := "trace/" + info.Name
	if d, ok := fixtures[key]; ok {
		return d, nil
	}
	p := traceFixtureParams(info)
	dir, m, err := cfg.root.Ensure(p, func(dir string) (dataset.Manifest, error) {
		logf("building fixture %s (%d traces x %d spans x %d B)", p.Name(), traceSet.N, dataset.SpansPerTrace, *flagPrefetchValSize)
		return buildTraces(info, traceOptions(info, dir))
	}, logf)
	if err != nil {
		return "", err
	}
	if m.BuildSeconds > 0 {
		logf("fixture %s: %d keys, %s on disk, built %s in %.1fs", p.Name(), m.KeyCount, human(m.DiskBytes), m.Built.Format(time.RFC3339), m.BuildSeconds)
	}
	fixtures[key] = dir
	return dir, nil
}

// buildTraces writes the trace data set in key order, as the seed did,
// in batches of -batch keys, then flushes (durable, compactions settled).
func buildTraces(info engine.Info, opts engine.Options) (dataset.Manifest, error) {
	db, err := engine.Open(info.Name, opts)
	if err != nil {
		return dataset.Manifest{}, err
	}
	defer db.Close()
	var done atomic.Int64
	stop := startProgress(info.Name+" trace fixture", traceSet.Keys(), &done)
	start := time.Now()
	err = writeTraces(db, traceSet, *flagBatch, &done)
	stop()
	if err != nil {
		return dataset.Manifest{}, err
	}
	if err := db.Flush(); err != nil {
		return dataset.Manifest{}, fmt.Errorf("flush: %w", err)
	}
	elapsed := time.Since(start)
	size, err := db.Size()
	if err != nil {
		return dataset.Manifest{}, err
	}
	version := db.Version()
	if err := db.Close(); err != nil {
		return dataset.Manifest{}, fmt.Errorf("close: %w", err)
	}
	return dataset.Manifest{
		EngineVersion: version, KeyCount: traceSet.Keys(), LogicalBytes: traceSet.LogicalBytes(),
		DiskBytes: size, BuildSeconds: elapsed.Seconds(),
		Settled: "Flush returned: data durable, memtables flushed, no compaction running or pending",
	}, nil
}

// writeTraces writes every span of every trace, trace by trace.
func writeTraces(db engine.DB, t *dataset.Traces, batchSize int, done *atomic.Int64) error {
	var kb [dataset.TraceKeySize]byte
	val := make([]byte, t.Gen.ValueSize)
	batch := db.NewBatch()
	for tr := 0; tr < t.N; tr++ {
		for s := 0; s < dataset.SpansPerTrace; s++ {
			if err := batch.Set(t.Key(kb[:], tr, s), t.Gen.Value(val, t.Index(tr, s))); err != nil {
				return err
			}
			if batch.Len() == batchSize {
				if err := batch.Commit(); err != nil {
					return fmt.Errorf("commit up to trace %d: %w", tr, err)
				}
				done.Add(int64(batchSize))
				batch = db.NewBatch()
			}
		}
	}
	if n := batch.Len(); n > 0 {
		if err := batch.Commit(); err != nil {
			return fmt.Errorf("commit of the last %d keys: %w", n, err)
		}
		done.Add(int64(n))
	}
	if n := done.Load(); n != int64(t.Keys()) {
		return fmt.Errorf("wrote %d keys, want %d", n, t.Keys())
	}
	return nil
}
