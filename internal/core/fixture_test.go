package core

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/core/coretest"
	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
)

// fixtureRun sets up a run of BenchmarkProbeBolt on a tiny data set in
// dir and returns it with its progress log.
func fixtureRun(t *testing.T, dir string, batch int) (*Env, string) {
	t.Helper()
	c := Default()
	c.KeysMil, c.ValSize, c.Batch, c.Dir = 0.002, 64, batch, dir
	c.Threads, c.Caches = IntList{1}, WordList{Warm}
	var log strings.Builder
	e, err := Setup(c, "BenchmarkProbeBolt", io.Discard, &log)
	if err != nil {
		t.Fatal(err)
	}
	return e, log.String()
}

// boltFixture is the run's bbolt fixture: its directory and manifest.
func boltFixture(t *testing.T, e *Env) (string, *dataset.Manifest) {
	t.Helper()
	dir, err := e.FixtureDir(e.KVFor(coretest.Engine(t, "bolt")))
	if err != nil {
		t.Fatal(err)
	}
	m, err := dataset.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, m
}

// TestFixtureOfAnotherEngineVersionIsRebuilt: a fixture whose manifest
// says another bbolt wrote it is rebuilt by this one, not read.
func TestFixtureOfAnotherEngineVersionIsRebuilt(t *testing.T) {
	root := t.TempDir()
	e, _ := fixtureRun(t, root, 1000)
	dir, m := boltFixture(t, e)
	ours := engineVersion(coretest.Engine(t, "bolt"))
	if m.EngineVersion != ours {
		t.Fatalf("built by %q, want %q", m.EngineVersion, ours)
	}

	// The files at the fixture's path were written by another version.
	m.EngineVersion = "go.etcd.io/bbolt v1.3.0"
	b, _ := json.Marshal(m)
	if err := os.WriteFile(filepath.Join(dir, dataset.ReadyName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	e, log := fixtureRun(t, root, 1000)
	if !strings.Contains(log, "incomplete or stale; rebuilding") {
		t.Fatalf("a fixture another bbolt wrote was read:\n%s", log)
	}
	if again, m := boltFixture(t, e); again != dir || m.EngineVersion != ours {
		t.Fatalf("rebuilt at %s by %q, want %s by %q", again, m.EngineVersion, dir, ours)
	}
}

// TestFixturesOfTwoVersionsLiveSideBySide: after an engine upgrade (or on
// the other side of a branch comparison) the fixture is built again in a
// directory of its own; the first is left as it was and reused when its
// version comes back; the results that read each name the version that
// built it.
func TestFixturesOfTwoVersionsLiveSideBySide(t *testing.T) {
	root := t.TempDir()
	e, _ := fixtureRun(t, root, 1000)
	oldDir, oldM := boltFixture(t, e)

	saved := engineVersion
	t.Cleanup(func() { engineVersion = saved })
	upgraded := func(info engine.Info) string { return saved(info) + "-upgraded" }
	engineVersion = upgraded
	e, log := fixtureRun(t, root, 1000)
	newDir, newM := boltFixture(t, e)
	want := upgraded(coretest.Engine(t, "bolt"))
	if newDir == oldDir || newM.EngineVersion != want || !strings.Contains(log, "building fixture") {
		t.Fatalf("upgraded engine: fixture %s by %q (want a new one by %q); log:\n%s", newDir, newM.EngineVersion, want, log)
	}
	if m, err := dataset.ReadManifest(oldDir); err != nil || !m.Built.Equal(oldM.Built) {
		t.Fatalf("the other version's fixture was touched: %+v %v", m, err)
	}
	if line := fixtureLine(t, e); line != "fixture-bolt: "+want+" ("+filepath.Base(newDir)+")" {
		t.Errorf("results read the upgraded fixture under %q", line)
	}

	engineVersion = saved
	e, log = fixtureRun(t, root, 1000)
	if dir, _ := boltFixture(t, e); dir != oldDir || strings.Contains(log, "building fixture") {
		t.Fatalf("back on the first version: fixture %s, want %s reused; log:\n%s", dir, oldDir, log)
	}
	if line := fixtureLine(t, e); !strings.HasPrefix(line, "fixture-bolt: "+saved(coretest.Engine(t, "bolt"))+" (") {
		t.Errorf("results read the first fixture under %q", line)
	}
}

// TestFixtureOfAnotherBatchIsAnotherFixture: -batch shapes the files (a
// B-tree's pages split at each commit), so a fixture built with another
// is not read.
func TestFixtureOfAnotherBatchIsAnotherFixture(t *testing.T) {
	root := t.TempDir()
	e, _ := fixtureRun(t, root, 1000)
	dir1000, _ := boltFixture(t, e)
	e, log := fixtureRun(t, root, 7)
	dir7, m := boltFixture(t, e)
	if dir7 == dir1000 || m.Params.Batch != 7 || !strings.Contains(log, "building fixture") {
		t.Fatalf("-batch 7 read %s (batch %d), built by -batch 1000 at %s; log:\n%s", dir7, m.Params.Batch, dir1000, log)
	}
}

// fixtureLine runs ProbeBolt on e and returns the fixture-bolt line
// its results carry.
func fixtureLine(t *testing.T, e *Env) string {
	t.Helper()
	coretest.SetBenchtime(t, "1x")
	var out strings.Builder
	e.Out = &out
	failed := true
	testing.Benchmark(func(b *testing.B) {
		defer func() { failed = b.Failed() }() // Fatal ends the function
		Run(b, e, "Probe", "bolt")
	})
	if failed {
		t.Fatal("ProbeBolt failed")
	}
	var lines []string
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, "fixture-bolt: ") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 {
		t.Fatalf("fixture lines %q, want one:\n%s", lines, out.String())
	}
	return lines[0]
}

// TestEveryOptionThatShapesFilesKeysTheFixture: each field of
// engine.Options either changes the fixture's key for some engine or is
// named here with the reason it does not shape the files; likewise each
// engine's own option not marked Shapes. A new option fails this test
// until it is decided.
func TestEveryOptionThatShapesFilesKeysTheFixture(t *testing.T) {
	notShaping := map[string]string{
		"Dir":           "where the files are, not what they hold",
		"Sync":          "when writes reach the disk; builds end with Flush either way",
		"CacheMB":       "a read-time cache",
		"SkipChecksums": "checksums are written whatever it says; it decides only whether reads verify them",
		"Readahead":     "how reads are served",
		"ReadOnly":      "fixtures are built writable and read read-only",
		"ExpectedBytes": "follows from the keys and value size, which key the fixture",
		"Params":        "each engine option declares Shapes (checked below)",
		// The budget rule's bounds on memory in flight; the ones that shape
		// tables (BuildTableBytes, L0CompactionTables) key them.
		"MemtablesInFlight": "how many memtables wait for a flush, not the size they flush at",
		"MaxCompactions":    "how many compactions run at once, not the levels' shape",
		// Set only by the Bloom workload's fixtures, whose kind names both.
		"DisableCompactions": "named by the Bloom fixtures' kind (sst<n>-bloom<fpr>)",
		"BloomFPR":           "named by the Bloom fixtures' kind (sst<n>-bloom<fpr>)",
	}
	notShapingParams := map[string]string{
		"bolt_write": "DB.Batch with one writer commits each batch as DB.Update does",
		"bolt_get":   "how a point read finds its key; reads write nothing",
		"lmdb_write": "one transaction per batch either way",
		// Read-side switches: how pages and blocks are cached or mapped.
		"bolt_mmap_populate":  "how the file is mapped, not what is written",
		"rocksdb_cache_index": "where index and filter blocks are cached",
		"rocksdb_pin_l0":      "where index and filter blocks are cached",
		// Fixtures are written without reads, and read-only opens never compact.
		"pebble_read_sampling": "read-triggered compactions: fixtures are written without reads, read only",
		// Durability and the write path: the same pages either way.
		"lmdb_writemap":   "the same B-tree pages, written through a map instead of write(2)",
		"lmdb_nometasync": "only when the meta page is synced",
	}
	e, err := NewEnv(Default(), io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	keys := func(info engine.Info, tweak func(*engine.Options)) string {
		return e.NewFixture(info, "", GenSource{e.Gen}, tweak).Params.Name()
	}
	ot := typeOfOptions()
	for i := 0; i < ot.NumField(); i++ {
		field := ot.Field(i).Name
		if _, ok := notShaping[field]; ok {
			continue
		}
		keyed := false
		for _, info := range engine.All() {
			if info.Reference {
				continue
			}
			if keys(info, nil) != keys(info, func(o *engine.Options) { changeField(t, o, field) }) {
				keyed = true
			}
		}
		if !keyed {
			t.Errorf("engine.Options.%s changes no fixture's key: key it (engine.Info.Layout, Params) or say here why it does not shape the files", field)
		}
	}
	for _, info := range engine.All() {
		for _, p := range info.Params {
			if _, ok := notShapingParams[p.FlagName()]; !ok && !p.Shaping() {
				t.Errorf("%s's option -%s neither Shapes the files nor is said here not to", info.Name, p.FlagName())
			}
		}
	}
}

func typeOfOptions() reflect.Type { return reflect.TypeOf(engine.Options{}) }

// changeField gives o's field another value of its kind.
func changeField(t *testing.T, o *engine.Options, field string) {
	t.Helper()
	v := reflect.ValueOf(o).Elem().FieldByName(field)
	switch v.Kind() {
	case reflect.Int, reflect.Int64:
		v.SetInt(v.Int() + 1)
	case reflect.Float64:
		v.SetFloat(v.Float() + 0.25)
	case reflect.String:
		v.SetString(v.String() + "-other")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	default:
		t.Fatalf("engine.Options.%s: a %s this test cannot change; add a case", field, v.Kind())
	}
}

// TestBenchmarkOutsideThePlanWritesNothing: a run planned for benchmarks
// that need no disk never opened -dir; a benchmark outside that plan
// (here Probe on bbolt, which reads a fixture, and its build) fails and writes
// nothing: not in the working directory, not in -dir.
func TestBenchmarkOutsideThePlanWritesNothing(t *testing.T) {
	cwd, dir := t.TempDir(), t.TempDir()
	t.Chdir(cwd)
	c := Default()
	c.KeysMil, c.ValSize, c.Dir = 0.002, 64, dir
	e, err := Setup(c, "BenchmarkProbeMemory", io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	coretest.SetBenchtime(t, "1x")
	failed := false
	testing.Benchmark(func(b *testing.B) {
		defer func() { failed = b.Failed() }() // Fatal ends the function
		Run(b, e, "Probe", "bolt")
	})
	if !failed {
		t.Error("a benchmark outside the plan ran")
	}
	if err := e.ensure(e.KVFor(coretest.Engine(t, "bolt"))); err == nil {
		t.Error("a fixture outside the plan was built")
	}
	for _, d := range []string{cwd, dir} {
		if ents, _ := os.ReadDir(d); len(ents) != 0 {
			t.Errorf("%s holds %v", d, ents)
		}
	}
}

// TestMissingDefaultDirIsNotCreated: without -dir the user cache
// directory is -dir; when it does not exist the run stops, naming -dir,
// and creates nothing.
func TestMissingDefaultDirIsNotCreated(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "no-cache-yet")
	t.Setenv("XDG_CACHE_HOME", cache)
	c := Default()
	c.KeysMil, c.ValSize, c.Dir = 0.002, 64, ""
	_, err := Setup(c, "BenchmarkProbeBolt", io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "-dir") {
		t.Fatalf("Setup without -dir and without a cache directory: %v", err)
	}
	if _, err := os.Stat(cache); !os.IsNotExist(err) {
		t.Fatalf("the default -dir was created: %v", err)
	}
}
