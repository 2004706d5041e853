package kvbench

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/core/coretest"
)

// layers are the module's packages from the bottom up, by path under the
// module ("dir/..." is every package below dir, not dir itself; the most
// specific pattern places a package). A package imports only packages of
// a lower layer; the packages of a layer marked peers may also import
// each other. Nothing under internal/, and not the benchmarks, imports
// the tooling (benchstat/): it is above them all.
var layers = []struct {
	name     string
	peers    bool
	patterns []string
}{
	{"libraries", true, []string{"internal/flagreg", "internal/memlimit", "internal/valgrind", "internal/spin",
		"internal/benchpattern", "internal/measure", "internal/records", "internal/dataset", "internal/keydist", "internal/load"}},
	{"engines", false, []string{"internal/engine"}},
	{"over an engine", false, []string{"internal/kvhttp", "internal/core/coretest"}},
	{"core", false, []string{"internal/core"}},
	{"workloads", false, []string{"internal/workload", "internal/workload/embedded"}},
	{"the tooling's registry of the workloads", false, []string{"internal/families"}},
	{"the benchmarks and the programs under internal/", false, []string{".", "internal/cmd/..."}},
	{"the tooling's packages", true, []string{"benchstat/internal/..."}},
	{"the tooling's commands", false, []string{"benchstat/..."}},
	{"kvb, the tooling's one command", false, []string{"benchstat/kvb"}},
	{"the tooling's end-to-end tests", false, []string{"benchstat"}},
}

// layerOf is the index of the layer that places dir (a path under the
// module), -1 for none.
func layerOf(dir string) int {
	best, bestLen := -1, -1
	for i, l := range layers {
		for _, p := range l.patterns {
			// The longer the directory a pattern names, the more
			// specific; a package itself beats the packages below it.
			under, ok := strings.CutSuffix(p, "/...")
			n := 2 * len(under)
			if !ok {
				n++
			}
			matches := ok && strings.HasPrefix(dir, under+"/") || !ok && dir == p
			if matches && n > bestLen {
				best, bestLen = i, n
			}
		}
	}
	return best
}

// TestImportsGoOnlyDown walks every package of the module (every file,
// whatever its build tags, tests included) and fails on an import that
// goes up a layer, or sideways outside a layer of peers.
func TestImportsGoOnlyDown(t *testing.T) {
	pkgs, err := coretest.ModulePackages(".")
	if err != nil {
		t.Fatal(err)
	}
	module := ""
	for _, p := range pkgs {
		if p.Dir == "." {
			module = p.Path
		}
	}
	rel := func(path string) string {
		if path == module {
			return "."
		}
		return strings.TrimPrefix(path, module+"/")
	}
	placed := map[string]int{}
	for _, p := range pkgs {
		if placed[p.Dir] = layerOf(p.Dir); placed[p.Dir] < 0 {
			t.Errorf("%s is in no layer: place it in this test's layers", p.Dir)
		}
	}
	for _, p := range pkgs {
		from := placed[p.Dir]
		if from < 0 {
			continue
		}
		for _, imp := range slices.Concat(p.Imports, p.TestImports) {
			to, ok := placed[rel(imp)]
			switch {
			case !ok || to < 0:
				continue // reported above, or not a directory of this module
			case to > from:
				t.Errorf("%s (%s) imports %s (%s): an import up a layer", p.Dir, layers[from].name, rel(imp), layers[to].name)
			case to == from && !layers[from].peers && rel(imp) != p.Dir:
				t.Errorf("%s imports %s, both %s: a layer whose packages are not peers imports only below it", p.Dir, rel(imp), layers[from].name)
			}
		}
	}
	if len(pkgs) < 30 {
		t.Fatalf("walked %d packages: %v", len(pkgs), fmt.Sprint(placed))
	}
	for dir, want := range map[string]string{"internal/core": "core", "benchstat/kvb": "kvb, the tooling's one command",
		"benchstat/sim": "the tooling's commands", "benchstat/internal/gate": "the tooling's packages", "internal/cmd/genwrappers": "the benchmarks and the programs under internal/"} {
		if l := layerOf(dir); l < 0 || layers[l].name != want {
			t.Errorf("%s is placed in layer %d, want %q", dir, l, want)
		}
	}
}
