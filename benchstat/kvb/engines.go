package main

import (
	"fmt"
	"strings"

	"github.com/kvbench/kvbench/internal/engine"
)

// defaultBenchFor is the benchmarks compared when -bench is not given:
// every engine's ReadRandom, or with a module only its engines' (an
// engine's change has nothing to say about the others, which would add
// their time and noise).
func defaultBenchFor(module string) (string, error) {
	if module == "" {
		return defaultBench, nil
	}
	titles, modules := engine.ModuleEngines(module)
	if len(titles) == 0 {
		return "", fmt.Errorf("-module %s: no engine of this suite is built on it (the engines' modules: %s); give -bench to compare other benchmarks", module, strings.Join(modules, ", "))
	}
	return "^" + defaultBench + "(" + strings.Join(titles, "|") + ")$", nil
}
