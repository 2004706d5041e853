package core

import (
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/measure"
)

// The space guard: docs/reliability.md says what it keeps from a disk that
// fills, docs/methodology.md ("The free-space guard's cost") how often it
// reads the free space. spaceSlack is the margin's room for filesystem
// metadata, the manifest and info logs.
const (
	spacePoll     = 10 * time.Millisecond
	spacePollIdle = time.Second
	spaceRate     = 4 << 30 // bytes a second: faster than any device here
	spaceSlack    = 16 << 20
)

// nextPoll is the wait before the next read of the free space.
func (g *SpaceGuard) nextPoll(free int64) time.Duration {
	d := time.Duration(float64(free-g.margin) / spaceRate * float64(time.Second))
	return min(max(d, spacePoll), spacePollIdle)
}

// writeMargin is the free space under which writes on info with opts, in
// batches of batch entries of valSize-byte values, stop.
func writeMargin(info engine.Info, opts engine.Options, batch, valSize int) (margin, reserve int64) {
	if info.WriteReserve != nil {
		reserve = info.WriteReserve(opts)
	}
	return reserve + 2*int64(batch)*int64(dataset.KeySize+valSize) + spaceSlack, reserve
}

// WriteMargin is the free space under which the run's writes on info stop.
func (c *Config) WriteMargin(info engine.Info) int64 {
	logical := int64(c.Keys()) * int64(dataset.KeySize+c.ValSize)
	m, _ := writeMargin(info, c.Options(info, "", logical), c.Batch, c.ValSize)
	return m
}

// SpaceGuard watches the free space under one directory while one
// database writes there: every database the suite writes is opened under
// one (Env.GuardSpace, Wrap) and closed before Stop.
type SpaceGuard struct {
	dir, what    string // the engine's directory; the fixture or benchmark, for the error
	engine       string
	margin       int64
	reserve      int64
	free0, size0 int64 // free space and the engine directory's size at the start
	err          atomic.Pointer[error]
	stop         chan struct{}
	wg           sync.WaitGroup
	freeOf       func(string) (int64, error) // statfs; a test's stand-in
	sizeOf       func(string) (int64, error) // the engine directory's size
}

// GuardSpace starts a guard for writes of what (a fixture or benchmark)
// by info with opts into opts.Dir, failing at once when the free space is
// below the margin already. Without -space_guard it reads the free space
// only when a write failed, to say whether the device filled.
func (e *Env) GuardSpace(what string, info engine.Info, opts engine.Options) (*SpaceGuard, error) {
	margin, reserve := writeMargin(info, opts, e.Cfg.Batch, e.Cfg.ValSize)
	g := &SpaceGuard{dir: opts.Dir, what: what, margin: margin, reserve: reserve, stop: make(chan struct{}),
		freeOf: freeSpace, sizeOf: engine.DirSize, engine: info.Name}
	if !e.Cfg.SpaceGuard {
		return g, nil
	}
	return g, g.start()
}

func (g *SpaceGuard) start() error {
	free, err := g.freeOf(g.dir)
	if err != nil {
		return fmt.Errorf("free space under %s: %w", g.dir, err)
	}
	g.free0 = free
	g.size0, _ = g.sizeOf(g.dir) // a directory not created yet is empty
	if free < g.margin {
		return g.fail(free)
	}
	g.wg.Go(g.watch)
	return nil
}

func (g *SpaceGuard) watch() {
	t := time.NewTimer(g.nextPoll(g.free0))
	defer t.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-t.C:
			free, err := g.freeOf(g.dir)
			if err == nil && free < g.margin {
				g.fail(free)
				return
			}
			if err != nil {
				free = g.margin // unknown: read again soon
			}
			t.Reset(g.nextPoll(free))
		}
	}
}

// fail records, once, the error every later commit returns.
func (g *SpaceGuard) fail(free int64) error {
	err := g.error(free, nil)
	g.err.CompareAndSwap(nil, &err)
	return *g.err.Load()
}

// error says where, how much is free, what was being written, how much
// another process took when the free space fell by more than the
// engine's directory grew, and the write's error (cause) when the device
// filled before the guard saw it.
func (g *SpaceGuard) error(free int64, cause error) error {
	msg := fmt.Sprintf("no space left for writing %s: %s free under %s, below the margin of %s kept for what %s still writes on its own after its last commit (%s) and two batches",
		g.what, Human(free), g.dir, Human(g.margin), g.engine, Human(g.reserve))
	if size, err := g.sizeOf(g.dir); err == nil {
		fell, grew := g.free0-free, size-g.size0
		if other := fell - grew; other > g.margin/4 && other > 1<<20 {
			msg += fmt.Sprintf("; since writing started the free space fell by %s while %s grew by %s: another process took about %s",
				Human(fell), g.what, Human(grew), Human(other))
		}
	}
	if cause != nil {
		return fmt.Errorf("%s; the device filled and the write failed: %w (docs/reliability.md)", msg, cause)
	}
	return fmt.Errorf("%s; writes stopped before the device filled (docs/reliability.md)", msg)
}

// filled is a failed write's err, said to be the device filling when the
// free space is below the margin: the engine's error may not say it (LMDB
// reports "input/output error").
func (g *SpaceGuard) filled(err error) error {
	if g == nil || err == nil {
		return err
	}
	if free, ferr := g.freeOf(g.dir); ferr == nil && free < g.margin {
		return g.error(free, err)
	}
	return err
}

// Err is nil while there is room, then the error that says there is not.
// One atomic load: commits call it.
func (g *SpaceGuard) Err() error {
	if g == nil {
		return nil
	}
	if p := g.err.Load(); p != nil {
		return *p
	}
	return nil
}

// Stop ends the watch.
func (g *SpaceGuard) Stop() {
	if g == nil {
		return
	}
	select {
	case <-g.stop:
	default:
		close(g.stop)
	}
	g.wg.Wait()
}

func freeSpace(dir string) (int64, error) {
	var st syscall.Statfs_t
	// The engine's directory may not exist yet: try its parents.
	for d := dir; ; {
		err := syscall.Statfs(d, &st)
		if err == nil {
			free, _ := measure.FreeOf(&st)
			return free, nil
		}
		parent := filepath.Dir(d)
		if err != syscall.ENOENT || parent == d {
			return 0, err
		}
		d = parent
	}
}

// Wrap is db with every commit failing with the guard's error once there
// is no room.
func (g *SpaceGuard) Wrap(db engine.DB) engine.DB { return guardedDB{db, g} }

// guardedDB is a database whose commits first ask its guard.
type guardedDB struct {
	engine.DB
	g *SpaceGuard
}

func (d guardedDB) NewBatch() engine.Batch { return guardedBatch{d.DB.NewBatch(), d.g} }

type guardedBatch struct {
	engine.Batch
	g *SpaceGuard
}

func (b guardedBatch) Commit() error { return b.g.write(b.Batch.Commit) }

// Delete removes key as engine.Delete does, once the guard allows writes.
func (d guardedDB) Delete(key []byte) error {
	return d.g.write(func() error { return engine.Delete(d.DB, key) })
}

// write runs w unless the guard forbids writes (filled says its error).
func (g *SpaceGuard) write(w func() error) error {
	if err := g.Err(); err != nil {
		return err
	}
	return g.filled(w())
}
