package history

import (
	"errors"
	"os"
	"path/filepath"
)

// DefaultPath is $XDG_DATA_HOME/kvbench/history.db, or
// ~/.local/share/kvbench/history.db when XDG_DATA_HOME is unset or not
// absolute (the XDG base directory rule).
func DefaultPath() (string, error) {
	if d := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "kvbench", "history.db"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return "", errors.New("no history path: neither XDG_DATA_HOME nor HOME is set; give -history PATH")
	}
	return filepath.Join(home, ".local", "share", "kvbench", "history.db"), nil
}
