package power

import (
	"embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// slowdownSources are the files that slow the suite's reads: the engine
// package's SlowReads and the root test package's init that reads
// KVBENCH_SLOWDOWN (slowdown/). They are no part of the suite on disk:
// the slowed binary is built with them laid over its tree (go test -c
// -overlay) and the kvbench_slowdown tag, which keeps them out of every
// other build, this module's own included.
//
//go:embed slowdown/engine.go slowdown/suite_test.go
var slowdownSources embed.FS

// slowdownFiles: where in the suite's tree each source is laid.
var slowdownFiles = map[string]string{
	"slowdown/engine.go":     "internal/engine/kvbench_slowdown.go",
	"slowdown/suite_test.go": "kvbench_slowdown_test.go",
}

// slowdownTag selects the laid files.
const slowdownTag = "kvbench_slowdown"

// writeSlowdownOverlay writes the sources into dir and an overlay that
// lays them over the suite's tree at root, and returns the overlay's
// path.
func writeSlowdownOverlay(root, dir string) (string, error) {
	replace := map[string]string{}
	for src, dst := range slowdownFiles {
		dst = filepath.Join(root, dst)
		if _, err := os.Stat(dst); err == nil {
			return "", fmt.Errorf("%s exists: the slowdown would replace a file of the suite", dst)
		}
		b, err := slowdownSources.ReadFile(src)
		if err != nil {
			return "", err
		}
		path := filepath.Join(dir, filepath.Base(dst))
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return "", err
		}
		replace[dst] = path
	}
	b, err := json.Marshal(map[string]any{"Replace": replace})
	if err != nil {
		return "", err
	}
	overlay := filepath.Join(dir, "slowdown-overlay.json")
	return overlay, os.WriteFile(overlay, b, 0o644)
}
