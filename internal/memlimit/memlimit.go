// Package memlimit runs the process under a memory budget: a cgroup of its
// own (v1 or v2) under the one it runs in, whose limit bounds all it charges
// from then on (page cache, heap, the stores' caches), so a data set several
// times the budget behaves as one several times the machine's memory. A page
// stays charged where it was first charged: evict the files to read before
// entering. Requirements, and why swap is not limited: docs/methodology.md.
package memlimit

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kvbench/kvbench/internal/measure"
	"golang.org/x/sys/unix"
)

// Flag is the flag the budget comes from; every refusal names it.
const Flag = "-mem_limit"

// Floor is the smallest budget Enter accepts: below it the process's own
// runtime and a store's smallest caches leave the page cache nothing.
const Floor = 16 << 20

// prefix names the cgroups Enter creates, kvbench-<pid>; the next Enter
// removes those whose pid is gone, and touches no other name.
const prefix = "kvbench-"

// Parent is where a budget is created: the memory controller's directory
// of the cgroup the process runs in.
type Parent struct {
	Dir     string // e.g. /sys/fs/cgroup/memory/user/1000 (v1), /sys/fs/cgroup/user.slice/x (v2)
	Version int    // 1: the v1 memory controller's hierarchy; 2: the unified hierarchy
	Systemd bool   // systemd manages the cgroup (a .slice, .scope or .service under a systemd init)
}

// Find locates the process's memory cgroup from /proc/self/cgroup and
// /proc/self/mountinfo.
func Find() (Parent, error) {
	return find("/proc/self/cgroup", "/proc/self/mountinfo", "/run/systemd/system")
}

// find is Find reading the given files (tests point it at others).
func find(cgroupFile, mountinfoFile, systemdDir string) (Parent, error) {
	b, err := os.ReadFile(cgroupFile)
	if err != nil {
		return Parent{}, fmt.Errorf("%s: cannot read the process's cgroups: %w", Flag, err)
	}
	var v1, v2 string
	have1, have2 := false, false
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		if f[0] == "0" && f[1] == "" {
			v2, have2 = f[2], true
		} else if slices.Contains(strings.Split(f[1], ","), "memory") {
			v1, have1 = f[2], true
		}
	}
	mounts, err := measure.Mounts(mountinfoFile)
	if err != nil {
		return Parent{}, fmt.Errorf("%s: cannot read the mounts: %w", Flag, err)
	}
	var p Parent
	switch {
	case have1:
		i := slices.IndexFunc(mounts, func(m measure.Mount) bool {
			return m.Type == "cgroup" && slices.Contains(strings.Split(m.Super, ","), "memory")
		})
		if i < 0 {
			return Parent{}, fmt.Errorf("%s: the v1 memory controller's hierarchy (%s in %s) is not mounted", Flag, v1, cgroupFile)
		}
		p = Parent{Dir: cgroupDir(mounts[i], v1), Version: 1}
		if _, err := os.Stat(filepath.Join(p.Dir, "memory.limit_in_bytes")); err != nil {
			return Parent{}, fmt.Errorf("%s: no memory controller in %s: %w", Flag, p.Dir, err)
		}
	case have2:
		i := slices.IndexFunc(mounts, func(m measure.Mount) bool { return m.Type == "cgroup2" })
		if i < 0 {
			return Parent{}, fmt.Errorf("%s: the unified cgroup hierarchy (%s in %s) is not mounted", Flag, v2, cgroupFile)
		}
		p = Parent{Dir: cgroupDir(mounts[i], v2), Version: 2}
		if !hasWord(p.Dir, "cgroup.controllers", "memory") {
			return Parent{}, fmt.Errorf("%s: no memory controller: %s/cgroup.controllers lacks memory (the v1 memory hierarchy is not mounted, and the parent cgroup does not delegate memory)", Flag, p.Dir)
		}
		// A systemd init manages the cgroup when the path names a unit.
		_, serr := os.Stat(systemdDir)
		p.Systemd = serr == nil && slices.ContainsFunc(strings.Split(v2, "/"), func(c string) bool {
			return strings.HasSuffix(c, ".slice") || strings.HasSuffix(c, ".scope") || strings.HasSuffix(c, ".service")
		})
	default:
		return Parent{}, fmt.Errorf("%s: no memory controller: %s names neither a v1 memory hierarchy nor the unified one", Flag, cgroupFile)
	}
	return p, nil
}

// cgroupDir is the directory of cgroup path p in the hierarchy mounted as m.
func cgroupDir(m measure.Mount, p string) string {
	rel := p
	if m.Root != "/" {
		if r, ok := strings.CutPrefix(p, m.Root); ok && (r == "" || r[0] == '/') {
			rel = r
		}
	}
	return filepath.Join(m.Point, rel)
}

// hasWord reports whether the file dir/name lists word.
func hasWord(dir, name, word string) bool {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return false
	}
	return slices.Contains(strings.Fields(string(b)), word)
}

// limitFile is the file that holds a cgroup's memory limit.
func (p Parent) limitFile() string {
	if p.Version == 2 {
		return "memory.max"
	}
	return "memory.limit_in_bytes"
}

// refuse is an error naming the flag and the budget.
func refuse(limit int64, format string, args ...any) error {
	return fmt.Errorf("%s %s: %s", Flag, FormatSize(limit), fmt.Sprintf(format, args...))
}

// Check says whether Enter(limit) can work here, changing nothing.
func (p Parent) Check(limit int64) error {
	_, err := p.check(limit)
	return err
}

// check is Check, and reports whether the budget is the process's own
// cgroup's limit already (adopt).
func (p Parent) check(limit int64) (adopt bool, err error) {
	if limit < Floor {
		return false, refuse(limit, "below the floor of %s: the process's runtime and a store's smallest caches would leave the page cache nothing", FormatSize(Floor))
	}
	fi, err := os.Stat(p.Dir)
	if err != nil {
		return false, refuse(limit, "no cgroup directory to create the budget in: %v", err)
	}
	if !fi.IsDir() {
		return false, refuse(limit, "%s is not a cgroup directory", p.Dir)
	}
	if _, err := os.Stat(filepath.Join(p.Dir, p.limitFile())); err != nil && !(p.Version == 2 && isRoot(p.Dir)) {
		return false, refuse(limit, "no memory controller in %s (no %s)", p.Dir, p.limitFile())
	}
	// Adopted: the process's own cgroup already has exactly the budget as
	// its limit (a run started under systemd-run -p MemoryMax=SIZE).
	page := int64(os.Getpagesize())
	if n, err := readInt(p.Dir, p.limitFile()); err == nil && n == limit/page*page {
		return true, nil
	}
	how := "run as root, or in a cgroup tree delegated to this user"
	if p.Systemd {
		how = fmt.Sprintf("start the run under `systemd-run --scope -p MemoryMax=%s` instead (with the same %s)", FormatSize(limit), Flag)
	}
	for _, f := range []string{"", "cgroup.procs"} {
		if err := unix.Access(filepath.Join(p.Dir, f), unix.W_OK); err != nil {
			return false, refuse(limit, "cannot create a cgroup in %s and move this process (euid %d): %v; %s", p.Dir, os.Geteuid(), err, how)
		}
	}
	if p.Version == 2 {
		if p.Systemd {
			return false, refuse(limit, "systemd manages %s, and a process cannot move itself into a new scope: %s", p.Dir, how)
		}
		if !hasWord(p.Dir, "cgroup.subtree_control", "memory") {
			return false, refuse(limit, "cgroup v2: %s holds processes, so it cannot enable the memory controller for a child (the no-internal-processes rule; its cgroup.subtree_control lacks memory); run the suite as the only process of a cgroup whose parent enables memory for it, or under `systemd-run --scope -p MemoryMax=%s` with the same %s", p.Dir, FormatSize(limit), Flag)
		}
	}
	return false, nil
}

// isRoot reports whether dir is a hierarchy's root (no limit files).
func isRoot(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "..", "cgroup.procs"))
	return err != nil
}

// Budget is the memory cgroup the process runs in after Enter.
type Budget struct {
	Limit   int64  // bytes
	Dir     string // the cgroup's directory
	Version int    // cgroup version
	Adopted bool   // the process's own cgroup already had this limit; Close leaves it
	// Resident is the process's resident memory when it entered, charged
	// before and so outside the budget.
	Resident int64

	parent string
	closed bool
	watch  *watcher // EnterWatched's
}

// Enter creates a cgroup kvbench-<pid> under p, limits its memory to limit
// bytes, and moves the whole process into it. Close undoes it.
func (p Parent) Enter(limit int64) (*Budget, error) {
	adopt, err := p.check(limit)
	if err != nil {
		return nil, err
	}
	debug.FreeOSMemory() // freed heap returns to the kernel; faulted in again, it is charged to the budget
	m, _ := measure.ReadRSS()
	b := &Budget{Limit: limit, Version: p.Version, parent: p.Dir, Resident: m.Total()}
	if adopt {
		b.Dir, b.Adopted = p.Dir, true
		return b, nil
	}
	p.removeStale()
	b.Dir = filepath.Join(p.Dir, prefix+strconv.Itoa(os.Getpid()))
	if err := os.Mkdir(b.Dir, 0o755); err != nil {
		return nil, refuse(limit, "create the budget's cgroup: %v", err)
	}
	for _, w := range [][2]string{
		{p.limitFile(), strconv.FormatInt(limit, 10)}, // the limit first, then the process
		{"cgroup.procs", strconv.Itoa(os.Getpid())},
	} {
		if err := writeFile(b.Dir, w[0], w[1]); err != nil {
			os.Remove(b.Dir)
			return nil, refuse(limit, "%v", err)
		}
	}
	return b, nil
}

// removeStale removes the cgroups kvbench-<pid> of processes that are
// gone; one still holding processes (the dead run's child) stays.
func (p Parent) removeStale() {
	ents, err := os.ReadDir(p.Dir)
	if err != nil {
		return
	}
	for _, d := range ents {
		rest, ok := strings.CutPrefix(d.Name(), prefix)
		pid, err := strconv.Atoi(rest)
		if !ok || err != nil || pid <= 0 || !d.IsDir() {
			continue
		}
		if pid == os.Getpid() || syscall.Kill(pid, 0) == syscall.ESRCH {
			os.Remove(filepath.Join(p.Dir, d.Name()))
		}
	}
}

func writeFile(dir, name, val string) error {
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(val)
	if err = cmp.Or(err, f.Close()); err != nil {
		return fmt.Errorf("write %s to %s: %w", val, path, err)
	}
	return nil
}

// Close moves the process back to the cgroup it came from and removes the
// budget's (its pages stay cached until reclaimed). Safe to call twice.
func (b *Budget) Close() error {
	if b == nil || b.closed {
		return nil
	}
	b.closed = true
	b.watch.send("done", "")
	if b.Adopted {
		return nil
	}
	if err := writeFile(b.parent, "cgroup.procs", strconv.Itoa(os.Getpid())); err != nil {
		return fmt.Errorf("%s: leave the budget: %w", Flag, err)
	}
	var err error
	for i := 0; i < 50; i++ { // a thread still exiting keeps the cgroup busy a moment
		if err = os.Remove(b.Dir); err == nil || errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("%s: remove %s: %w", Flag, b.Dir, err)
}

// String is the budget and where it is, for logs.
func (b *Budget) String() string {
	how := "created"
	if b.Adopted {
		how = "adopted"
	}
	if n := b.watchNote(); n != "" {
		how += "; " + n
	}
	return fmt.Sprintf("%s in cgroup v%d %s (%s)", FormatSize(b.Limit), b.Version, b.Dir, how)
}

// Stats is what the budget's cgroup has charged, every process in it.
type Stats struct {
	Usage       int64 // bytes charged now: page cache, anonymous memory, kernel memory
	Peak        int64 // the most Usage has been (0 where the kernel keeps no peak)
	Cache       int64 // the page cache part of Usage (v1 cache, v2 file)
	Dirty       int64 // the part of Cache written to but not yet written back
	Writeback   int64 // the part of Cache being written back now
	Shmem       int64 // the part of Cache that is tmpfs and shared memory: without swap, not reclaimable
	Anon        int64 // anonymous memory: heaps, C allocations, stacks
	Kernel      int64 // kernel memory charged (v2 kernel, v1 memory.kmem.usage_in_bytes; 0 where not kept)
	Sock        int64 // network socket buffers (v2 only)
	MajorFaults int64 // page faults that waited for the device (pgmajfault)
	LimitHits   int64 // times the limit was reached (v1 memory.failcnt, v2 memory.events max)
	OOMKills    int64 // processes the out-of-memory killer ended
}

// Stats reads the budget's counters now.
func (b *Budget) Stats() (Stats, error) {
	var s Stats
	stat, err := keyed(b.Dir, "memory.stat")
	if err != nil {
		return s, err
	}
	pick := func(keys ...string) int64 {
		for _, k := range keys {
			if v, ok := stat[k]; ok {
				return v
			}
		}
		return 0
	}
	one := func(name string) (int64, error) { return readInt(b.Dir, name) }
	if b.Version == 2 {
		if s.Usage, err = one("memory.current"); err != nil {
			return s, err
		}
		s.Peak, _ = one("memory.peak") // Linux 5.19 on
		s.Cache, s.Anon, s.MajorFaults = pick("file"), pick("anon"), pick("pgmajfault")
		s.Dirty, s.Writeback, s.Shmem = pick("file_dirty"), pick("file_writeback"), pick("shmem")
		s.Kernel, s.Sock = pick("kernel"), pick("sock") // kernel: Linux 5.18 on
		events, _ := keyed(b.Dir, "memory.events")
		s.LimitHits, s.OOMKills = events["max"], events["oom_kill"]
		return s, nil
	}
	if s.Usage, err = one("memory.usage_in_bytes"); err != nil {
		return s, err
	}
	s.Peak, _ = one("memory.max_usage_in_bytes")
	s.LimitHits, _ = one("memory.failcnt")
	s.Cache, s.Anon = pick("total_cache", "cache"), pick("total_rss", "rss")
	s.MajorFaults = pick("total_pgmajfault", "pgmajfault")
	s.Dirty, s.Writeback = pick("total_dirty", "dirty"), pick("total_writeback", "writeback")
	s.Shmem = pick("total_shmem", "shmem")
	s.Kernel, _ = one("memory.kmem.usage_in_bytes") // absent where kernel memory is not accounted apart
	oom, _ := keyed(b.Dir, "memory.oom_control")
	s.OOMKills = oom["oom_kill"]
	return s, nil
}

// readInt reads the number in the file dir/name.
func readInt(dir, name string) (int64, error) {
	raw, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
}

// keyed reads the "key value" lines of the file dir/name.
func keyed(dir, name string) (map[string]int64, error) {
	raw, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return nil, err
	}
	m := map[string]int64{}
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		if v, err := strconv.ParseInt(f[1], 10, 64); err == nil {
			m[f[0]] = v
		}
	}
	return m, nil
}
