package workload

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
)

// workCopy is a private, writable copy of an engine's fixture in scratch:
// what a workload that writes runs on, so the fixture itself is never
// written. Open it outside the timer; Close removes it.
type workCopy struct {
	Dir   string
	DB    engine.DB // under the space guard
	Opts  engine.Options
	guard *core.SpaceGuard
	e     *core.Env
}

// openWorkCopy copies the fixture that h reads (h's own database must be
// closed: the fixture is not read while its copy is written) and opens
// the copy with h's options as tweak changes them, under a space guard
// named label.
//
// Every copy starts from the same state, whatever ran before it: the
// copy and anything else dirty on its filesystem written back (otherwise
// the kernel writes it back during the first operations, and a write
// waiting behind that is charged to the engine), and the memory earlier
// engines left to the Go collector and the C allocators released
// (otherwise a large heap's collection runs during the measurement).
func openWorkCopy(e *core.Env, h *core.Handle, label string, tweak func(*engine.Options)) (*workCopy, error) {
	info := h.Fixture().Engine
	w := &workCopy{Dir: e.ScratchDir(info.Name), e: e}
	if err := copyTree(h.Dir(), w.Dir); err != nil {
		w.remove()
		return nil, fmt.Errorf("copy fixture: %w", err)
	}
	if err := syncFS(w.Dir); err != nil {
		w.remove()
		return nil, fmt.Errorf("sync the fixture's copy: %w", err)
	}
	engine.ReleaseMemory()
	o := h.Options(tweak)
	o.Dir, o.ReadOnly = w.Dir, false
	w.Opts = o
	g, err := e.GuardSpace(label, info, o)
	if err != nil {
		w.remove()
		return nil, err
	}
	inner, err := engine.Open(info.Name, o)
	if err != nil {
		g.Stop()
		w.remove()
		return nil, err
	}
	w.guard, w.DB = g, g.Wrap(inner)
	return w, nil
}

// copyForCall opens a fresh copy of h's fixture (openWorkCopy, with
// tweak) for one call of b's body, b's timer stopped; done closes and
// removes it.
func copyForCall(b *testing.B, e *core.Env, h *core.Handle, tweak func(*engine.Options)) (w *workCopy, done func()) {
	b.StopTimer()
	w, err := openWorkCopy(e, h, b.Name(), tweak)
	if err != nil {
		b.Fatal(err)
	}
	return w, func() {
		if err := w.Close(); err != nil {
			b.Error(err)
		}
	}
}

// Close closes the copy's database and removes the copy.
func (w *workCopy) Close() error {
	err := w.DB.Close()
	w.guard.Stop()
	if rerr := w.remove(); err == nil {
		err = rerr
	}
	return err
}

func (w *workCopy) remove() error { return w.e.Root.RemoveAll(w.Dir) }

// copyTree copies the regular files and directories under src to dst,
// leaving out the fixture's .ready manifest: the copy is not a fixture.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case !d.Type().IsRegular() || rel == dataset.ReadyName:
			return nil
		}
		return copyFile(p, to)
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil { // copy_file_range on Linux
		out.Close()
		return err
	}
	return out.Close()
}
