package history

import (
	"context"
	"fmt"
	"github.com/kvbench/kvbench/benchstat/lab/internal/history/historytest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// benchFile is the output of one make bench (-count 3), which the
// summary's and the report's tests read too.
const benchFile = "../../../internal/summary/testdata/bench.txt"

const boltRead = "BenchmarkReadRandomBolt/valsz=1024/cache=warm/hit=63%/threads=1-2"

var edit = historytest.Scale

// pairs counts the distinct benchmark name and unit pairs of raw, apart
// from benchfmt: each benchmark line is name, iterations, value-unit pairs.
func pairs(raw string) int {
	seen := map[string]bool{}
	for _, l := range strings.Split(raw, "\n") {
		if f := strings.Fields(l); len(f) > 3 && strings.HasPrefix(l, "Benchmark") {
			for j := 3; j < len(f); j += 2 {
				seen[f[0]+" "+f[j]] = true
			}
		}
	}
	return len(seen)
}

func addRaw(t *testing.T, s *Store, name, raw string, labels ...Label) {
	t.Helper()
	f, err := Parse(name, []byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(context.Background(), []*File{f}, labels); err != nil {
		t.Fatal(err)
	}
}

func find(h *History, name, unit string, release bool) *Series {
	for _, s := range h.Series {
		if s.Name == name && s.Unit == unit && s.Release == release {
			return s
		}
	}
	return nil
}

// TestLoadSeries builds a history from make bench's output: four commits
// added out of commit order, the last two with Bolt's reads twice as
// slow and the last on a newer Go; a run with six values a series; three
// releases of bbolt added out of version order; and a run of another
// branch that the filter leaves out.
func TestLoadSeries(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	b, err := os.ReadFile(benchFile)
	if err != nil {
		t.Fatal(err)
	}
	raw := string(b)
	slower := edit(raw, "BenchmarkReadRandomBolt/", "ns/op", 2)
	newerGo := strings.ReplaceAll(slower, "\ngo: go1.26.8\n", "\ngo: go1.26.9\n")
	if newerGo == slower {
		t.Fatal("the file has no go: go1.26.8 line")
	}
	day := func(d int) Label { return Label{"commit-date", fmt.Sprintf("2026-11-%02dT10:00:00Z", d)} }
	onMain := Label{"branch", "main"}
	// Added in the order c3, c1, c4, c2: the points go by commit date.
	addRaw(t, s, "c3.txt", slower, Label{"commit", "c3c3c3c3c3"}, day(3), onMain)
	addRaw(t, s, "c1.txt", raw, Label{"commit", "c1c1c1c1c1"}, day(1), onMain)
	addRaw(t, s, "c4.txt", newerGo, Label{"commit", "c4c4c4c4c4"}, day(4), onMain)
	addRaw(t, s, "c2.txt", raw, Label{"commit", "c2c2c2c2c2"}, day(2), onMain)
	addRaw(t, s, "dev.txt", raw, Label{"commit", "d0d0d0d0d0"}, day(5), Label{"branch", "dev"})
	for _, v := range []string{"v1.10.0", "v1.3.11", "v1.4.0"} {
		rel := strings.ReplaceAll(raw, "engine-bolt: go.etcd.io/bbolt v1.5.0\n", "engine-bolt: go.etcd.io/bbolt "+v+"\n")
		addRaw(t, s, v+".txt", rel, Label{"series", "release"}, Label{"module", "go.etcd.io/bbolt"}, Label{"version", v},
			Label{"commit", "5e5e5e5e5e"}, onMain)
	}

	h, err := s.Load(ctx, []Label{onMain})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Runs) != 7 {
		t.Errorf("%d runs with branch=main, want 7", len(h.Runs))
	}
	if want := 2 * pairs(raw); len(h.Series) != want {
		t.Errorf("%d series, want %d: each name and unit of the file, over commits and over releases", len(h.Series), want)
	}
	for _, sr := range h.Series {
		if sr.Machine != "AMD EPYC x2, /dev/vda" {
			t.Fatalf("series %s on machine %q", sr.Name, sr.Machine)
		}
	}

	sr := find(h, boltRead, "ns/op", false)
	if sr == nil {
		t.Fatalf("no commit series of %s ns/op", boltRead)
	}
	var commits []string
	var medians []float64
	for _, p := range sr.Points {
		commits = append(commits, p.Run.XLabel())
		medians = append(medians, p.Median)
	}
	if want := []string{"c1c1c1c", "c2c2c2c", "c3c3c3c", "c4c4c4c"}; !slices.Equal(commits, want) {
		t.Errorf("points in order %q, want commit order %q", commits, want)
	}
	// The file's values are 1099, 1127 and 1233 ns/op.
	if want := []float64{1127, 1127, 2254, 2254}; !slices.Equal(medians, want) {
		t.Errorf("medians %v, want %v", medians, want)
	}
	p := sr.Points[0]
	if p.N != 3 || p.CI || p.Lo != 1099 || p.Hi != 1233 || !strings.Contains(p.Note, "need >= 6 samples") {
		t.Errorf("a point of 3 values: %+v; want min..max 1099..1233 and benchmath's reason for no interval", p)
	}

	chs := EnvChanges(sr.Points[2].Run, sr.Points[3].Run)
	if len(chs) != 1 || chs[0].Short() != "go1.26.8→go1.26.9" || chs[0].String() != "go: go1.26.8 → go1.26.9" {
		t.Errorf("environment change c3 → c4: %v", chs)
	}
	if chs := EnvChanges(sr.Points[1].Run, sr.Points[2].Run); len(chs) != 0 {
		t.Errorf("c2 → c3 changed only values, yet the environment changed: %v", chs)
	}

	rel := find(h, boltRead, "ns/op", true)
	if rel == nil || rel.Module != "go.etcd.io/bbolt" || rel.Suite != "5e5e5e5e5e" {
		t.Fatalf("release series: %+v", rel)
	}
	// The version is the axis: bbolt's own engine line moving with it is
	// no environment change.
	if chs := EnvChanges(rel.Points[0].Run, rel.Points[1].Run); len(chs) != 0 {
		t.Errorf("release v1.3.11 → v1.4.0: environment changes %v", chs)
	}
	var versions []string
	for _, p := range rel.Points {
		versions = append(versions, p.Run.XLabel())
	}
	if want := []string{"v1.3.11", "v1.4.0", "v1.10.0"}; !slices.Equal(versions, want) {
		t.Errorf("release points %q, want semver order %q", versions, want)
	}

	for unit, want := range map[string]int{"ops/s": 1, "cpu-ns/op": -1, "ns/op": -1, "B/op": -1, "MB/s": 1, "hit%": 0} {
		if got := h.BetterOf(unit); got != want {
			t.Errorf("BetterOf(%s) = %d, want %d", unit, got, want)
		}
	}
}

// Six values give benchmath a 95% interval of the median: here the 1st
// and 6th order statistics.
func TestPointInterval(t *testing.T) {
	b, err := os.ReadFile(benchFile)
	if err != nil {
		t.Fatal(err)
	}
	var twice []string
	for _, l := range strings.SplitAfter(string(b), "\n") {
		twice = append(twice, l)
		if strings.HasPrefix(l, boltRead) {
			twice = append(twice, l)
		}
	}
	s, _ := openTemp(t)
	addRaw(t, s, "six.txt", strings.Join(twice, ""))
	h, err := s.Load(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	p := find(h, boltRead, "ns/op", false).Points[0]
	if p.N != 6 || !p.CI || p.Median != 1127 || p.Lo != 1099 || p.Hi != 1233 || p.Note != "" {
		t.Errorf("point of six values: %+v, want median 1127, 95%% interval 1099..1233", p)
	}
}

func TestMachineKey(t *testing.T) {
	run := func(ls ...Label) Run { return Run{Labels: ls} }
	for _, c := range []struct {
		r    Run
		want string
	}{
		{run(Label{"machine", "ci-large"}, Label{"cpu-model", "AMD EPYC"}), "ci-large"},
		{run(Label{"cpu-model", "AMD EPYC"}, Label{"cpus", "2"}, Label{"mem-total", "23.4 GiB"},
			Label{"dir-fs", "ext4 on /dev/vda (mounted at /, 74.3 GiB free)"}, Label{"dir-device", "/dev/vda (virtio_blk, rotational=1)"},
			Label{"kernel", "Linux 6.18"}, Label{"go", "go1.26.8"}),
			"AMD EPYC x2, 23.4 GiB, /dev/vda"},
		// Older files: no mem-total, no dir-device.
		{run(Label{"cpu-model", "AMD EPYC"}, Label{"cpus", "2"}, Label{"dir-fs", "ext4 on /dev/vda (mounted at /, 61.5 GiB free)"}),
			"AMD EPYC x2, /dev/vda"},
		{run(Label{"cpu-model", "AMD EPYC"}, Label{"cpus", "2"}, Label{"dir-device", "none (tmpfs)"}), "AMD EPYC x2, none"},
		{run(Label{"cpu-model", "AMD EPYC"}, Label{"cpus", "2"}), "AMD EPYC x2"},
		{run(Label{"go", "go1.26.8"}), "unknown machine"},
	} {
		if got := MachineKey(c.r); got != c.want {
			t.Errorf("MachineKey(%v) = %q, want %q", c.r.Labels, got, c.want)
		}
	}
}

// A run from before the mem-total line joins the machine that has it,
// when one machine with its CPU and device does; with two, it stays apart.
func TestOlderRunsJoinTheirMachine(t *testing.T) {
	b, err := os.ReadFile(benchFile)
	if err != nil {
		t.Fatal(err)
	}
	raw := string(b) // no mem-total line
	withMem := strings.ReplaceAll(raw, "\ncpus: 2\n", "\ncpus: 2\nmem-total: 23.5 GiB\n")
	if withMem == raw {
		t.Fatal("the file has no cpus: 2 line")
	}
	s, _ := openTemp(t)
	addRaw(t, s, "old.txt", raw)
	addRaw(t, s, "new.txt", withMem)
	machines := func() []string {
		h, err := s.Load(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var ms []string
		for _, r := range h.Runs {
			ms = append(ms, r.Machine)
		}
		return ms
	}
	if got, want := machines(), []string{"AMD EPYC x2, 23.5 GiB, /dev/vda", "AMD EPYC x2, 23.5 GiB, /dev/vda"}; !slices.Equal(got, want) {
		t.Errorf("machines %q, want %q", got, want)
	}
	addRaw(t, s, "bigger.txt", strings.ReplaceAll(withMem, "23.5 GiB", "62.8 GiB"))
	if got := machines(); got[0] != "AMD EPYC x2, /dev/vda" {
		t.Errorf("with two machines of its CPU and device, the older run went to %q", got[0])
	}
}

// Runs without a commit date fall back to their own date; a release
// series goes by version whatever the dates say.
func TestCompare(t *testing.T) {
	at := func(d int) time.Time { return time.Date(2026, 11, d, 0, 0, 0, 0, time.UTC) }
	a := &RunMeta{Run: Run{ID: 1}, CommitTime: at(3), Time: at(10)}
	b := &RunMeta{Run: Run{ID: 2}, Time: at(4)} // no commit date: its own date
	c := &RunMeta{Run: Run{ID: 3}, CommitTime: at(3), Time: at(9)}
	runs := []*RunMeta{a, b, c}
	slices.SortFunc(runs, Compare)
	if runs[0] != c || runs[1] != a || runs[2] != b {
		t.Errorf("order %d %d %d, want 3 1 2", runs[0].ID, runs[1].ID, runs[2].ID)
	}
	v := func(id int64, ver string, d int) *RunMeta {
		return &RunMeta{Run: Run{ID: id}, Release: true, Version: ver, Time: at(d)}
	}
	rel := []*RunMeta{v(1, "v1.10.0", 1), v(5, "local-3f9a", 0), v(2, "v1.4.0", 2), v(3, "v1.3.11", 3), v(4, "v1.4.0-rc.1", 4)}
	slices.SortFunc(rel, Compare)
	var got []string
	for _, r := range rel {
		got = append(got, r.Version)
	}
	if want := []string{"v1.3.11", "v1.4.0-rc.1", "v1.4.0", "v1.10.0", "local-3f9a"}; !slices.Equal(got, want) {
		t.Errorf("release order %q, want %q", got, want)
	}
}

func TestEnvChangeShort(t *testing.T) {
	for _, c := range []struct {
		ch   EnvChange
		want string
	}{
		{EnvChange{"go", "go1.26.7", "go1.26.8"}, "go1.26.7→go1.26.8"},
		{EnvChange{"engine-bolt", "go.etcd.io/bbolt v1.4.0", "go.etcd.io/bbolt v1.5.0"}, "bbolt v1.4.0→v1.5.0"},
		{EnvChange{"kernel", "Linux 6.18.44-fc-v595", "Linux 6.18.44-fc-v657"}, "kernel 6.18.44-fc-v595→6.18.44-fc-v657"},
		{EnvChange{"rocksdb-lib", "", "7.8.3"}, "rocksdb-lib none→7.8.3"},
	} {
		if got := c.ch.Short(); got != c.want {
			t.Errorf("%v.Short() = %q, want %q", c.ch, got, c.want)
		}
	}
}
