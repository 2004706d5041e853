package memlimit

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
)

// KillPrefix starts the line a watcher writes to the results when the run
// ended inside its budget: benchfmt ignores it, ParseKill reads it back.
const KillPrefix = "[kvbench-kill] "

// How a run inside its budget ended, as a kill line says it.
const (
	CauseOOM     = "oom-kill" // the out-of-memory killer (the budget's oom_kill count rose)
	CauseStopped = "stopped"  // anything else: a signal, a crash
	// CauseTimeout is CauseStopped where the runner knows its own time
	// limit stopped the run (make bench-mem's MEM_TIMEOUT rewrites it).
	CauseTimeout = "timeout"
)

// Kill is what a watcher reports of a run that ended inside its budget.
type Kill struct {
	Leaf   string // the benchmark running ("" before the first)
	Cause  string // CauseOOM, CauseStopped or CauseTimeout
	Limit  int64
	AgeMS  int64  // how long before the end the figures were read
	Last   Stats  // the last reading before the end
	Final  Stats  // a reading after the end: its Peak and LimitHits
	Config string // the engine's settings line, when it had printed one
}

// Text is the report for a person.
func (k Kill) Text() string {
	leaf := cmp.Or(k.Leaf, "the run (before its first benchmark)")
	var how string
	switch k.Cause {
	case CauseOOM:
		how = "was killed by the kernel's out-of-memory killer"
	case CauseTimeout:
		how = "was stopped at its time limit (not by the out-of-memory killer)"
	default:
		how = "stopped (not by the out-of-memory killer: a signal such as MEM_TIMEOUT's or Ctrl-C, or a crash)"
	}
	s := k.Last
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s inside its %s %s budget; at the last sample (%d ms before): anonymous %s, page cache %s (dirty %s, writeback %s",
		leaf, how, Flag, FormatSize(k.Limit), k.AgeMS, Human(s.Anon), Human(s.Cache), Human(s.Dirty), Human(s.Writeback))
	if s.Shmem > 0 {
		fmt.Fprintf(&b, ", shared memory %s", Human(s.Shmem))
	}
	b.WriteString(")")
	if s.Kernel > 0 {
		fmt.Fprintf(&b, ", kernel %s", Human(s.Kernel))
	}
	fmt.Fprintf(&b, ", charged %s (peak %s); limit reached %d times", Human(s.Usage), Human(k.Final.Peak), k.Final.LimitHits)
	if k.Config != "" {
		fmt.Fprintf(&b, "; the engine had configured: %s", k.Config)
	} else if k.Leaf != "" {
		b.WriteString("; no engine settings printed for it yet (it was opening or warming up its database, or runs no engine)")
	}
	return b.String()
}

// Line is the kill line for the results: KillPrefix, the benchmark ("-"
// before the first), then key=value figures, sizes in bytes.
func (k Kill) Line() string {
	var b strings.Builder
	b.WriteString(KillPrefix + cmp.Or(k.Leaf, "-") + " cause=" + k.Cause)
	for _, f := range k.fields() {
		fmt.Fprintf(&b, " %s=%d", f.key, *f.v)
	}
	return b.String()
}

// fields are the figures of a kill line, in order.
func (k *Kill) fields() []figure {
	return []figure{
		{"limit", &k.Limit}, {"anon", &k.Last.Anon}, {"file", &k.Last.Cache}, {"dirty", &k.Last.Dirty},
		{"writeback", &k.Last.Writeback}, {"shmem", &k.Last.Shmem}, {"kernel", &k.Last.Kernel},
		{"charged", &k.Last.Usage}, {"peak", &k.Final.Peak}, {"limit-hits", &k.Final.LimitHits},
		{"sample-age-ms", &k.AgeMS},
	}
}

type figure struct {
	key string
	v   *int64
}

// ParseKill reads a kill line back (Line); ok is false for any other
// line. Unknown keys are skipped, so older readers take newer lines.
func ParseKill(line string) (k Kill, ok bool) {
	rest, ok := strings.CutPrefix(line, KillPrefix)
	if !ok {
		return k, false
	}
	f := strings.Fields(rest)
	if len(f) < 2 {
		return k, false
	}
	if f[0] != "-" {
		k.Leaf = f[0]
	}
	figures := k.fields()
	for _, kv := range f[1:] {
		key, val, _ := strings.Cut(kv, "=")
		if key == "cause" {
			k.Cause = val
			continue
		}
		for _, fig := range figures {
			if fig.key == key {
				n, err := strconv.ParseInt(val, 10, 64)
				if err != nil {
					return Kill{}, false
				}
				*fig.v = n
			}
		}
	}
	return k, k.Cause != ""
}
