package memlimit

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
)

// A process killed inside its budget frees its memory at once, and with it
// the record of what filled the budget. So EnterWatched first starts a
// watcher, the executable again in watcher mode (watcherEnv, this package's
// init), which samples the budget and, should this process end without
// Close, prints what the budget held (watch.go). The parent tells it, a line
// at a time on its stdin:
//
//	budget <version> <limit> <kills> <dir>  the budget entered, and its OOM kills so far
//	leaf <name>                             a benchmark starts: name it in a report
//	settings <line>                         the engine settings line of that benchmark
//	done                                    a normal end: report nothing
//
// End of input without "done" is the parent's abnormal end.
const watcherEnv = "KVBENCH_BUDGET_WATCHER"

// watcher is the parent's end of the watcher: the pipe to its stdin.
type watcher struct {
	mu   sync.Mutex
	in   io.WriteCloser // nil once done or broken
	cmd  *exec.Cmd
	gone error // why there is no watcher
}

// startWatcher starts the watcher before the process enters its budget, so
// that it is not charged to the budget and outlives a kill there. In a
// process group of its own, it outlives a signal to the run's group
// (timeout, Ctrl-C) to report it.
func startWatcher() *watcher {
	w := &watcher{}
	exe, err := os.Executable()
	if err != nil {
		w.gone = err
		return w
	}
	cmd := exec.Command(exe)
	// The last value of a variable wins. A race-built watcher would sleep a
	// second at exit, and go test waits for it.
	cmd.Env = append(os.Environ(), watcherEnv+"=1", "GOMAXPROCS=1",
		"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr // the run's results and log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := cmd.StdinPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		w.gone = fmt.Errorf("start %s as the budget's watcher: %w", exe, err)
		return w
	}
	w.in, w.cmd = in, cmd
	// Reaped when it exits, so it never lingers as a zombie of a long run.
	go cmd.Wait()
	return w
}

// send writes one line to the watcher; after "done" or a failed write it
// lets the watcher go and writes nothing more. Safe on a nil watcher.
func (w *watcher) send(kind, arg string) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.in == nil {
		return
	}
	line := kind
	if arg != "" {
		line += " " + strings.ReplaceAll(arg, "\n", " ")
	}
	_, err := io.WriteString(w.in, line+"\n")
	if err != nil {
		w.gone = fmt.Errorf("the budget's watcher is gone: %w", err)
	}
	if err != nil || kind == "done" {
		w.in.Close()
		w.in = nil
	}
}

// EnterWatched is Enter with a watcher that reports, should the process end
// inside the budget without Close (an OOM kill, a signal, a crash), what the
// budget held and what was running (Leaf, Settings). A watcher that cannot
// start costs only its report (String says so); an adopted budget gets none,
// as the watcher would be charged to it.
func (p Parent) EnterWatched(limit int64) (*Budget, error) {
	if adopt, err := p.check(limit); err != nil || adopt {
		b, err := p.Enter(limit)
		if b != nil {
			b.watch = &watcher{gone: errors.New("the budget is the process's own cgroup, where a watcher would be charged to the budget it watches")}
		}
		return b, err
	}
	w := startWatcher()
	b, err := p.Enter(limit)
	if err != nil {
		w.send("done", "")
		return nil, err
	}
	b.watch = w
	// The kills counted already (none where Stats fails), read now: a
	// watcher reading this late would count a kill of this run among them.
	st, _ := b.Stats()
	w.send("budget", fmt.Sprintf("%d %d %d %s", b.Version, b.Limit, st.OOMKills, b.Dir))
	return b, nil
}

// Leaf names the running benchmark for the watcher's report, forgetting the
// previous one's settings. Call it outside timed code: it writes to a pipe.
func (b *Budget) Leaf(name string) {
	if b != nil {
		b.watch.send("leaf", name)
	}
}

// Settings gives the watcher the engine settings line of the running
// benchmark ("settings-badger: memtable-mb=2 ...").
func (b *Budget) Settings(line string) {
	if b != nil {
		b.watch.send("settings", line)
	}
}

// watchNote is what String says about EnterWatched's watcher.
func (b *Budget) watchNote() string {
	w := b.watch
	if w == nil {
		return ""
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.in != nil {
		return fmt.Sprintf("watcher pid %d reports a kill", w.cmd.Process.Pid)
	}
	if w.gone != nil {
		return "no kill report: " + w.gone.Error()
	}
	return ""
}
