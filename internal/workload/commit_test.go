package workload

import (
	"bytes"
	"io"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/core/coretest"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/measure"
)

func TestCommitWritersFlag(t *testing.T) {
	cpus := runtime.NumCPU()
	for _, c := range []struct {
		l    core.WordList
		want []int
		err  string
	}{
		{l: core.WordList{"1", "8x"}, want: []int{1, 8 * cpus}},
		{l: core.WordList{"3"}, want: []int{3}},
		{l: core.WordList{"1", "0x"}, err: "-commit_writers 0x: must be a count from 1 to 1024"},
		{l: core.WordList{"many"}, err: "-commit_writers many: must be a count"},
		{l: core.WordList{"2", "2"}, err: "lists 2 writers twice"},
		{l: core.WordList{}, err: "at least one"},
	} {
		got, err := commitWriters(c.l)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: error %v, want one with %q", c.l, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%v: %v, %v; want %v", c.l, got, err, c.want)
		}
	}
}

// commitTestEnv is a run's values over a tiny data set; it touches no file.
func commitTestEnv(t *testing.T) *core.Env {
	t.Helper()
	c := core.Default()
	c.KeysMil, c.ValSize = 0.002, 64
	e, err := core.NewEnv(c, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// fakeDevice is a device whose only requests are what countedDB counts.
type fakeDevice struct{ requests, commits atomic.Int64 }

// countedDB is a store whose commits, opens and closes are requests of a
// fake device: each commit one write and one flush, each open and close
// 1000 of each (work outside the commits' window). Commit number drop
// (from 1; 0 for none) is acknowledged and not written.
type countedDB struct {
	engine.DB
	dev  *fakeDevice
	drop int64
}

func (d countedDB) NewBatch() engine.Batch { return countedBatch{d.DB.NewBatch(), d} }
func (d countedDB) Close() error           { d.dev.requests.Add(1000); return d.DB.Close() }

type countedBatch struct {
	engine.Batch
	d countedDB
}

func (b countedBatch) Commit() error {
	b.d.dev.requests.Add(1)
	if b.d.dev.commits.Add(1) == b.d.drop {
		return nil
	}
	return b.Batch.Commit()
}

// countedBolt is bbolt, not registered, counted on dev, with the device
// counters reading dev for the test's length.
func countedBolt(t *testing.T, dev *fakeDevice, drop int64) engine.Info {
	info := coretest.Engine(t, "bolt")
	open := info.Open
	info.Open = func(o engine.Options) (engine.DB, error) {
		dev.requests.Add(1000)
		db, err := open(o)
		if err != nil {
			return nil, err
		}
		return countedDB{db, dev, drop}, nil
	}
	saved := deviceCounters
	deviceCounters = func(string) (measure.DiskStats, bool, error) {
		n := dev.requests.Load()
		return measure.DiskStats{Writes: n, Flushes: n, CountsFlushes: true}, true, nil
	}
	t.Cleanup(func() { deviceCounters = saved })
	return info
}

// commitWith opens info on a fresh directory with durable commits and
// commits n keys from writers goroutines (commitOnce).
func commitWith(t *testing.T, e *core.Env, info engine.Info, tweak func(*engine.Options), writers, n int) (commitRun, error) {
	t.Helper()
	o := e.Cfg.Options(info, t.TempDir(), e.Gen.LogicalBytes())
	o.Sync = true
	if tweak != nil {
		tweak(&o)
	}
	db, err := engine.OpenInfo(info, o)
	if err != nil {
		t.Fatal(err)
	}
	return commitOnce(e, info, db, o, writers, n, func() {}, func() {})
}

// The device's figures per commit are its counters over the commits'
// window alone, divided by the commits: the open before it and the close
// and reopen after it, a thousand requests each, are not in them.
func TestCommitDeviceFiguresAreTheWindows(t *testing.T) {
	e := commitTestEnv(t)
	dev := &fakeDevice{}
	info := countedBolt(t, dev, 0)
	const commits = 60
	r, err := commitWith(t, e, info, nil, 4, commits)
	if err != nil {
		t.Fatal(err)
	}
	if dev.requests.Load() != 4000+commits { // the open and close, the reopen and its close
		t.Fatalf("the fake device saw %d requests, want %d: the test counts the wrong things", dev.requests.Load(), 4000+commits)
	}
	if r.commits != commits || r.lat.Count() != commits {
		t.Errorf("%d commits, %d latencies; want %d", r.commits, r.lat.Count(), commits)
	}
	res := testing.Benchmark(func(b *testing.B) { r.report(b) })
	for _, unit := range []string{"dev-writes/commit", "dev-flushes/commit"} {
		if got := res.Extra[unit]; got != 1 {
			t.Errorf("%s %v, want 1: the device made one request per commit in the window", unit, got)
		}
	}
	for _, unit := range []string{"commits/s", "p50-ns", "p99-ns", "p999-ns"} {
		if res.Extra[unit] <= 0 {
			t.Errorf("no %s: %v", unit, res.Extra)
		}
	}
}

// A commit acknowledged but lost fails the read-back after the reopen.
func TestCommitReadBackCatchesALostCommit(t *testing.T) {
	e := commitTestEnv(t)
	_, err := commitWith(t, e, countedBolt(t, &fakeDevice{}, 17), nil, 3, 40)
	if err == nil || !strings.Contains(err.Error(), "is missing") {
		t.Fatalf("commit 17 of 40 acknowledged and not written: error %v, want a missing key", err)
	}
}

// On every store compiled in, in each of its group-commit modes, keys
// committed one a transaction from several goroutines at once all read
// back, each with its value, after the database is closed and opened
// again (commitOnce fails otherwise).
func TestCommitEveryStoreReadsBackEveryKey(t *testing.T) {
	e := commitTestEnv(t)
	for _, info := range compiled(registered(t, "Commit")) {
		for _, v := range core.Variants(info, engine.GroupCommit) {
			r, err := commitWith(t, e, info, v.Tweak, 5, 53)
			if err != nil {
				t.Errorf("%s %s: %v", info.Name, v.Name, err)
				continue
			}
			if r.lat.Count() != 53 {
				t.Errorf("%s %s: %d commits timed, want 53", info.Name, v.Name, r.lat.Count())
			}
		}
	}
}

// durable is a settings line's per-commit sync, on.
var durable = regexp.MustCompile(`[: ]sync(_writes)?=true `)

// The benchmark runs on every store through core.Run, prints before its
// leaves each store's settings with durable commits and what its group
// commit is (bbolt's for each of its modes), and leaves no copy behind.
func TestCommitBenchmark(t *testing.T) {
	coretest.SetBenchtime(t, "3x")
	var out bytes.Buffer
	c := core.Default()
	c.KeysMil, c.ValSize, c.Dir = 0.002, 64, t.TempDir()
	commitWritersFlag.Set(&c, core.WordList{"1", "3"})
	e := setup(t, c, "BenchmarkCommit", &out)
	for _, info := range compiled(registered(t, "Commit")) {
		out.Reset()
		if !runs(e, "Commit", info.Name) {
			t.Fatalf("%s: Commit failed", info.Name)
		}
		s := out.String()
		if !strings.Contains(s, "settings-"+info.Name+": ") || !strings.Contains(s, " group_commit=") || !durable.MatchString(s) {
			t.Errorf("%s: settings lines without durable commits or their group commit:\n%s", info.Name, s)
		}
		if info.Name == "bolt" && (!strings.Contains(s, "write_mode=update group_commit=none") || !strings.Contains(s, "write_mode=batch group_commit=DB.Batch")) {
			t.Errorf("bolt: the settings do not name both commit modes:\n%s", s)
		}
		if left := scratchLeft(e); len(left) != 0 {
			t.Fatalf("%s: scratch left behind: %v", info.Name, left)
		}
	}
}
