package core

import (
	"bytes"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/engine"
)

// TestBlockSizeAndChecksumFlags: -block_size (DefaultBlockSize unless given) and
// -verify_checksums (on unless given) become every engine's
// Options.BlockSize and Options.SkipChecksums and are echoed; the block
// size is part of every LSM fixture's name (it shapes the files) and of
// no B-tree's.
func TestBlockSizeAndChecksumFlags(t *testing.T) {
	if d := Default(); len(d.BlockSizes) != 1 || d.BlockSizes[0] != DefaultBlockSize || !d.VerifyChecksums {
		t.Fatalf("defaults: -block_size %v, -verify_checksums %v; want %v, true", d.BlockSizes, d.VerifyChecksums, DefaultBlockSize)
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
			if o.BlockSize != int(cfg.BlockSizes[0]) || !o.SkipChecksums {
				t.Errorf("-block_size %s: %s gets BlockSize %d, SkipChecksums %v", bs, info.Name, o.BlockSize, o.SkipChecksums)
			}
			if names[info.Name] == nil {
				names[info.Name] = map[string]string{}
			}
			names[info.Name][bs] = e.KVFor(info).Params.Name()
		}
		var out bytes.Buffer
		e.EchoConfig(&out)
		for _, line := range []string{"\nblock-size: " + bs + "\n", "\nverify-checksums: false\n"} {
			if !strings.Contains(out.String(), line) {
				t.Errorf("config echo lacks %q", line)
			}
		}
	}
	for _, info := range engine.All() {
		n := names[info.Name]
		lsm := info.DataBlocks
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
		{[]string{"-block_size", "4KiB,2MiB"}, "-block_size 2MiB: must be from 1KiB to 1MiB"},
		{[]string{"-block_size", "4KiB,4096"}, "-block_size 4KiB,4KiB: lists 4KiB twice"},
		{[]string{"-pebble_index_block", "100"}, "-pebble_index_block 100: must be a size from 1KiB to 1GiB"},
		{[]string{"-pebble_index_block", "big"}, "-pebble_index_block big: must be a size from 1KiB to 1GiB"},
	} {
		cfg := parseFlags(t, c.args...)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error containing %q", c.args, err, c.want)
		}
	}
	for _, ok := range []string{"1KiB", "32KiB", "1MiB", "16384", "4KiB,32KiB"} {
		if cfg := parseFlags(t, "-block_size", ok); cfg.Validate() != nil {
			t.Errorf("-block_size %s: %v", ok, cfg.Validate())
		}
	}
}

// TestBlockSizesPlanAFixtureEach: with two block sizes an LSM's reads
// declare a fixture per size, and a B-tree's one.
func TestBlockSizesPlanAFixtureEach(t *testing.T) {
	c := parseFlags(t, "-block_size", "4KiB,32KiB", "-keys_mil", "0.001")
	e, err := NewEnv(c, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.NewPlan("^BenchmarkProbe(Pebble|Bolt)$")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]int{}
	for _, f := range p.Fixtures {
		got[f.Engine.Name] = append(got[f.Engine.Name], f.Options.BlockSize)
	}
	if want := map[string][]int{"pebble": {4 << 10, 32 << 10}, "bolt": {4 << 10}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("fixtures' block sizes %v, want %v", got, want)
	}
	if e.block != 0 {
		t.Fatalf("planning left block %v in force", e.block)
	}
}
