package workload

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
)

// workCopy is a private, writable database in scratch under a space guard:
// a copy of an engine's fixture, so writes never touch the fixture (or
// Delete's empty fresh database). It keeps the adapter for the optional
// interfaces the guard's wrapper hides. Open it outside the timer; Close
// removes it.
type workCopy struct {
	DB    engine.DB // inner, its commits asking the guard first
	Opts  engine.Options
	inner engine.DB // the adapter
	guard *core.SpaceGuard
	e     *core.Env
	info  engine.Info
	label string
}

// newWorkCopy copies the fixture h reads (h's own database closed), or
// with copy unset makes an empty database, and opens it with h's options
// as tweak changes them, under a space guard named label.
//
// Every copy starts from the same state: everything dirty on its
// filesystem written back (else the kernel writes it back during the first
// operations, charged to the engine), and the memory earlier engines left
// to the Go collector and the C allocators released (else a large heap's
// collection runs during the measurement).
func newWorkCopy(e *core.Env, h *core.Handle, label string, tweak func(*engine.Options), copy bool) (*workCopy, error) {
	info := h.Fixture().Engine
	o := h.Options(tweak)
	o.Dir, o.ReadOnly = e.ScratchDir(info.Name), false
	w := &workCopy{Opts: o, e: e, info: info, label: label}
	var err error
	if copy {
		err = copyFixture(h.Dir(), o.Dir)
	}
	if err == nil {
		engine.ReleaseMemory()
		err = w.open()
	}
	if err != nil {
		e.Root.RemoveAll(o.Dir)
		return nil, err
	}
	return w, nil
}

// copyForCall opens a new copy of h's fixture (newWorkCopy) for one call
// of b's body, b's timer stopped; done closes and removes it.
func copyForCall(b *testing.B, e *core.Env, h *core.Handle, tweak func(*engine.Options)) (w *workCopy, done func()) {
	b.StopTimer()
	w, err := newWorkCopy(e, h, b.Name(), tweak, true)
	fatalIf(b, err)
	return w, func() { errorIf(b, w.Close()) }
}

// scratchLeaf runs body as leaf name (BlockLeaf) of info's engine opened
// writable with o, after printing o's settings on an empty database in
// scratch (and with f set, that body runs on copies of fixture f).
func scratchLeaf(b *testing.B, e *core.Env, info engine.Info, f *core.Fixture, name string, o engine.Options, body func(b *testing.B)) {
	o.ReadOnly = false
	name = core.BlockLeaf(name, info, o)
	e.WatchLeaf(b.Name() + "/" + name)
	s, err := e.ScratchSettings(info, o)
	fatalIf(b, err)
	e.ShowFixtureSettings(info, s, f)
	b.Run(name, body)
}

// fatalIf fails tb at once when err is set.
func fatalIf(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

// errorIf fails tb, letting it go on, when err is set.
func errorIf(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Error(err)
	}
}

func (w *workCopy) open() error {
	g, err := w.e.GuardSpace(w.label, w.info, w.Opts)
	if err != nil {
		return err
	}
	inner, err := engine.OpenInfo(w.info, w.Opts)
	if err != nil {
		g.Stop()
		return err
	}
	w.guard, w.inner, w.DB = g, inner, g.Wrap(inner)
	return nil
}

// shut closes the database, keeping its files.
func (w *workCopy) shut() error {
	if w.inner == nil {
		return nil
	}
	err := w.inner.Close()
	w.guard.Stop()
	w.guard, w.inner, w.DB = nil, nil, nil
	return err
}

// reopen closes the database and opens it again.
func (w *workCopy) reopen() error {
	if err := w.shut(); err != nil {
		return err
	}
	return w.open()
}

// Close closes the copy's database and removes the copy.
func (w *workCopy) Close() error {
	err := w.shut()
	if rerr := w.e.Root.RemoveAll(w.Opts.Dir); err == nil {
		err = rerr
	}
	return err
}

// syncFS writes back everything dirty on the filesystem that holds dir.
func syncFS(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Syncfs(int(f.Fd()))
}

// copyFixture copies the fixture in src to dst (copy_file_range on Linux),
// less its .ready manifest (the copy is not a fixture), and syncFS's it.
func copyFixture(src, dst string) error {
	err := os.CopyFS(dst, os.DirFS(src))
	if err == nil {
		if err = os.Remove(filepath.Join(dst, dataset.ReadyName)); errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
	}
	if err != nil {
		return fmt.Errorf("copy fixture: %w", err)
	}
	if err := syncFS(dst); err != nil {
		return fmt.Errorf("sync the fixture's copy: %w", err)
	}
	return nil
}
