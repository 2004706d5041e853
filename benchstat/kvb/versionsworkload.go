package main

import (
	"fmt"
	"strings"

	"github.com/kvbench/kvbench/internal/engine"
)

// step is one benchmark pattern every version runs in each round: its
// run length, and its own flags, given before the user's so theirs win.
type step struct {
	bench, benchtime string
	flags            []string
}

// warmOneThread are the reads' own flags: a warm cache, one thread.
var warmOneThread = []string{"-cache=warm", "-threads=1"}

// workload is what every version runs each round, and how the summary
// line says it: -bench at -benchtime, or by default warm random reads and
// a populate with sync off on the engines the module backs (from the
// engine registry).
func workload(a *versionsArgs) ([]step, string, error) {
	if a.bench != "" {
		return []step{{a.bench, a.benchtime, warmOneThread}}, fmt.Sprintf("-bench '%s' -benchtime %s", a.bench, a.benchtime), nil
	}
	titles, modules := engine.ModuleEngines(a.module)
	if len(titles) == 0 {
		return nil, "", fmt.Errorf("-module %s: no engine of this suite is built on it (the engines' modules: %s); give -bench to run other benchmarks", a.module, strings.Join(modules, ", "))
	}
	t := strings.Join(titles, "|")
	return []step{
			{"^BenchmarkReadRandom(" + t + ")$", a.benchtime, warmOneThread},
			{"^BenchmarkPopulate(" + t + ")$/valsz/batch/sync=false", "1x", nil},
		},
		fmt.Sprintf("warm random reads (one thread, %s) and a populate (sync off) of %s", a.benchtime, t), nil
}
