package core

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/measure"
	"github.com/kvbench/kvbench/internal/memlimit"
)

// Env is one run, the one concrete type a workload sees: its validated
// configuration, the data set, the suite's directory under -dir, the
// fixtures built for it, and its output.
type Env struct {
	Cfg       Config
	Keys      uint64
	Gen       *dataset.Gen
	FullCheck bool
	Root      dataset.Root // zero until Setup opens -dir
	Dir       string       // -dir as given or defaulted, absolute

	Out io.Writer // configuration lines and, through testing, results
	Log io.Writer // progress, never among result lines

	// Running is set once benchmarks run, when a progress line would
	// split a result line.
	Running atomic.Bool

	// Gates, when set, names the units the regression gate judges each
	// workload on: its results' "gate" line (Main).
	Gates func(workload string) []string

	plan     *Plan                 // what Setup planned, built and opened -dir for
	planning func(sub string) bool // while NewPlan collects a workload's fixtures: whether it runs sub

	mu       sync.Mutex
	fixtures map[string]builtFixture // by name
	shown    map[string]string       // configuration lines in force (settings-<engine>, fixture-<engine>, gate), by key
	gate     string                  // the running workload's gated units (Gates)
	warned   map[string]bool
	held     []string          // Logf lines held while a benchmark may be printing its result line
	calls    map[string]uint64 // calls of each benchmark so far, by name (CallStreams)
	scratchN atomic.Int64
	budget   *memlimit.Budget // -mem_limit, once Setup has entered it

	block   ByteSize  // the block size of the pass running (Run: one pass per size); 0 outside one
	handles []*Handle // handles opened, closed at the end of their pass
}

// NewEnv validates c and derives the data set; it touches no file.
func NewEnv(c Config, out, log io.Writer) (*Env, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	g, err := dataset.New(dataset.Spec{Keys: c.Keys(), ValueSize: c.ValSize, ValueRatio: c.ValueRatio, Seed: c.Seed})
	if err != nil {
		return nil, err
	}
	return &Env{Cfg: c, Keys: c.Keys(), Gen: g, FullCheck: c.Verify == "full", Out: out, Log: log,
		fixtures: map[string]builtFixture{}, shown: map[string]string{}, warned: map[string]bool{}, calls: map[string]uint64{}}, nil
}

// Shape is the first part of every sub-benchmark name on the run's data
// set: the value size and, under -mem_limit, the budget
// ("valsz=1024/mem=26MiB"), so results in and out of a budget differ.
func (e *Env) Shape() string {
	s := SubName("valsz", e.Cfg.ValSize)
	if e.Cfg.MemLimit != 0 {
		s += "/" + SubName("mem", e.Cfg.MemLimit.String())
	}
	return s
}

// LeafName is the name of a leaf on the run's data set: Shape, then the
// key=value parts kv (SubName): "valsz=1024/cache=warm/threads=16".
func (e *Env) LeafName(kv ...any) string { return e.Shape() + "/" + SubName(kv...) }

// Logf reports progress on Log, with a prefix benchfmt ignores ("kvbench:
// x" would read as a configuration line: go test merges stderr into its
// output). While benchmarks run, a line is held until the next point
// between results (the next leaf's settings, or the end of the run): it
// could land inside a result line, which testing prints in two parts.
func (e *Env) Logf(format string, args ...any) {
	line := fmt.Sprintf("[kvbench] "+format+"\n", args...)
	if e.Running.Load() {
		e.mu.Lock()
		e.held = append(e.held, line)
		e.mu.Unlock()
		return
	}
	io.WriteString(e.Log, line)
}

// flushHeld writes the lines Logf held; e.mu is held.
func (e *Env) flushHeld() {
	for _, l := range e.held {
		io.WriteString(e.Log, l)
	}
	e.held = nil
}

// FlushLog writes the lines Logf held back while benchmarks ran.
func (e *Env) FlushLog() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.flushHeld()
}

// WarnOnce logs a warning the first time key is seen.
func (e *Env) WarnOnce(key, format string, args ...any) {
	e.mu.Lock()
	dup := e.warned[key]
	e.warned[key] = true
	e.mu.Unlock()
	if !dup {
		e.Logf(format, args...)
	}
}

// openDir validates -dir (by default the user cache directory, which
// must exist: the suite creates only <dir>/kvbench) for the plan and
// opens the suite's own directory in it.
func (e *Env) openDir(plan *Plan) error {
	dir := e.Cfg.Dir
	if dir == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			return FlagError("dir", "", "no default: "+err.Error()+"; pass -dir")
		}
		if _, err := os.Stat(c); err != nil {
			return FlagError("dir", "", "the default, the user cache directory "+c+", does not exist; pass -dir")
		}
		dir = c
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if err := checkDir(dir, plan.DiskEstimate(dir), plan.Reclaimable(dir)); err != nil {
		return err
	}
	root, err := dataset.OpenRoot(dir)
	if err != nil {
		return FlagError("dir", dir, err.Error())
	}
	root.FullCheck = e.FullCheck // -verify full: every fixture file's checksum too
	e.Dir, e.Root = dir, root
	fs, err := measure.FileSystem(dir)
	if readsElsewhere = err == nil && fs.ReadsElsewhere(); readsElsewhere {
		e.WarnOnce("reads elsewhere", "-dir is on %s, whose reads from storage another process or machine does and /proc/self/io does not count: its read figures (read-B/op, open-read-B) are left out; a cold read, or one a -mem_limit budget leaves to storage, may come from that side's cache", fs.Type)
	}
	return nil
}

// checkDir validates -dir: an existing, writable directory with room.
func checkDir(dir string, needBytes, reclaimable int64) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return FlagError("dir", dir, "does not exist or cannot be read: "+err.Error())
	}
	if !fi.IsDir() {
		return FlagError("dir", dir, "is not a directory")
	}
	if err := syscall.Access(dir, 2 /* W_OK */); err != nil {
		return FlagError("dir", dir, "is not writable: "+err.Error())
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err == nil && st.Flags&1 /* ST_RDONLY */ != 0 {
		return FlagError("dir", dir, "is on a read-only filesystem")
	}
	fs, err := measure.FileSystem(dir)
	if err != nil {
		return FlagError("dir", dir, err.Error())
	}
	if needBytes > fs.Free+reclaimable {
		have := Human(fs.Free) + " free"
		if !fs.Sized {
			have = "no size of its own and " + Human(fs.Free) + " of memory available"
		}
		if reclaimable > 0 {
			have += fmt.Sprintf(" and %s in incomplete fixtures and scratch of runs that died, which it would remove", Human(reclaimable))
		}
		return FlagError("dir", dir, fmt.Sprintf("has %s, the run needs about %s (fixtures and scratch databases)", have, Human(needBytes)))
	}
	return nil
}

// ScratchDir is a fresh directory, <dir>/kvbench/scratch/<name>-<pid>-<n>,
// for a database only this benchmark writes; e.Root.RemoveAll it after.
func (e *Env) ScratchDir(name string) string {
	return e.Root.Sub("scratch", fmt.Sprintf("%s-%d-%d", name, os.Getpid(), e.scratchN.Add(1)))
}

// staleScratch lists the scratch directories under dir whose run died:
// names the suite made (<name>-<pid>-<n>) whose pid is gone.
func staleScratch(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, d := range ents {
		parts := strings.Split(d.Name(), "-")
		if len(parts) != 3 {
			continue
		}
		pid, err := strconv.Atoi(parts[1])
		if err != nil || pid <= 0 || syscall.Kill(pid, 0) != syscall.ESRCH {
			continue
		}
		out = append(out, filepath.Join(dir, d.Name()))
	}
	return out
}

// Human prints a byte count in binary units.
func Human(n int64) string { return memlimit.Human(n) }

// ScratchSettings is the engine's settings with opts (Dir aside), read
// from an empty scratch database, then removed: a workload that opens its
// own databases inside a sub-benchmark prints them in the parent, before
// b.Run. Read-only options need an existing database (Handle.Settings).
func (e *Env) ScratchSettings(info engine.Info, opts engine.Options) (s []engine.Setting, err error) {
	if opts.ReadOnly {
		return nil, errors.New("scratch settings: read-only options need an existing database")
	}
	dir := e.ScratchDir(info.Name)
	defer func() {
		if rerr := e.Root.RemoveAll(dir); err == nil {
			err = rerr
		}
	}()
	opts.Dir = dir
	db, err := engine.Open(info.Name, opts)
	if err != nil {
		return nil, fmt.Errorf("open %s for its settings: %w", info.Name, err)
	}
	s = db.Settings()
	if err := db.Close(); err != nil {
		return nil, fmt.Errorf("close %s: %w", info.Name, err)
	}
	return s, nil
}
