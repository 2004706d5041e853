package embedded

import (
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/core/coretest"
	"github.com/kvbench/kvbench/internal/records"
)

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
