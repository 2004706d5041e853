package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/mod/modfile"
)

// sideKind is what BASE or HEAD names.
type sideKind int

const (
	refSide     sideKind = iota // a commit of this repository
	binarySide                  // a test binary already built
	versionSide                 // -module: a version of the module
	dirSide                     // -module: a directory holding a copy of the module
)

// side is one test binary of the suite that a command runs.
type side struct {
	role   string // how messages name it: base or head, version 2
	spec   string // as given on the command line
	kind   sideKind
	commit string // refSide: the commit spec resolves to
	label  string // versionSide, dirSide: the module's version as fixtures and results name it
	dir    string // dirSide: the copy's absolute path
	binary string // the test binary, once built
}

// name is how the report names the side: by ref and commit, by module
// version, or by the binary's path.
func (s *side) name(module string) string {
	switch s.kind {
	case refSide:
		short := shortCommit(s.commit)
		if strings.HasPrefix(s.commit, s.spec) {
			return short
		}
		return s.spec + " (" + short + ")"
	case versionSide:
		if s.spec != s.label {
			return module + " " + s.label + " (" + s.spec + ")"
		}
		return module + " " + s.label
	case dirSide:
		return module + " " + s.label + " (" + s.spec + ")"
	}
	return s.spec
}

// same reports whether two sides are one build: an A/A comparison, which
// runs one binary on both sides.
func (s *side) same(o *side) bool {
	if s.kind != o.kind {
		return false
	}
	switch s.kind {
	case refSide:
		return s.commit == o.commit
	case versionSide, dirSide:
		return s.label == o.label
	}
	return s.spec == o.spec
}

// builder builds sides in tmp: a commit's test binary in a worktree of
// it, or this tree's with an engine module at a version or a local copy.
// kvb compare and kvb versions build theirs with it.
type builder struct {
	prog      string // the command, the prefix of every message: "kvb compare"
	stderr    io.Writer
	repo      string // this repository's top directory
	module    string // the engine module a side replaces; "" when sides are refs
	tags      string // the build tags of every side
	tmp       string // worktrees, binaries and module files, removed by cleanup
	worktrees []string
}

func (b *builder) logf(format string, args ...any) {
	fmt.Fprintf(b.stderr, b.prog+": "+format+"\n", args...)
}

// scratch makes b.tmp, which cleanup removes.
func (b *builder) scratch() error {
	var err error
	b.tmp, err = os.MkdirTemp("", "kvbench-"+strings.TrimPrefix(b.prog, "kvb ")+".")
	return err
}

// locate finds the suite's repository, the directory the run is started
// in or one above it, and makes *out absolute: the builds and rounds run
// in other directories.
func (b *builder) locate(ctx context.Context, out *string) error {
	var err error
	if b.repo, err = git(ctx, ".", "rev-parse", "--show-toplevel"); err != nil {
		return fmt.Errorf("not in the suite's repository: %w", err)
	}
	*out, err = filepath.Abs(*out)
	return err
}

// dirty reports whether tracked files of this tree differ from HEAD.
func (b *builder) dirty(ctx context.Context) bool {
	st, err := git(ctx, b.repo, "status", "--porcelain", "--untracked-files=no")
	return err == nil && st != ""
}

// cleanup removes the worktrees and the scratch directory, also after a
// failed step or an interrupt.
func (b *builder) cleanup() {
	if b.tmp == "" {
		return
	}
	for _, w := range b.worktrees {
		exec.Command("git", "-C", b.repo, "worktree", "remove", "--force", w).Run()
	}
	os.RemoveAll(b.tmp)
	exec.Command("git", "-C", b.repo, "worktree", "prune").Run()
}

// resolveSide checks what spec names before anything is built: a commit
// or a test binary, or with a module one of its versions (asking the
// module proxy, which resolves a query such as "latest") or a directory
// holding a copy of it.
func (b *builder) resolveSide(ctx context.Context, role, spec string) (*side, error) {
	s := &side{role: role, spec: spec}
	if b.module != "" {
		if fi, err := os.Stat(spec); err == nil && fi.IsDir() {
			return s, b.resolveDir(s)
		} else if strings.ContainsRune(spec, filepath.Separator) {
			return nil, fmt.Errorf("%s %s: no such directory", role, spec)
		}
		v, err := output(ctx, b.repo, goEnv, "go", "list", "-m", "-f", "{{.Version}}", b.module+"@"+spec)
		if err != nil {
			return nil, fmt.Errorf("%s %s %s: %w", role, b.module, spec, err)
		}
		s.kind, s.label = versionSide, v
		return s, nil
	}
	if fi, err := os.Stat(spec); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		s.kind, s.binary = binarySide, spec
		return s, nil
	}
	s.commit = commitOf(ctx, b.repo, spec)
	if s.commit == "" {
		return nil, fmt.Errorf("%s %s: not a commit in %s, nor a test binary", role, spec, b.repo)
	}
	return s, nil
}

func (b *builder) resolveDir(s *side) error {
	dir, err := filepath.Abs(s.spec)
	if err != nil {
		return err
	}
	raw, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return fmt.Errorf("%s %s: no go.mod in that directory", s.role, s.spec)
	}
	if got := modfile.ModulePath(raw); got != b.module {
		return fmt.Errorf("%s %s: holds module %q, not %s", s.role, s.spec, got, b.module)
	}
	h, err := treeHash(dir)
	if err != nil {
		return fmt.Errorf("%s %s: %w", s.role, s.spec, err)
	}
	s.kind, s.dir, s.label = dirSide, dir, "local-"+h
	return nil
}

// sideLinkFlags link a side's test binary without DWARF, which only a
// debugger reads: the binary lives in the run's scratch and goes with
// it, and stack traces, module versions (engine.ModuleVersion) and
// callgrind's function names come from the symbol table and pclntab.
// Writing DWARF is a third of a link, and Valgrind reads it at every
// start of a sim round (about 0.5 of its 1.7 CPU-seconds of start-up on
// this suite).
const sideLinkFlags = "-w"

// goEnv is the environment of every go command kvb runs: -modfile does
// not work in a workspace, and the sides are this module alone.
var goEnv = []string{"GOWORK=off"}

// build makes the side's test binary in b.tmp.
func (b *builder) build(ctx context.Context, s *side) error {
	switch s.kind {
	case binarySide:
		abs, err := filepath.Abs(s.spec)
		s.binary = abs
		return err
	case refSide:
		return b.buildRef(ctx, s)
	}
	return b.buildModule(ctx, s)
}

// buildRef builds a commit's test binary in a detached worktree of it.
func (b *builder) buildRef(ctx context.Context, s *side) error {
	wt := filepath.Join(b.tmp, s.role)
	if _, err := git(ctx, b.repo, "worktree", "add", "--quiet", "--detach", wt, s.commit); err != nil {
		return fmt.Errorf("%s %s: %w", s.role, s.spec, err)
	}
	b.worktrees = append(b.worktrees, wt)
	subject, _ := git(ctx, b.repo, "log", "-1", "--format=%h %s", s.commit)
	b.logf("building %s: %s (%s)", s.role, s.spec, subject)
	s.binary = filepath.Join(b.tmp, s.role+".test")
	// -trimpath keeps the worktree's path out of the build, so the
	// packages a commit does not change come from Go's build cache
	// instead of being compiled again for each new worktree (3 s instead
	// of 9 s a side here); the machine code is the same. sideLinkFlags:
	// no DWARF.
	if _, err := output(ctx, wt, goEnv, "go", "test", "-c", "-trimpath", "-ldflags", sideLinkFlags, "-tags", b.tags, "-o", s.binary, "."); err != nil {
		return fmt.Errorf("building %s %s: %w", s.role, s.spec, err)
	}
	return nil
}

// buildModule builds this tree's suite with the module at the side's
// version or directory. The change goes into a copy of go.mod and go.sum
// (-modfile): the user's files are never touched. The binary names the
// version it was built with (engine.ModuleLabel), so fixtures and
// results carry it, and a directory's label is a hash of its sources.
// A side that does not build, or that go would build at another version
// than the one asked for, is a *buildError.
func (b *builder) buildModule(ctx context.Context, s *side) error {
	mod := filepath.Join(b.tmp, s.role+".mod")
	for _, f := range [][2]string{{"go.mod", mod}, {"go.sum", strings.TrimSuffix(mod, ".mod") + ".sum"}} {
		if err := copyFile(filepath.Join(b.repo, f[0]), f[1]); err != nil && !(f[0] == "go.sum" && os.IsNotExist(err)) {
			return err
		}
	}
	m := b.module
	edit := []string{"mod", "edit", "-dropreplace=" + m, "-require=" + m + "@" + s.label, mod}
	if s.kind == dirSide {
		edit = []string{"mod", "edit", "-replace=" + m + "=" + s.dir, mod}
	}
	if _, err := output(ctx, b.repo, goEnv, "go", edit...); err != nil {
		return fmt.Errorf("%s %s %s: %w", s.role, m, s.spec, err)
	}
	b.logf("building %s: this tree's suite with %s", s.role, s.name(m))
	s.binary = filepath.Join(b.tmp, s.role+".test")
	ldflags := sideLinkFlags + " -X github.com/kvbench/kvbench/internal/engine.ModuleLabel=" + m + "=" + s.label
	_, log, err := execute(ctx, b.repo, goEnv, "go", "test", "-c", "-modfile="+mod, "-mod=mod", "-tags", b.tags, "-ldflags", ldflags, "-o", s.binary, ".")
	if err != nil {
		return &buildError{what: fmt.Sprintf("building %s with %s %s", s.role, m, s.spec), reason: firstError(log), err: err}
	}
	if s.kind == versionSide {
		// -mod=mod lifts the module above the version asked for when the
		// suite imports a package of it that version lacks, or another
		// requirement needs a later one: then it is not that version that
		// would run.
		got, err := output(ctx, b.repo, goEnv, "go", "list", "-modfile="+mod, "-mod=mod", "-m", "-f", "{{.Version}}", m)
		if err != nil {
			return fmt.Errorf("%s %s %s: %w", s.role, m, s.spec, err)
		}
		if got != s.label {
			reason := "the suite's other requirements select " + got + " instead"
			if pkg := foundPackage(log, m); pkg != "" {
				reason = "it has no package " + pkg + ", which the suite imports (go would build " + got + " instead)"
			}
			return &buildError{what: fmt.Sprintf("%s %s %s", s.role, m, s.label), reason: reason}
		}
	}
	return nil
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}

// treeHash is the first 12 hex digits of a hash of a module copy's
// sources (Go, C and assembly files and go.mod, .git left out): the
// sha256sum of their sha256sum lines sorted by path, as the suite has
// always labelled a copy. Fixtures a copy writes are keyed by what is in
// it.
func treeHash(dir string) (string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p == filepath.Join(dir, ".git") {
			return filepath.SkipDir
		}
		n := d.Name()
		if d.Type().IsRegular() && (strings.HasSuffix(n, ".go") || n == "go.mod" || strings.HasSuffix(n, ".c") || strings.HasSuffix(n, ".h") || strings.HasSuffix(n, ".s")) {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, "./"+filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	sum := sha256.New()
	for _, f := range files {
		h := sha256.New()
		r, err := os.Open(filepath.Join(dir, f))
		if err != nil {
			return "", err
		}
		_, err = io.Copy(h, r)
		r.Close()
		if err != nil {
			return "", err
		}
		fmt.Fprintf(sum, "%s  %s\n", hex.EncodeToString(h.Sum(nil)), f)
	}
	return hex.EncodeToString(sum.Sum(nil))[:12], nil
}
