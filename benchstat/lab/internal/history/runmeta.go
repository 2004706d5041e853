package history

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/semver"
)

// RunMeta is a run as the report places it: on which machine, at which
// commit or release, in which environment.
type RunMeta struct {
	Run
	Machine    string
	Commit     string    // the commit label ("" when absent)
	Dirty      bool      // dirty=true
	CommitTime time.Time // the commit-date label; zero when absent or unreadable
	Time       time.Time // the date label, else when the run was added
	Release    bool      // series=release and a version label: a run of a release series
	Module     string    // the module label (a release series' module)
	Version    string    // the version label
	Env        []Label   // the environment, by key (EnvKeys)
}

// Meta derives a run's place from its labels.
func Meta(r Run) *RunMeta {
	m := &RunMeta{
		Run:     r,
		Machine: MachineKey(r),
		Commit:  r.Label("commit"),
		Module:  r.Label("module"),
		Version: r.Label("version"),
		Time:    r.AddedAt,
	}
	if m.Commit == "none" { // make's record outside a git checkout
		m.Commit = ""
	}
	m.Dirty, _ = strconv.ParseBool(r.Label("dirty"))
	m.Release = r.Label("series") == "release" && m.Version != ""
	if t, ok := parseTime(r.Label("commit-date")); ok {
		m.CommitTime = t
	}
	if t, ok := parseTime(r.Label("date")); ok {
		m.Time = t
	}
	for _, l := range r.Labels {
		// In a release series the module's own engine line moves with
		// the version, which is the axis: not an environment change.
		own := m.Release && m.Module != "" && strings.HasPrefix(l.Value, m.Module+" ")
		if isEnvKey(l.Key, m.Release) && !own {
			m.Env = append(m.Env, l)
		}
	}
	return m
}

// parseTime reads the date forms the suite's labels use: RFC 3339 (git's
// %cI, date -Iseconds), or a plain date and time.
func parseTime(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, time.DateTime, "2006-01-02T15:04:05", time.DateOnly} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// MachineKey names the machine a run measured: the machine label, or the
// CPU model and count, the memory and the device under -dir (of the
// dir-device line, or of dir-fs in files older than it; the free space
// dir-fs also gives changes from run to run). The kernel, Go and engine
// versions are not part of it: they are the environment, whose changes
// the report marks within a machine's series.
func MachineKey(r Run) string {
	if m := r.Label("machine"); m != "" {
		return m
	}
	return machineParts(r).String()
}

// machine is a machine key's parts; mem is "" in files older than the
// mem-total line.
type machine struct{ cpu, mem, dev string }

func (m machine) String() string {
	var parts []string
	for _, p := range []string{m.cpu, m.mem, m.dev} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return "unknown machine"
	}
	return strings.Join(parts, ", ")
}

func machineParts(r Run) machine {
	m := machine{cpu: r.Label("cpu-model"), mem: r.Label("mem-total")}
	if n := r.Label("cpus"); n != "" {
		m.cpu = strings.TrimSpace(m.cpu + " x" + n)
	}
	if d := r.Label("dir-device"); d != "" {
		m.dev, _, _ = strings.Cut(d, " (") // "/dev/vda (virtio_blk, rotational=1)"
	} else if fs := r.Label("dir-fs"); fs != "" {
		fs, _, _ = strings.Cut(fs, " (") // "ext4 on /dev/vda (mounted at /, 74.3 GiB free)"
		if _, dev, ok := strings.Cut(fs, " on "); ok {
			m.dev = dev
		} else {
			m.dev = fs
		}
	}
	return m
}

// joinOlderRuns gives a run from before the mem-total line the machine
// of the runs that have it, when exactly one machine with its CPU and
// device does: the same machine, recorded before the suite printed its
// memory.
func joinOlderRuns(runs []*RunMeta) {
	mems := map[machine][]string{} // machine without memory -> the memories seen with it
	for _, r := range runs {
		if r.Label("machine") != "" {
			continue
		}
		m := machineParts(r.Run)
		if m.mem == "" {
			continue
		}
		k := machine{cpu: m.cpu, dev: m.dev}
		if !slices.Contains(mems[k], m.mem) {
			mems[k] = append(mems[k], m.mem)
		}
	}
	for _, r := range runs {
		if r.Label("machine") != "" {
			continue
		}
		m := machineParts(r.Run)
		if m.mem == "" && len(mems[m]) == 1 {
			m.mem = mems[m][0]
			r.Machine = m.String()
		}
	}
}

// isEnvKey says whether a label is part of the environment: the kernel,
// Go, every engine's version, RocksDB's C library, and the module and
// version under test (except in a release series, where the version is
// the x axis itself).
func isEnvKey(key string, release bool) bool {
	switch {
	case key == "kernel", key == "go", key == "rocksdb-lib", strings.HasPrefix(key, "engine-"):
		return true
	case key == "module", key == "version":
		return !release
	}
	return false
}

// EnvChange is one environment label that differs between two runs.
type EnvChange struct {
	Key, From, To string // From or To is "" when the run lacks the label
}

// Short is the change as a chart marks it: "go1.26.7→go1.26.8",
// "bbolt v1.4.0→v1.5.0".
func (c EnvChange) Short() string {
	from, to := c.From, c.To
	name := c.Key
	switch {
	case c.Key == "go":
		name = ""
	case c.Key == "kernel":
		from, to = strings.TrimPrefix(from, "Linux "), strings.TrimPrefix(to, "Linux ")
	case strings.HasPrefix(c.Key, "engine-"), c.Key == "module", c.Key == "version":
		// "go.etcd.io/bbolt v1.5.0": the module's last element, then the versions.
		fm, fv, fok := strings.Cut(from, " ")
		tm, tv, tok := strings.Cut(to, " ")
		if fok && tok && fm == tm {
			name, from, to = fm[strings.LastIndex(fm, "/")+1:], fv, tv
		}
	}
	s := cmp.Or(from, "none") + "→" + cmp.Or(to, "none")
	if name != "" {
		s = name + " " + s
	}
	return s
}

// String is the change in full: "engine-bolt: go.etcd.io/bbolt v1.4.0 → ...".
func (c EnvChange) String() string {
	return c.Key + ": " + cmp.Or(c.From, "none") + " → " + cmp.Or(c.To, "none")
}

// EnvChanges lists the environment labels that differ from a to b, by
// key. A key with several values in one run (files concatenated from
// builds that differ) compares as all of them.
func EnvChanges(a, b *RunMeta) []EnvChange {
	from, to := envValues(a), envValues(b)
	var keys []string
	for k := range from {
		keys = append(keys, k)
	}
	for k := range to {
		if _, ok := from[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []EnvChange
	for _, k := range keys {
		if from[k] != to[k] {
			out = append(out, EnvChange{k, from[k], to[k]})
		}
	}
	return out
}

// envValues is each environment key's values, joined with " + ".
func envValues(r *RunMeta) map[string]string {
	m := map[string]string{}
	for _, l := range r.Env { // sorted by key, then value
		if v, ok := m[l.Key]; ok {
			m[l.Key] = v + " + " + l.Value
		} else {
			m[l.Key] = l.Value
		}
	}
	return m
}

// Compare orders runs along the x axis. A release series goes by
// version, in semantic-version order (v1.3.11 < v1.4.0 < v1.10.0); any
// other run by its commit's date (the commit-date label, or the run's own
// date when it has none), then by its own date (the date label, else when
// it was added), then by id.
func Compare(a, b *RunMeta) int {
	if a.Release && b.Release {
		if c := compareVersions(a.Version, b.Version); c != 0 {
			return c
		}
	}
	if c := a.orderTime().Compare(b.orderTime()); c != 0 {
		return c
	}
	if c := a.Time.Compare(b.Time); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

func (m *RunMeta) orderTime() time.Time {
	if !m.CommitTime.IsZero() {
		return m.CommitTime
	}
	return m.Time
}

// compareVersions is semver's order (Go's module version order); a
// version it does not read (a directory's local-<hash>) is no release and
// sorts after them, by its text.
func compareVersions(a, b string) int {
	va, vb := semver.IsValid(a), semver.IsValid(b)
	switch {
	case va && vb:
		return semver.Compare(a, b)
	case va:
		return -1
	case vb:
		return 1
	}
	return strings.Compare(a, b)
}

// XLabel is the run's place on the x axis as text: the version of a
// release series, else the short commit, else the date.
func (m *RunMeta) XLabel() string {
	switch {
	case m.Release:
		return m.Version
	case m.Commit != "":
		return ShortCommit(m.Commit)
	}
	return m.Time.UTC().Format("01-02 15:04")
}

// ShortCommit is a commit's first 7 characters.
func ShortCommit(c string) string {
	if len(c) > 7 {
		return c[:7]
	}
	return c
}
