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
// holding what. Setup builds each once (reused across runs while its
// manifest matches); a Handle opens it in a page cache state.
type Fixture struct {
	Engine  engine.Info
	Options engine.Options // as written and read; Dir and ReadOnly are set per open
	Params  dataset.Params // everything that shapes its files; its name
	Data    Source         // what it holds
	// Build writes Data into the open, empty db (nil: WriteAll in batches
	// of -batch); Setup flushes and settles it after. Its f has db's
	// options (Dir set), and it may Reopen db.
	Build func(e *Env, db engine.DB, f *Fixture) error
	// Files, when set, makes a fixture of files no engine writes (the
	// embedded cdb): it writes Data into dir, empty, and returns the
	// manifest's EngineVersion, DiskBytes and Settled; Engine, Options
	// and Build are unused. Read it through e.FixtureDir, not a Handle.
	Files func(e *Env, dir string) (dataset.Manifest, error)
}

// LogicalBytes is what the fixture holds, keys plus values.
func (f *Fixture) LogicalBytes() int64 { return f.Data.LogicalBytes() }

// KVFor is the engine's fixture of the run's data set with the run's
// options.
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

// engineVersion is the code that writes info's files, part of its
// fixtures' key: the binding's module version and, for a library linked
// at run time (librocksdb), the library's. A variable: tests stand in an
// upgraded engine.
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

// builtFixture is a fixture Setup made sure of: its directory and
// manifest.
type builtFixture struct {
	dir string
	m   *dataset.Manifest
}

// ensure builds f unless a complete build exists, and remembers it. Only
// Setup calls it: every fixture is built, and in the disk estimate, before
// any benchmark runs.
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

// buildEstimate says what f's build should take in time and disk, scaled
// from the engine's build nearest in size here (dataset.Root.Estimate).
func (e *Env) buildEstimate(f *Fixture) string {
	est, ok := e.Root.Estimate(f.Params, f.LogicalBytes())
	where := "here"
	if !ok {
		// The default -dir's builds, on this machine too.
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

// buildDB is the database a Fixture.Build hook writes; Reopen swaps it.
type buildDB struct {
	engine.DB
	name string
	o    engine.Options
	g    *SpaceGuard
}

// Reopen closes db, a Fixture.Build hook's, and opens it again with the
// same options, so all written so far is in its files (Badger writes its
// memtable out only when full or on Close).
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

// FixtureDir is the directory of a fixture Setup built; one no workload
// declared is an error.
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

// residentShare: eviction failed when more than 1/20 of the files stay
// in the page cache.
const residentShare = 20

// Evict drops every file under dir from the page cache (and every cache
// with -drop_caches) and returns the bytes the kernel kept, warning when
// eviction failed (tmpfs, a mapping open elsewhere). The store must be
// closed.
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
		e.WarnOnce("evict "+dir, "%s of %s under %s stayed in the page cache after eviction (tmpfs or a mapping held elsewhere); cold numbers are not cold, and a -mem_limit budget does not hold these files", Human(res), Human(total), dir)
	}
	return res, nil
}
