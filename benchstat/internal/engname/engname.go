// Package engname finds the engine in a kvbench benchmark name. The
// engines are the ones registered in internal/engine: a benchmark name
// ends in the engine's Title ("ReadRandomBadger"). Their list is generated (engines_gen.go, by
// go generate in the repository's root), so that the tooling's packages
// read names without linking every engine (TestRegisteredEngines holds
// it to the registry).
package engname

import (
	"sort"
	"strings"

	"golang.org/x/perf/benchfmt"
)

// Titles are the titles of the registered engines in the suite's order:
// the stores by name, then the reference rails. Tables and charts list
// engines (and pick their colours) in this order.
func Titles() []string {
	var stores, rails []string
	for _, i := range registered {
		if i.reference {
			rails = append(rails, i.title)
		} else {
			stores = append(stores, i.title)
		}
	}
	return append(stores, rails...)
}

// Rail reports whether title is a registered engine's and that engine a
// reference rail, no store.
func Rail(title string) bool {
	for _, i := range registered {
		if i.title == title {
			return i.reference
		}
	}
	return false
}

// Cut splits a base name, "ReadRandomBadger", into its operation and the
// engine title it ends in, trying the titles longest first so that no
// title is taken for a suffix of another.
func Cut(base string) (op, engine string, ok bool) {
	t := Titles()
	sort.SliceStable(t, func(a, b int) bool { return len(t[a]) > len(t[b]) })
	for _, e := range t {
		if op, ok := strings.CutSuffix(base, e); ok && op != "" {
			return op, e, true
		}
	}
	return "", "", false
}

// EngineName turns "ReadRandomBadger/valsz=1024-2" into
// "ReadRandom/engine=Badger/valsz=1024-2".
func EngineName(n benchfmt.Name) (benchfmt.Name, bool) {
	base := n.Base()
	op, engine, ok := Cut(string(base))
	if !ok {
		return n, false
	}
	return benchfmt.Name(op + "/engine=" + engine + string(n[len(base):])), true
}
