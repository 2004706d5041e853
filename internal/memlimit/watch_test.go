package memlimit

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/measure"
	"golang.org/x/sys/unix"
)

// fakeCgroup writes a budget's counter files into a directory.
func fakeCgroup(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestStatsBothVersions reads each version's counters, as the kernel
// words them, into the same Stats.
func TestStatsBothVersions(t *testing.T) {
	v1 := fakeCgroup(t, map[string]string{
		"memory.stat": "cache 100\nrss 200\ndirty 3\nwriteback 4\nshmem 5\n" +
			"total_cache 1000\ntotal_rss 2000\ntotal_shmem 50\ntotal_mapped_file 7\ntotal_dirty 30\ntotal_writeback 40\ntotal_pgmajfault 9\n",
		"memory.usage_in_bytes":      "3100\n",
		"memory.max_usage_in_bytes":  "4000\n",
		"memory.failcnt":             "6\n",
		"memory.kmem.usage_in_bytes": "100\n",
		"memory.oom_control":         "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n",
	})
	v2 := fakeCgroup(t, map[string]string{
		"memory.stat":    "anon 2000\nfile 1000\nkernel 100\nsock 8\nshmem 50\nfile_mapped 7\nfile_dirty 30\nfile_writeback 40\npgmajfault 9\n",
		"memory.current": "3100\n",
		"memory.peak":    "4000\n",
		"memory.events":  "low 0\nhigh 0\nmax 6\noom 1\noom_kill 1\n",
	})
	want := Stats{Usage: 3100, Peak: 4000, Cache: 1000, Dirty: 30, Writeback: 40, Shmem: 50, Anon: 2000, Kernel: 100, MajorFaults: 9, LimitHits: 6, OOMKills: 1}
	for v, dir := range map[int]string{1: v1, 2: v2} {
		got, err := (&Budget{Dir: dir, Version: v}).Stats()
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		w := want
		if v == 2 {
			w.Sock = 8
		}
		if got != w {
			t.Errorf("v%d: %+v\nwant %+v", v, got, w)
		}
	}
}

// TestKillLineRoundTrip: the summary reads back what the watcher wrote,
// and benchfmt's rule for configuration lines (a lower-case key, then a
// colon) does not take it for one.
func TestKillLineRoundTrip(t *testing.T) {
	k := Kill{Leaf: "BenchmarkPopulateBadger/valsz=1024/mem=52MiB/batch=1000/sync=false", Cause: CauseOOM, Limit: 52 << 20, AgeMS: 12,
		Last:  Stats{Anon: 44 << 20, Cache: 9 << 20, Dirty: 1 << 20, Usage: 52 << 20, Kernel: 300 << 10},
		Final: Stats{Peak: 52 << 20, LimitHits: 40}}
	line := k.Line()
	if !strings.HasPrefix(line, "[kvbench-kill] BenchmarkPopulateBadger/") || strings.Contains(line, "\n") {
		t.Fatalf("line %q", line)
	}
	got, ok := ParseKill(line)
	got.Config = k.Config
	if !ok || got.Leaf != k.Leaf || got.Cause != k.Cause || got.Limit != k.Limit || got.AgeMS != k.AgeMS ||
		got.Last.Anon != k.Last.Anon || got.Last.Cache != k.Last.Cache || got.Last.Dirty != k.Last.Dirty ||
		got.Last.Usage != k.Last.Usage || got.Final.Peak != k.Final.Peak || got.Final.LimitHits != 40 {
		t.Errorf("ParseKill(%q) = %+v, %v; want %+v", line, got, ok, k)
	}
	if _, ok := ParseKill("kvbench: x"); ok {
		t.Error("ParseKill took a line that is no kill line")
	}
	text := k.Text()
	for _, want := range []string{"was killed by the kernel's out-of-memory killer inside its -mem_limit 52MiB budget",
		"at the last sample (12 ms before): anonymous 44.0 MiB, page cache 9.0 MiB (dirty 1.0 MiB, writeback 0 B), kernel 300.0 KiB, charged 52.0 MiB (peak 52.0 MiB)",
		"no engine settings printed"} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
	k.Cause, k.Config = CauseStopped, "settings-badger: memtable-mb=1"
	if text := k.Text(); !strings.Contains(text, "stopped (not by the out-of-memory killer") || !strings.HasSuffix(text, "the engine had configured: settings-badger: memtable-mb=1") {
		t.Errorf("stopped report: %s", text)
	}
}

// TestWatcherQuietOnDone: a parent that says done gets no report; one
// whose input ends without it gets one, on the results and on the log.
func TestWatcherQuietOnDone(t *testing.T) {
	dir := fakeCgroup(t, map[string]string{
		"memory.stat":           "total_cache 1048576\ntotal_rss 2097152\n",
		"memory.usage_in_bytes": "3145728\n",
		"memory.oom_control":    "oom_kill 0\n",
	})
	ppid := func() int { return 1 }
	for _, c := range []struct {
		in     string
		report bool
	}{
		{"budget 1 16777216 0 " + dir + "\nleaf BenchmarkX/a=1\ndone\n", false},
		{"budget 1 16777216 0 " + dir + "\nleaf BenchmarkX/a=1\nsettings settings-bolt: k=v\n", true},
		{"leaf BenchmarkX/a=1\n", false}, // no budget entered: nothing to say
	} {
		var out, log bytes.Buffer
		if code := watch(strings.NewReader(c.in), &out, &log, ppid); code != 0 {
			t.Errorf("%q: exit %d", c.in, code)
		}
		if got := out.Len() > 0 || log.Len() > 0; got != c.report {
			t.Errorf("%q: report %v, want %v:\n%s%s", c.in, got, c.report, out.String(), log.String())
		}
		if c.report {
			if !strings.Contains(log.String(), "[kvbench] BenchmarkX/a=1 stopped (not by the out-of-memory killer") ||
				!strings.Contains(log.String(), "anonymous 2.0 MiB, page cache 1.0 MiB") ||
				!strings.Contains(log.String(), "the engine had configured: settings-bolt: k=v") {
				t.Errorf("report: %s", log.String())
			}
			if !strings.Contains(out.String(), "\n[kvbench-kill] BenchmarkX/a=1 cause=stopped limit=16777216 anon=2097152 file=1048576 ") {
				t.Errorf("kill line: %q", out.String())
			}
		}
	}
}

// killChildEnv makes the test binary the child of TestKillReport: the
// path of a file to hold in the page cache.
const killChildEnv = "MEMLIMIT_TEST_KILL_CHILD"

// TestKillReport runs a child that enters a budget of the floor with its
// watcher, holds a file in the page cache (locked, so reclaim cannot take
// it), and grows its heap until the out-of-memory killer ends it; the
// watcher's report must name the kill and both kinds of memory, with
// figures.
func TestKillReport(t *testing.T) {
	if path := os.Getenv(killChildEnv); path != "" {
		killChild(t, path)
		return
	}
	p := realParent(t, Floor)
	dir := t.TempDir()
	if mem, err := measure.InMemory(dir); err != nil || mem {
		t.Skipf("%s is on tmpfs or ramfs (or unknown: %v): its files are memory, not page cache", dir, err)
	}
	path, err := measure.PrepareFile(dir, 4<<20)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := measure.EvictFile(path); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillReport$")
	cmd.Env = append(os.Environ(), killChildEnv+"="+path)
	var out, log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &log
	start := time.Now()
	err = cmd.Run() // returns once the watcher, which holds both streams, is gone too
	t.Cleanup(func() { os.Remove(filepath.Join(p.Dir, fmt.Sprintf("kvbench-%d", cmd.Process.Pid))) })
	t.Logf("child, %v: %v\nstdout:\n%s\nstderr:\n%s", time.Since(start).Round(time.Millisecond), err, out.String(), log.String())
	if m := regexp.MustCompile(`cannot lock the file: (.*)`).FindStringSubmatch(out.String() + log.String()); m != nil {
		t.Skipf("the child cannot hold page cache in memory: %s", m[1])
	}
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child: %v, want killed by SIGKILL", err)
	}
	report := regexp.MustCompile(`(?m)^\[kvbench\] TestKillReport/child was killed by the kernel's out-of-memory killer inside its -mem_limit 16MiB budget; at the last sample \(\d+ ms before\): anonymous ([0-9.]+) (\S+), page cache ([0-9.]+) (\S+) \(dirty .*$`).FindStringSubmatch(log.String())
	if report == nil {
		t.Fatalf("no out-of-memory report naming anonymous memory and page cache on stderr:\n%s", log.String())
	}
	for _, i := range []int{1, 3} {
		if v, _ := strconv.ParseFloat(report[i], 64); v == 0 || report[i+1] == "B" {
			t.Errorf("report %q: %s %s is no figure", report[0], report[i], report[i+1])
		}
	}
	if !strings.Contains(report[0], "the engine had configured: settings-child: file=4MiB") {
		t.Errorf("the report lacks the settings line: %s", report[0])
	}
	var kill Kill
	for _, l := range strings.Split(out.String(), "\n") {
		if k, ok := ParseKill(l); ok {
			kill = k
		}
	}
	if kill.Cause != CauseOOM || kill.Leaf != "TestKillReport/child" || kill.Last.Anon <= 0 || kill.Last.Cache <= 0 || kill.Limit != Floor {
		t.Errorf("kill line on stdout: %+v\n%s", kill, out.String())
	}
}

// killChild is the child: it enters the budget with a watcher, locks the
// file into the page cache, then allocates and touches heap until killed.
func killChild(t *testing.T, path string) {
	p, err := Find()
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.EnterWatched(Floor)
	if err != nil {
		t.Fatal(err)
	}
	b.Leaf("TestKillReport/child")
	b.Settings("settings-child: file=4MiB")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := f.Stat()
	m, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err == nil {
		err = unix.Mlock(m)
	}
	if err != nil {
		b.Close()
		fmt.Printf("cannot lock the file: %v\n", err)
		return
	}
	var held [][]byte
	for len(held) < 1<<20 { // until killed: 256 GiB is past any budget
		chunk := make([]byte, 256<<10)
		for i := 0; i < len(chunk); i += 4096 {
			chunk[i] = 1
		}
		held = append(held, chunk)
		// Slow enough for the watcher's samples (every 10 ms) to follow
		// on a busy machine: about half a second from the file's 4 MiB
		// to the budget's 16 MiB.
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSampleKeepsTheReadingBeforeTheKill: a reading taken after the
// out-of-memory killer freed its victim, before the kernel counted the
// kill, does not replace the reading before it; an ordinary fall of the
// charge does.
func TestSampleKeepsTheReadingBeforeTheKill(t *testing.T) {
	dir := fakeCgroup(t, map[string]string{
		"memory.stat":           "total_cache 4194304\ntotal_rss 0\n",
		"memory.usage_in_bytes": "4292608\n",
		"memory.oom_control":    "oom_kill 0\n",
	})
	before := time.Now()
	st := &watchState{budget: &Budget{Version: 1, Limit: 16 << 20, Dir: dir}, last: Stats{Usage: 15 << 20, Anon: 11 << 20}, lastAt: before}
	st.sample(before.Add(10 * time.Millisecond))
	if st.last.Anon != 11<<20 || st.lastAt != before {
		t.Errorf("the reading after the kill replaced the one before it: %+v", st.last)
	}
	st.last.Usage = 6 << 20 // under half the budget: a fall of the run's own
	st.sample(before.Add(20 * time.Millisecond))
	if st.last.Usage != 4292608 {
		t.Errorf("an ordinary reading was dropped: %+v", st.last)
	}
}
