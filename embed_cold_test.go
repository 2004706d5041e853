package kvbench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/measure"
	"github.com/kvbench/kvbench/internal/records"
)

// coldChildEnv selects the cold-start child: TestMain runs nothing else
// (no flag checks, no fixtures), and TestEmbedColdChild does the one read.
const coldChildEnv = "KVBENCH_EMBED_COLD_CHILD"

// coldJob is what the parent asks one child to do.
type coldJob struct {
	Src     string         // "none", "embedded", "file" or an engine name
	Path    string         // the cdb file or the engine's fixture
	Opts    engine.Options // how the engine is opened (read-only)
	Record  uint64         // which record to read
	RA      bool           // -embed_readahead
	StartNS int64          // wall clock just before the parent started the child
}

// coldChildLine prefixes the child's one line of results on stdout.
const coldChildLine = "embed-cold-child:"

func isColdChild() bool { return os.Getenv(coldChildEnv) != "" }

// TestEmbedColdChild is the child process of BenchmarkEmbedColdStart: it
// opens one source, reads and verifies one record, prints how long that
// took since the parent started the process, and returns.
func TestEmbedColdChild(t *testing.T) {
	if !isColdChild() {
		t.Skip("runs only as BenchmarkEmbedColdStart's child process")
	}
	var job coldJob
	if err := json.Unmarshal([]byte(os.Getenv(coldChildEnv)), &job); err != nil {
		t.Fatal(err)
	}
	io0, _ := measure.ReadIO()
	t0 := time.Now()
	if err := coldRead(job); err != nil {
		t.Fatal(err)
	}
	t1 := time.Now()
	io1, _ := measure.ReadIO()
	// rusage's maxrss of a child started by os/exec also counts the
	// parent's pages (the child shares the parent's memory until exec),
	// so the child reports its own high-water mark.
	m, err := measure.ReadMem()
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("%s first-read-ns=%d open-read-ns=%d peak-rss-kb=%d read-b=%d open-read-b=%d\n", coldChildLine,
		t1.UnixNano()-job.StartNS, t1.Sub(t0).Nanoseconds(), m.PeakRSS>>10, io1.ReadBytes, io1.ReadBytes-io0.ReadBytes)
}

// coldRead opens job's source and reads and verifies its record.
func coldRead(job coldJob) error {
	var kb [records.MaxKeySize]byte
	key := records.Key(kb[:0], job.Record)
	var src recordSource
	switch job.Src {
	case "none":
		return nil
	case "embedded":
		embedReadaheadOverride = &job.RA
		e, err := embedded()
		if err != nil {
			return err
		}
		if src, err = openCDB(e.data, nil); err != nil {
			return err
		}
	case "file":
		f, err := os.Open(job.Path)
		if err != nil {
			return err
		}
		if src, err = openCDB(f, f); err != nil {
			return err
		}
	default:
		db, err := engine.Open(job.Src, job.Opts)
		if err != nil {
			return err
		}
		if src, err = newEngineSource(db, job.Record+1); err != nil {
			return err
		}
	}
	return src.get(key, job.Record)
}

// coldResult is one child's figures.
type coldResult struct {
	firstRead, openRead, wall time.Duration
	peakRSSKB, majflt, minflt int64
	readB, openReadB          int64 // from storage: whole process, open and read
}

// runColdChild starts bin as a child for job and collects its figures.
func runColdChild(bin string, job coldJob) (coldResult, error) {
	var r coldResult
	cmd := exec.Command(bin, "-test.run=^TestEmbedColdChild$", "-test.count=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	job.StartNS = start.UnixNano()
	env, err := json.Marshal(job)
	if err != nil {
		return r, err
	}
	cmd.Env = append(os.Environ(), coldChildEnv+"="+string(env))
	if err := cmd.Run(); err != nil {
		return r, fmt.Errorf("child for %s: %v\n%s", job.Src, err, out.Bytes())
	}
	r.wall = time.Since(start)
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return r, fmt.Errorf("no rusage for the child")
	}
	r.majflt, r.minflt = ru.Majflt, ru.Minflt
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), coldChildLine)
		if !ok {
			continue
		}
		for _, f := range strings.Fields(line) {
			k, v, _ := strings.Cut(f, "=")
			ns, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return r, fmt.Errorf("child line %q: %v", line, err)
			}
			switch k {
			case "first-read-ns":
				r.firstRead = time.Duration(ns)
			case "open-read-ns":
				r.openRead = time.Duration(ns)
			case "peak-rss-kb":
				r.peakRSSKB = ns
			case "read-b":
				r.readB = ns
			case "open-read-b":
				r.openReadB = ns
			}
		}
		return r, nil
	}
	return r, fmt.Errorf("child for %s printed no result:\n%s", job.Src, out.Bytes())
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
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		return "", err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return dst, err
}

// BenchmarkEmbedColdStart starts a fresh process per op that opens one
// source, reads one random record, verifies it and exits. ns/op is the
// time from just before the parent starts the child to the verified read
// inside it (exec, loading, runtime and package init, open, read); the
// child's peak RSS and page faults come from its rusage. cache=cold evicts
// the test binary (a copy this process never maps) and the source's files
// from the page cache before each child, cache=warm reads all of them once
// first; shared libraries stay cached either way, as this process maps
// them. src=none opens nothing: the process alone.
func BenchmarkEmbedColdStart(b *testing.B) {
	dir := scratchDir("coldstart")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	defer cfg.root.RemoveAll(dir)
	bin, err := copyTestBinary(dir)
	if err != nil {
		b.Fatal(err)
	}
	n := embedRecords()
	srcs := append([]string{"none"}, sourceNames(false)...)
	for _, name := range srcs {
		b.Run("src="+name, func(b *testing.B) {
			job, files := coldSource(b, name)
			for _, cache := range []string{"cold", "warm"} {
				b.Run("cache="+cache, func(b *testing.B) {
					coldStart(b, bin, job, files, n, cache == "cold")
				})
			}
		})
	}
}

// readThrough reads every regular file at or under path once.
func readThrough(path string) error {
	return filepath.WalkDir(path, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(io.Discard, f)
		return err
	})
}

// coldSource is the child's job for a source and the files its read may
// touch besides the binary.
func coldSource(b *testing.B, name string) (coldJob, []string) {
	switch name {
	case "none", "embedded":
		return coldJob{Src: name, RA: *flagEmbedReadahead}, nil
	case "file":
		path, err := embedFileFixture()
		if err != nil {
			b.Fatal(err)
		}
		return coldJob{Src: "file", Path: path}, []string{path}
	}
	info := lookupTitle(b, name)
	dir, err := embedFixture(info)
	if err != nil {
		b.Fatal(err)
	}
	o := embedOptions(info, dir)
	o.ReadOnly = true
	return coldJob{Src: info.Name, Path: dir, Opts: o}, []string{dir}
}

func coldStart(b *testing.B, bin string, job coldJob, files []string, n uint64, cold bool) {
	evict := func() (resident int64) {
		measure.EvictFile(bin)
		for _, f := range files {
			measure.EvictDir(f) // a file or a directory
		}
		for _, f := range append([]string{bin}, files...) {
			filepath.WalkDir(f, func(p string, d os.DirEntry, err error) error {
				if err == nil && d.Type().IsRegular() {
					if r, _, err := measure.Resident(p); err == nil {
						resident += r
					}
				}
				return nil
			})
		}
		return resident
	}
	rng := dataset.NewRand(*flagSeed, 5)
	if !cold { // the binary and every byte of the source in the page cache
		for _, f := range append([]string{bin}, files...) {
			if err := readThrough(f); err != nil {
				b.Fatal(err)
			}
		}
		job.Record = rng.Below(n)
		if _, err := runColdChild(bin, job); err != nil {
			b.Fatal(err)
		}
	}
	var sum coldResult
	var resident int64
	b.ResetTimer()
	for op := 0; op < b.N; op++ {
		b.StopTimer()
		if cold {
			resident += evict()
		}
		job.Record = rng.Below(n)
		b.StartTimer()
		r, err := runColdChild(bin, job)
		if err != nil {
			b.Fatal(err)
		}
		sum.firstRead += r.firstRead
		sum.openRead += r.openRead
		sum.wall += r.wall
		sum.peakRSSKB += r.peakRSSKB
		sum.readB += r.readB
		sum.openReadB += r.openReadB
		sum.majflt += r.majflt
		sum.minflt += r.minflt
	}
	ops := float64(b.N)
	b.ReportMetric(float64(sum.firstRead.Nanoseconds())/ops, "ns/op")
	b.ReportMetric(float64(sum.openRead.Nanoseconds())/ops, "open-read-ns")
	b.ReportMetric(float64(sum.wall.Nanoseconds())/ops, "exit-ns")
	b.ReportMetric(float64(sum.peakRSSKB)/ops, "peak-rss-KB")
	b.ReportMetric(float64(sum.majflt)/ops, "majflt/op")
	b.ReportMetric(float64(sum.readB)/ops/1024, "read-KB/op")
	b.ReportMetric(float64(sum.openReadB)/ops/1024, "open-read-KB")
	b.ReportMetric(float64(sum.minflt)/ops, "minflt/op")
	if cold {
		b.ReportMetric(float64(resident)/ops/1024, "cached-KB") // of binary and data after eviction
	}
}
