package sim

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/internal/valgrind"
)

// window is one timed loop's counters, from the dump that
// the suite's window (internal/core/sim.go) asked callgrind for.
type window struct {
	leaf   string // the benchmark's full name, as b.Name() gives it
	n      int64  // b.N of that run
	part   int    // its dump's number, in the order written
	events map[string]int64
}

// estCycles weighs a window's events as KCachegrind's cycle estimate does
// (without its branch terms, which need --branch-sim): an instruction
// costs 1, a first-level miss 10 more and a last-level miss 100 more.
// A last-level miss is also a first-level miss, so it costs 111 in all.
func (w window) estCycles() (int64, bool) {
	if _, ok := w.events["D1mr"]; !ok {
		return 0, false
	}
	e := w.events
	l1 := e["I1mr"] + e["D1mr"] + e["D1mw"]
	ll := e["ILmr"] + e["DLmr"] + e["DLmw"]
	return e["Ir"] + 10*l1 + 100*ll, true
}

const triggerPrefix = "desc: Trigger: Client Request: "

// readWindows parses every callgrind dump in dir that a timed window
// wrote, in the order they were written.
func readWindows(dir string) ([]window, error) {
	files, err := filepath.Glob(filepath.Join(dir, "cg.*.*"))
	if err != nil {
		return nil, err
	}
	var ws []window
	for _, f := range files {
		part, err := strconv.Atoi(f[strings.LastIndexByte(f, '.')+1:])
		if err != nil {
			continue
		}
		w, ok, err := parseDump(f)
		if err != nil {
			return nil, err
		}
		if ok {
			w.part = part
			ws = append(ws, w)
		}
	}
	slices.SortFunc(ws, func(a, b window) int { return a.part - b.part })
	return ws, nil
}

// parseDump reads one dump's trigger and its totals line (the sum of its
// cost lines); ok is false for a dump no window asked for (the one at
// exit).
func parseDump(path string) (w window, ok bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return w, false, err
	}
	defer f.Close()
	var events, totals []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, triggerPrefix):
			w.leaf, w.n, ok = valgrind.ParseWindow(strings.TrimPrefix(line, triggerPrefix))
		case strings.HasPrefix(line, "events: "):
			events = strings.Fields(strings.TrimPrefix(line, "events: "))
		case strings.HasPrefix(line, "totals: "):
			totals = strings.Fields(strings.TrimPrefix(line, "totals: "))
		}
	}
	if err := sc.Err(); err != nil {
		return w, false, fmt.Errorf("%s: %v", path, err)
	}
	if !ok {
		return w, false, nil
	}
	if len(events) == 0 || len(totals) > len(events) {
		return w, false, fmt.Errorf("%s: events %q and totals %q do not match", path, events, totals)
	}
	w.events = make(map[string]int64, len(events))
	for i, ev := range events {
		var v int64 // callgrind leaves out trailing zero counts
		if i < len(totals) {
			if v, err = strconv.ParseInt(totals[i], 10, 64); err != nil {
				return w, false, fmt.Errorf("%s: totals %q: %v", path, totals, err)
			}
		}
		w.events[ev] = v
	}
	return w, true, nil
}
