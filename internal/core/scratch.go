package core

import (
	"errors"
	"fmt"

	"github.com/kvbench/kvbench/internal/engine"
)

// ScratchSettings is the engine's settings for a database opened with
// opts (its Dir aside), read from a throwaway scratch database opened
// empty, closed and removed. Workloads that open their own databases
// inside a sub-benchmark call it in the parent, so the settings line
// printed before b.Run describes exactly that sub-benchmark's options.
// Read-only options need an existing database: read those settings from
// the fixture (Handle.Run).
func (e *Env) ScratchSettings(info engine.Info, opts engine.Options) (s []engine.Setting, err error) {
	if opts.ReadOnly {
		return nil, errors.New("scratch settings: read-only options need an existing database")
	}
	dir := e.ScratchDir(info.Name)
	defer func() {
		if rerr := e.Root.RemoveAll(dir); err == nil {
			err = rerr
		}
	}()
	opts.Dir = dir
	db, err := engine.Open(info.Name, opts)
	if err != nil {
		return nil, fmt.Errorf("open %s for its settings: %w", info.Name, err)
	}
	s = db.Settings()
	if err := db.Close(); err != nil {
		return nil, fmt.Errorf("close %s: %w", info.Name, err)
	}
	return s, nil
}
