package workload

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/core"
)

// Adapters know nothing about benchmarks: no string in internal/engine's
// code names a registered workload (an engine declares what its options
// are, engine.Capability; a workload asks for the ones it sweeps).
func TestEnginesNameNoWorkload(t *testing.T) {
	names := map[string]bool{}
	for _, w := range core.Workloads() {
		names[w.Name] = true
	}
	files, err := filepath.Glob("../engine/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no engine sources: %v", err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			if s, err := strconv.Unquote(lit.Value); err == nil && names[s] {
				t.Errorf("%s: the engine layer names the workload %q", fset.Position(lit.Pos()), s)
			}
			return true
		})
	}
}
