package engine_test

import (
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/engine"
)

// TestSettingsStateBlocksAndChecksums: every store's settings line says
// what it does about checksums, and an LSM's (an engine whose files the
// block size shapes) gives its data block size as set and its index;
// bbolt states its freelist and grow syncs, Badger its metrics, off in a
// read-only open.
func TestSettingsStateBlocksAndChecksums(t *testing.T) {
	eachEngine(t, func(i engine.Info) bool { return !i.Reference }, func(t *testing.T, info engine.Info) {
		o := testOptions(t.TempDir())
		o.BlockSize = 8 << 10
		lsm := info.FileLayout(o)["bs"] != ""
		for _, readOnly := range []bool{false, true} {
			o.ReadOnly = readOnly
			db := open(t, info.Name, o)
			s := db.Settings()
			db.Close()
			has := func(key, prefix string) {
				t.Helper()
				if v := settingValue(s, key); v == "" || !strings.HasPrefix(v, prefix) {
					t.Errorf("read-only %v: %s=%q, want it to start with %q", readOnly, key, v, prefix)
				}
			}
			if lsm {
				has("block_size", "8KiB")
				has("verify_checksums", "true")
				if settingValue(s, "index") == "" && settingValue(s, "index_block_size") == "" {
					t.Errorf("read-only %v: no index setting: %v", readOnly, s)
				}
			} else {
				has("checksums", "none (engine has none)")
				has("page_size", "")
			}
			switch info.Name {
			case "bolt":
				has("nofreelistsync", "true")
				has("nogrowsync", "true")
			case "badger":
				has("metrics", map[bool]string{false: "on", true: "off"}[readOnly])
			case "pebble":
				has("index_block_size", "256KiB")
			}
		}
	})
}
