package core

import (
	"testing"

	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/memlimit"
)

// What a workload sees of the run. Env is the whole run (Setup, the plan,
// the budget, the configuration lines); a workload's body, its fixtures'
// declarations and their build hooks get a Bench instead: the run's
// values, and three small interfaces split by what a body does with them,
// which *Env implements.

// RunData is the run's values: the validated configuration, the data set
// and the suite's directory under -dir.
type RunData struct {
	Cfg       Config
	Keys      uint64
	Gen       *dataset.Gen
	FullCheck bool
	Root      dataset.Root // zero until Setup opens -dir
	Dir       string       // -dir as given or defaulted, absolute
}

// Shape is the first part of the sub-benchmark names of every workload
// on the run's data set: the value size and, under -mem_limit, the
// budget ("valsz=1024/mem=26MiB"), so results in and out of a budget
// never share a name.
func (d *RunData) Shape() string {
	s := SubName("valsz", d.Cfg.ValSize)
	if d.Cfg.MemLimit != 0 {
		s += "/" + SubName("mem", d.Cfg.MemLimit.String())
	}
	return s
}

// Fixtures is how a body declares the fixtures it reads and opens them.
type Fixtures interface {
	// KV is the engine's fixture of the run's data set, with the run's
	// options as tweak changes them; KVFor is KV(info, nil).
	KV(info engine.Info, tweak func(*engine.Options)) *Fixture
	KVFor(info engine.Info) *Fixture
	// NewFixture is a fixture of any Source.
	NewFixture(info engine.Info, kind string, src Source, tweak func(*engine.Options)) *Fixture
	// FixtureDir is the directory of a fixture Setup built.
	FixtureDir(f *Fixture) (string, error)
	// Selects and RunsSub say which sub-benchmarks the pattern runs.
	Selects(sub string) bool
	RunsSub(b interface{ Name() string }, sub string) bool
	// Open is a Handle on a fixture, Evict drops a directory's files from
	// the page cache.
	Open(b *testing.B, f *Fixture) *Handle
	Evict(dir string) (resident int64, err error)
}

// Writers is how a body writes a database of its own, and the space it
// writes in.
type Writers interface {
	// Options are the run's engine options at the pass's block size.
	Options(info engine.Info, dir string, logicalBytes int64) engine.Options
	ScratchDir(name string) string
	ScratchSettings(info engine.Info, opts engine.Options) ([]engine.Setting, error)
	GuardSpace(what string, info engine.Info, opts engine.Options) (*SpaceGuard, error)
	WriteAll(db engine.DB, src Source, batchSize, writers int, label string) error
	WriteAllTimed(db engine.DB, src Source, batchSize, writers int, label string) (WriteTimes, error)
}

// Output is what a body prints beside its results, and its log.
type Output interface {
	ShowSettings(info engine.Info, s []engine.Setting)
	ShowFixtureSettings(info engine.Info, s []engine.Setting, f *Fixture)
	ClearSettings()
	WatchLeaf(name string)
	Logf(format string, args ...any)
	WarnOnce(key, format string, args ...any)
}

var (
	_ Fixtures = (*Env)(nil)
	_ Writers  = (*Env)(nil)
	_ Output   = (*Env)(nil)
)

// Bench is what a workload's body sees of the run: its values, the three
// interfaces, and the random streams of each call.
type Bench struct {
	*RunData
	Fixtures
	Writers
	Output
	env *Env
}

// Bench is the run as a workload's body sees it.
func (e *Env) Bench() *Bench {
	e.benchOnce.Do(func() { e.bench = &Bench{RunData: &e.RunData, Fixtures: e, Writers: e, Output: e, env: e} })
	return e.bench
}

// CallStreams counts a new call of the benchmark b is and returns its
// streams (Env.CallStreams).
func (w *Bench) CallStreams(b *testing.B) Streams { return w.env.CallStreams(b) }

// StreamsOfCall are the streams of call n of any benchmark.
func (w *Bench) StreamsOfCall(n uint64) Streams { return w.env.StreamsOfCall(n) }

// Budget is the memory budget's cgroup, nil without one (Env.Budget).
func (w *Bench) Budget() *memlimit.Budget { return w.env.Budget() }
