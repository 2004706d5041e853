package engine

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/kvbench/kvbench/internal/valgrind"
)

// canonicalRead is the function an engine's users call for a point read;
// the adapter's Reader.Get must call it once per read.
type canonicalRead struct {
	engine string // registered name; its benchmark is BenchmarkReadRandom<bench>
	bench  string
	pkg    string // the package's path inside the engine's module
	fn     string // the function, as its symbol names it after the package
	// inlined is what fn calls, where fn is small enough that the
	// compiler inlines it into the adapter: then the adapter's call
	// callgrind sees is this one's (Pebble's DB.Get is one line,
	// getInternal(key, nil, nil))
	inlined string
}

var canonicalReads = []canonicalRead{
	{"bolt", "Bolt", "", "(*Bucket).Get", ""},
	{"lmdb", "Lmdb", "lmdb", "(*Txn).Get", ""},
	{"badger", "Badger", "", "(*Txn).Get", ""},
	{"pebble", "Pebble", "", "(*DB).Get", "(*DB).getInternal"},
	{"rocksdb", "RocksDB", "", "(*DB).GetPinned", ""},
	{"goleveldb", "Goleveldb", "leveldb", "(*DB).Get", ""},
}

// symbols are the point read's symbols, as callgrind names them: fn's,
// and inlined's where it has one.
func (c canonicalRead) symbols() []string {
	pkg := strings.TrimSuffix(registry[c.engine].Module+"/"+c.pkg, "/") + "."
	syms := []string{pkg + c.fn}
	if c.inlined != "" {
		syms = append(syms, pkg+c.inlined)
	}
	return syms
}

// calls are the adapter's calls in w to the point read, under either
// symbol.
func (c canonicalRead) calls(w callWindow) (n int64) {
	for _, s := range c.symbols() {
		n += w.calls[s]
	}
	return n
}

// raceBuild is set in a binary built with -race (race_test.go).
var raceBuild bool

// simReadFlags are make bench-sim's (SIM_FLAGS).
var simReadFlags = []string{"-threads", "1", "-cache", "warm", "-keys_mil", "0.01", "-valsz", "256"}

// TestPointReadsCallTheEnginesGet counts under callgrind (kvb sim, make
// bench-sim's flags, 2,000 reads) the calls each engine's adapter makes,
// inside the warm ReadRandom's timed window, to the function the engine's
// users call for a point read: one a read, within 1 % (callgrind's call
// tracking loses its place now and then at Go's stack switches), while
// the in-memory engine's makes none. An adapter that read around the
// function (a cursor of its own, an internal call), or reached it only on
// hits (63 % of reads), fails it. The suite's test binary is the smoke
// run's build (the same tags and flags): where the compiler inlines the
// point read into the adapter, the call counted is the one it makes
// (canonicalRead.inlined).
func TestPointReadsCallTheEnginesGet(t *testing.T) {
	switch {
	case raceBuild:
		t.Skip("counted by the build without -race (make unit's unit-side job runs it without)")
	case runtime.GOARCH != "amd64":
		t.Skip("the window's requests to callgrind are written for amd64 only")
	}
	if _, err := exec.LookPath("valgrind"); err != nil {
		t.Skip("valgrind is not installed (make valgrind-deps installs it)")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var tags []string
	if rocksdbOpen != nil {
		tags = append(tags, "rocksdb")
	}
	bmatsuo := lmdbModule == "github.com/bmatsuo/lmdb-go"
	if bmatsuo {
		tags = append(tags, "lmdb_bmatsuo")
	}
	goCmd := func(args ...string) error {
		cmd := exec.Command("go", args...)
		cmd.Dir = root
		if _, err := cmd.Output(); err != nil {
			return &cmdError{"go " + strings.Join(args, " "), err}
		}
		return nil
	}

	var reads []canonicalRead
	for _, c := range canonicalReads {
		switch {
		case c.engine == "rocksdb" && rocksdbOpen == nil:
			t.Run(c.engine, func(t *testing.T) { t.Skip("RocksDB is not in this build (-tags rocksdb)") })
		case bmatsuo && c.engine != "lmdb":
			t.Logf("%s left out: -tags lmdb_bmatsuo changes LMDB's binding only, the default build counts the rest", c.engine)
		default:
			reads = append(reads, c)
		}
	}

	tmp := t.TempDir()
	bin, kvbBin, data, dumps := filepath.Join(tmp, "kvbench.test"), filepath.Join(tmp, "kvb"), filepath.Join(tmp, "data"), filepath.Join(tmp, "dumps")
	// -w: callgrind reads the symbol table, not DWARF, whose writing is a
	// third of a link
	if err := parallel(
		func() error {
			return goCmd("test", "-c", "-tags="+strings.Join(tags, ","), "-ldflags=-w", "-o", bin, ".")
		},
		// go run's build, which the build cache keeps (make test's own
		// kvb), copied out by -exec cp: no link when it is there
		func() error { return goCmd("run", "-exec", "cp", "./benchstat/kvb", kvbBin) },
	); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	names := []string{"Memory"}
	for _, c := range reads {
		names = append(names, c.bench)
	}
	args := append([]string{"-dir", data, "-test.run", "^$", "-test.bench", "^BenchmarkReadRandom(" + strings.Join(names, "|") + ")$", "-test.cpu", "1"}, simReadFlags...)
	// The fixtures are built natively first: under Valgrind that takes
	// longer than the counting.
	if out, err := exec.Command(bin, append(args, "-test.benchtime", "1x")...).CombinedOutput(); err != nil {
		t.Fatal(&cmdError{"kvbench.test (building the fixtures): " + string(out), err})
	}
	const n = 2000
	if out, err := exec.Command(kvbBin, append([]string{"sim", "-cache=false", "-keep", dumps, "-benchtime", fmt.Sprintf("%dx", n), bin}, args...)...).Output(); err != nil {
		t.Fatal(&cmdError{"kvb sim: " + string(out), err})
	}
	windows := readCallDumps(t, dumps)

	syms := map[string]bool{}
	for _, c := range reads {
		for _, s := range c.symbols() {
			syms[s] = true
		}
	}
	memory := 0
	for _, w := range windows {
		if !strings.HasPrefix(w.leaf, "BenchmarkReadRandomMemory/") {
			continue
		}
		memory++
		for s, n := range w.calls {
			if syms[s] {
				t.Errorf("%s (n=%d) called %s %d times: it reads through no engine", w.leaf, w.n, s, n)
			}
		}
	}
	if memory == 0 {
		t.Error("no window of ReadRandomMemory was counted")
	}
	for _, c := range reads {
		t.Run(c.engine, func(t *testing.T) {
			counted := 0
			for _, w := range windows {
				if !strings.HasPrefix(w.leaf, "BenchmarkReadRandom"+c.bench+"/") {
					continue
				}
				if w.n != n {
					continue // go test's first run, b.N=1
				}
				counted++
				got, sym := c.calls(w), strings.Join(c.symbols(), " or ")
				t.Logf("%s: %d reads, %d calls to %s", w.leaf, w.n, got, sym)
				if got < w.n-w.n/100 || got > w.n+w.n/100 {
					t.Errorf("%s: %d reads called %s %d times, want once a read (±1%%)", w.leaf, w.n, sym, got)
				}
			}
			if counted == 0 {
				t.Fatalf("no window of ReadRandom%s was counted", c.bench)
			}
		})
	}
}

// callWindow is one timed window's dump: the benchmark, its b.N and the
// calls the adapters (this package's functions) made in it, by the
// callee's symbol.
type callWindow struct {
	leaf  string
	n     int64
	calls map[string]int64
}

// adapters prefixes the symbols of this package's functions.
const adapters = "github.com/kvbench/kvbench/internal/engine."

// readCallDumps reads every dump kvb sim -keep left under dir that a
// timed window asked for. Callgrind names a function once, "(id) name",
// and by "(id)" after. Go's stack switches look like recursion to it: a
// function entered again before it returned is "name'2" (counted as
// name), and it may record a call into the engine from the engine's own
// code that none made; only the adapters' calls count.
func readCallDumps(t *testing.T, dir string) []callWindow {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*", "cg.*"))
	if err != nil {
		t.Fatal(err)
	}
	entry := regexp.MustCompile(`^c?fn=\((\d+)\)(?: (.*))?$`)
	depth := regexp.MustCompile(`'\d+$`)
	var ws []callWindow
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		w := callWindow{calls: map[string]int64{}}
		ok := false
		names := map[string]string{}
		var caller, callee string
		for line := range strings.Lines(string(raw)) {
			line = strings.TrimSuffix(line, "\n")
			if desc, found := strings.CutPrefix(line, "desc: Trigger: Client Request: "); found {
				w.leaf, w.n, ok = valgrind.ParseWindow(desc)
			}
			if m := entry.FindStringSubmatch(line); m != nil {
				if m[2] != "" {
					names[m[1]] = depth.ReplaceAllString(m[2], "")
				}
				if strings.HasPrefix(line, "cfn=") {
					callee = names[m[1]]
				} else {
					caller = names[m[1]]
				}
			}
			if rest, found := strings.CutPrefix(line, "calls="); found && strings.HasPrefix(caller, adapters) {
				count, _, _ := strings.Cut(rest, " ")
				n, err := strconv.ParseInt(count, 10, 64)
				if err != nil {
					t.Fatalf("%s: %q: %v", f, line, err)
				}
				w.calls[callee] += n
			}
		}
		if ok {
			ws = append(ws, w)
		}
	}
	return ws
}

// parallel runs the functions at once and returns the first error.
func parallel(fns ...func() error) error {
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Go(func() { errs[i] = fn() })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// cmdError is a command that failed, with what it wrote to stderr.
type cmdError struct {
	what string
	err  error
}

func (e *cmdError) Error() string {
	if ee, ok := e.err.(*exec.ExitError); ok {
		return e.what + ": " + e.err.Error() + "\n" + string(ee.Stderr)
	}
	return e.what + ": " + e.err.Error()
}
