package core

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/measure"
)

// Fixture declares a database a workload reads: which engine, opened how,
// holding what. Workloads return them from Workload.Fixtures; Setup builds
// each one once (reused across runs while its manifest matches), and a
// Handle opens it in the page cache state a sub-benchmark asks for.
type Fixture struct {
	Engine  engine.Info
	Options engine.Options // as written and read; Dir and ReadOnly are set per open
	Params  dataset.Params // everything that shapes its files; its name
	Data    Source         // what it holds
	// Build writes Data into the open, empty db; nil writes it in batches
	// of -batch (WriteAll). Either way Setup flushes and settles it after.
	// The hook's f has the options db was opened with (Dir set), and it may
	// Reopen db.
	Build func(e *Env, db engine.DB, f *Fixture) error
	// Files, when set, makes a fixture of files no engine writes (the
	// embedded cdb as a file): Engine, Options and Build are unused, and
	// Files writes Data into dir, which exists and is empty, returning the
	// manifest's EngineVersion, DiskBytes and Settled. Read it through
	// e.FixtureDir; a Handle opens only engines.
	Files func(e *Env, dir string) (dataset.Manifest, error)
}

// LogicalBytes is what the fixture holds, keys plus values.
func (f *Fixture) LogicalBytes() int64 { return f.Data.LogicalBytes() }

// KVFor is the engine's fixture of the run's data set, with the run's
// options: what every workload that reads the shared data set declares.
func (e *Env) KVFor(info engine.Info) *Fixture { return e.NewFixture(info, "", GenSource{e.Gen}, nil) }

// NewFixture declares a fixture of src on info with the run's options as
// tweak changes them. kind tells apart data sets with the same shape.
func (e *Env) NewFixture(info engine.Info, kind string, src Source, tweak func(*engine.Options)) *Fixture {
	o := e.Options(info, "", src.LogicalBytes())
	if tweak != nil {
		tweak(&o)
	}
	eng := info.Name
	if kind != "" {
		eng = kind + "-" + info.Name
	}
	return &Fixture{
		Engine:  info,
		Options: o,
		Data:    src,
		Params: dataset.Params{
			Engine: eng, Keys: src.Len(), ValueSize: src.ValueSize(), Seed: e.Cfg.Seed,
			ValueRatio: e.Cfg.ValueRatio, Compression: o.Compression,
			FormatVersion: dataset.FormatVersion, Layout: info.FileLayout(o),
			// Builds write -batch keys a commit (WriteAll, buildTables).
			EngineVersion: engineVersion(info), Batch: e.Cfg.Batch,
		},
	}
}

// engineVersion is the code that writes info's files, which keys its
// fixtures: the binding's Go module and version from the binary's build
// information and, for a binding over a library linked at run time
// (RocksDB's librocksdb), that library's version. A variable so that
// tests can stand in for an upgraded engine.
var engineVersion = func(info engine.Info) string {
	if info.Version == nil {
		return ""
	}
	v := info.Version()
	if info.Library != nil {
		v += "; " + info.Library()
	}
	return v
}

// builtFixture is a fixture Setup made sure of: where it is and what its
// manifest says, the engine version that built it included.
type builtFixture struct {
	dir string
	m   *dataset.Manifest
}

// ensure builds f when no complete build of it exists, and remembers its
// directory. Only Setup calls it, so every fixture is built, and counted
// in the disk estimate, before any benchmark runs.
func (e *Env) ensure(f *Fixture) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	name := f.Params.Name()
	if _, ok := e.fixtures[name]; ok {
		return nil
	}
	dir, m, err := e.Root.Ensure(f.Params, func(dir string) (dataset.Manifest, error) {
		e.Logf("building fixture %s (%d keys, %s)%s", name, f.Data.Len(), Human(f.LogicalBytes()), e.buildEstimate(f))
		return e.build(f, dir)
	}, e.Logf)
	if err == nil {
		e.Logf("fixture %s: %d keys, %s on disk, written by %s, built %s in %.1fs", name, m.KeyCount, Human(m.DiskBytes), m.EngineVersion, m.Built.Format(time.RFC3339), m.BuildSeconds)
		e.fixtures[name] = builtFixture{dir, m}
	}
	return err
}

// buildEstimate says what f's build should take: its time and size on
// disk, scaled from the build of the engine's fixture nearest in size on
// this machine (dataset.Root.Estimate), or that there is none to go by.
func (e *Env) buildEstimate(f *Fixture) string {
	est, ok := e.Root.Estimate(f.Params, f.LogicalBytes())
	where := "here"
	if !ok {
		// The default -dir's builds, on this machine too, read only.
		if c, err := os.UserCacheDir(); err == nil && filepath.Join(c, "kvbench") != e.Root.Path {
			est, ok = dataset.Root{Path: filepath.Join(c, "kvbench")}.Estimate(f.Params, f.LogicalBytes())
			where = "in " + c
		}
	}
	if !ok {
		return ": no estimate, no fixture of " + f.Engine.Name + " was built here or in the default -dir before"
	}
	from := est.From
	growth := fmt.Sprintf("time ∝ size^%.2f, as between its builds %s", est.Exponent, where)
	if est.Exponent == dataset.OneSizeExponent {
		growth = fmt.Sprintf("time ∝ size^%.1f, the growth measured between 1M and 10M keys", est.Exponent)
	}
	return fmt.Sprintf(": about %s and %s on disk, scaled from its %d-key build %s (%.1fs; %s)",
		time.Duration(est.Seconds*float64(time.Second)).Round(time.Second), Human(est.DiskBytes), from.KeyCount, where, from.BuildSeconds, growth)
}

// build writes the fixture into dir, flushes it (durable, compactions
// settled) and closes it.
func (e *Env) build(f *Fixture, dir string) (dataset.Manifest, error) {
	if f.Files != nil { // files no engine writes
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return dataset.Manifest{}, err
		}
		start := time.Now()
		m, err := f.Files(e, dir)
		m.KeyCount, m.LogicalBytes = f.Data.Len(), f.LogicalBytes()
		m.BuildSeconds = time.Since(start).Seconds()
		return m, err
	}
	o := f.Options
	o.Dir = dir
	g, err := e.GuardSpace("fixture "+f.Params.Name(), f.Engine, o)
	if err != nil {
		return dataset.Manifest{}, err
	}
	defer g.Stop()
	inner, err := engine.Open(f.Engine.Name, o)
	if err != nil {
		return dataset.Manifest{}, err
	}
	db := &buildDB{DB: guardedDB{inner, g}, name: f.Engine.Name, o: o, g: g}
	defer func() { db.Close() }() // whichever database is open then (see Reopen)
	start := time.Now()
	if f.Build != nil {
		opened := *f
		opened.Options = o // with the directory it is built in
		err = f.Build(e, db, &opened)
	} else {
		err = e.WriteAll(db, f.Data, e.Cfg.Batch, 1, f.Params.Name())
	}
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
	if err := db.Close(); err != nil {
		return dataset.Manifest{}, fmt.Errorf("close: %w", err)
	}
	return dataset.Manifest{
		EngineVersion: engineVersion(f.Engine), KeyCount: f.Data.Len(), LogicalBytes: f.LogicalBytes(),
		DiskBytes: size, BuildSeconds: elapsed.Seconds(),
		Settled: "Flush returned: data durable, memtables flushed, no compaction running or pending",
	}, nil
}

// buildDB is the database a Fixture.Build hook writes: Reopen swaps the
// open database under it.
type buildDB struct {
	engine.DB
	name string
	o    engine.Options
	g    *SpaceGuard
}

// Reopen closes db, the database a Fixture.Build hook was given, and
// opens it again in place with the same options, so that everything
// written so far is in its files: an LSM that writes its memtable out
// only when it is full or on Close (Badger) does so then.
func Reopen(db engine.DB) error {
	r, ok := db.(*buildDB)
	if !ok {
		return fmt.Errorf("core: Reopen of a %s database no Fixture.Build hook was given", db.Name())
	}
	if err := r.DB.Close(); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	d, err := engine.Open(r.name, r.o)
	if err != nil {
		return fmt.Errorf("reopen: %w", err)
	}
	r.DB = guardedDB{d, r.g}
	return nil
}

// FixtureDir is the directory of a fixture Setup built. A fixture no
// workload declared is a bug in that workload's declaration.
func (e *Env) FixtureDir(f *Fixture) (string, error) {
	b, err := e.built(f)
	return b.dir, err
}

// built is a fixture Setup built (or found complete).
func (e *Env) built(f *Fixture) (builtFixture, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if b, ok := e.fixtures[f.Params.Name()]; ok {
		return b, nil
	}
	return builtFixture{}, fmt.Errorf("fixture %s was not built before the benchmarks: the workload must declare it in Workload.Fixtures", f.Params.Name())
}

// residentShare is the one rule for eviction that did not work: more
// than 1/20 (5%) of the files still in the page cache after eviction.
const residentShare = 20

// Evict drops every file under dir from the page cache (and every cache
// of the machine with -drop_caches), and returns how many bytes the
// kernel kept; it warns when that is more than 5% of the files (tmpfs, or
// a mapping still open elsewhere). The store must be closed.
func (e *Env) Evict(dir string) (resident int64, err error) {
	if _, _, err := measure.EvictDir(dir); err != nil {
		return 0, fmt.Errorf("evict %s: %w", dir, err)
	}
	if e.Cfg.DropCaches {
		if err := measure.DropCaches(); err != nil {
			return 0, fmt.Errorf("-drop_caches: %w", err)
		}
	}
	res, total := measure.ResidentDir(dir)
	if total > 0 && res*residentShare > total {
		e.WarnOnce("evict "+dir, "cache=cold: %s of %s under %s stayed in the page cache after eviction (tmpfs or a mapping held elsewhere); cold numbers are not cold", Human(res), Human(total), dir)
	}
	return res, nil
}
