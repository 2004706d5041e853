package coretest

import (
	"errors"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
)

// Package is one package of the module and the module's packages it
// imports.
type Package struct {
	Path        string   // import path; the module's own for its root
	Dir         string   // directory, under the module's root
	Imports     []string // this module's packages its non-test files import
	TestImports []string // those its _test.go files import
}

// ModulePackages reads every package of the module in root as go's ./...
// finds them (no testdata, hidden or nested module), with the imports of
// every file whatever its build tags (rocksdb, lmdb_bmatsuo).
func ModulePackages(root string) ([]Package, error) {
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, err
	}
	module := modfile.ModulePath(mod)
	ours := func(ips ...[]string) []string {
		var out []string
		for _, ip := range slices.Concat(ips...) {
			if (ip == module || strings.HasPrefix(ip, module+"/")) && !slices.Contains(out, ip) {
				out = append(out, ip)
			}
		}
		return out
	}
	ctx := build.Default
	ctx.UseAllFiles = true
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
		bp, err := ctx.ImportDir(path, build.ImportComment)
		if errors.As(err, new(*build.NoGoError)) {
			return nil
		} else if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		p := Package{Path: module, Dir: rel, Imports: ours(bp.Imports), TestImports: ours(bp.TestImports, bp.XTestImports)}
		if rel != "." {
			p.Path = module + "/" + filepath.ToSlash(rel)
		}
		out = append(out, p)
		return nil
	})
	return out, err
}
