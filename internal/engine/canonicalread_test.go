package engine

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// canonicalRead is the function an engine's users call for a point read;
// the adapter's Reader.Get must call it once per read.
type canonicalRead struct {
	engine string // registered name; its benchmark is BenchmarkReadRandom<bench>
	bench  string
	pkg    string // the package's path inside the engine's module
	file   string
	decl   string // the declaration's first line, as the module spells it
	// steps of the loop injected there: about 7 instructions each, many
	// times the run-to-run spread of the engine's count. Badger's count
	// moves by up to 4,000 instr/op with where its cache policy's goroutine
	// runs, so it gets the larger loop.
	steps int
}

var canonicalReads = []canonicalRead{
	{"bolt", "Bolt", "", "bucket.go", "func (b *Bucket) Get(key []byte) []byte {", 2000},
	{"lmdb", "Lmdb", "lmdb", "txn.go", "func (txn *Txn) Get(dbi DBI, key []byte) ([]byte, error) {", 2000},
	{"badger", "Badger", "", "txn.go", "func (txn *Txn) Get(key []byte) (item *Item, rerr error) {", 10000},
	{"pebble", "Pebble", "", "db.go", "func (d *DB) Get(key []byte) ([]byte, io.Closer, error) {", 2000},
	{"rocksdb", "RocksDB", "", "db.go", "func (db *DB) GetPinned(opts *ReadOptions, key []byte) (handle *PinnableSliceHandle, err error) {", 2000},
	{"goleveldb", "Goleveldb", "leveldb", "db.go", "func (db *DB) Get(key []byte, ro *opt.ReadOptions) (value []byte, err error) {", 2000},
}

// pkgPath is the import path of the package the point read is in.
func (c canonicalRead) pkgPath() string {
	return strings.TrimSuffix(registry[c.engine].Module+"/"+c.pkg, "/")
}

// raceBuild is set in a binary built with -race (race_test.go).
var raceBuild bool

// simReadFlags are make bench-sim's (SIM_FLAGS).
var simReadFlags = []string{"-threads", "1", "-cache", "warm", "-keys_mil", "0.01", "-valsz", "256"}

// TestPointReadsCallTheEnginesGet builds the suite's test binary twice,
// plain and with each engine module replaced by a copy whose point-read
// function starts with a busy loop, and counts both under callgrind
// (kvb sim): each engine's ReadRandom must grow by the loop's
// instructions, once per read, while the in-memory engine, which reads
// through none of them, stays where it was. An adapter that read around the
// function (a cursor of its own, an internal call) would not grow.
func TestPointReadsCallTheEnginesGet(t *testing.T) {
	switch {
	case raceBuild:
		t.Skip("counted by the build without -race (make unit's unit-side job runs it without)")
	case runtime.GOARCH != "amd64":
		t.Skip("the injected loop is measured on amd64 only")
	}
	if _, err := exec.LookPath("valgrind"); err != nil {
		t.Skip("valgrind is not installed (make valgrind-deps installs it)")
	}
	start := time.Now()
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
	tagFlag := "-tags=" + strings.Join(tags, ",")
	goCmd := func(args ...string) ([]byte, error) {
		cmd := exec.Command("go", args...)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			return out, &cmdError{"go " + strings.Join(args, " "), err}
		}
		return out, nil
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

	// The slowed build: each engine module replaced (go build -modfile, so
	// the tree's go.mod is never touched) by a copy with the loop in place.
	tmp := t.TempDir()
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range reads {
		mod := registry[c.engine].Module
		out, err := goCmd("list", "-m", "-f", "{{.Dir}} {{.Version}}", mod)
		dirVer := strings.Fields(string(out))
		if err != nil || len(dirVer) != 2 {
			t.Fatalf("%s: want its directory and version: %q %v", mod, out, err)
		}
		slowed := slowedModule(t, mod+"@"+dirVer[1], dirVer[0], filepath.Join(c.pkg, c.file), c.decl, c.steps)
		gomod = append(gomod, "\nreplace "+mod+" => "+slowed+"\n"...)
	}
	modfile := filepath.Join(tmp, "slowed.mod")
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err == nil {
		err = os.WriteFile(filepath.Join(tmp, "slowed.sum"), sum, 0o644)
	}
	if err == nil {
		err = os.WriteFile(modfile, gomod, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	plainBin, slowBin, kvbBin := filepath.Join(tmp, "plain.test"), filepath.Join(tmp, "slowed.test"), filepath.Join(tmp, "kvb")
	// -w: callgrind counts and objdump reads the symbol table, neither
	// needs DWARF, whose writing is a third of a link
	if err := parallel(
		func() error { _, err := goCmd("test", "-c", tagFlag, "-ldflags=-w", "-o", plainBin, "."); return err },
		func() error {
			_, err := goCmd("test", "-c", tagFlag, "-ldflags=-w", "-modfile", modfile, "-o", slowBin, ".")
			return err
		},
		func() error {
			// go run's build, which the build cache keeps (make test's own
			// kvb), copied out by -exec cp: no link when it is there
			_, err := goCmd("run", "-exec", "cp", "./benchstat/kvb", kvbBin)
			return err
		},
	); err != nil {
		t.Fatal(err)
	}
	built := time.Since(start)
	// binutils' objdump (Go's own is built from source on first use), one
	// function a call
	objdump := func(bin string) map[string]int {
		loops := map[string]int{}
		for _, c := range reads {
			out, err := exec.Command("objdump", "-d", "--no-show-raw-insn", "--disassemble="+c.pkgPath()+".kvbenchSpin", bin).Output()
			if err != nil {
				t.Fatal(&cmdError{"objdump " + filepath.Base(bin), err})
			}
			if n := loopLength(out); n > 0 {
				loops[c.pkgPath()] = n
			}
		}
		return loops
	}
	loops := objdump(slowBin)
	if plain := objdump(plainBin); len(plain) > 0 {
		t.Fatalf("the plain binary has the injected loop in %v", plain)
	}

	// One process a side, every engine in it; the fixtures are built
	// natively first (under Valgrind that takes longer than the counting).
	names := []string{"Memory"}
	for _, c := range reads {
		names = append(names, c.bench)
	}
	args := append([]string{"-test.run", "^$", "-test.bench", "^BenchmarkReadRandom(" + strings.Join(names, "|") + ")$", "-test.cpu", "1"}, simReadFlags...)
	counts := map[string]map[string]float64{}
	var mu sync.Mutex
	count := func(bin string) error {
		data, err := os.MkdirTemp(tmp, "data-")
		if err != nil {
			return err
		}
		a := append([]string{"-dir", data}, args...)
		if out, err := exec.Command(bin, append(a, "-test.benchtime", "1x")...).CombinedOutput(); err != nil {
			return &cmdError{filepath.Base(bin) + " (building the fixtures): " + string(out), err}
		}
		out, err := exec.Command(kvbBin, append([]string{"sim", "-cache=false", "-benchtime", "2000x", bin}, a...)...).Output()
		if err != nil {
			return &cmdError{"sim " + filepath.Base(bin) + ": " + string(out), err}
		}
		mu.Lock()
		defer mu.Unlock()
		counts[bin] = instrPerOp(out)
		return nil
	}
	if err := parallel(func() error { return count(plainBin) }, func() error { return count(slowBin) }); err != nil {
		t.Fatal(err)
	}
	plain, slowed := counts[plainBin], counts[slowBin]
	t.Logf("built in %.0f s, counted in %.0f s", built.Seconds(), (time.Since(start) - built).Seconds())

	p, s := plain["Memory"], slowed["Memory"]
	t.Logf("ReadRandomMemory (through no engine): %.0f -> %.0f instr/op", p, s)
	if p == 0 || s == 0 || math.Abs(s-p) > 100 {
		t.Errorf("ReadRandomMemory moved from %.0f to %.0f instr/op: the two builds differ by more than the engines' functions", p, s)
	}
	for _, c := range reads {
		t.Run(c.engine, func(t *testing.T) {
			pkg := c.pkgPath()
			fn := strings.TrimSuffix(c.decl, " {")
			p, s := plain[c.bench], slowed[c.bench]
			perStep, ok := loops[pkg]
			if p == 0 || s == 0 || !ok {
				t.Fatalf("ReadRandom%s: plain %v, slowed %v instr/op; loop found in %s: %v", c.bench, p, s, pkg, ok)
			}
			want, got := float64(c.steps*perStep), s-p
			t.Logf("ReadRandom%s: %.0f -> %.0f instr/op: %+.0f for %.0f injected (%d steps x %d) in %s: %+.1f%%",
				c.bench, p, s, got, want, c.steps, perStep, fn, 100*(got/want-1))
			if math.Abs(got/want-1) > 0.15 {
				t.Errorf("ReadRandom%s grew by %.0f instr/op, want %.0f ±15%%: its point read does not call %s once per read", c.bench, got, want, fn)
			}
		})
	}
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
