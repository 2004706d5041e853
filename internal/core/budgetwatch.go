package core

import "strings"

// Under -mem_limit a watcher process reports what the budget held should
// the run be killed in it (memlimit.EnterWatched); these tell it which
// benchmark runs and with which engine settings. Each is a line on a
// pipe, written before a sub-benchmark starts, never inside timed code.

// WatchLeaf names the benchmark about to run (b.Name() and the sub-name
// it is given), before its set-up opens anything: Handle.Run does it for
// its leaves, a workload that opens its own databases calls it itself.
// The settings it shows next follow (ShowSettings).
func (e *Env) WatchLeaf(name string) {
	if b := e.budget; b != nil {
		b.Leaf(name)
	}
}

// watchSettings gives the watcher the engine settings lines now in force
// (showConfig's, as printed: "settings-badger: ..."); ShowSettings and
// ShowFixtureSettings call it.
func (e *Env) watchSettings() {
	b := e.budget
	if b == nil {
		return
	}
	e.mu.Lock()
	var line string
	for k, v := range e.shown {
		if strings.HasPrefix(k, "settings-") { // one at most: showConfig clears the others
			line = k + ": " + v
		}
	}
	e.mu.Unlock()
	b.Settings(line)
}
