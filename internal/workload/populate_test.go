package workload

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/core/coretest"
	"github.com/kvbench/kvbench/internal/engine"
)

// populateEnv sets up a run of pattern on a tiny data set in a fresh -dir.
func populateEnv(t *testing.T, pattern string, out io.Writer) *core.Env {
	t.Helper()
	c := core.Default()
	c.KeysMil, c.ValSize, c.Batch, c.Dir = 0.002, 64, 300, t.TempDir()
	writersFlag.Set(&c, 2)
	return setup(t, c, pattern, out)
}

// compiled lists the stores compiled into this binary that w runs on.
func compiled(w *core.Workload) []engine.Info {
	var out []engine.Info
	for _, info := range engine.All() {
		if info.Missing == "" && w.Engines(info) {
			out = append(out, info)
		}
	}
	return out
}

// scratchLeft lists what is left under the run's scratch directory.
func scratchLeft(e *core.Env) []string {
	ents, _ := os.ReadDir(e.Root.Sub("scratch"))
	var out []string
	for _, d := range ents {
		out = append(out, d.Name())
	}
	return out
}

// A populate op writes every key of the data set, each with its own
// value, and reports what it cost.
func TestPopulateWritesEveryKey(t *testing.T) {
	e := populateEnv(t, "BenchmarkPopulate", io.Discard)
	for _, info := range compiled(registered(t, "Populate")) {
		dir := t.TempDir()
		st, err := writeOnce(e, info, e.Cfg.Options(info, dir, e.Gen.LogicalBytes()), "", core.GenSource{G: e.Gen}, 0, "test", "test", func() {}, func() {})
		if err != nil {
			t.Fatalf("%s: %v", info.Name, err)
		}
		if st.elapsed <= 0 || st.space.Data <= 0 || st.hasIO == coretest.InMemory(t, dir) || st.hasIO && st.written <= 0 {
			t.Errorf("%s: stats %+v", info.Name, st)
		}
		o := e.Cfg.Options(info, dir, e.Gen.LogicalBytes())
		o.ReadOnly = true
		db, err := engine.Open(info.Name, o)
		if err != nil {
			t.Fatalf("%s: reopen: %v", info.Name, err)
		}
		n, _, err := core.ScanAll(db, true, core.GenSource{G: e.Gen}.NewChecker(true))
		db.Close()
		if err != nil || n != e.Keys {
			t.Errorf("%s: read back %d keys (%v), want %d", info.Name, n, err, e.Keys)
		}
	}
}

// The Populate benchmark reports its metrics, prints before each leaf the
// settings of that leaf's options (sync off, then on), and removes every
// scratch database it made.
func TestPopulateBenchmark(t *testing.T) {
	coretest.SetBenchtime(t, "1x")
	var out bytes.Buffer
	e := populateEnv(t, "BenchmarkPopulate", &out)
	for _, info := range compiled(registered(t, "Populate")) {
		out.Reset()
		opts := e.Cfg.Options(info, "", e.Gen.LogicalBytes())
		r := testing.Benchmark(func(b *testing.B) { populate(b, e, info, opts) })
		wa, hasWA := r.Extra["write-amp"]
		if r.N != 1 || r.Extra["keys/s"] <= 0 || hasWA == coretest.InMemory(t, e.Cfg.Dir) || hasWA && wa <= 0 || r.Extra["space-amp"] <= 0 || r.Bytes != e.Gen.LogicalBytes() {
			t.Errorf("%s: result %+v", info.Name, r)
		}
		if left := scratchLeft(e); len(left) != 0 {
			t.Fatalf("%s: scratch left behind by populate: %v", info.Name, left)
		}

		if !runs(e, "Populate", info.Name) {
			t.Fatalf("%s: Populate failed", info.Name)
		}
		var lines []string // the settings set; "settings-x:" alone clears x's
		for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			if !strings.HasSuffix(l, ":") && !strings.HasPrefix(l, "gate: ") { // the gate line is the workload's, not the engine's
				lines = append(lines, l)
			}
		}
		if len(lines) != 2 || lines[0] == lines[1] {
			t.Fatalf("%s: want two different settings lines, one per sync value:\n%s", info.Name, out.String())
		}
		for _, l := range lines {
			if !strings.HasPrefix(l, "settings-"+info.Name+": ") {
				t.Errorf("%s: %q is not its settings line", info.Name, l)
			}
		}
		if left := scratchLeft(e); len(left) != 0 {
			t.Fatalf("%s: scratch left behind: %v", info.Name, left)
		}
	}
}

// Batch runs on the engines with batch variants and names every variant.
func TestBatchVariants(t *testing.T) {
	w := registered(t, "Batch")
	n := 0
	for _, info := range engine.All() {
		dims := info.DimsWith(engine.CommitMode)
		if w.Engines(info) != (len(dims) > 0 && !info.Reference) {
			t.Errorf("Batch on %s: %v, with %d Batch dimensions", info.Name, w.Engines(info), len(dims))
		}
		if len(dims) == 0 {
			continue
		}
		n++
		want := 1
		for _, d := range dims {
			want *= len(d.Values)
		}
		vs := core.Variants(info, engine.CommitMode)
		seen := map[string]bool{}
		for _, v := range vs {
			seen[v.Name] = true
			if !strings.HasPrefix(v.Name, dims[0].Name+"=") {
				t.Errorf("%s: variant %q", info.Name, v.Name)
			}
		}
		if len(vs) != want || len(seen) != want {
			t.Errorf("%s: %d variants (%d names), want %d", info.Name, len(vs), len(seen), want)
		}
	}
	if n == 0 {
		t.Error("no engine has Batch variants")
	}
}
