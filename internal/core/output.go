package core

import (
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/measure"
	"github.com/kvbench/kvbench/internal/valgrind"
)

// ShowFixtureSettings prints the engine's settings line for the results
// that follow and clears every other line a result carries: benchfmt
// applies a configuration line to every later result until it changes.
// Call it from a parent benchmark, before b.Run: inside one it would split
// a result. For results that read fixture f (or a copy; nil for none) it
// adds a fixture-<engine> line: the engine version that built it and its
// directory's name.
func (e *Env) ShowFixtureSettings(info engine.Info, s []engine.Setting, f *Fixture) {
	key, line := "settings-"+info.Name, settingsLine(e.withBudget(s))
	lines := map[string]string{key: line}
	if f != nil {
		if b, err := e.built(f); err == nil {
			lines["fixture-"+info.Name] = fmt.Sprintf("%s (%s)", b.m.EngineVersion, filepath.Base(b.dir))
		}
	}
	e.showConfig(lines)
	// Should the budget kill the run, its watcher reports them.
	if b := e.budget; b != nil {
		b.Settings(key + ": " + line)
	}
}

// ClearSettings clears every engine's lines, before results of none.
func (e *Env) ClearSettings() { e.showConfig(map[string]string{}) }

func settingsLine(s []engine.Setting) string { return joinList(s, " ", engine.Setting.String) }

// showConfig makes lines, by key, and the workload's gate line the
// configuration lines in force: it clears every other one (an empty value
// clears a key) and prints those not in force already.
func (e *Env) showConfig(lines map[string]string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.flushHeld()
	if e.gate != "" {
		lines["gate"] = e.gate
	}
	for _, k := range slices.Sorted(maps.Keys(e.shown)) {
		if _, ok := lines[k]; !ok {
			fmt.Fprintf(e.Out, "%s:\n", k)
			delete(e.shown, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(lines)) {
		if cur, ok := e.shown[k]; !ok || cur != lines[k] {
			fmt.Fprintf(e.Out, "%s: %s\n", k, lines[k])
			e.shown[k] = lines[k]
		}
	}
}

// setGate makes workload's gated units (Gates) the "gate" line from the
// next configuration change, which precedes every workload's first result.
func (e *Env) setGate(workload string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.gate = ""
	if e.Gates != nil {
		e.gate = strings.Join(e.Gates(workload), " ")
	}
}

// EchoConfig writes the run's configuration as benchfmt key: value lines,
// which benchstat keeps with the results: the machine and -dir, every
// flag's lines, the engines' versions and the units.
func (e *Env) EchoConfig(w io.Writer) {
	c := &e.Cfg
	line := func(k string, v any) { fmt.Fprintf(w, "%s: %v\n", k, v) }
	line("kvbench-format", dataset.FormatVersion)
	line("go", runtime.Version())
	line("kernel", measure.Kernel())
	line("cpu-model", measure.CPUModel())
	line("cpus", runtime.NumCPU())
	if n, err := measure.MemTotal(); err != nil {
		line("mem-total", "unknown ("+err.Error()+")")
	} else {
		line("mem-total", Human(n))
	}
	if e.Dir != "" {
		line("dir", e.Dir)
		if fs, err := measure.FileSystem(e.Dir); err == nil {
			free := Human(fs.Free) + " free"
			if !fs.Sized {
				free = "no size, " + Human(fs.Free) + " of memory available"
			}
			line("dir-fs", fmt.Sprintf("%s on %s (mounted at %s, %s)", fs.Type, fs.Device, fs.MountedOn, free))
		}
		line("dir-device", measure.BlockDevice(e.Dir))
		line("dir-readahead", deviceReadahead(e.Dir))
	}
	c.echoFlags(sharedFlags, line)
	line("latency-sample", fmt.Sprintf("1/%d reads (HDR histogram, ns)", LatencySample))
	line("timestamp-ns", timestampCost())
	c.echoFlags(engineFlags(), line)
	line("rocksdb-lib", engine.RocksDBLibVersion())
	c.echoFlags(options, line)
	for _, info := range engine.All() {
		v := info.Module
		if info.Version != nil {
			v = info.Version()
		}
		line("engine-"+info.Name, v)
	}
	writeUnits(w, AllUnits())
}

// timestampCost is what a time.Now/time.Since pair costs here, in ns (why
// latencies are sampled). Not under Valgrind: its clock is the emulator's,
// and the pairs would add about 0.3 s to every process kvb sim starts.
var timestampCost = sync.OnceValue(func() string {
	if valgrind.Running() {
		return "not measured under valgrind"
	}
	return strconv.FormatInt(measure.TimestampCost().Nanoseconds(), 10)
})

// deviceReadahead is the read_ahead_kb of the block device under dir: a
// fault in a mapped file without advice reads that much around the page,
// shaping what mmap-based stores read cold with -readahead os.
func deviceReadahead(dir string) string {
	dev, ok := measure.BlockDevOf(dir)
	// A partition has no queue of its own: its disk is the parent.
	for _, p := range []string{dev + "/queue/read_ahead_kb", dev + "/../queue/read_ahead_kb"} {
		if b, err := os.ReadFile(p); ok && err == nil {
			return strings.TrimSpace(string(b)) + " KiB (" + p + ")"
		}
	}
	return "unknown (no block device: tmpfs, overlay or network filesystem)"
}
