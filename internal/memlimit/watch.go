package memlimit

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// watchPeriod is how often the watcher reads the budget's counters: a few
// small files, well under a millisecond on one thread, so the run pays
// nothing measurable; its memory moves little in 25 ms.
const watchPeriod = 25 * time.Millisecond

// In watcher mode (startWatcher) the process is the watcher and nothing
// else: this runs before the inits of packages that import this one, and
// before TestMain and flag parsing.
func init() {
	if os.Getenv(watcherEnv) != "" {
		os.Exit(watch(os.Stdin, os.Stdout, os.Stderr, os.Getppid))
	}
}

// watchState is what the watcher knows from the parent and its last
// reading of the budget's counters.
type watchState struct {
	budget   *Budget
	kills0   int64 // oom_kill when the budget was entered (an adopted or reused cgroup may have some)
	leaf     string
	settings string
	last     Stats
	lastAt   time.Time // zero until a reading succeeded
}

// watch is the watcher's whole life: read the parent's lines, sample the
// budget every watchPeriod, and on end of input without "done", or when its
// parent is gone (ppid changes), print the report to errw (the log) and the
// kill line to out (the results). It touches no file but the budget's.
func watch(in io.Reader, out, errw io.Writer, ppid func() int) int {
	parent := ppid()
	lines := make(chan string, 16)
	go func() {
		s := bufio.NewScanner(in)
		s.Buffer(make([]byte, 4096), 1<<20)
		for s.Scan() {
			lines <- s.Text()
		}
		close(lines)
	}()
	var st watchState
	tick := time.NewTicker(watchPeriod)
	defer tick.Stop()
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				st.report(out, errw, time.Now())
				return 0
			}
			if l == "done" {
				return 0
			}
			st.apply(l)
		case <-tick.C:
			if ppid() != parent {
				st.report(out, errw, time.Now())
				return 0
			}
			st.sample(time.Now())
		}
	}
}

// apply takes one line from the parent.
func (st *watchState) apply(l string) {
	kind, arg, _ := strings.Cut(l, " ")
	switch kind {
	case "budget":
		f := strings.SplitN(arg, " ", 4)
		if len(f) != 4 {
			return
		}
		v, err1 := strconv.Atoi(f[0])
		limit, err2 := strconv.ParseInt(f[1], 10, 64)
		kills0, err3 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			return
		}
		st.budget = &Budget{Version: v, Limit: limit, Dir: f[3]}
		st.kills0 = kills0
	case "leaf":
		st.leaf, st.settings = arg, ""
	case "settings":
		st.settings = arg
	}
}

func (st *watchState) sample(now time.Time) {
	if st.budget == nil {
		return
	}
	s, err := st.budget.Stats()
	if err != nil {
		return
	}
	// The OOM killer frees the victim's memory before its pipe closes: a
	// reading that counts the kill comes too late, the one before stands.
	// The count can also lag the freeing: a charge that fell from over
	// half the budget to under half of itself is the killer's doing.
	killed := s.OOMKills > st.kills0 || (st.last.Usage > st.budget.Limit/2 && s.Usage < st.last.Usage/2)
	if killed && !st.lastAt.IsZero() {
		return
	}
	st.last, st.lastAt = s, now
}

// report prints what the budget held, for a parent that ended without
// "done" after entering it.
func (st *watchState) report(out, errw io.Writer, now time.Time) {
	if st.budget == nil {
		return
	}
	k := Kill{Leaf: st.leaf, Limit: st.budget.Limit, Config: st.settings}
	final, ferr := st.budget.Stats()
	switch {
	case st.lastAt.IsZero() && ferr != nil:
		fmt.Fprintf(errw, "[kvbench] the run ended inside its %s %s budget before its counters could be read: %v\n", Flag, FormatSize(k.Limit), ferr)
		return
	case st.lastAt.IsZero(): // ended within a period of entering
		k.Last = final
	default:
		k.Last, k.AgeMS = st.last, now.Sub(st.lastAt).Milliseconds()
	}
	if ferr != nil {
		final = k.Last
	}
	k.Final = final
	k.Final.Peak = max(final.Peak, k.Last.Peak, k.Last.Usage)
	k.Cause = CauseStopped
	if max(final.OOMKills, k.Last.OOMKills) > st.kills0 {
		k.Cause = CauseOOM
	}
	// Each on a line of its own: go test may have printed a benchmark's
	// name without an end of line, on either stream.
	fmt.Fprint(errw, "\n[kvbench] "+k.Text()+"\n")
	fmt.Fprint(out, "\n"+k.Line()+"\n")
}
