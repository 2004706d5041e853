package kvbench

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/core"
)

// TestEveryBenchmarkWritesOnlyUnderDir runs every benchmark once on tiny
// data from an empty working directory, with TMPDIR, HOME and the user
// cache directory pointing at empty directories too, and checks that
// nothing outside <dir>/kvbench was created, changed or removed, even for
// a moment (a directory's mtime moves when an entry comes or goes), but
// the .hgrm spectra and .tsv timelines -latency_dir asks for. Given suite flags, this test
// binary passes them on instead of its own tiny set: make smoke's one
// pass of every benchmark is this test's.
func TestEveryBenchmarkWritesOnlyUnderDir(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every benchmark in the test binary")
	}
	t.Parallel() // its child waits on timers and the disk: beside TestDiskFillsDuringWrites
	base := t.TempDir()
	cwd, tmp, home, cache := filepath.Join(base, "cwd"), filepath.Join(base, "tmp"), filepath.Join(base, "home"), filepath.Join(base, "cache")
	dir, hgrm := filepath.Join(base, "dir"), filepath.Join(base, "hgrm")
	for _, d := range []string{cwd, tmp, home, cache, hgrm, filepath.Join(dir, "users-data")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "users-data", "db.file"), []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	// -dir's own mtime moves when kvbench/ is made; everything in
	// kvbench/ is the suite's; -latency_dir gets .hgrm and .tsv files.
	outside := func() map[string]string {
		st := treeState(t, base)
		delete(st, dir)
		delete(st, hgrm)
		for p := range st {
			if strings.HasPrefix(p, filepath.Join(dir, "kvbench")) || filepath.Dir(p) == hgrm && (strings.HasSuffix(p, ".hgrm") || strings.HasSuffix(p, ".tsv")) {
				delete(st, p)
			}
		}
		return st
	}
	before := outside()

	args := suiteFlagsSet()
	if len(args) == 0 {
		args = []string{"-keys_mil", "0.001", "-valsz", "64",
			"-threads", "1", "-hit_rate", "1", "-cold_ops", "1",
			"-rate", "10000", "-write_rate", "1000", "-load_time", "10ms",
			"-knee_time", "1ms", "-knee_start", "50000000", "-knee_steps", "0",
			"-sst_tables", "2", "-bloom_fpr", "0.01",
			"-prefetch_traces", "1", "-prefetch_valsz", "64", "-embed_records", "100", "-memtable_mb", "4"}
	}
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^$", "-test.bench=.", "-test.benchtime=1x",
		"-dir", dir, "-latency_dir", hgrm}, args...)...)
	cmd.Dir = cwd
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "HOME="+home, "XDG_CACHE_HOME="+cache)
	b, err := cmd.CombinedOutput()
	out := string(b)
	if err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}

	after := outside()
	for p, was := range before {
		if now, ok := after[p]; !ok {
			t.Errorf("removed: %s", p)
		} else if now != was {
			t.Errorf("changed: %s (%s, was %s)", p, now, was)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("created outside %s: %s", filepath.Join(dir, "kvbench"), p)
		}
	}
	if testing.Verbose() {
		t.Logf("every benchmark once:\n%s", out)
	}
	if spectra, _ := filepath.Glob(filepath.Join(hgrm, "*.hgrm")); len(spectra) == 0 {
		t.Error("-latency_dir holds no spectrum")
	}
	if timelines, _ := filepath.Glob(filepath.Join(hgrm, "*.tsv")); len(timelines) == 0 {
		t.Error("-latency_dir holds no timeline")
	}
	// Every benchmark ran, each engine compiled in.
	for _, target := range core.Targets() {
		if target.Info.Missing != "" {
			continue
		}
		if !regexp.MustCompile(`(?m)^` + target.Name() + `[/-]`).MatchString(out) {
			t.Errorf("%s reported no result", target.Name())
		}
	}
}

// suiteFlagsSet is the suite's flags given to this test binary (not go
// test's, not -dir or -latency_dir), as arguments for a child.
func suiteFlagsSet() []string {
	var args []string
	flag.Visit(func(f *flag.Flag) {
		switch {
		case strings.HasPrefix(f.Name, "test."), f.Name == "dir", f.Name == "latency_dir":
		default:
			args = append(args, "-"+f.Name+"="+f.Value.String())
		}
	})
	return args
}
