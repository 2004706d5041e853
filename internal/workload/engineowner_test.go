package workload

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/core/coretest"
)

// Adapters know nothing about benchmarks. No package under
// internal/engine imports, directly or through another package of this
// module, a workload package or anything that knows the workloads (the
// core, the families); and no source of the adapters names a registered
// workload: no string is a workload's name or names one of its
// benchmarks, and no comment names one of its benchmarks. An engine
// declares what its options are (engine.Capability); a workload asks for
// the ones it sweeps. (The engine package's tests may run the suite's
// benchmarks, and name them to select them.)
func TestEnginesNameNoWorkload(t *testing.T) {
	checkEngineImports(t)
	names := map[string]bool{}
	var benchmarks []string
	for _, w := range core.Workloads() {
		names[w.Name] = true
		benchmarks = append(benchmarks, "Benchmark"+w.Name)
	}
	for _, tg := range core.Targets() {
		benchmarks = append(benchmarks, tg.Name())
	}
	namesBenchmark := func(s string) string {
		for _, b := range benchmarks {
			if strings.Contains(s, b) {
				return b
			}
		}
		return ""
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
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, cg := range file.Comments {
			if b := namesBenchmark(cg.Text()); b != "" {
				t.Errorf("%s: a comment of the engine layer names the benchmark %s", fset.Position(cg.Pos()), b)
			}
		}
		ast.Inspect(file, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			if names[s] {
				t.Errorf("%s: the engine layer names the workload %q", fset.Position(lit.Pos()), s)
			} else if b := namesBenchmark(s); b != "" {
				t.Errorf("%s: the engine layer names the benchmark %s", fset.Position(lit.Pos()), b)
			}
			return true
		})
	}
}

// checkEngineImports walks what every package under internal/engine
// imports (its tests' imports too, then the non-test imports of each
// package reached) and fails on a package that knows the workloads.
func checkEngineImports(t *testing.T) {
	t.Helper()
	pkgs, err := coretest.ModulePackages("../..")
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]coretest.Package{}
	var module string
	for _, p := range pkgs {
		byPath[p.Path] = p
		if p.Dir == "." {
			module = p.Path
		}
	}
	knowsWorkloads := []string{module + "/internal/workload", module + "/internal/core", module + "/internal/families"}
	walked := 0
	for _, p := range pkgs {
		if p.Dir != "internal/engine" && !strings.HasPrefix(p.Dir, "internal/engine/") {
			continue
		}
		seen := map[string]bool{p.Path: true}
		var visit func(path string, via []string)
		visit = func(path string, via []string) {
			for _, k := range knowsWorkloads {
				if path == k || strings.HasPrefix(path, k+"/") {
					chain := strings.ReplaceAll(strings.Join(append(via, path), " -> "), module+"/", "")
					t.Errorf("%s imports %s (%s): the engine layer knows no workload", p.Dir, strings.TrimPrefix(path, module+"/"), chain)
					return
				}
			}
			if seen[path] {
				return
			}
			seen[path] = true
			walked++
			for _, imp := range byPath[path].Imports {
				visit(imp, append(slices.Clone(via), path))
			}
		}
		for _, imp := range slices.Concat(p.Imports, p.TestImports) {
			visit(imp, []string{p.Path})
		}
	}
	if walked < 2 {
		t.Fatalf("walked %d packages from internal/engine: the walk is broken", walked)
	}
}
