package bench

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/engine"
)

// TestBlockSizeAndChecksumFlags: -block_size (32KiB unless given) and
// -verify_checksums (on unless given) become every engine's
// Options.BlockSize and Options.SkipChecksums and are echoed; the block
// size is part of every LSM fixture's name (it shapes the files) and of
// no B-tree's.
func TestBlockSizeAndChecksumFlags(t *testing.T) {
	if d := Default(); d.BlockSize != 32<<10 || !d.VerifyChecksums {
		t.Fatalf("defaults: -block_size %d, -verify_checksums %v; want 32KiB, true", d.BlockSize, d.VerifyChecksums)
	}
	names := map[string]map[string]string{} // engine -> -block_size -> fixture name
	for _, bs := range []string{"8KiB", "64KiB"} {
		cfg := parseFlags(t, "-block_size", bs, "-verify_checksums=false", "-keys_mil", "0.001")
		e, err := NewEnv(cfg, io.Discard, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		for _, info := range engine.All() {
			o := cfg.Options(info, "/x", 1)
			if o.BlockSize != int(cfg.BlockSize) || !o.SkipChecksums {
				t.Errorf("-block_size %s: %s gets BlockSize %d, SkipChecksums %v", bs, info.Name, o.BlockSize, o.SkipChecksums)
			}
			if names[info.Name] == nil {
				names[info.Name] = map[string]string{}
			}
			names[info.Name][bs] = e.KV(info, nil).Params.Name()
		}
		var out bytes.Buffer
		e.echoConfig(&out)
		for _, line := range []string{"\nblock-size: " + bs + "\n", "\nverify-checksums: false\n"} {
			if !strings.Contains(out.String(), line) {
				t.Errorf("config echo lacks %q", line)
			}
		}
	}
	for _, info := range engine.All() {
		n := names[info.Name]
		lsm := info.TableFilters
		if differ := n["8KiB"] != n["64KiB"]; differ != lsm {
			t.Errorf("%s (LSM %v): fixture names %q and %q", info.Name, lsm, n["8KiB"], n["64KiB"])
		}
	}
}

// TestBlockSizeFlagValidated: a block size out of range, or an index
// block that is not a size, is an error naming the flag.
func TestBlockSizeFlagValidated(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-block_size", "512"}, "-block_size 512B: must be from 1KiB to 1MiB"},
		{[]string{"-block_size", "2MiB"}, "-block_size 2MiB: must be from 1KiB to 1MiB"},
		{[]string{"-pebble_index_block", "100"}, "-pebble_index_block 100: must be a size from 1KiB to 1GiB"},
		{[]string{"-pebble_index_block", "big"}, "-pebble_index_block big: must be a size from 1KiB to 1GiB"},
	} {
		cfg := parseFlags(t, c.args...)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error containing %q", c.args, err, c.want)
		}
	}
	for _, ok := range []string{"1KiB", "32KiB", "1MiB", "16384"} {
		if cfg := parseFlags(t, "-block_size", ok); cfg.Validate() != nil {
			t.Errorf("-block_size %s: %v", ok, cfg.Validate())
		}
	}
}
