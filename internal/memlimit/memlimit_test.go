package memlimit

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/measure"
)

func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{
		{"67108864", 64 << 20}, {"64MiB", 64 << 20}, {"1GiB", 1 << 30}, {"512KiB", 512 << 10},
		{"2TiB", 2 << 40}, {"100B", 100}, {" 16 MiB ", 16 << 20}, {"0", 0},
	} {
		if got, err := ParseSize(c.in); err != nil || got != c.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "64MB", "64M", "1.5GiB", "-1", "GiB", "9999999TiB"} {
		if n, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", bad, n)
		}
	}
	for _, n := range []int64{64 << 20, 1 << 30, 1000, 3 << 10, 16<<20 + 1} {
		if back, err := ParseSize(FormatSize(n)); err != nil || back != n {
			t.Errorf("FormatSize(%d) = %q reads back as %d, %v", n, FormatSize(n), back, err)
		}
	}
	if s := FormatSize(64 << 20); s != "64MiB" {
		t.Errorf("FormatSize(64 MiB) = %q", s)
	}
}

// fakeProc writes a /proc/self/cgroup and mountinfo pair into a temporary
// directory and returns their paths.
func fakeProc(t *testing.T, cgroup, mountinfo string) (string, string) {
	dir := t.TempDir()
	c, m := filepath.Join(dir, "cgroup"), filepath.Join(dir, "mountinfo")
	os.WriteFile(c, []byte(cgroup), 0o644)
	os.WriteFile(m, []byte(mountinfo), 0o644)
	return c, m
}

func TestFind(t *testing.T) {
	root := t.TempDir()
	v1 := filepath.Join(root, "memory", "outer", "job")
	os.MkdirAll(v1, 0o755)
	os.WriteFile(filepath.Join(v1, "memory.limit_in_bytes"), []byte("9223372036854771712\n"), 0o644)
	c, m := fakeProc(t, "4:memory:/outer/job\n0::/\n",
		"35 31 0:32 / "+filepath.Join(root, "memory")+" rw,relatime - cgroup cgroup rw,memory\n"+
			"41 31 0:38 / "+filepath.Join(root, "unified")+" rw,relatime - cgroup2 cgroup2 rw\n")
	p, err := find(c, m, "/nonexistent")
	if err != nil || p.Dir != v1 || p.Version != 1 {
		t.Fatalf("v1: %+v, %v; want %s", p, err, v1)
	}

	// A v1 hierarchy mounted from a sub-cgroup (a container's view).
	sub := filepath.Join(root, "sub")
	os.MkdirAll(filepath.Join(sub, "job"), 0o755)
	os.WriteFile(filepath.Join(sub, "job", "memory.limit_in_bytes"), []byte("1\n"), 0o644)
	c, m = fakeProc(t, "4:cpu,memory:/outer/job\n",
		"35 31 0:32 /outer "+sub+" rw - cgroup cgroup rw,cpu,memory\n")
	if p, err := find(c, m, "/nonexistent"); err != nil || p.Dir != filepath.Join(sub, "job") {
		t.Errorf("v1 sub-mount: %+v, %v", p, err)
	}

	// The unified hierarchy: memory must be among the cgroup's controllers.
	v2 := filepath.Join(root, "unified", "user.slice", "run.scope")
	os.MkdirAll(filepath.Join(root, "systemd"), 0o755)
	os.MkdirAll(v2, 0o755)
	c, m = fakeProc(t, "0::/user.slice/run.scope\n",
		"41 31 0:38 / "+filepath.Join(root, "unified")+" rw,relatime - cgroup2 cgroup2 rw\n")
	if _, err := find(c, m, filepath.Join(root, "systemd")); err == nil || !strings.Contains(err.Error(), "-mem_limit: no memory controller") {
		t.Errorf("v2 without memory: %v", err)
	}
	os.WriteFile(filepath.Join(v2, "cgroup.controllers"), []byte("cpu io memory pids\n"), 0o644)
	p, err = find(c, m, filepath.Join(root, "systemd"))
	if err != nil || p.Dir != v2 || p.Version != 2 || !p.Systemd {
		t.Errorf("v2: %+v, %v", p, err)
	}

	c, m = fakeProc(t, "8:pids:/\n", "")
	if _, err := find(c, m, "/nonexistent"); err == nil || !strings.Contains(err.Error(), "-mem_limit: no memory controller") {
		t.Errorf("no memory line: %v", err)
	}
	if _, err := find(filepath.Join(root, "missing"), m, "/nonexistent"); err == nil || !strings.Contains(err.Error(), "-mem_limit") {
		t.Errorf("no /proc/self/cgroup: %v", err)
	}
}

// TestRefusals: without the means to make a budget, Enter refuses before
// creating anything, and says so naming the flag.
func TestRefusals(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain") // a directory, not a cgroup
	os.Mkdir(plain, 0o755)
	v1 := filepath.Join(dir, "v1") // looks like a v1 memory cgroup
	os.Mkdir(v1, 0o755)
	os.WriteFile(filepath.Join(v1, "memory.limit_in_bytes"), []byte("9223372036854771712\n"), 0o644)
	os.WriteFile(filepath.Join(v1, "cgroup.procs"), nil, 0o644)
	v2 := filepath.Join(dir, "v2", "job") // a v2 cgroup that holds processes
	os.MkdirAll(v2, 0o755)
	os.WriteFile(filepath.Join(dir, "v2", "cgroup.procs"), nil, 0o644)
	for name, body := range map[string]string{"cgroup.controllers": "memory pids", "cgroup.subtree_control": "", "memory.max": "max", "cgroup.procs": "1\n"} {
		os.WriteFile(filepath.Join(v2, name), []byte(body), 0o644)
	}
	cases := []struct {
		p     Parent
		limit int64
		want  string
	}{
		{Parent{Dir: filepath.Join(dir, "missing"), Version: 1}, 64 << 20, "-mem_limit 64MiB: no cgroup directory"},
		{Parent{Dir: plain, Version: 1}, 64 << 20, "-mem_limit 64MiB: no memory controller in " + plain},
		{Parent{Dir: v1, Version: 1}, 8 << 20, "-mem_limit 8MiB: below the floor of 16MiB"},
		{Parent{Dir: v2, Version: 2}, 64 << 20, "the no-internal-processes rule"},
		{Parent{Dir: v2, Version: 2, Systemd: true}, 64 << 20, "systemd-run --scope -p MemoryMax=64MiB"},
	}
	if os.Geteuid() != 0 { // root writes anywhere, so a read-only tree refuses only others
		os.Chmod(v1, 0o555)
		defer os.Chmod(v1, 0o755)
		cases = append(cases, struct {
			p     Parent
			limit int64
			want  string
		}{Parent{Dir: v1, Version: 1}, 64 << 20, "-mem_limit 64MiB: cannot create a cgroup in " + v1})
	}
	for _, c := range cases {
		before, _ := os.ReadDir(c.p.Dir)
		b, err := c.p.Enter(c.limit)
		if err == nil {
			b.Close()
			t.Errorf("%+v: Enter(%d) worked", c.p, c.limit)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v; want %q", c.p, err, c.want)
		}
		if err := c.p.Check(c.limit); err == nil {
			t.Errorf("%+v: Check passed where Enter refuses", c.p)
		}
		if after, _ := os.ReadDir(c.p.Dir); len(after) != len(before) {
			t.Errorf("%+v: a refused Enter created something in %s", c.p, c.p.Dir)
		}
	}
}

// TestAdopt: a process started with its cgroup already limited to the
// budget (systemd-run --scope -p MemoryMax=SIZE) runs in that cgroup, and
// Close leaves it.
func TestAdopt(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "memory.max"), []byte(strconv.Itoa(64<<20)+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "cgroup.controllers"), []byte("memory"), 0o644)
	p := Parent{Dir: dir, Version: 2, Systemd: true}
	b, err := p.Enter(64 << 20)
	if err != nil || !b.Adopted || b.Dir != dir {
		t.Fatalf("Enter: %+v, %v", b, err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatal("Close removed an adopted cgroup")
	}
	if _, err := p.Enter(128 << 20); err == nil || !strings.Contains(err.Error(), "systemd-run --scope -p MemoryMax=128MiB") {
		t.Fatalf("another size under systemd: %v", err)
	}
}

// TestRemoveStale: only kvbench-<pid> names of dead pids go.
func TestRemoveStale(t *testing.T) {
	dir := t.TempDir()
	dead := deadPid(t)
	names := map[string]bool{ // name: removed
		fmt.Sprintf("kvbench-%d", dead):  true,
		"kvbench-1":                      false, // init lives
		fmt.Sprintf("kvbench-%dx", dead): false,
		fmt.Sprintf("other-%d", dead):    false,
	}
	for n := range names {
		os.Mkdir(filepath.Join(dir, n), 0o755)
	}
	Parent{Dir: dir, Version: 1}.removeStale()
	for n, gone := range names {
		_, err := os.Stat(filepath.Join(dir, n))
		if gone != os.IsNotExist(err) {
			t.Errorf("%s: removed %v, want %v", n, os.IsNotExist(err), gone)
		}
	}
}

// deadPid is the pid of a process that has exited.
func deadPid(t *testing.T) int {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// realParent is this process's memory cgroup, or skips the test with the
// reason a budget cannot be made here.
func realParent(t *testing.T, limit int64) Parent {
	t.Helper()
	p, err := Find()
	adopt := false
	if err == nil {
		adopt, err = p.check(limit)
	}
	if err != nil {
		t.Skipf("needs root (or a delegated cgroup tree) and a memory controller: %v", err)
	}
	if adopt {
		t.Skipf("the process's own cgroup is limited to %s already", FormatSize(limit))
	}
	return p
}

// memoryCgroup is the process's memory cgroup path from /proc/self/cgroup.
func memoryCgroup(t *testing.T) string {
	t.Helper()
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	unified := ""
	for s.Scan() {
		x := strings.SplitN(s.Text(), ":", 3)
		if len(x) != 3 {
			continue
		}
		if strings.Contains(","+x[1]+",", ",memory,") {
			return x[2]
		}
		if x[0] == "0" {
			unified = x[2]
		}
	}
	return unified
}

// TestCloseRestores: Enter moves the process into kvbench-<pid> with the
// limit set, removing a stale one of a dead pid; Close moves it back and
// removes the directory.
func TestCloseRestores(t *testing.T) {
	const limit = 64 << 20
	p := realParent(t, limit)
	orig := memoryCgroup(t)
	stale := filepath.Join(p.Dir, fmt.Sprintf("kvbench-%d", deadPid(t)))
	if err := os.Mkdir(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(stale) })
	b, err := p.Enter(limit)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // should Close fail, the process still leaves
		if memoryCgroup(t) != orig {
			writeFile(p.Dir, "cgroup.procs", strconv.Itoa(os.Getpid()))
			os.Remove(b.Dir)
		}
	})
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale cgroup %s of a dead pid survived Enter", stale)
	}
	want := filepath.Join(orig, fmt.Sprintf("kvbench-%d", os.Getpid()))
	if got := memoryCgroup(t); got != want {
		t.Fatalf("in cgroup %s, want %s", got, want)
	}
	if raw, _ := os.ReadFile(filepath.Join(b.Dir, p.limitFile())); strings.TrimSpace(string(raw)) != strconv.Itoa(limit) {
		t.Errorf("limit file says %q, want %d", raw, limit)
	}
	_ = make([]byte, 1<<20)[0] // something charged
	s, err := b.Stats()
	if err != nil || s.Usage <= 0 || s.Usage > limit {
		t.Errorf("Stats: %+v, %v", s, err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if got := memoryCgroup(t); got != orig {
		t.Errorf("after Close in %s, want %s", got, orig)
	}
	if _, err := os.Stat(b.Dir); !os.IsNotExist(err) {
		t.Errorf("%s still there after Close: %v", b.Dir, err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// overLimitSlack is how far over its limit a cgroup's charge may go: the
// kernel charges an allocation that cannot fail (or one of a task being
// killed) past the limit, "temporarily" (mm/memcontrol.c, try_charge's
// force path), and the peak records it. Beside heavy writes a peak one
// page over the limit was seen. A budget that bounded nothing would let
// the child keep four times the limit.
const overLimitSlack = 1 << 20

// childEnv makes the test binary the budgeted child of
// TestBudgetBoundsPageCache: file:limit.
const childEnv = "MEMLIMIT_TEST_PAGE_CACHE_CHILD"

// TestBudgetBoundsPageCache reads a file four times the budget inside the
// budget, in a child process (so a failure cannot leave this process
// limited), and checks that the page cache held at most the budget of it.
//
// The file is evicted before the child starts, so every page of it in the
// cache was brought in by the child and charged to the budget: resident
// bytes of the file <= usage <= limit, but for overLimitSlack. Without the
// budget the whole file, four times the limit, would stay resident on a
// machine with the memory to spare.
func TestBudgetBoundsPageCache(t *testing.T) {
	if job := os.Getenv(childEnv); job != "" {
		budgetChild(t, job)
		return
	}
	const limit = 32 << 20
	realParent(t, limit)
	dir := t.TempDir()
	if mem, err := measure.InMemory(dir); err != nil || mem {
		t.Skipf("%s is on tmpfs or ramfs (or unknown: %v): its files are memory, not page cache", dir, err)
	}
	path, err := measure.PrepareFile(dir, 4*limit)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := measure.EvictFile(path); err != nil {
		t.Fatal(err)
	}
	if res, _, _ := measure.Resident(path); res > limit/8 {
		t.Skipf("eviction left %d bytes of the file resident", res)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestBudgetBoundsPageCache$", "-test.v")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s:%d", childEnv, path, limit))
	out, err := cmd.CombinedOutput()
	t.Logf("child:\n%s", out)
	if err != nil {
		t.Fatalf("child: %v", err)
	}
	if res, total, err := measure.Resident(path); err != nil || res > limit+overLimitSlack {
		t.Errorf("after the child: %d of %d bytes resident (%v), budget %d", res, total, err, limit)
	}
	p, _ := Find()
	if _, err := os.Stat(filepath.Join(p.Dir, fmt.Sprintf("kvbench-%d", cmd.Process.Pid))); !os.IsNotExist(err) {
		t.Errorf("the child's cgroup is still there: %v", err)
	}
}

// budgetChild enters the budget, reads the whole file, and checks what
// stayed resident and what the budget charged.
func budgetChild(t *testing.T, job string) {
	i := strings.LastIndexByte(job, ':')
	path := job[:i]
	limit, _ := strconv.ParseInt(job[i+1:], 10, 64)
	buf := make([]byte, 1<<20)
	p, err := Find()
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Enter(limit)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := b.Close(); err != nil {
			t.Error(err)
		}
	}()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var read, maxUsage int64
	for {
		n, err := f.Read(buf)
		read += int64(n)
		if read%(8<<20) == 0 || err != nil {
			if s, serr := b.Stats(); serr == nil {
				maxUsage = max(maxUsage, s.Usage)
			}
		}
		if err != nil {
			break
		}
	}
	res, total, err := measure.Resident(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.Stats()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("budget %s: read %d bytes; %d of the file's %d bytes resident; usage %d (most seen %d, peak %d), cache %d, anon %d, limit reached %d times, %d major faults; resident at entry %d",
		b, read, res, total, s.Usage, maxUsage, s.Peak, s.Cache, s.Anon, s.LimitHits, s.MajorFaults, b.Resident)
	if read != total {
		t.Errorf("read %d of %d bytes", read, total)
	}
	if res > limit+overLimitSlack {
		t.Errorf("%d bytes of the file resident, more than the budget %d", res, limit)
	}
	if res == 0 {
		t.Errorf("nothing of the file resident: the check measured nothing")
	}
	if maxUsage > limit+overLimitSlack || s.Peak > limit+overLimitSlack {
		t.Errorf("usage reached %d (peak %d), budget %d", maxUsage, s.Peak, limit)
	}
	if s.Peak > 0 && s.Peak < limit/2 {
		t.Errorf("peak %d never came near the budget %d: the file's pages were charged elsewhere", s.Peak, limit)
	}
	if s.Cache <= 0 {
		t.Errorf("no page cache charged: %+v", s)
	}
}
