package embedded

import (
	"bytes"
	"cmp"
	"debug/buildinfo"
	"debug/elf"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/core/coretest"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/measure"
	"github.com/kvbench/kvbench/internal/records"
)

// embedDirEnv names the directory whose testdata/ holds the cdb a
// cold-start child of these tests reads as its embedded one.
const embedDirEnv = "KVBENCH_TEST_EMBED_DIR"

// writeEmbedFS writes cdbs of the given record counts as the committed
// and (when generated > 0) the generated embedded cdb, and returns the
// directory holding testdata/.
func writeEmbedFS(t *testing.T, committed, generated uint64) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "testdata"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := BuildCDB(filepath.Join(dir, Committed), committed, true); err != nil {
		t.Fatal(err)
	}
	if generated > 0 {
		if err := BuildCDB(filepath.Join(dir, Generated), generated, true); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// embedConfig is a tiny run on the cdb in fsDir, with -dir in t.TempDir.
func embedConfig(t *testing.T, fsDir string, args ...string) core.Config {
	t.Helper()
	c := core.Default()
	fset := flag.NewFlagSet("test", flag.ContinueOnError)
	c.Bind(fset)
	if err := fset.Parse(append([]string{"-keys_mil", "0.001", "-valsz", "64", "-dir", t.TempDir()}, args...)); err != nil {
		t.Fatal(err)
	}
	SetFS(os.DirFS(fsDir))
	t.Cleanup(func() { SetFS(nil) })
	return c
}

// runWorkload runs a workload as the generated wrapper would and reports
// whether every sub-benchmark passed.
func runWorkload(e *core.Env, workload string) bool {
	ok := false
	testing.Benchmark(func(b *testing.B) {
		ok = b.Run(workload, func(b *testing.B) { core.Run(b, e, workload, "") })
	})
	return ok
}

func TestOpen(t *testing.T) {
	both := writeEmbedFS(t, 30, 50)
	d, err := Open(os.DirFS(both), true)
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != Generated || d.Records != 50 || d.Size != records.CDBSize(50) {
		t.Fatalf("got %s with %d records in %d bytes, want the generated one with 50", d.Name, d.Records, d.Size)
	}
	one := writeEmbedFS(t, 30, 0)
	if d, err = Open(os.DirFS(one), true); err != nil || d.Name != Committed || d.Records != 30 {
		t.Fatalf("got %+v, %v; want the committed one with 30 records", d, err)
	}
	// Only an embed.FS shows its bytes, which MADV_RANDOM needs.
	if _, err := Open(os.DirFS(one), false); err == nil || !strings.Contains(err.Error(), "-embed_readahead") {
		t.Fatalf("readahead off on a plain file: %v", err)
	}
	if _, err := Open(os.DirFS(t.TempDir()), true); err == nil || !strings.Contains(err.Error(), "no embedded cdb") {
		t.Fatalf("no cdb: %v", err)
	}
	cut := filepath.Join(one, Committed)
	if err := os.Truncate(cut, records.CDBSize(30)-1); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(os.DirFS(one), true); err == nil {
		t.Fatal("a truncated cdb opened")
	}
}

func TestEmbedConfig(t *testing.T) {
	fsDir := writeEmbedFS(t, 300, 0)

	c := embedConfig(t, fsDir, "-embed_records", "301")
	_, err := core.Setup(c, "BenchmarkEmbedGet", io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "-embed_records") || !strings.Contains(err.Error(), "make embed-data") {
		t.Fatalf("-embed_records past the embedded cdb: %v", err)
	}
	if ents, _ := os.ReadDir(c.Dir); len(ents) > 0 {
		t.Fatalf("a bad -embed_records wrote under -dir: %v", ents)
	}

	for _, tc := range []struct {
		args []string
		n    uint64
	}{{nil, 300}, {[]string{"-embed_records", "120"}, 120}, {[]string{"-embed_records", "300"}, 300}} {
		c := embedConfig(t, fsDir, tc.args...)
		if d, err := cdbOf(&c); err != nil || cmp.Or(recordsFlag.Get(&c), d.Records) != tc.n {
			t.Errorf("%v: %v records (%v), want %d", tc.args, d, err, tc.n)
		}
		e, err := core.NewEnv(c, io.Discard, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		out := coretest.ConfigLines(e)
		for _, want := range []string{
			fmt.Sprintf("embed-cdb: %s (300 records, %d bytes)\n", Committed, records.CDBSize(300)),
			fmt.Sprintf("embed-records: %d\n", tc.n), fmt.Sprintf("embed-cold-ops: %d\n", min(tc.n, 100)), "embed-readahead: true\n", "engine-cdb: github.com/alldroll/cdb ",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: no %q in the configuration", tc.args, want)
			}
		}
	}

	// Without an embedded file system nothing else changes.
	SetFS(nil)
	c = core.Default()
	e, err := core.NewEnv(c, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if out := coretest.ConfigLines(e); !strings.Contains(out, "embed-cdb: none") || strings.Contains(out, "embed-records") {
		t.Fatalf("configuration without a cdb:\n%s", out)
	}
	if p, err := e.NewPlan("BenchmarkEmbedGet"); err != nil || len(p.Fixtures) != 0 {
		t.Fatalf("plan without a cdb: %+v, %v", p, err)
	}
}

func TestEmbedPlan(t *testing.T) {
	e, err := core.NewEnv(embedConfig(t, writeEmbedFS(t, 300, 0), "-embed_records", "120"), io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var stores []string
	for _, info := range engine.All() {
		if core.Stores(info) && info.Missing == "" {
			stores = append(stores, info.Name)
		}
	}
	fixtures := func(p *core.Plan) (names []string) {
		for _, f := range p.Fixtures {
			names = append(names, f.Params.Name())
		}
		return names
	}
	for _, pattern := range []string{"BenchmarkEmbedGet", "EmbedIterate", "BenchmarkEmbedColdStart", "BenchmarkEmbed", "ReadRandomBolt|EmbedGet/src=file|EmbedGet/src=."} {
		p, err := e.NewPlan(pattern)
		if err != nil {
			t.Fatal(err)
		}
		names := strings.Join(fixtures(p), " ")
		if !strings.HasPrefix(names, "cdb-k300-") {
			t.Errorf("%s: fixtures %s: the first is not the whole cdb as a file", pattern, names)
		}
		for _, s := range stores {
			if !strings.Contains(names, "embed-"+s+"-k120-v") {
				t.Errorf("%s: fixtures %s: none of %s's records", pattern, names, s)
			}
		}
		if strings.Contains(names, "embed-memory") {
			t.Errorf("%s: fixtures %s: the rail loads its records itself", pattern, names)
		}
		if min := 3*records.LogicalBytes(300) + int64(len(stores))*3*records.LogicalBytes(120); p.DiskEstimate(t.TempDir()) < min {
			t.Errorf("%s: disk estimate %d, want at least %d", pattern, p.DiskEstimate(t.TempDir()), min)
		}
	}
	p, err := e.NewPlan("BenchmarkEmbedBuild")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Fixtures) != 0 || p.Scratch != records.CDBSize(120) {
		t.Errorf("EmbedBuild: fixtures %v, scratch %d; want none and %d", fixtures(p), p.Scratch, records.CDBSize(120))
	}
	// The test binary's copy, and the minimal child's build: the cdb in
	// its build cache, its work directory and its binary.
	if p, _ := e.NewPlan("BenchmarkEmbedColdStart"); p.Scratch < executableSize()+3*records.CDBSize(300) {
		t.Errorf("EmbedColdStart: scratch %d, want the test binary's size and three of the cdb", p.Scratch)
	}
	// A pattern that names its sources declares only theirs: the cold
	// start of the process alone and of the embedded cdb reads no store
	// (at seed 004's 20M records, every store's would be built for
	// nothing), only the cdb file the minimal child is built from.
	if p, err := e.NewPlan("BenchmarkEmbedColdStart/src=(none|embedded)"); err != nil || len(p.Fixtures) != 1 || !strings.HasPrefix(fixtures(p)[0], "cdb-k300-") {
		t.Errorf("EmbedColdStart/src=(none|embedded): fixtures %v, %v; want the cdb file alone", fixtures(p), err)
	}
	if p, _ := e.NewPlan("BenchmarkEmbedGet/src=(file|Bolt)$"); len(p.Fixtures) != 2 ||
		!strings.HasPrefix(fixtures(p)[0], "cdb-k300-") || !strings.HasPrefix(fixtures(p)[1], "embed-bolt-k120-") {
		t.Errorf("EmbedGet/src=(file|Bolt)$: fixtures %v; want the cdb file and Bolt's", fixtures(p))
	}
	if p, _ := e.NewPlan("BenchmarkReadRandomBolt"); strings.Contains(strings.Join(fixtures(p), " "), "cdb") {
		t.Errorf("ReadRandom declares the cdb: %v", fixtures(p))
	}
}

func TestRecordSources(t *testing.T) {
	const n = 10
	db, err := engine.Open("memory", engine.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var kb [records.MaxKeySize]byte
	var vb [records.MaxValueSize]byte
	put := func(k, v uint64) {
		batch := db.NewBatch()
		if err := batch.Set(records.Key(kb[:0], k), records.Value(vb[:0], v)); err != nil {
			t.Fatal(err)
		}
		if err := batch.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	for i := uint64(0); i < n; i++ {
		put(i, i)
	}
	src, err := newEngineSource(db, n)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := src.scan(n); err != nil || got != n {
		t.Fatalf("scan of a good set: %d, %v", got, err)
	}
	if err := src.get(records.Key(kb[:0], 3), 3); err != nil {
		t.Fatal(err)
	}
	if err := src.get(records.Key(kb[:0], 3), 4); err == nil {
		t.Fatal("record 3's value passed as record 4's")
	}
	if err := src.get(records.Key(kb[:0], n), n); err == nil {
		t.Fatal("a missing record was found")
	}
	src.close()

	put(5, 6) // a wrong value
	src, _ = newEngineSource(db, n)
	if _, err := src.scan(n); err == nil {
		t.Fatal("scan passed a wrong value")
	}
	src.close()
	put(5, 5)
	put(n, n) // a record past the set
	src, _ = newEngineSource(db, n)
	if _, err := src.scan(n + 1); err == nil || !strings.Contains(err.Error(), "not in the set") {
		t.Fatalf("scan passed a record past the set: %v", err)
	}
	src.close()

	set := recordSet{n}
	if set.CheckKV(records.Key(kb[:0], n), records.Value(vb[:0], n)) == nil || set.CheckKey(records.Key(kb[:0], n)) == nil {
		t.Fatal("the set's checker passed a record past it")
	}
	if set.CheckKV(records.Key(kb[:0], 2), records.Value(vb[:0], 2)) != nil || set.CheckKey([]byte("k_2")) != nil {
		t.Fatal("the set's checker failed its own record")
	}
}

func TestEmbedBuildMatches(t *testing.T) {
	fsDir := writeEmbedFS(t, 300, 0)
	d, err := Open(os.DirFS(fsDir), true)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, buffered := range []bool{false, true} {
		p := filepath.Join(dir, fmt.Sprint(buffered))
		if err := BuildCDB(p, 300, buffered); err != nil {
			t.Fatal(err)
		}
		if err := d.Check(p, 300); err != nil {
			t.Fatalf("buffered=%v: %v", buffered, err)
		}
	}
	p := filepath.Join(dir, "fewer")
	if err := BuildCDB(p, 120, false); err != nil {
		t.Fatal(err)
	}
	if err := d.Check(p, 120); err != nil { // read back: not the embedded bytes
		t.Fatal(err)
	}
	if err := d.Check(p, 121); err == nil {
		t.Fatal("a cdb of 120 records passed as one of 121")
	}
	// One byte changed in a value of the same size.
	b, err := os.ReadFile(filepath.Join(dir, "true"))
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte("Lorem"))
	b[i] = 'l'
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := d.Check(p, 300); err == nil || !strings.Contains(err.Error(), "differs") {
		t.Fatalf("a changed byte: %v", err)
	}
}

// TestEmbedWorkloads runs every Embed workload on a tiny set and checks
// that each result would follow exactly its own settings.
func TestEmbedWorkloads(t *testing.T) {
	fsDir := writeEmbedFS(t, 300, 0)
	t.Setenv(embedDirEnv, fsDir) // for the cold-start children
	var out bytes.Buffer
	e, err := core.Setup(embedConfig(t, fsDir, "-embed_records", "120"), "BenchmarkEmbed", &out, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// The cdb as a file is the embedded bytes.
	d, _ := cdbOf(&e.Cfg)
	path, err := filePath(e, d)
	if err != nil {
		t.Fatal(err)
	}
	have, _ := os.ReadFile(path)
	want, _ := os.ReadFile(filepath.Join(fsDir, Committed))
	if len(have) == 0 || !bytes.Equal(have, want) {
		t.Fatalf("the cdb fixture holds %d bytes, not the %d embedded ones", len(have), len(want))
	}

	// Each leaf body on its own, long enough to wrap around the set.
	coretest.SetBenchtime(t, "250x")
	src, err := openCDB(d.Data, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]func(*testing.B){
		"get":     func(b *testing.B) { embedGet(b, e, src, nil, 120, true) },
		"seq":     func(b *testing.B) { embedGet(b, e, src, nil, 120, false) },
		"iterate": func(b *testing.B) { embedIterate(b, src, nil, 120) },
	} {
		r := testing.Benchmark(body)
		if r.N != 250 || r.Extra["records/s"] <= 0 || r.Extra["all-s"] <= 0 {
			t.Errorf("%s: %d ops, metrics %v", name, r.N, r.Extra)
		}
	}

	coretest.SetBenchtime(t, "1x")
	out.Reset()
	calls := e.Calls("")
	if !runWorkload(e, "EmbedGet") {
		t.Fatal("EmbedGet failed")
	}
	// Both orders in each cache state of each source: the embedded cdb
	// and the rail warm only, the file and every store warm and cold
	// (testing.Benchmark names no sub-benchmark: count the leaves' calls).
	stores := 0
	for _, info := range engine.All() {
		if core.Stores(info) && info.Missing == "" {
			stores++
		}
	}
	if got, want := e.Calls("")-calls, uint64(2*(1+1)+2*2*(1+stores)); got != want {
		t.Errorf("EmbedGet ran %d leaves, want %d", got, want)
	}
	var shown []string // engines whose settings were in force at the end
	for _, info := range engine.All() {
		if info.Missing != "" {
			continue
		}
		line := "settings-" + info.Name + ": "
		i := strings.Index(out.String(), line)
		if i < 0 {
			t.Errorf("EmbedGet printed no settings for %s:\n%s", info.Name, out.String())
			continue
		}
		if len(shown) > 0 {
			prev := shown[len(shown)-1]
			if j := strings.Index(out.String(), "settings-"+prev+":\n"); j < 0 || j > i {
				t.Errorf("%s's settings were not cleared before %s's", prev, info.Name)
			}
		}
		shown = append(shown, info.Name)
	}
	out.Reset()
	if !runWorkload(e, "EmbedIterate") {
		t.Fatal("EmbedIterate failed")
	}
	// src=embedded comes first: the last engine's settings and fixture
	// lines are cleared.
	if eng := shown[len(shown)-1]; !strings.HasPrefix(out.String(), "fixture-"+eng+":\nsettings-"+eng+":\n") {
		t.Errorf("EmbedIterate began with %.60q, want both of %s's lines cleared", out.String(), eng)
	}
	out.Reset()
	if !runWorkload(e, "EmbedBuild") {
		t.Fatal("EmbedBuild failed")
	}
	// child=minimal compiles Go's runtime into a fresh cache under -dir,
	// about 15 CPU-seconds: its build and run are TestMinimalColdChild's,
	// and from a directory outside this module it is skipped here, as the
	// suite skips it wherever the go command cannot find the source.
	t.Chdir(t.TempDir())
	if !runWorkload(e, "EmbedColdStart") {
		t.Fatal("EmbedColdStart failed")
	}
	if ents, _ := os.ReadDir(e.Root.Sub("scratch")); len(ents) > 0 {
		t.Errorf("scratch left behind: %v", ents)
	}
}

// TestEmbedLeavesStartInTheirCacheState: on a source just evicted from
// the page cache, a warm leaf starts with all of the source's files in it
// (the cdb file and an engine's fixture alike), and every round of a cold
// leaf opens the source from the device.
func TestEmbedLeavesStartInTheirCacheState(t *testing.T) {
	fsDir := writeEmbedFS(t, 300, 0)
	e, err := core.Setup(embedConfig(t, fsDir, "-embed_records", "120"), "BenchmarkEmbedGet/src=(file|Bolt)", io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	coretest.SetBenchtime(t, "3x")
	bolt := coretest.Engine(t, "bolt")
	for _, s := range []embedSource{{name: "file"}, {name: bolt.Title, info: bolt}} {
		d, n := cdbOfRun(t, e)
		f := fileFixture(d)
		if s.info.Name != "" {
			f = engineFixture(e, s.info)
		}
		dir, err := e.FixtureDir(f)
		if err != nil {
			t.Fatal(err)
		}
		var warm [][2]int64 // resident and total bytes when a warm leaf began
		var rounds int
		var cold testing.BenchmarkResult
		testing.Benchmark(func(b *testing.B) {
			if _, err := e.Evict(dir); err != nil {
				b.Fatal(err)
			}
			r := openSource(e, b, d, n, s)
			defer r.close(b)
			r.run("warm", core.Warm, func(b *testing.B, src recordSource, rounds embedRounds) {
				res, total := measure.ResidentDir(dir)
				warm = append(warm, [2]int64{res, total})
				if src == nil || rounds != nil {
					b.Fatal("a warm leaf got no source, or rounds")
				}
			})
			r.run("cold", core.Cold, func(b *testing.B, src recordSource, rr embedRounds) {
				if src != nil || rr == nil {
					b.Fatal("a cold leaf got a source, or no rounds")
				}
				timed := rr(func(src recordSource) func() {
					rounds++
					return func() {
						if got, err := src.scan(120); err != nil || got != 120 {
							b.Fatalf("scan: %d records, %v", got, err)
						}
					}
				})
				timed.ReportPerOp(b, int64(b.N))
				cold.N = b.N
			})
		})
		for _, w := range warm {
			if w[1] == 0 || w[0] < w[1] {
				t.Errorf("src=%s: a warm leaf began with %d of %d bytes in the page cache", s.name, w[0], w[1])
			}
		}
		if len(warm) == 0 {
			t.Errorf("src=%s: no warm leaf ran", s.name)
		}
		// testing.Benchmark calls the cold leaf with b.N = 1, then 3.
		if rounds != 4 || cold.N != 3 {
			t.Errorf("src=%s: %d cold rounds in calls up to b.N = %d, want 4 up to 3", s.name, rounds, cold.N)
		}
	}

	// Every cold round's open reads from the device: the files were
	// evicted before it.
	for _, s := range []embedSource{{name: "file"}, {name: bolt.Title, info: bolt}} {
		r := testing.Benchmark(func(b *testing.B) {
			d, n := cdbOfRun(t, e)
			rd := openSource(e, b, d, n, s)
			defer rd.close(b)
			embedGet(b, e, nil, rd.rounds(b), 120, true)
		})
		if r.N != 3 || r.Extra["open-read-B"] <= 0 && !coretest.InMemory(t, fsDir) || r.Extra["records/s"] <= 0 {
			t.Errorf("src=%s: cold EmbedGet: N=%d, %v", s.name, r.N, r.Extra)
		}
	}
}

// TestEmbedColdChild is the child process of the cold-start runs above.
func TestEmbedColdChild(t *testing.T) {
	if !IsColdChild() {
		t.Skip("runs only as EmbedColdStart's child process")
	}
	var fsys fs.FS
	if d := os.Getenv(embedDirEnv); d != "" {
		fsys = os.DirFS(d)
	}
	if err := ColdChild(os.Stdout, fsys); err != nil {
		t.Fatal(err)
	}
}

// cdbOfRun is the cdb e reads and how many of its records.
func cdbOfRun(t *testing.T, e *core.Env) (*CDB, uint64) {
	t.Helper()
	d, err := cdbOf(&e.Cfg)
	if d == nil || err != nil {
		t.Fatalf("no cdb: %v", err)
	}
	return d, cmp.Or(recordsFlag.Get(&e.Cfg), d.Records)
}

// TestDamagedCDBFileIsRebuilt: the cdb written out as a file is a fixture
// like an engine's (core's TestDamagedFixtureIsRebuilt does theirs): cut
// short, the next run sees it before reading, rebuilds it and reads it.
func TestDamagedCDBFileIsRebuilt(t *testing.T) {
	coretest.SetBenchtime(t, "1x")
	c := embedConfig(t, writeEmbedFS(t, 300, 0), "-embed_records", "300", "-cache", "warm")
	setup := func() (*core.Env, string) {
		var log strings.Builder
		e, err := core.Setup(c, "BenchmarkEmbedGet", io.Discard, &log)
		if err != nil {
			t.Fatalf("%v\n%s", err, log.String())
		}
		return e, log.String()
	}
	e, _ := setup()
	d, _ := cdbOfRun(t, e)
	path, err := filePath(e, d)
	if err != nil {
		t.Fatal(err)
	}
	if !runWorkload(e, "EmbedGet") {
		t.Fatal("reading the new cdb file failed")
	}
	if err := os.Truncate(path, d.Size/2); err != nil {
		t.Fatal(err)
	}
	e, log := setup()
	if !strings.Contains(log, "fixture "+filepath.Base(filepath.Dir(path))+" is damaged") || !strings.Contains(log, "rebuilding") {
		t.Errorf("the run did not see the cut file:\n%s", log)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != d.Size {
		t.Errorf("after the rebuild %v, %v; want %d bytes", fi, err, d.Size)
	}
	if !runWorkload(e, "EmbedGet") {
		t.Error("reading the rebuilt cdb file failed")
	}
}

// TestMinimalColdChild builds the minimal cold-start child as a run does
// and checks what it is (built under -dir, static, no engine, far smaller
// than the test binary), that it reads and verifies the record it is
// asked for, and that the cold-start benchmark measures it beside the
// test-binary child with the same figures.
func TestMinimalColdChild(t *testing.T) {
	const n = 300
	fsDir := writeEmbedFS(t, n, 0)
	t.Setenv(embedDirEnv, fsDir) // for the test-binary children
	e, err := core.Setup(embedConfig(t, fsDir), "BenchmarkEmbedColdStart", io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	dir := e.ScratchDir("coldstart")
	if err := os.MkdirAll(filepath.Join(dir, childTestBinary), 0o755); err != nil {
		t.Fatal(err)
	}
	defer e.Root.RemoveAll(dir)

	// The build may write only under -dir: with the user's Go cache and
	// temporary directories unusable, it still succeeds.
	var bin string
	t.Run("build", func(t *testing.T) {
		t.Setenv("GOCACHE", "off")
		t.Setenv("GOTMPDIR", "/dev/null/none")
		t.Setenv("TMPDIR", "/dev/null/none")
		d, _ := cdbOfRun(t, e)
		bin, err = minimalChild(e, d, filepath.Join(dir, childMinimal))
	})
	if reason, ok := asSkip(err); ok {
		t.Skip(reason)
	}
	if err != nil {
		t.Fatal(err)
	}
	if rel, err := filepath.Rel(e.Root.Path, bin); err != nil || strings.HasPrefix(rel, "..") {
		t.Errorf("the minimal child %s is not under %s", bin, e.Root.Path)
	}
	if ents, _ := os.ReadDir(filepath.Dir(bin)); len(ents) != 1 {
		t.Errorf("the build left %v beside the binary, want only it", ents)
	}

	// Static, no cgo, no engine.
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	libs, err := f.ImportedLibraries()
	if err != nil || len(libs) > 0 {
		t.Errorf("the minimal child links shared libraries %v (%v)", libs, err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the minimal child asks for a dynamic loader")
		}
	}
	f.Close()
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range bi.Settings {
		if s.Key == "CGO_ENABLED" && s.Value != "0" {
			t.Errorf("the minimal child was built with CGO_ENABLED=%s", s.Value)
		}
	}
	allowed := map[string]bool{"github.com/alldroll/cdb": true, "github.com/HdrHistogram/hdrhistogram-go": true, "golang.org/x/sys": true}
	for _, d := range bi.Deps {
		if !allowed[d.Path] {
			t.Errorf("the minimal child links %s", d.Path)
		}
	}
	fi, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	if exe := executableSize(); fi.Size()*4 > exe {
		t.Errorf("the minimal child is %d bytes, the test binary %d: want it under a quarter", fi.Size(), exe)
	}

	// It reads and verifies the record it is asked for.
	child := coldChild{kind: childMinimal, bin: bin}
	for _, job := range []coldJob{{Src: "embedded", Record: 0, RA: true}, {Src: "embedded", Record: 7, RA: true},
		{Src: "embedded", Record: n - 1, RA: false}, {Src: "none", RA: true}} {
		r, err := runColdChild(child, job)
		if err != nil {
			t.Fatalf("%+v: %v", job, err)
		}
		if r["peak-rss-KB"] <= 0 || r["open-read-ns"] <= 0 || r["ns/op"] < r["open-read-ns"] || r["exit-ns"] < r["ns/op"] {
			t.Errorf("%+v: figures %+v", job, r)
		}
	}
	if _, err := runColdChild(child, coldJob{Src: "embedded", Record: n, RA: true}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("record %d of %d: %v, want not found", n, n, err)
	}
	if _, err := runColdChild(child, coldJob{Src: "file", Record: 1}); err == nil {
		t.Error("the minimal child was handed a file to read")
	}
	// One byte of record 7's value changed inside the binary: the child
	// must notice on record 7, and only there.
	exe, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	key := records.Key(nil, 7)
	rec := append(key, records.Value(nil, 7)...)
	if c := bytes.Count(exe, rec); c != 1 {
		t.Fatalf("record 7 appears %d times in the binary, want once", c)
	}
	exe[bytes.Index(exe, rec)+len(key)] ^= 0x20 // Lorem -> lorem
	bad := coldChild{kind: childMinimal, bin: filepath.Join(t.TempDir(), "embedchild")}
	if err := os.WriteFile(bad.bin, exe, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := runColdChild(bad, coldJob{Src: "embedded", Record: 7, RA: true}); err == nil || !strings.Contains(err.Error(), "lorem") {
		t.Errorf("a changed value of record 7: %v, want its check to fail", err)
	}
	if _, err := runColdChild(bad, coldJob{Src: "embedded", Record: 8, RA: true}); err != nil {
		t.Errorf("record 8 beside a changed record 7: %v", err)
	}

	// Beside the test-binary child, in the same cold-start body: the same
	// figures, and the minimal process far smaller.
	tbin, err := copyTestBinary(filepath.Join(dir, childTestBinary))
	if err != nil {
		t.Fatal(err)
	}
	coretest.SetBenchtime(t, "2x")
	results := map[string]testing.BenchmarkResult{}
	for _, c := range []coldChild{child, {kind: childTestBinary, bin: tbin}} {
		for _, cold := range []bool{true, false} {
			r := testing.Benchmark(func(b *testing.B) {
				coldStart(b, e, coldSource(e, b, nil, embedSource{name: "embedded"}).with(c), n, cold)
			})
			if r.N != 2 {
				t.Fatalf("child=%s cold=%v did not run", c.kind, cold)
			}
			if cold {
				results[c.kind] = r
			}
		}
	}
	minimal, tb := results[childMinimal], results[childTestBinary]
	for unit := range tb.Extra {
		if _, ok := minimal.Extra[unit]; !ok {
			t.Errorf("child=minimal does not report %s", unit)
		}
	}
	if len(minimal.Extra) != len(tb.Extra) || minimal.Extra["peak-rss-KB"] <= 0 || minimal.Extra["open-read-ns"] <= 0 {
		t.Errorf("child=minimal reports %v, the test binary %v", minimal.Extra, tb.Extra)
	}
	if 2*minimal.Extra["peak-rss-KB"] > tb.Extra["peak-rss-KB"] {
		t.Errorf("peak RSS: minimal child %.0f KB, test binary %.0f KB: want under half", minimal.Extra["peak-rss-KB"], tb.Extra["peak-rss-KB"])
	}
}

// TestMinimalChildWithoutGo: a machine without the go command runs the
// cold start without the minimal child, and says why.
func TestMinimalChildWithoutGo(t *testing.T) {
	fsDir := writeEmbedFS(t, 100, 0)
	t.Setenv(embedDirEnv, fsDir)
	e, err := core.Setup(embedConfig(t, fsDir), "BenchmarkEmbedColdStart", io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir())
	dir := e.ScratchDir("coldstart")
	d, _ := cdbOfRun(t, e)
	_, err = minimalChild(e, d, dir)
	if reason, ok := asSkip(err); !ok || !strings.Contains(reason, "go command") || !strings.Contains(reason, "PATH") {
		t.Fatalf("without go: %v, want a skip that names the go command and PATH", err)
	}
	coretest.SetBenchtime(t, "1x")
	if !runWorkload(e, "EmbedColdStart") {
		t.Fatal("EmbedColdStart failed without the go command")
	}
	if ents, _ := os.ReadDir(e.Root.Sub("scratch")); len(ents) > 0 {
		t.Errorf("scratch left behind: %v", ents)
	}
}

// recordRail is the cdb's records in memory, logging the keys an Embed
// body gets.
type recordRail struct{ log *coretest.KeyLog }

func (r recordRail) get(key []byte, i uint64) error {
	r.log.Add(key)
	var kb [records.MaxKeySize]byte
	if string(records.Key(kb[:0], i)) != string(key) {
		return io.ErrUnexpectedEOF
	}
	return nil
}
func (recordRail) scan(limit uint64) (uint64, error) { return limit, nil }
func (recordRail) close() error                      { return nil }

// TestEmbedGetCallsReadTheirOwnKeys holds EmbedGet's body to the rule of
// core.CallStreams (coretest.CheckCalls).
func TestEmbedGetCallsReadTheirOwnKeys(t *testing.T) {
	coretest.SetBenchtime(t, "50x")
	coretest.CheckCalls(t, "EmbedGet", func(seed uint64) [][]string {
		c := core.Default()
		c.Seed = seed
		e, err := core.NewEnv(c, io.Discard, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		log := &coretest.KeyLog{}
		for range 2 {
			r := testing.Benchmark(func(b *testing.B) {
				log.Mark()
				embedGet(b, e, recordRail{log}, nil, 1000, true)
			})
			if r.N != 50 {
				t.Fatalf("the benchmark failed (N=%d)", r.N)
			}
		}
		return log.Calls()
	})
}
