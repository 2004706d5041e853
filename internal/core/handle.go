package core

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/kvbench/kvbench/internal/engine"
)

// Page cache states a fixture is read in.
const (
	Warm = "warm"
	Cold = "cold"
)

// Handle keeps at most one open database on one fixture, in the page
// cache state a sub-benchmark asks for: LMDB opens an environment once
// per process, and an open map's pages cannot be evicted. The calibration
// rail (engine.Info.Reference) has no files: its handle loads the data
// set into memory.
type Handle struct {
	e     *Env
	f     *Fixture
	dir   string
	db    engine.DB
	key   string   // the options the open db was opened with
	warm  bool     // the open db has had its untimed warm-up pass
	fresh bool     // the open db was opened cold and nothing has read it
	cost  OpenCost // what opening it cold cost
}

// Open returns a handle on f; it closes when b ends.
func (e *Env) Open(b *testing.B, f *Fixture) *Handle {
	b.Helper()
	h := &Handle{e: e, f: f}
	e.handles = append(e.handles, h)
	if !f.Engine.Reference {
		dir, err := e.FixtureDir(f)
		if err != nil {
			b.Fatal(err)
		}
		h.dir = dir
	}
	b.Cleanup(func() { h.Close(b) })
	return h
}

// Dir is the fixture's directory ("" for the rail).
func (h *Handle) Dir() string { return h.dir }

// Fixture is the fixture the handle opens.
func (h *Handle) Fixture() *Fixture { return h.f }

// Caches lists the cache states to run; the rail has no cold state.
func (h *Handle) Caches() []string {
	if h.f.Engine.Reference {
		return []string{Warm}
	}
	return h.e.Cfg.Caches
}

// Options are the fixture's read-only open options as tweak changes them.
func (h *Handle) Options(tweak func(*engine.Options)) engine.Options {
	o := h.f.Options
	o.Dir, o.ReadOnly = h.dir, true
	if tweak != nil {
		tweak(&o)
	}
	return o
}

// Settings is the engine's settings on the fixture opened with o, from an
// open of its own: for the parent of leaves that open the fixture
// themselves. The handle's db must be closed (LMDB).
func (h *Handle) Settings(o engine.Options) ([]engine.Setting, error) {
	db, err := engine.OpenInfo(h.f.Engine, o)
	if err != nil {
		return nil, fmt.Errorf("open fixture %s: %w", h.dir, err)
	}
	s := db.Settings()
	return s, db.Close()
}

// DB is the fixture opened as Run hands it to its body: for a test that
// runs a body without Run's sub-benchmark.
func (h *Handle) DB(b *testing.B, cache string, tweak func(*engine.Options)) engine.DB {
	return h.open(b, cache, h.Options(tweak), false)
}

// open returns the fixture opened with o in the cache state. Cold, every
// call but the first (before the sub-benchmark) closes the db, evicts
// the fixture's files and reopens it, its cost measured (OpenCost).
func (h *Handle) open(b *testing.B, cache string, o engine.Options, first bool) engine.DB {
	b.Helper()
	key := optionsKey(o)
	if h.db != nil && h.key == key && (cache == Warm || first) {
		h.fresh = false
		if cache == Warm && !h.warm {
			h.warmUp(b)
		}
		return h.db
	}
	h.Close(b)
	if h.f.Engine.Reference {
		// The rail ignores both; read-only keeps engine.Open from
		// creating a directory outside -dir.
		o.Dir, o.ReadOnly = os.TempDir(), true
		db, err := engine.OpenInfo(h.f.Engine, o)
		if err != nil {
			b.Fatal(err)
		}
		if err := h.e.WriteAll(db, h.f.Data, h.e.Cfg.Batch, 1, h.f.Engine.Name+" load"); err != nil {
			b.Fatal(err)
		}
		h.db, h.key, h.warm = db, key, true
		return db
	}
	cold := cache == Cold && !first
	if cold {
		if _, err := h.e.Evict(h.dir); err != nil {
			b.Fatal(err)
		}
	}
	var db engine.DB
	cost, err := TimeOpen(func() (err error) {
		db, err = engine.OpenInfo(h.f.Engine, o) // the fixture's own Info: a test may wrap it
		return err
	})
	if err != nil {
		b.Fatalf("open fixture %s: %v", h.dir, err)
	}
	h.db, h.key, h.warm, h.fresh, h.cost = db, key, false, cold, cost
	if cache == Warm {
		h.warmUp(b)
	}
	return db
}

// optionsKey tells apart the options a db was opened with.
func optionsKey(o engine.Options) string { return fmt.Sprintf("%+v", o) }

// warmUp reads every file of the fixture into the page cache (a scan
// misses what only point reads touch: filter blocks, free pages), then
// every key and value through the engine, and checks the count.
func (h *Handle) warmUp(b *testing.B) {
	b.Helper()
	if err := ReadThrough(h.dir); err != nil {
		b.Fatalf("warm-up read of %s: %v", h.dir, err)
	}
	n, _, err := ScanAll(h.db, true, h.f.Data.NewChecker(false))
	if err != nil {
		b.Fatalf("warm-up pass: %v", err)
	}
	if n != h.f.Data.Len() {
		b.Fatalf("warm-up pass read %d keys, the fixture has %d", n, h.f.Data.Len())
	}
	h.warm = true
}

// Close closes the open db, if any.
func (h *Handle) Close(tb testing.TB) {
	if h.db == nil {
		return
	}
	if err := h.db.Close(); err != nil {
		tb.Errorf("close %s: %v", h.f.Engine.Name, err)
	}
	h.db, h.fresh = nil, false
}

// ReadThrough reads every regular file under dir into the page cache.
func ReadThrough(dir string) error {
	return filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(io.Discard, f)
		return err
	})
}
