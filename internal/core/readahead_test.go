package core

import (
	"bytes"
	"flag"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/core/coretest"
	"github.com/kvbench/kvbench/internal/engine"
)

// parseFlags binds a default Config and parses args into it.
func parseFlags(t *testing.T, args ...string) Config {
	t.Helper()
	cfg := Default()
	fs := flag.NewFlagSet("kvbench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cfg.Bind(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestReadaheadFlagValidated: a -readahead other than off and os is an
// error naming the flag, and Setup stops on it before writing anything.
func TestReadaheadFlagValidated(t *testing.T) {
	dir := t.TempDir()
	for _, v := range []string{"on", "OFF", ""} {
		cfg := parseFlags(t, "-dir", dir, "-readahead", v)
		want := "-readahead " + v + ": must be one of off, os"
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("-readahead %q: %v, want %q", v, err, want)
		}
		if _, err := Setup(cfg, "BenchmarkProbeLmdb", io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("-readahead %q: Setup: %v, want %q", v, err, want)
		}
	}
	if ents, err := os.ReadDir(dir); err != nil || len(ents) > 0 {
		t.Errorf("a bad -readahead changed -dir: %v %v", ents, err)
	}
	for _, v := range engine.ReadaheadModes {
		if cfg := parseFlags(t, "-readahead", v); cfg.Validate() != nil {
			t.Errorf("-readahead %s: %v", v, cfg.Validate())
		}
	}
}

// TestReadaheadFlagReachesEngines: -readahead is off unless given, is
// echoed with the device's read_ahead_kb, becomes every engine's
// Options.Readahead, and the settings line of a read names it.
func TestReadaheadFlagReachesEngines(t *testing.T) {
	if Default().Readahead != engine.ReadaheadOff {
		t.Fatalf("default -readahead %q, want off", Default().Readahead)
	}
	for _, mode := range engine.ReadaheadModes {
		t.Run(mode, func(t *testing.T) {
			cfg := parseFlags(t, "-dir", t.TempDir(), "-readahead", mode,
				"-keys_mil", "0.002", "-valsz", "256", "-threads", "1", "-cache", "cold")
			for _, info := range engine.All() {
				if o := cfg.Options(info, "/x", 1); o.Readahead != mode {
					t.Errorf("%s: Options.Readahead %q, want %q", info.Name, o.Readahead, mode)
				}
			}
			var out bytes.Buffer
			e, err := Setup(cfg, "BenchmarkProbeLmdb", &out, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range []string{"\nreadahead: " + mode + "\n", "\ndir-readahead: "} {
				if !strings.Contains(out.String(), line) {
					t.Errorf("config echo lacks %q:\n%s", line, out.String())
				}
			}
			if strings.Contains(out.String(), "lmdb-readahead") {
				t.Errorf("config echo still has lmdb-readahead:\n%s", out.String())
			}
			coretest.SetBenchtime(t, "1x")
			out.Reset()
			var failed bool
			testing.Benchmark(func(b *testing.B) {
				Run(b, e, "Probe", "lmdb")
				failed = b.Failed()
			})
			if failed {
				t.Fatal("BenchmarkProbeLmdb failed")
			}
			var lines int
			for _, line := range strings.Split(out.String(), "\n") {
				if strings.HasPrefix(line, "settings-lmdb: ") {
					lines++
					if !strings.Contains(line, " readahead="+mode+" (") {
						t.Errorf("settings line without readahead=%s: %s", mode, line)
					}
				}
			}
			if lines == 0 {
				t.Fatalf("no settings line in\n%s", out.String())
			}
		})
	}
}
