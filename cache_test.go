package kvbench

import (
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/measure"
)

// Page cache states a fixture is read in.
const (
	cacheWarm = "warm"
	cacheCold = "cold"
)

// fixtureHandle keeps at most one open handle on one engine's fixture and
// puts it in the page cache state a sub-benchmark asks for. One handle at a
// time because LMDB forbids opening an environment twice in one process,
// and because a cold start must close every handle: pages an open memory
// map holds cannot be evicted.
type fixtureHandle struct {
	info    engine.Info
	dir     string
	db      engine.DB
	variant string // options the open handle was opened with
	warm    bool   // the open handle has had its untimed warm-up pass
}

// newFixtureHandle looks up the engine by title (skipping b when it is not
// compiled in) and makes sure its fixture exists. Close it when done.
func newFixtureHandle(b *testing.B, title string) *fixtureHandle {
	b.Helper()
	info := lookupTitle(b, title)
	h := &fixtureHandle{info: info}
	if !info.Reference {
		dir, err := fixtureFor(info)
		if err != nil {
			b.Fatal(err)
		}
		h.dir = dir
	}
	return h
}

// caches lists the cache states to run: the rail keeps everything in the
// heap, so it has no cold state.
func (h *fixtureHandle) caches() []string {
	if h.info.Reference {
		return []string{cacheWarm}
	}
	return flagCaches
}

// option variants: the same fixture opened with a different setting.
type variant struct {
	name string // "" for the run's flags as given
	set  func(*engine.Options)
}

var asFlagged = variant{}

// open returns the fixture opened read-only in the given cache state.
// warm reuses the open handle when it has the same variant, after one
// untimed pass over every key and value. cold closes the handle, evicts the
// fixture's files from the page cache (and drops all caches when
// -drop_caches is given), and opens it afresh. It must be called before the
// timed part of a benchmark.
func (h *fixtureHandle) open(b *testing.B, cache string, v variant) engine.DB {
	b.Helper()
	if cache == cacheWarm && h.db != nil && h.variant == v.name {
		if !h.warm {
			h.warmUp(b)
		}
		return h.db
	}
	h.close(b)
	if h.info.Reference {
		h.db = openReference(b, h.info)
		h.warm = true
		return h.db
	}
	if cache == cacheCold {
		evictFixture(b, h.dir)
	}
	o := engineOptions(h.info, h.dir)
	o.ReadOnly = true
	if v.set != nil {
		v.set(&o)
	}
	db, err := engine.Open(h.info.Name, o)
	if err != nil {
		b.Fatalf("open fixture %s: %v", h.dir, err)
	}
	printEngineConfig(os.Stdout, db)
	h.db, h.variant, h.warm = db, v.name, false
	if cache == cacheWarm {
		h.warmUp(b)
	}
	return h.db
}

// warmUp reads every key and value once, untimed, and checks the count.
func (h *fixtureHandle) warmUp(b *testing.B) {
	b.Helper()
	n, _, err := scanAll(h.db, true, cfg.gen.NewChecker(false))
	if err != nil {
		b.Fatalf("warm-up pass: %v", err)
	}
	if n != cfg.keys {
		b.Fatalf("warm-up pass read %d keys, the fixture has %d", n, cfg.keys)
	}
	h.warm = true
}

func (h *fixtureHandle) close(tb testing.TB) {
	if h.db == nil {
		return
	}
	if err := h.db.Close(); err != nil {
		tb.Errorf("close %s: %v", h.info.Name, err)
	}
	h.db = nil
}

// evictFixture drops the fixture's files from the page cache and says so
// when the kernel kept a noticeable part of them (tmpfs, or a mapping
// still open elsewhere).
func evictFixture(b *testing.B, dir string) {
	b.Helper()
	if _, _, err := measure.EvictDir(dir); err != nil {
		b.Fatalf("evict %s: %v", dir, err)
	}
	if *flagDropCaches {
		if err := measure.DropCaches(); err != nil {
			b.Fatalf("-drop_caches: %v", err)
		}
	}
	if res, total := residentBytes(dir); total > 0 && res*20 > total {
		warnOnce(dir, "cache=cold: %s of %s of the fixture stayed in the page cache after eviction (tmpfs or a mapping held elsewhere); cold numbers are not cold", human(res), human(total))
	}
}

// residentBytes sums how much of the files under dir is in the page cache.
func residentBytes(dir string) (resident, total int64) {
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if r, t, err := measure.Resident(path); err == nil {
			resident += r
			total += t
		}
		return nil
	})
	return resident, total
}

var warned sync.Map

func warnOnce(key, format string, args ...any) {
	if _, dup := warned.LoadOrStore(key+format, true); !dup {
		logf(format, args...)
	}
}

// scanAll iterates over every key in order, checking that keys ascend and
// that each value (when values is set) belongs to its key. It returns the
// keys and bytes (key plus value) it read.
func scanAll(db engine.DB, values bool, chk *dataset.Checker) (keys uint64, bytes int64, err error) {
	rd, err := db.NewReader()
	if err != nil {
		return 0, 0, err
	}
	defer rd.Close()
	it, err := rd.NewIter(engine.IterOptions{KeysOnly: !values})
	if err != nil {
		return 0, 0, err
	}
	defer it.Close()
	var prev [dataset.KeySize]byte
	for ; it.Valid(); it.Next() {
		k := it.Key()
		if keys > 0 && string(k) <= string(prev[:]) {
			return keys, bytes, errOrder(prev[:], k)
		}
		copy(prev[:], k)
		bytes += int64(len(k))
		if values {
			v, err := it.Value()
			if err != nil {
				return keys, bytes, err
			}
			if err := chk.CheckKV(k, v); err != nil {
				return keys, bytes, err
			}
			bytes += int64(len(v))
		} else if _, ok := cfg.gen.Index(k); !ok {
			return keys, bytes, errForeignKey(k)
		}
		keys++
	}
	return keys, bytes, it.Err()
}
