package core

import (
	"cmp"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/engine"
)

// Workload is one benchmark family: its body, its engines, the fixtures
// it reads and the scratch space it writes (from which the run is planned
// and built before any benchmark starts), and the units it reports.
type Workload struct {
	// Name is the family: BenchmarkReadRandom<Engine> for "ReadRandom".
	Name string
	// EngineFirst names it Benchmark<Engine><Name> (BenchmarkLmdbBatch).
	EngineFirst bool
	// Engines selects the engines it runs on; nil makes it one benchmark,
	// Benchmark<Name>, that runs on no engine (the disk, the embedded cdb).
	Engines func(engine.Info) bool
	// Fixtures lists what it reads on an engine (nil info when Engines is
	// nil), built in Setup.
	Fixtures func(e *Env, info engine.Info) []*Fixture
	// Scratch is the most it writes outside fixtures at one time, in bytes.
	Scratch func(e *Env, info engine.Info) int64
	// Units describes every unit it reports with b.ReportMetric (which
	// the gate judges: internal/families).
	Units []Unit
	// Options are its own flags (Flag), checked before any work and
	// echoed as configuration lines. Workloads that share one list it each.
	Options []Option
	// Run is the body; it loops over the dimensions with b.Run.
	Run func(b *testing.B, e *Env, info engine.Info)

	pkg string // the import path of the package that registered it
}

// BenchName is the top-level benchmark name of w on info.
func (w *Workload) BenchName(info engine.Info) string {
	switch {
	case w.Engines == nil:
		return "Benchmark" + w.Name
	case w.EngineFirst:
		return "Benchmark" + info.Title + w.Name
	}
	return "Benchmark" + w.Name + info.Title
}

var workloads = map[string]*Workload{}

// Register adds a workload and its flags, from an init.
func Register(w *Workload) {
	if _, dup := workloads[w.Name]; dup {
		panic("core: workload registered twice: " + w.Name)
	}
	w.pkg = callerPackage()
	workloads[w.Name] = w
	// Workloads that share a flag list the same *Flag; two flags of one
	// name are a bug.
	for _, o := range w.Options {
		i := slices.IndexFunc(options, func(p Option) bool { return p.FlagName() == o.FlagName() })
		if i < 0 {
			options = append(options, o)
		} else if options[i] != o {
			panic("core: two workload flags named " + o.FlagName() + " (" + w.Name + "'s and another's)")
		}
	}
}

// callerPackage is the import path of the package whose init called
// Register, which the generated wrappers import.
func callerPackage() string {
	pc, _, _, ok := runtime.Caller(2)
	if !ok {
		return ""
	}
	fn := runtime.FuncForPC(pc).Name() // "github.com/kvbench/kvbench/internal/workload.init.0"
	slash := strings.LastIndex(fn, "/")
	if dot := strings.Index(fn[slash+1:], "."); dot >= 0 {
		return fn[:slash+1+dot]
	}
	return fn
}

// Workloads lists every registered workload by name.
func Workloads() []*Workload {
	return slices.SortedFunc(maps.Values(workloads), func(a, b *Workload) int { return cmp.Compare(a.Name, b.Name) })
}

// Target is one top-level benchmark: a workload on an engine.
type Target struct {
	W    *Workload
	Info engine.Info
}

// Name is the target's benchmark name.
func (t Target) Name() string { return t.W.BenchName(t.Info) }

// Targets lists every top-level benchmark, in name order: each workload
// on each engine it declares, and each engine-less workload once.
func Targets() []Target {
	var out []Target
	for _, w := range Workloads() {
		if w.Engines == nil {
			out = append(out, Target{W: w})
			continue
		}
		for _, info := range engine.All() {
			if w.Engines(info) {
				out = append(out, Target{W: w, Info: info})
			}
		}
	}
	slices.SortFunc(out, func(a, b Target) int { return cmp.Compare(a.Name(), b.Name()) })
	return out
}

// Stores selects every real store; Everything adds the calibration rail.
func Stores(i engine.Info) bool     { return !i.Reference }
func Everything(i engine.Info) bool { return true }

// Run is the body of every generated benchmark wrapper: workload on the
// engine of that name ("" for none).
func Run(b *testing.B, e *Env, workload, engineName string) {
	w, ok := workloads[workload]
	if !ok {
		b.Fatalf("no workload %q", workload)
	}
	if e == nil {
		b.Fatal("core: no Env: benchmarks run through the root package's TestMain")
	}
	var info engine.Info
	if engineName != "" {
		if info, ok = engine.Lookup(engineName); !ok {
			b.Skipf("engine %s is not registered", engineName)
		}
		if info.Missing != "" {
			b.Skipf("%s is not compiled into this binary: %s", info.Title, info.Missing)
		}
		if w.Engines == nil || !w.Engines(info) {
			b.Fatalf("workload %s does not run on %s", workload, info.Name)
		}
		if info.Reference && e.Cfg.MemLimit != 0 {
			b.Skipf("%s keeps the data set in the heap: it has no place under -mem_limit", info.Title)
		}
	}
	// Setup planned what a benchmark writes; one outside the plan has no
	// room under -dir.
	plan := cmp.Or(e.plan, &Plan{})
	if t := (Target{W: w, Info: info}); !slices.ContainsFunc(plan.Targets, func(p Target) bool { return p.Name() == t.Name() }) {
		b.Fatalf("%s is not in this run's plan (-test.bench %q): its fixtures and scratch space were never set up under -dir", t.Name(), plan.Pattern)
	}
	e.setGate(w.Name)
	e.WatchLeaf(b.Name()) // until a sub-benchmark names itself
	defer func() { e.block = 0 }()
	for _, bs := range e.blocks(info) { // one pass per block size
		e.block = bs
		n := len(e.handles)
		w.Run(b, e, info)
		// Two block sizes never hold memory at once; the handles' cleanup
		// closes nothing more.
		for _, h := range e.handles[n:] {
			h.Close(b)
		}
		e.handles = e.handles[:n]
	}
}

// SubName joins key=value parts into a sub-benchmark name:
// SubName("cache", "warm", "threads", 16) is "cache=warm/threads=16". A
// part whose value is "" is left out (a level only away from its default).
func SubName(kv ...any) string {
	s := ""
	for i := 0; i+1 < len(kv); i += 2 {
		if v, ok := kv[i+1].(string); ok && v == "" {
			continue
		}
		if s != "" {
			s += "/"
		}
		s += fmt.Sprintf("%v=%v", kv[i], kv[i+1])
	}
	return s
}
