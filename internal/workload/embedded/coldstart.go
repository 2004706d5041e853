package embedded

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/measure"
	"github.com/kvbench/kvbench/internal/records"
)

// EmbedColdStart starts a fresh process per op that reads and verifies one
// random record from one source: the test binary (child=testbinary) or
// internal/cmd/embedchild, built per run around the embedded cdb alone
// (child=minimal). What it times: docs/seed-004.md (Cold start).
func init() {
	core.Register(&core.Workload{
		Name:     "EmbedColdStart",
		Fixtures: fixtures(true), // the cdb file always: the minimal child is built from it
		// The copy of the test binary and the minimal child's build.
		Scratch: func(e *core.Env, _ engine.Info) int64 {
			var size int64
			if d, _ := cdbOf(&e.Cfg); d != nil {
				size = d.Size
			}
			return executableSize() + 3*size + minimalBuildSlack
		},
		Units: []core.Unit{core.Lower("open-read-ns"), core.Lower("exit-ns"), core.Lower("peak-rss-KB"), core.Lower("majflt/op"),
			core.Lower("read-KB/op"), core.Lower("open-read-KB"), core.Lower("minflt/op"),
			core.Info("cached-KB")}, // how warm a cold start really was
		Options: append([]core.Option{settleFlag}, flags...),
		Run:     runEmbedColdStart,
	})
}

// coldChildEnv selects the cold-start child and carries its job.
const coldChildEnv = "KVBENCH_EMBED_COLD_CHILD"

// IsColdChild reports whether this process is a cold-start child: its
// TestMain must then run nothing else (no flag checks, no fixtures),
// only m.Run, whose TestEmbedColdChild calls ColdChild.
func IsColdChild() bool { return os.Getenv(coldChildEnv) != "" }

// coldJob is what the parent asks one child to do.
type coldJob struct {
	Src     string         // "none", "embedded", "file" or an engine name
	Path    string         // the cdb file or the engine's fixture
	Opts    engine.Options // how the engine is opened (read-only)
	Record  uint64         // which record to read
	RA      bool           // -embed_readahead
	Settle  time.Duration  // -embed_settle: wait before the window
	StartNS int64          // wall clock just before the parent started the child
}

// ColdChild is the whole of a cold-start child: it reads and verifies its
// job's record (the embedded cdb from fsys) and prints on w how long that
// took since the parent started the process.
func ColdChild(w io.Writer, fsys fs.FS) error {
	var job coldJob
	if err := json.Unmarshal([]byte(os.Getenv(coldChildEnv)), &job); err != nil {
		return err
	}
	time.Sleep(job.Settle)
	io0, _ := measure.ReadIO()
	t0 := time.Now()
	if err := coldRead(job, fsys); err != nil {
		return err
	}
	return measure.WriteColdChild(w, job.StartNS, t0, time.Now(), io0)
}

// coldRead opens job's source and reads and verifies its record.
func coldRead(job coldJob, fsys fs.FS) error {
	var src recordSource
	var err error
	switch job.Src {
	case "none":
		return nil
	case "embedded":
		if fsys == nil {
			return fmt.Errorf("no embedded file system in the child")
		}
		var d *CDB
		if d, err = Open(fsys, job.RA); err == nil {
			src, err = openCDB(d.Data, nil)
		}
	case "file":
		var f *os.File
		if f, err = os.Open(job.Path); err == nil {
			src, err = openCDB(f, f)
		}
	default:
		var db engine.DB
		if db, err = engine.Open(job.Src, job.Opts); err == nil {
			src, err = newEngineSource(db, job.Record+1)
		}
	}
	if err != nil {
		return err
	}
	var kb [records.MaxKeySize]byte
	return src.get(records.Key(kb[:0], job.Record), job.Record)
}

// The programs a cold start can run (child=<kind>).
const (
	childMinimal    = "minimal"    // internal/cmd/embedchild: the embedded cdb and nothing else
	childTestBinary = "testbinary" // this test binary: every engine, cgo
)

// coldChild is a program started per op, alone in its directory under
// scratch, which cache=cold evicts and cache=warm reads through.
type coldChild struct {
	kind string // childMinimal or childTestBinary
	bin  string
}

// runColdChild starts child for job and collects its figures, by the unit
// the benchmark reports each in.
func runColdChild(child coldChild, job coldJob) (map[string]float64, error) {
	r := map[string]float64{}
	cmd := exec.Command(child.bin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	job.StartNS = start.UnixNano()
	// The minimal child takes its job as flags, the test binary in its
	// environment (TestEmbedColdChild).
	if child.kind == childMinimal {
		cmd.Args = append(cmd.Args, "-record="+strconv.FormatUint(job.Record, 10),
			"-start="+strconv.FormatInt(job.StartNS, 10), "-readahead="+strconv.FormatBool(job.RA),
			"-settle="+job.Settle.String())
		if job.Src == "none" {
			cmd.Args = append(cmd.Args, "-none")
		} else if job.Src != "embedded" {
			return r, fmt.Errorf("the minimal child reads only its embedded cdb, not %s", job.Src)
		}
	} else {
		env, err := json.Marshal(job)
		if err != nil {
			return r, err
		}
		cmd.Args = append(cmd.Args, "-test.run=^TestEmbedColdChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), coldChildEnv+"="+string(env))
	}
	if err := cmd.Run(); err != nil {
		return r, fmt.Errorf("child=%s for %s: %v\n%s", child.kind, job.Src, err, out.Bytes())
	}
	r["exit-ns"] = float64(time.Since(start).Nanoseconds())
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return r, fmt.Errorf("no rusage for the child")
	}
	r["majflt/op"], r["minflt/op"] = float64(ru.Majflt), float64(ru.Minflt)
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), measure.ColdChildLine) // the child's one line (measure.WriteColdChild)
		if !ok {
			continue
		}
		// ns/op: from just before the start to the verified read; read-b: from storage, the whole process.
		var first, openRead, rss, read, openReadB int64
		if _, err := fmt.Sscanf(line, " first-read-ns=%d open-read-ns=%d peak-rss-kb=%d read-b=%d open-read-b=%d",
			&first, &openRead, &rss, &read, &openReadB); err != nil {
			return r, fmt.Errorf("child line %q: %v", line, err)
		}
		r["ns/op"], r["open-read-ns"], r["peak-rss-KB"] = float64(first), float64(openRead), float64(rss)
		r["read-KB/op"], r["open-read-KB"] = float64(read)/1024, float64(openReadB)/1024
		return r, nil
	}
	return r, fmt.Errorf("child for %s printed no result:\n%s", job.Src, out.Bytes())
}

// executableSize is the size of the test binary, which EmbedColdStart copies.
func executableSize() int64 {
	exe, _ := os.Executable()
	if fi, err := os.Stat(exe); err == nil {
		return fi.Size()
	}
	return 0
}

// copyTestBinary copies this test binary into dir and makes it durable, so
// its pages can be evicted: this process maps its own executable, and the
// kernel keeps mapped pages in the cache.
func copyTestBinary(dir string) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	in, err := os.Open(exe)
	if err != nil {
		return "", err
	}
	defer in.Close()
	dst := filepath.Join(dir, "kvbench.test")
	return dst, writeSynced(dst, 0o755, in)
}

// writeSynced writes a new file at path from r and makes it durable.
func writeSynced(path string, mode os.FileMode, r io.Reader) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, r)
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

func runEmbedColdStart(b *testing.B, e *core.Env, _ engine.Info) {
	d, n := readSet(b, e)
	dir := e.ScratchDir("coldstart")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	defer e.Root.RemoveAll(dir)
	// Each child is made on first use, in its own directory (a pattern with no minimal leaf builds none).
	kids := map[string]func() (coldChild, error){}
	for _, kind := range []string{childMinimal, childTestBinary} {
		kids[kind] = sync.OnceValues(func() (coldChild, error) {
			dir := filepath.Join(dir, kind)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return coldChild{}, err
			}
			var bin string
			var err error
			if kind == childMinimal {
				bin, err = minimalChild(e, d, dir)
			} else if bin, err = copyTestBinary(dir); err == nil {
				e.Logf("copied the test binary to %s: %s", bin, core.Human(executableSize()))
			}
			return coldChild{kind: kind, bin: bin}, err
		})
	}
	for _, s := range append([]embedSource{{name: "none"}}, embedSources(false)...) {
		b.Run("src="+s.name, func(b *testing.B) {
			c := coldSource(e, b, d, s)
			kinds := []string{childTestBinary}
			if s.name == "none" || s.name == "embedded" { // all the minimal child can read
				kinds = []string{childMinimal, childTestBinary}
			}
			for _, kind := range kinds {
				b.Run("child="+kind, func(b *testing.B) {
					child, err := kids[kind]()
					if reason, ok := asSkip(err); ok {
						b.Skip(reason) // this machine cannot make it
					} else if err != nil {
						b.Fatal(err)
					}
					leaf := c.with(child)
					for _, cache := range []string{core.Cold, core.Warm} {
						if cache == core.Cold {
							// A warning that eviction failed comes before the leaf's line, not inside it.
							leaf.evict(b)
						}
						leaf.showSettings()
						b.Run("cache="+cache, func(b *testing.B) {
							coldStart(b, e, leaf, n, cache == core.Cold)
						})
					}
				})
			}
		})
	}
}

// coldSrc is a source as the cold-start children read it.
type coldSrc struct {
	e     *core.Env
	job   coldJob
	child coldChild // set per child=<kind> leaf (with)
	dirs  []string  // evicted for cache=cold, read through for cache=warm: the child's, then the source's
	// showSettings prints the settings the children read with: the
	// engine's, or none for the cdb and the bare process.
	showSettings func()
}

// with is the source as child reads it: the child's directory goes
// through the same eviction or warm-up as the source's files.
func (c *coldSrc) with(child coldChild) *coldSrc {
	leaf := *c
	leaf.child = child
	leaf.dirs = append([]string{filepath.Dir(child.bin)}, c.dirs...)
	return &leaf
}

// coldSource is the child's job for a source and the directories its read
// may touch (none for the embedded cdb, in the binary). An engine's fixture
// is opened here once, untimed, for the settings the children read with.
func coldSource(e *core.Env, b *testing.B, d *CDB, s embedSource) *coldSrc {
	b.Helper()
	c := &coldSrc{e: e, showSettings: e.ClearSettings}
	switch {
	case s.name == "none" || s.name == "embedded":
		c.job = coldJob{Src: s.name, RA: readaheadFlag.Get(&e.Cfg), Settle: settleFlag.Get(&e.Cfg)}
	case s.name == "file":
		path, err := filePath(e, d)
		if err != nil {
			b.Fatal(err)
		}
		c.job, c.dirs = coldJob{Src: "file", Path: path}, []string{filepath.Dir(path)}
	case s.info.Missing != "":
		b.Skip(s.info.Missing)
	default:
		f := engineFixture(e, s.info)
		h := e.Open(b, f)
		o := h.Options(nil)
		settings, err := h.Settings(o)
		if err != nil {
			b.Fatal(err)
		}
		c.showSettings = func() { e.ShowFixtureSettings(s.info, settings, f) }
		c.job, c.dirs = coldJob{Src: s.info.Name, Path: h.Dir(), Opts: o}, []string{h.Dir()}
	}
	return c
}

// evict drops the binary and the source's files from the page cache and
// returns the bytes the kernel kept.
func (c *coldSrc) evict(b *testing.B) (resident int64) {
	for _, d := range c.dirs {
		r, err := c.e.Evict(d)
		if err != nil {
			b.Fatal(err)
		}
		resident += r
	}
	return resident
}

func coldStart(b *testing.B, e *core.Env, c *coldSrc, n uint64, cold bool) {
	job := c.job
	rng := e.CallStreams(b).Rand(5)
	if !cold { // the binary and every byte of the source in the page cache
		for _, d := range c.dirs {
			if err := core.ReadThrough(d); err != nil {
				b.Fatal(err)
			}
		}
		job.Record = rng.Below(n)
		if _, err := runColdChild(c.child, job); err != nil {
			b.Fatal(err)
		}
	}
	sum := map[string]float64{}
	var resident int64
	b.ResetTimer()
	for op := 0; op < b.N; op++ {
		b.StopTimer()
		if cold {
			resident += c.evict(b)
		}
		job.Record = rng.Below(n)
		b.StartTimer()
		r, err := runColdChild(c.child, job)
		if err != nil {
			b.Fatal(err)
		}
		for unit, v := range r {
			sum[unit] += v
		}
	}
	ops := float64(b.N)
	for unit, v := range sum {
		if core.ReadsCounted() || unit != "read-KB/op" && unit != "open-read-KB" {
			b.ReportMetric(v/ops, unit) // each child's figures, a mean
		}
	}
	if cold {
		b.ReportMetric(float64(resident)/ops/1024, "cached-KB") // of binary and data after eviction
	}
}

// settleFlag delays a child's window past its start-up, whose readahead
// around its first faults may still be in flight (docs/seed-004.md).
var settleFlag = &core.Flag[time.Duration]{Name: "embed_settle", Default: 0,
	Usage: "EmbedColdStart: each child sleeps this long after its start-up, before its open-read window (0: the window opens at once)",
	Check: func(d time.Duration, _ *core.Config) error {
		if d < 0 || d > 10*time.Second {
			return errors.New("must be from 0 to 10s")
		}
		return nil
	}}
