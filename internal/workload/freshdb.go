package workload

import (
	"testing"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/engine"
)

// freshLeaf runs body as sub-benchmark name with fresh, which hands each
// search body runs a database no earlier search wrote: a private copy of
// the fixture in scratch (openWorkCopy), or on the calibration rail a
// freshly loaded map. The first search gets the one opened before the
// sub-benchmark starts (its settings line printed); each later one, a
// search of the same call (-benchtime Nx) or of a later call (testing
// calls the body again for -count and -cpu), a new one, the one before
// it closed and removed first.
//
// On the copy an earlier search wrote, a search would start over more
// keys than the fixture holds and behind the flushes and compactions that
// search left due: a search ends on rates the engine could not sustain,
// and Badger stalls its writers until its compactions catch up, failing
// the next search's first trial at a rate it sustains on a fresh copy.
func freshLeaf(e *core.Env, b *testing.B, h *core.Handle, name string, body func(b *testing.B, fresh func(*testing.B) engine.DB)) {
	h.Close(b) // the fixture is not read while its copy is written
	f := h.Fixture()
	name = core.BlockLeaf(name, f.Engine, h.Options(nil))
	s := &freshDBs{e: e, h: h, label: b.Name() + "/" + name}
	defer s.close(b)
	e.ShowFixtureSettings(f.Engine, s.open(b).Settings(), f) // a copy of the fixture
	b.Run(name, func(b *testing.B) { body(b, s.next) })
}

// freshDBs is the database freshLeaf's searches run on, one at a time.
type freshDBs struct {
	e     *core.Env
	h     *core.Handle // the fixture's; on the rail it holds the map
	label string       // the space guard's name for the copies
	w     *workCopy    // the open copy (nil on the rail)
	db    engine.DB
	used  bool // db was handed to a search
}

// open opens a fresh database: a new copy of the fixture, or on the rail
// (whose handle is closed) the data set loaded anew.
func (s *freshDBs) open(b *testing.B) engine.DB {
	s.used = false
	if s.h.Fixture().Engine.Reference {
		s.db = s.h.DB(b, core.Warm, nil)
		return s.db
	}
	w, err := openWorkCopy(s.e, s.h, s.label, nil)
	if err != nil {
		b.Fatal(err)
	}
	s.w, s.db = w, w.DB
	return s.db
}

// next is the database of the next search: the open one if no search
// has had it, otherwise a fresh one.
func (s *freshDBs) next(b *testing.B) engine.DB {
	if s.used || s.db == nil {
		s.close(b)
		s.open(b)
	}
	s.used = true
	return s.db
}

// close closes the open database and removes its copy.
func (s *freshDBs) close(tb testing.TB) {
	if s.w != nil {
		if err := s.w.Close(); err != nil {
			tb.Error(err)
		}
		s.w = nil
	}
	s.h.Close(tb) // the rail's map; nothing on the other engines
	s.db = nil
}
