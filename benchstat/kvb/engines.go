package main

import (
	"fmt"
	"strings"

	"github.com/kvbench/kvbench/internal/engine"
)

// enginesOf returns the titles of the engines whose binding is module
// (engine.Info.Module), as their benchmarks are named, and every store's
// module for the error that names none.
func enginesOf(module string) (titles, modules []string) {
	seen := map[string]bool{}
	for _, info := range engine.All() {
		if info.Reference {
			continue
		}
		if info.Module == module {
			titles = append(titles, info.Title)
		}
		if !seen[info.Module] {
			seen[info.Module] = true
			modules = append(modules, info.Module)
		}
	}
	return titles, modules
}

// defaultBenchFor is the benchmarks compared when -bench is not given:
// every engine's ReadRandom, or with a module only its engines' (an
// engine's change has nothing to say about the others, which would add
// their time and noise).
func defaultBenchFor(module string) (string, error) {
	if module == "" {
		return defaultBench, nil
	}
	titles, modules := enginesOf(module)
	if len(titles) == 0 {
		return "", fmt.Errorf("-module %s: no engine of this suite is built on it (the engines' modules: %s); give -bench to compare other benchmarks", module, strings.Join(modules, ", "))
	}
	return "^" + defaultBench + "(" + strings.Join(titles, "|") + ")$", nil
}
