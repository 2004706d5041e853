package coretest

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/mod/modfile"
)

// Package is one package of the module, as its sources say: the
// packages of the same module its files import.
type Package struct {
	Path        string   // import path; the module's own for its root
	Dir         string   // directory, under the module's root
	Imports     []string // this module's packages its non-test files import
	TestImports []string // those its _test.go files import
}

// ModulePackages reads every package of the module whose go.mod is in
// root: each directory with Go files, but testdata and hidden ones and
// modules of their own (a directory with a go.mod, as go's ./... skips). It
// parses imports only, from every file whatever its build tags, so an
// import behind a tag (rocksdb, lmdb_bmatsuo) counts too.
func ModulePackages(root string) ([]Package, error) {
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, err
	}
	module := modfile.ModulePath(mod)
	var out []Package
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if name := d.Name(); path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(path, "go.mod")); path != root && err == nil {
			return filepath.SkipDir
		}
		files, err := filepath.Glob(filepath.Join(path, "*.go"))
		if err != nil || len(files) == 0 {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		p := Package{Path: module, Dir: rel}
		if rel != "." {
			p.Path = module + "/" + filepath.ToSlash(rel)
		}
		for _, f := range files {
			ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			for _, imp := range ast.Imports {
				ip, _ := strconv.Unquote(imp.Path.Value)
				if ip != module && !strings.HasPrefix(ip, module+"/") {
					continue
				}
				list := &p.Imports
				if strings.HasSuffix(f, "_test.go") {
					list = &p.TestImports
				}
				if !slices.Contains(*list, ip) {
					*list = append(*list, ip)
				}
			}
		}
		out = append(out, p)
		return nil
	})
	return out, err
}
