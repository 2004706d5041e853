package sim

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/internal/benchpattern"
)

// iterations maps benchmark families to the fixed b.N counted for them:
// one default ("2000x") and overrides by the prefix of the top-level name
// after "Benchmark" ("Scan=100x"), or its suffix for the families named
// engine first ("Batch=1x" for BenchmarkBoltBatch), the longest winning. A window
// must hold millions of instructions, so that a runtime event that lands
// in one round (a timer, a sysmon pass) weighs little: 2,000 point reads of
// bbolt and 50 scans of it are each a few million.
type iterations struct {
	def    int
	prefix map[string]int
}

// DefaultIterations is -benchtime's default.
const DefaultIterations = "2000x,Scan=50x,Iterate=5x,Populate=1x,Batch=1x"

// ParseIterations reads -benchtime: a default count and overrides by
// family, each a number of iterations (2000x,Scan=100x).
func ParseIterations(s string) (iterations, error) {
	it := iterations{prefix: map[string]int{}}
	for _, part := range strings.Split(s, ",") {
		name, count, hasName := strings.Cut(part, "=")
		if !hasName {
			name, count = "", part
		}
		n, err := strconv.Atoi(strings.TrimSuffix(count, "x"))
		if !strings.HasSuffix(count, "x") || err != nil || n < 1 {
			return it, fmt.Errorf("-benchtime %s: %q must be a count of iterations, e.g. 2000x or Scan=100x (a time-based benchtime gives each side its own b.N under Valgrind)", s, part)
		}
		if hasName {
			it.prefix[name] = n
		} else {
			it.def = n
		}
	}
	if it.def == 0 {
		return it, fmt.Errorf("-benchtime %s: no default count (e.g. 2000x)", s)
	}
	return it, nil
}

// of is the count for a top-level benchmark name.
func (it iterations) of(name string) int {
	best, n := -1, it.def
	rest := strings.TrimPrefix(name, "Benchmark")
	for p, c := range it.prefix {
		// A family named after its engine (BoltBatch) matches by suffix.
		if (strings.HasPrefix(rest, p) || strings.HasSuffix(rest, p)) && len(p) > best {
			best, n = len(p), c
		}
	}
	return n
}

// group is one process's share of the benchmarks: a -test.bench pattern
// and the iterations it runs at.
type group struct {
	n       int
	pattern string
}

// groups splits a -test.bench pattern into one pattern per iteration
// count: every alternative's first level is replaced by the exact
// top-level names it selects (listed by the binary itself) that run at
// that count, its other levels kept.
func groups(ctx context.Context, o Options, pattern string, it iterations, flags []string) ([]group, error) {
	byN := map[int][]string{}
	for _, alt := range benchpattern.Split(pattern) {
		out, err := o.command(ctx, o.Binary, append([]string{"-test.list", alt[0]}, flags...)...).Output()
		if err != nil {
			return nil, fmt.Errorf("%s -test.list %q: %v", o.Binary, alt[0], err)
		}
		names := map[int][]string{}
		for _, line := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(line, "Benchmark") {
				n := it.of(line)
				names[n] = append(names[n], regexp.QuoteMeta(line))
			}
		}
		for n, ns := range names {
			byN[n] = append(byN[n], strings.Join(append([]string{"^(?:" + strings.Join(ns, "|") + ")$"}, alt[1:]...), "/"))
		}
	}
	var gs []group
	for n, pats := range byN {
		gs = append(gs, group{n, strings.Join(pats, "|")})
	}
	sort.Slice(gs, func(i, j int) bool { return gs[i].pattern < gs[j].pattern })
	return gs, nil
}
