package kvbench

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/measure"
)

// Every flag of the suite, in one place. Each is validated by parseConfig
// before any work starts and echoed as a benchfmt configuration line.
var (
	flagKeysMil    = flag.Float64("keys_mil", 0.1, "number of distinct keys, in millions (0.01 is 10,000)")
	flagValSize    = flag.Int("valsz", 1024, "value size in bytes")
	flagDir        = flag.String("dir", "", "directory for fixtures and scratch databases (default: the user cache directory); the suite works only inside <dir>/kvbench")
	flagSeed       = flag.Uint64("seed", 1, "seed of keys and values")
	flagValueRatio = flag.Float64("value_ratio", 1.0, "fraction of each value that is random: 1 is incompressible, 0.5 compresses about 2x")
	flagSync       = flag.Bool("sync", false, "make every committed batch durable before the commit returns (all engines)")
	flagCacheMB    = flag.Int("cache_mb", 64, "block cache of the LSM engines in MiB (B-trees read through the OS page cache)")
	flagMemtableMB = flag.Int("memtable_mb", 64, "memtable (write buffer) of the LSM engines in MiB")
	flagCompress   = flag.String("compression", "none", "block compression of the LSM engines: none, snappy or zstd (B-trees never compress)")
	flagBloomBits  = flag.Int("bloom_bits", 10, "Bloom filter bits per key of the LSM engines; 0 turns filters off")
	flagBatch      = flag.Int("batch", 1000, "keys per write batch in populate and fixture builds")
	flagWriters    = flag.Int("writers", 1, "goroutines writing batches concurrently in populate")
	flagVerify     = flag.String("verify", "cheap", "how reads are verified: cheap (length and three words) or full (every byte)")
	flagLmdbRA     = flag.Bool("lmdb_readahead", true, "leave OS readahead on for LMDB's memory map (false sets MDB_NORDAHEAD)")
	flagLmdbWrite  = flag.String("lmdb_write", "update", "how LMDB commits a batch: update (Env.Update) or txn (locked thread, BeginTxn/Commit)")
	flagBoltFree   = flag.String("bolt_freelist", "map", "bbolt freelist type: map or array")
	flagBoltWrite  = flag.String("bolt_write", "update", "how bbolt commits a batch: update (DB.Update) or batch (DB.Batch)")
	flagBadgerVT   = flag.Int("badger_vthreshold", 1<<20, "values of at least this many bytes go to Badger's value log (Badger v4's default is 1 MiB)")
	flagDropCaches = flag.Bool("drop_caches", false, "cache=cold also writes 3 to /proc/sys/vm/drop_caches (root only), on top of evicting the fixture's files")
	flagScanLen    = flag.Int("scan_len", 100, "entries read after each seek in BenchmarkScan")
	flagThreads    intList
	flagHitRates   floatList
	flagCaches     wordList
)

// Seed 000's prefix lookups (BenchmarkPrefetch*).
var (
	flagPrefetchTraces  = flag.Int("prefetch_traces", 600, "trace IDs in the prefix-lookup data set, 90 keys each; 9000 is the seed's full size (810,000 keys)")
	flagPrefetchValSize = flag.Int("prefetch_valsz", 2500, "value size in bytes of the prefix-lookup data set")
)

// The embedded constant database (embed_test.go).
var (
	flagEmbedRecords   = flag.Uint64("embed_records", 0, "records of the embedded cdb the Embed benchmarks use (0: all of them)")
	flagEmbedReadahead = flag.Bool("embed_readahead", true, "leave OS readahead on for the embedded cdb's pages of the executable (false: madvise MADV_RANDOM, as -lmdb_readahead=false does for LMDB)")
)

// Open-loop load, the knee, HTTP and many-table Bloom filters (loadflags_test.go).
var (
	flagRate        = rateFlag("rate", "10000", "comma-separated target rates in operations per second, one rate=N sub-benchmark each (open loop)")
	flagWriteRate   = flag.Int("write_rate", 1000, "the writer's rate in operations per second in op=readwhilewriting")
	flagLoadTime    = flag.Duration("load_time", 5*time.Second, "measured window of one fixed-rate run (one b.N iteration)")
	flagLoadWorkers = flag.Int("load_workers", 4, "goroutines (HTTP: keep-alive connections) that take operations off the fixed-rate schedule")
	flagSLO         = flag.Duration("slo", 10*time.Millisecond, "p99 latency a rate must stay under to count as sustained in BenchmarkKnee")
	flagKneeTime    = flag.Duration("knee_time", 2*time.Second, "measured window of each trial rate in BenchmarkKnee")
	flagKneeStart   = flag.Int("knee_start", 1000, "first rate BenchmarkKnee tries, in operations per second; it doubles from there")
	flagKneeSteps   = flag.Int("knee_steps", 4, "bisection steps BenchmarkKnee takes between the last sustained and the first failed rate")
	flagLatencyDir  = flag.String("latency_dir", "", "existing directory to write each fixed-rate sub-benchmark's full HDR percentile spectrum into (one .hgrm file each)")
	flagSSTTables   = flag.Int("sst_tables", 100, "unmerged tables in BenchmarkBloom's fixtures (Badger, RocksDB, Pebble; compactions off)")
	flagBloomFPR    = fprFlag("bloom_fpr", "off,0.01,0.03,0.5", "comma-separated Bloom filter false-positive rates for BenchmarkBloom (off: no filter), one bloom= sub-benchmark each")
)

func init() {
	flagThreads = intList{1, 16}
	flag.Var(&flagThreads, "threads", "comma-separated reader goroutine counts, one sub-benchmark each")
	flagHitRates = floatList{0.63}
	flag.Var(&flagHitRates, "hit_rate", "comma-separated fractions of random reads that ask for a key that exists, one sub-benchmark each (0,0.63,1 adds the all-miss and all-hit cases)")
	flagCaches = wordList{"warm", "cold"}
	flag.Var(&flagCaches, "cache", "comma-separated page cache states to read in: warm (one untimed pass first) and cold (fixture evicted from the page cache, then reopened)")
}

// floatList is a comma-separated list of numbers; validateFlags checks
// their range so the error names the flag like every other.
type floatList []float64

func (l *floatList) String() string {
	s := make([]string, len(*l))
	for i, v := range *l {
		s[i] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	return strings.Join(s, ",")
}

func (l *floatList) Set(v string) error {
	var out floatList
	for _, f := range strings.Split(v, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", f)
		}
		out = append(out, x)
	}
	*l = out
	return nil
}

// wordList is a comma-separated list of words, checked by validateFlags.
type wordList []string

func (l *wordList) String() string { return strings.Join(*l, ",") }

func (l *wordList) Set(v string) error {
	var out wordList
	for _, f := range strings.Split(v, ",") {
		out = append(out, strings.TrimSpace(f))
	}
	*l = out
	return nil
}

// intList is a comma-separated list of positive integers.
type intList []int

func (l *intList) String() string {
	s := make([]string, len(*l))
	for i, v := range *l {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ",")
}

func (l *intList) Set(v string) error {
	var out intList
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 4096 {
			return fmt.Errorf("%q is not a whole number from 1 to 4096", f)
		}
		out = append(out, n)
	}
	*l = out
	return nil
}

// config is the validated run configuration every benchmark reads.
type config struct {
	keys      uint64
	dir       string // -dir as given or defaulted
	root      dataset.Root
	gen       *dataset.Gen
	fullCheck bool
}

var cfg config

// flagError names the flag and what it accepts.
func flagError(name string, val any, want string) error {
	return fmt.Errorf("-%s %v: %s", name, val, want)
}

// validateFlags checks every flag without touching the disk.
func validateFlags() error {
	var errs []error
	if k := *flagKeysMil; !(k > 0 && k <= 10_000) || k*1e6 < 1 {
		errs = append(errs, flagError("keys_mil", k, "must be more than 0 (at least one key) and at most 10000"))
	}
	if v := *flagValSize; v < 1 || v > 64<<20 {
		errs = append(errs, flagError("valsz", v, "must be from 1 to 67108864 bytes"))
	}
	for _, h := range flagHitRates {
		if !(h >= 0 && h <= 1) {
			errs = append(errs, flagError("hit_rate", h, "must be from 0 to 1"))
		}
	}
	for _, c := range flagCaches {
		if c != "warm" && c != "cold" {
			errs = append(errs, flagError("cache", c, "must be warm or cold"))
		}
	}
	if n := *flagScanLen; n < 1 || n > 1_000_000 {
		errs = append(errs, flagError("scan_len", n, "must be from 1 to 1000000"))
	}
	if r := *flagValueRatio; !(r > 0 && r <= 1) {
		errs = append(errs, flagError("value_ratio", r, "must be more than 0 and at most 1"))
	}
	if c := *flagCacheMB; c < 1 || c > 1<<20 {
		errs = append(errs, flagError("cache_mb", c, "must be from 1 to 1048576"))
	}
	if m := *flagMemtableMB; m < 1 || m > 4096 {
		errs = append(errs, flagError("memtable_mb", m, "must be from 1 to 4096"))
	}
	if b := *flagBloomBits; b < 0 || b > 64 {
		errs = append(errs, flagError("bloom_bits", b, "must be from 0 (off) to 64"))
	}
	if b := *flagBatch; b < 1 || b > 10_000_000 {
		errs = append(errs, flagError("batch", b, "must be from 1 to 10000000"))
	}
	if w := *flagWriters; w < 1 || w > 256 {
		errs = append(errs, flagError("writers", w, "must be from 1 to 256"))
	}
	if v := *flagBadgerVT; v < 1 || v > 1<<30 {
		errs = append(errs, flagError("badger_vthreshold", v, "must be from 1 to 1073741824"))
	}
	for name, p := range map[string]struct {
		v    string
		opts []string
	}{
		"compression":   {*flagCompress, []string{"none", "snappy", "zstd"}},
		"verify":        {*flagVerify, []string{"cheap", "full"}},
		"lmdb_write":    {*flagLmdbWrite, []string{"update", "txn"}},
		"bolt_freelist": {*flagBoltFree, []string{"map", "array"}},
		"bolt_write":    {*flagBoltWrite, []string{"update", "batch"}},
	} {
		if !contains(p.opts, p.v) {
			errs = append(errs, flagError(name, p.v, "must be one of "+strings.Join(p.opts, ", ")))
		}
	}
	errs = append(errs, validatePrefetchFlags()...)
	if err := validateEmbedFlags(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, validateLoadFlags()...)
	sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	return errors.Join(errs...)
}

// checkDir validates -dir: an existing, writable directory with room for
// the work ahead. needBytes is the estimate of what the run will write.
func checkDir(dir string, needBytes int64) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return flagError("dir", dir, "does not exist or cannot be read: "+err.Error())
	}
	if !fi.IsDir() {
		return flagError("dir", dir, "is not a directory")
	}
	if err := syscall.Access(dir, 2 /* W_OK */); err != nil {
		return flagError("dir", dir, "is not writable: "+err.Error())
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err == nil && st.Flags&1 /* ST_RDONLY */ != 0 {
		return flagError("dir", dir, "is on a read-only filesystem")
	}
	fs, err := measure.FileSystem(dir)
	if err != nil {
		return flagError("dir", dir, err.Error())
	}
	if needBytes > fs.Free {
		return flagError("dir", dir, fmt.Sprintf("has %s free, the run needs about %s (fixtures and scratch databases)", human(fs.Free), human(needBytes)))
	}
	return nil
}

// parseConfig validates everything and fills cfg; no file is written
// before it succeeds.
func parseConfig(plan *runPlan) error {
	if err := validateFlags(); err != nil {
		return err
	}
	cfg.keys = uint64(math.Round(*flagKeysMil * 1e6))
	g, err := dataset.New(dataset.Spec{Keys: cfg.keys, ValueSize: *flagValSize, ValueRatio: *flagValueRatio, Seed: *flagSeed})
	if err != nil {
		return err
	}
	cfg.gen = g
	if err := parsePrefetchConfig(); err != nil {
		return err
	}
	cfg.fullCheck = *flagVerify == "full"
	cfg.dir = *flagDir
	if !plan.touchesDisk() {
		return nil
	}
	if cfg.dir == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			return flagError("dir", "", "no default: "+err.Error()+"; pass -dir")
		}
		if err := os.MkdirAll(c, 0o755); err != nil {
			return flagError("dir", c, err.Error())
		}
		cfg.dir = c
	}
	if abs, err := filepath.Abs(cfg.dir); err == nil {
		cfg.dir = abs
	}
	if err := checkDir(cfg.dir, plan.diskEstimate(cfg.dir, g)); err != nil {
		return err
	}
	root, err := dataset.OpenRoot(cfg.dir)
	if err != nil {
		return flagError("dir", cfg.dir, err.Error())
	}
	cfg.root = root
	return nil
}

// engineOptions is the one place flags become engine options, the same
// intent for every engine.
func engineOptions(info engine.Info, dir string) engine.Options {
	comp := *flagCompress
	if info.CheckCompression(comp) != nil {
		comp = "none" // B-trees store values as they are
	}
	return engine.Options{
		Dir:                  dir,
		Sync:                 *flagSync,
		CacheMB:              *flagCacheMB,
		MemtableMB:           *flagMemtableMB,
		Compression:          comp,
		BloomBitsPerKey:      *flagBloomBits,
		ExpectedBytes:        cfg.gen.LogicalBytes(),
		LmdbReadahead:        *flagLmdbRA,
		LmdbWriteMode:        *flagLmdbWrite,
		BoltFreelist:         *flagBoltFree,
		BoltWriteMode:        *flagBoltWrite,
		BadgerValueThreshold: *flagBadgerVT,
	}
}

// printConfig writes the run's configuration as benchfmt key: value lines,
// so benchstat keeps them with the results.
func printConfig(w io.Writer, engines []engine.Info) {
	line := func(k string, v any) { fmt.Fprintf(w, "%s: %v\n", k, v) }
	line("kvbench-format", dataset.FormatVersion)
	line("go", runtime.Version())
	line("kernel", measure.Kernel())
	line("cpu-model", measure.CPUModel())
	line("cpus", runtime.NumCPU())
	if cfg.dir != "" {
		line("dir", cfg.dir)
		if fs, err := measure.FileSystem(cfg.dir); err == nil {
			line("dir-fs", fmt.Sprintf("%s on %s (mounted at %s, %s free)", fs.Type, fs.Device, fs.MountedOn, human(fs.Free)))
		}
	}
	line("keys", cfg.keys)
	line("valsz", *flagValSize)
	line("value-ratio", *flagValueRatio)
	line("seed", *flagSeed)
	line("hit-rate", flagHitRates.String())
	line("cache", flagCaches.String())
	line("drop-caches", *flagDropCaches)
	line("scan-len", *flagScanLen)
	line("verify", *flagVerify)
	line("sync", *flagSync)
	line("cache-mb", *flagCacheMB)
	line("memtable-mb", *flagMemtableMB)
	line("compression", *flagCompress)
	line("bloom-bits", *flagBloomBits)
	line("batch", *flagBatch)
	line("writers", *flagWriters)
	line("threads", flagThreads.String())
	line("latency-sample", fmt.Sprintf("1/%d reads (HDR histogram, ns)", latencySampleMask+1))
	line("timestamp-ns", timestampCost())
	line("lmdb-readahead", *flagLmdbRA)
	line("lmdb-write", *flagLmdbWrite)
	line("bolt-freelist", *flagBoltFree)
	line("bolt-write", *flagBoltWrite)
	line("badger-vthreshold", *flagBadgerVT)
	printPrefetchConfig(w)
	line("rocksdb-lib", engine.RocksDBLibVersion())
	printEmbedConfig(w)
	printLoadConfig(line)
	for _, info := range engines {
		v := info.Module
		if info.Version != nil {
			v = info.Version()
		}
		line("engine-"+info.Name, v)
	}
	printUnits(w)
}

// printEngineConfig echoes every option one opened engine set, once per
// engine and run, before its first result.
func printEngineConfig(w io.Writer, db engine.DB) {
	printedMu.Lock()
	defer printedMu.Unlock()
	if printed[db.Name()] {
		return
	}
	printed[db.Name()] = true
	s := make([]string, 0, 16)
	for _, kv := range db.Settings() {
		s = append(s, kv.String())
	}
	fmt.Fprintf(w, "settings-%s: %s\n", db.Name(), strings.Join(s, " "))
}

var (
	printedMu sync.Mutex
	printed   = map[string]bool{}
)

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// human prints a byte count in binary units.
func human(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// runSelf runs this test binary again with args and returns its combined
// output and exit code. Flag handling happens in TestMain, so a child
// process is the only honest way to see what a user would.
func runSelf(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^$"}, args...)...)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

// treeState lists every path under dir with its size and mtime.
func treeState(t *testing.T, dir string) map[string]string {
	t.Helper()
	st := map[string]string{}
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil {
			st[p] = fmt.Sprintf("%d %v %v", fi.Size(), fi.ModTime().UnixNano(), fi.Mode())
		}
		return nil
	})
	return st
}

func TestBadFlagsFailBeforeAnyWork(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	os.WriteFile(file, []byte("x"), 0o644)
	ro := filepath.Join(dir, "read-only")
	os.Mkdir(ro, 0o555)
	bench := "-test.bench=BenchmarkPopulateBolt"
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-valsz", "0"}, "-valsz 0: must be from 1"},
		{[]string{"-keys_mil", "-1"}, "-keys_mil -1: must be more than 0"},
		{[]string{"-keys_mil", "0.0000001"}, "-keys_mil 1e-07: must be more than 0 (at least one key)"},
		{[]string{"-hit_rate", "0.5,2"}, "-hit_rate 2: must be from 0 to 1"},
		{[]string{"-cache", "hot"}, "-cache hot: must be warm or cold"},
		{[]string{"-scan_len", "0"}, "-scan_len 0: must be from 1"},
		{[]string{"-value_ratio", "0"}, "-value_ratio 0: must be more than 0"},
		{[]string{"-compression", "lz4"}, "-compression lz4: must be one of none, snappy, zstd"},
		{[]string{"-verify", "some"}, "-verify some: must be one of cheap, full"},
		{[]string{"-cache_mb", "0"}, "-cache_mb 0: must be from 1"},
		{[]string{"-batch", "0"}, "-batch 0: must be from 1"},
		{[]string{"-bolt_freelist", "tree"}, "-bolt_freelist tree: must be one of map, array"},
		{[]string{"-prefetch_traces", "9001"}, "-prefetch_traces 9001: must be from 1 to 9000"},
		{[]string{"-dir", file}, "is not a directory"},
		{[]string{"-dir", filepath.Join(dir, "missing")}, "does not exist"},
		{[]string{"-keys_mil", "10000", "-valsz", "65536"}, "the run needs about"},
	}
	if os.Geteuid() != 0 { // root may write anywhere
		cases = append(cases, struct {
			args []string
			want string
		}{[]string{"-dir", ro}, "is not writable"})
	}
	before := treeState(t, dir)
	for _, c := range cases {
		args := c.args
		if !contains(args, "-dir") {
			args = append(args, "-dir", dir)
		}
		out, code := runSelf(t, append([]string{bench}, args...)...)
		if code == 0 || !strings.Contains(out, c.want) {
			t.Errorf("%v: exit %d, output %q; want an error containing %q", c.args, code, out, c.want)
		}
		if strings.Contains(out, "Benchmark") && strings.Contains(out, "ns/op") {
			t.Errorf("%v: a benchmark ran: %s", c.args, out)
		}
	}
	if after := treeState(t, dir); !reflect.DeepEqual(before, after) {
		t.Errorf("bad flags changed -dir:\nbefore %v\nafter  %v", before, after)
	}
	// Flag parsing errors from the flag package itself name the flag too.
	if out, code := runSelf(t, bench, "-threads", "0", "-dir", dir); code == 0 || !strings.Contains(out, "-threads") {
		t.Errorf("-threads 0: exit %d %q", code, out)
	}
}

func TestForeignOwnedNameIsRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary")
	}
	dir := t.TempDir()
	theirs := filepath.Join(dir, "kvbench")
	os.Mkdir(theirs, 0o755)
	os.WriteFile(filepath.Join(theirs, "notes.txt"), []byte("someone else's"), 0o644)
	before := treeState(t, dir)
	out, code := runSelf(t, "-test.bench=BenchmarkReadRandomBolt", "-keys_mil", "0.001", "-dir", dir)
	if code == 0 || !strings.Contains(out, "not created by kvbench") {
		t.Fatalf("exit %d: %s", code, out)
	}
	if after := treeState(t, dir); !reflect.DeepEqual(before, after) {
		t.Fatalf("a directory the suite did not create was touched")
	}
}

func TestTopLevelPattern(t *testing.T) {
	for in, want := range map[string]string{
		"BenchmarkReadRandomBadger":         "BenchmarkReadRandomBadger",
		"ReadRandom/threads=1":              "ReadRandom",
		"(Populate|ReadRandom)/valsz=[0-9]": "(Populate|ReadRandom)",
		"Read[/]x/y":                        "Read[/]x",
		".":                                 ".",
	} {
		if got := topLevel(in); got != want {
			t.Errorf("topLevel(%q) = %q, want %q", in, got, want)
		}
	}
	p := newRunPlan("BenchmarkReadRandomBadger")
	if len(p.fixtures) != 1 || p.fixtures[0].Name != "badger" || len(p.populate) != 0 {
		t.Fatalf("plan for ReadRandomBadger: %+v", p)
	}
	p = newRunPlan("Populate")
	if len(p.fixtures) != 0 || len(p.populate) < 4 {
		t.Fatalf("plan for Populate: %+v", p)
	}
	if newRunPlan("").touchesDisk() || newRunPlan("BenchmarkNothing").touchesDisk() {
		t.Fatal("a run without disk benchmarks plans disk work")
	}
}
