package kvbench

import (
	"flag"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/core"
)

// TestCommandLineFlagsAreTheRegistry: the test binary's command line has
// exactly the suite's flags (core.Flags, bound in flags_test.go) and the
// testing package's own (-test.*). A package that registers a flag of its
// own on flag.CommandLine, outside the registry, fails here: its flag
// would be neither checked before any work, nor echoed, nor forwarded by
// the tooling.
func TestCommandLineFlagsAreTheRegistry(t *testing.T) {
	registered := map[string]bool{}
	for _, o := range core.Flags() {
		registered[o.FlagName()] = true
	}
	bound := map[string]bool{}
	flag.CommandLine.VisitAll(func(f *flag.Flag) {
		bound[f.Name] = true
		if !registered[f.Name] && !strings.HasPrefix(f.Name, "test.") {
			t.Errorf("-%s is on the command line but in no declaration of the registry (core.Flags): declare it as a core.Flag of its workload, or an engine.Flag of its engine", f.Name)
		}
	})
	for name := range registered {
		if !bound[name] {
			t.Errorf("-%s is declared but not on the command line", name)
		}
	}
	if len(registered) < 40 {
		t.Fatalf("only %d flags declared: the registry is not read", len(registered))
	}
}
