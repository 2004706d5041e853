package core

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCoreImportsNoWorkload: the core, and every package of this module
// it imports, imports no workload package. Workloads use the core; the
// core knows none of them.
func TestCoreImportsNoWorkload(t *testing.T) {
	const module = "github.com/kvbench/kvbench/"
	const workloads = module + "internal/workload"
	seen := map[string]bool{}
	var visit func(pkg string, via []string)
	visit = func(pkg string, via []string) {
		if seen[pkg] {
			return
		}
		seen[pkg] = true
		dir := filepath.Join("..", "..", strings.TrimPrefix(pkg, module))
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files in %s (%v)", pkg, dir, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range ast.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if p == workloads || strings.HasPrefix(p, workloads+"/") {
					t.Errorf("%s imports %s (%s): the core may import no workload package", f, p, strings.Join(append(via, pkg), " -> "))
				}
				if strings.HasPrefix(p, module) {
					visit(p, append(via, pkg))
				}
			}
		}
	}
	visit(module+"internal/core", nil)
	if len(seen) < 3 {
		t.Fatalf("walked %d packages: the walk is broken", len(seen))
	}
}
