package summary

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/kvbench/kvbench/benchstat/internal/results"
	"github.com/kvbench/kvbench/internal/memlimit"
)

// Kill is one benchmark that ended inside its memory budget without a
// result: the watcher's kill line (memlimit.Kill), placed by name.
type Kill struct {
	memlimit.Kill
	Op, Engine, Config string // as Key's; Op "" when no benchmark had started
}

// readKills finds the kill lines of a results file. benchfmt skips them
// (they are neither configuration nor result lines), so they are read
// apart.
func readKills(data []byte) []Kill {
	var out []Kill
	s := bufio.NewScanner(bytes.NewReader(data))
	s.Buffer(make([]byte, 64<<10), 1<<20)
	for s.Scan() {
		mk, ok := memlimit.ParseKill(s.Text())
		if !ok {
			continue
		}
		k := Kill{Kill: mk}
		if name, ok := strings.CutPrefix(mk.Leaf, "Benchmark"); ok {
			k.Op, k.Engine, k.Config = results.Split(name)
		}
		out = append(out, k)
	}
	return out
}

// killsOf are the kills of one sub-benchmark, in file order.
func (r *Results) killsOf(op, engine, config string) []Kill {
	return slices.DeleteFunc(slices.Clone(r.Kills), func(k Kill) bool { return k.Op != op || k.Engine != engine || k.Config != config })
}

// KillText says how a benchmark ended and what its budget held then:
// "killed (OOM): anon 44.5 MiB, page cache 9.5 MiB, dirty 0 B at the
// kill". With several rounds ended, the last one's figures.
func KillText(ks []Kill) string {
	k := ks[len(ks)-1]
	how, when := "stopped (a signal or a crash)", "at the end"
	switch k.Cause {
	case memlimit.CauseOOM:
		how, when = "killed (OOM)", "at the kill"
	case memlimit.CauseTimeout:
		how = "stopped at MEM_TIMEOUT"
	}
	if len(ks) > 1 {
		how += fmt.Sprintf(" in %d rounds", len(ks))
	}
	s := k.Last
	return fmt.Sprintf("%s: anon %s, page cache %s, dirty %s %s", how, memlimit.Human(s.Anon), memlimit.Human(s.Cache), memlimit.Human(s.Dirty), when)
}

// noteUnplaced adds every kill no table shows as a note of the first
// table about the memory budget (the last table if none is), so no kill
// goes unsaid.
func (s *Summary) noteUnplaced(placed map[string]bool) {
	if len(s.Tables) == 0 {
		return
	}
	at := slices.IndexFunc(Questions[:len(s.Tables)], func(q Section) bool { // about runs in a memory budget
		return slices.ContainsFunc(q.Blocks, func(b Block) bool {
			return slices.ContainsFunc(b.Where, func(w string) bool { k, present := results.FilterKey(w); return k == "mem" && present })
		})
	})
	if at < 0 {
		at = len(s.Tables) - 1
	}
	seen := map[string]bool{}
	for _, k := range s.Results.Kills {
		id := k.Op + "\x00" + k.Engine + "\x00" + k.Config
		if placed[id] || seen[id] {
			continue
		}
		seen[id] = true
		ks := s.Results.killsOf(k.Op, k.Engine, k.Config)
		name := cmp.Or(ks[len(ks)-1].Leaf, "a run before its first benchmark")
		s.Tables[at].Notes = append(s.Tables[at].Notes, name+": "+KillText(ks))
	}
}
