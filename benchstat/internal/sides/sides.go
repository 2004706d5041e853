// Package sides is what kvb compare and the lab's kvb versions share: the
// sides they build and run (a git ref in a worktree, or this tree with an
// engine module at a version or a local copy, on a copy of go.mod), the
// suite's flags they forward, the rounds, the run an interrupt stops.
package sides

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/mod/modfile"

	"github.com/kvbench/kvbench/benchstat/internal/cli"
	"github.com/kvbench/kvbench/benchstat/internal/flagargs"
	"github.com/kvbench/kvbench/benchstat/internal/gate"
	"github.com/kvbench/kvbench/benchstat/internal/results"
	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/flagreg"
	// The workload packages register their own flags from init; the
	// suite's flags are the core's, the engines' and theirs.
	_ "github.com/kvbench/kvbench/internal/workload"
	_ "github.com/kvbench/kvbench/internal/workload/embedded"
)

// Kind is what a side's spec names.
type Kind int

const (
	Ref     Kind = iota // a commit of this repository
	Binary              // a test binary already built
	Version             // -module: a version of the module
	Dir                 // -module: a directory holding a copy of the module
)

// Side is one test binary of the suite that a command runs.
type Side struct {
	Role   string // how messages name it: base or head, version 2
	Spec   string // as given on the command line
	Kind   Kind
	Commit string // Ref: the commit Spec resolves to
	Label  string // Version, Dir: the module's version as fixtures and results name it
	Dir    string // Dir: the copy's absolute path
	Binary string // the test binary, once built
}

// Name is how reports name the side: by ref and commit, by module
// version, or by the binary's path.
func (s *Side) Name(module string) string {
	switch {
	case s.Kind == Ref && strings.HasPrefix(s.Commit, s.Spec):
		return ShortCommit(s.Commit)
	case s.Kind == Ref:
		return s.Spec + " (" + ShortCommit(s.Commit) + ")"
	case s.Kind == Binary:
		return s.Spec
	case s.Spec == s.Label:
		return module + " " + s.Label
	}
	return module + " " + s.Label + " (" + s.Spec + ")"
}

// Same reports whether two sides are one build (the same commit, module
// version or binary): an A/A comparison, which runs one binary on both
// sides.
func (s *Side) Same(o *Side) bool {
	return s.Kind == o.Kind && s.Commit == o.Commit && s.Label == o.Label && (s.Kind != Binary || s.Spec == o.Spec)
}

// Builder builds sides in tmp: a commit's test binary in a worktree of
// it, or this tree's with an engine module at a version or a local copy.
type Builder struct {
	Prog      string // the command, the prefix of every message: "kvb compare"
	Stderr    io.Writer
	Repo      string // this repository's top directory
	Module    string // the engine module a side replaces; "" when sides are refs
	Tags      string // the build tags of every side
	Out       string // the results directory, absolute once located
	tmp       string // worktrees, binaries and module files, removed by cleanup
	worktrees []string
}

// Logf prints a message of the command.
func (b *Builder) Logf(format string, args ...any) {
	fmt.Fprintf(b.Stderr, b.Prog+": "+format+"\n", args...)
}

// Scratch makes b.tmp, removed when the run ends (UntilInterrupted).
func (b *Builder) Scratch() error {
	var err error
	b.tmp, err = os.MkdirTemp("", "kvbench-"+strings.TrimPrefix(b.Prog, "kvb ")+".")
	return err
}

// Locate finds the suite's repository, at or above the working directory,
// and makes *out absolute: the builds and rounds run elsewhere.
func (b *Builder) Locate(ctx context.Context, out *string) error {
	var err error
	if b.Repo, err = Git(ctx, ".", "rev-parse", "--show-toplevel"); err != nil {
		return fmt.Errorf("not in the suite's repository: %w", err)
	}
	*out, err = filepath.Abs(*out)
	b.Out = *out
	return err
}

// MkdirOut makes the results directory.
func (b *Builder) MkdirOut(context.Context) error { return os.MkdirAll(b.Out, 0o755) }

// InOrder runs steps in order; the first that fails stops them with its
// own error.
func InOrder(ctx context.Context, steps ...func(context.Context) error) error {
	for _, step := range steps {
		if err := step(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Dirty reports whether tracked files of this tree differ from HEAD.
func (b *Builder) Dirty(ctx context.Context) bool {
	st, err := Git(ctx, b.Repo, "status", "--porcelain", "--untracked-files=no")
	return err == nil && st != ""
}

// UntilInterrupted runs run under a context that an interrupt or SIGTERM
// cancels, then removes the worktrees and the Scratch directory. A
// failure is exit 2, "interrupted" when the signal stopped it.
func (b *Builder) UntilInterrupted(run func(ctx context.Context) error) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	defer func() {
		if b.tmp != "" {
			for _, w := range b.worktrees {
				exec.Command("git", "-C", b.Repo, "worktree", "remove", "--force", w).Run()
			}
			os.RemoveAll(b.tmp)
			exec.Command("git", "-C", b.Repo, "worktree", "prune").Run()
		}
	}()
	switch err := run(ctx); {
	case err == nil:
		return 0
	case ctx.Err() != nil:
		b.Logf("interrupted: %v", err)
	default:
		b.Logf("%v", err)
	}
	return 2
}

// Resolve checks what spec names before anything is built: a commit
// or a test binary, or with a module one of its versions (the module
// proxy resolves a query such as "latest") or a directory holding a copy.
func (b *Builder) Resolve(ctx context.Context, role, spec string) (*Side, error) {
	s := &Side{Role: role, Spec: spec}
	if b.Module != "" {
		if fi, err := os.Stat(spec); err == nil && fi.IsDir() {
			return s, b.resolveDir(s)
		} else if strings.ContainsRune(spec, filepath.Separator) {
			return nil, fmt.Errorf("%s %s: no such directory", role, spec)
		}
		v, _, err := Output(ctx, b.Repo, GoEnv, "go", "list", "-m", "-f", "{{.Version}}", b.Module+"@"+spec)
		if err != nil {
			return nil, fmt.Errorf("%s %s %s: %w", role, b.Module, spec, err)
		}
		s.Kind, s.Label = Version, v
		return s, nil
	}
	if fi, err := os.Stat(spec); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		s.Kind, s.Binary = Binary, spec
		return s, nil
	}
	if s.Commit = CommitOf(ctx, b.Repo, spec); s.Commit == "" {
		return nil, fmt.Errorf("%s %s: not a commit in %s, nor a test binary", role, spec, b.Repo)
	}
	return s, nil
}

func (b *Builder) resolveDir(s *Side) error {
	dir, err := filepath.Abs(s.Spec)
	if err != nil {
		return err
	}
	raw, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return fmt.Errorf("%s %s: no go.mod in that directory", s.Role, s.Spec)
	}
	if got := modfile.ModulePath(raw); got != b.Module {
		return fmt.Errorf("%s %s: holds module %q, not %s", s.Role, s.Spec, got, b.Module)
	}
	h, err := treeHash(dir)
	if err != nil {
		return fmt.Errorf("%s %s: %w", s.Role, s.Spec, err)
	}
	s.Kind, s.Dir, s.Label = Dir, dir, "local-"+h
	return nil
}

// sideLinkFlags link a side's test binary without DWARF, which only a
// debugger reads (stack traces and callgrind's names come from the symbol
// table and pclntab): a third of a link, and a third of Valgrind's start-up
// in every sim round.
const sideLinkFlags = "-w"

// GoEnv is the environment of every go command a side command runs: -modfile does
// not work in a workspace, and the sides are this module alone.
var GoEnv = []string{"GOWORK=off"}

// Build builds s, or with a binary side takes its path.
func (b *Builder) Build(ctx context.Context, s *Side) (err error) {
	switch s.Kind {
	case Binary:
		s.Binary, err = filepath.Abs(s.Spec)
		return err
	case Ref:
		return b.buildRef(ctx, s)
	}
	return b.buildModule(ctx, s)
}

// buildRef builds a commit's test binary in a detached worktree of it.
func (b *Builder) buildRef(ctx context.Context, s *Side) error {
	wt := filepath.Join(b.tmp, s.Role)
	if _, err := Git(ctx, b.Repo, "worktree", "add", "--quiet", "--detach", wt, s.Commit); err != nil {
		return fmt.Errorf("%s %s: %w", s.Role, s.Spec, err)
	}
	b.worktrees = append(b.worktrees, wt)
	subject, _ := Git(ctx, b.Repo, "log", "-1", "--format=%h %s", s.Commit)
	b.Logf("building %s: %s (%s)", s.Role, s.Spec, subject)
	s.Binary = filepath.Join(b.tmp, s.Role+".test")
	// -trimpath: the packages a commit does not change come from the
	// build cache, not compiled again in each new worktree's path.
	if _, _, err := Output(ctx, wt, GoEnv, "go", "test", "-c", "-trimpath", "-ldflags", sideLinkFlags, "-tags", b.Tags, "-o", s.Binary, "."); err != nil {
		return fmt.Errorf("building %s %s: %w", s.Role, s.Spec, err)
	}
	return nil
}

// buildModule builds this tree's suite with the module at the side's
// version or directory, on a copy of go.mod and go.sum (-modfile). The
// binary names that version (engine.ModuleLabel), so fixtures and results
// carry it. A side that does not build, or that go would build at another
// version than the one asked for, is a *BuildError.
func (b *Builder) buildModule(ctx context.Context, s *Side) error {
	mod := filepath.Join(b.tmp, s.Role+".mod")
	for _, f := range [][2]string{{"go.mod", mod}, {"go.sum", strings.TrimSuffix(mod, ".mod") + ".sum"}} {
		raw, err := os.ReadFile(filepath.Join(b.Repo, f[0]))
		if err == nil {
			err = os.WriteFile(f[1], raw, 0o644)
		}
		if err != nil && !(f[0] == "go.sum" && os.IsNotExist(err)) {
			return err
		}
	}
	m := b.Module
	edit := []string{"mod", "edit", "-dropreplace=" + m, "-require=" + m + "@" + s.Label, mod}
	if s.Kind == Dir {
		edit = []string{"mod", "edit", "-replace=" + m + "=" + s.Dir, mod}
	}
	if _, _, err := Output(ctx, b.Repo, GoEnv, "go", edit...); err != nil {
		return fmt.Errorf("%s %s %s: %w", s.Role, m, s.Spec, err)
	}
	b.Logf("building %s: this tree's suite with %s", s.Role, s.Name(m))
	s.Binary = filepath.Join(b.tmp, s.Role+".test")
	ldflags := sideLinkFlags + " -X github.com/kvbench/kvbench/internal/engine.ModuleLabel=" + m + "=" + s.Label
	_, log, err := Output(ctx, b.Repo, GoEnv, "go", "test", "-c", "-modfile="+mod, "-mod=mod", "-tags", b.Tags, "-ldflags", ldflags, "-o", s.Binary, ".")
	if err != nil {
		return &BuildError{what: fmt.Sprintf("building %s with %s %s", s.Role, m, s.Spec), Log: log, err: err}
	}
	if s.Kind != Version {
		return nil
	}
	// -mod=mod lifts the module above the version asked for when that
	// version lacks a package the suite imports, or another requirement
	// needs a later one.
	got, _, err := Output(ctx, b.Repo, GoEnv, "go", "list", "-modfile="+mod, "-mod=mod", "-m", "-f", "{{.Version}}", m)
	if err != nil {
		return fmt.Errorf("%s %s %s: %w", s.Role, m, s.Spec, err)
	}
	if got != s.Label {
		reason := "the suite's other requirements select " + got + " instead"
		if pkg := foundPackage(log, m); pkg != "" {
			reason = "it has no package " + pkg + ", which the suite imports (go would build " + got + " instead)"
		}
		return &BuildError{what: fmt.Sprintf("%s %s %s", s.Role, m, s.Label), Reason: reason}
	}
	return nil
}

// BuildError is a side the suite does not build with: the build failed
// (Log), or go would build another version instead (Reason, one line).
type BuildError struct {
	what   string // the step: "building base with go.etcd.io/bbolt v1.4.3"
	Reason string // the version go would build instead; "" when the build failed
	Log    string // a failed build's standard error
	err    error  // the go command's own error; nil when Reason says it all
}

func (e *BuildError) Error() string {
	if e.err != nil {
		return e.what + ": " + e.err.Error()
	}
	return e.what + ": " + e.Reason
}

func (e *BuildError) Unwrap() error { return e.err }

// foundPackage is the package of module that go found at another
// version while building ("go: found PKG in MODULE VERSION").
func foundPackage(log, module string) string {
	for _, l := range strings.Split(log, "\n") {
		if rest, ok := strings.CutPrefix(l, "go: found "); ok {
			if pkg, in, ok := strings.Cut(rest, " in "); ok && strings.HasPrefix(in, module+" ") {
				return pkg
			}
		}
	}
	return ""
}

// treeHash is the first 12 hex digits of a hash of a module copy's
// sources (Go, C and assembly files and go.mod, .git left out): the
// sha256sum of their sha256sum lines sorted by path.
func treeHash(dir string) (string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p == filepath.Join(dir, ".git") {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() && (d.Name() == "go.mod" || slices.Contains([]string{".go", ".c", ".h", ".s"}, filepath.Ext(d.Name()))) {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, "./"+filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	slices.Sort(files)
	sum := sha256.New()
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(sum, "%x  %s\n", sha256.Sum256(b), f)
	}
	return fmt.Sprintf("%x", sum.Sum(nil))[:12], nil
}

// TestArgs run the benchmarks matching bench once each, no tests, then
// flags (the binary keeps a flag's last value).
func TestArgs(bench string, flags ...string) []string {
	return append([]string{"-test.run=^$", "-test.bench=" + bench, "-test.count=1"}, flags...)
}

// WarmRun runs cmd, a side's binary at one iteration, before anything is
// measured: it builds or reuses the fixtures, and a side that fails, or
// runs no benchmark, stops the run before the rounds. A failure prints the
// run's last 20 lines but the settings lines and is the error "FAILED:
// ERR"; a run of no benchmark, the error none.
func WarmRun(cmd *exec.Cmd, stderr io.Writer, failed, none string) error {
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		lines := slices.DeleteFunc(strings.Split(strings.TrimRight(out.String()+errb.String(), "\n"), "\n"),
			func(l string) bool { return strings.HasPrefix(l, "settings-") })
		for _, l := range lines[max(0, len(lines)-20):] {
			fmt.Fprintln(stderr, l)
		}
		return fmt.Errorf("%s: %v", failed, err)
	}
	set := gate.NewSet()
	if set.Read(bytes.NewReader(out.Bytes()), "warm-up") != nil || len(set.Values) == 0 {
		return errors.New(none)
	}
	return nil
}

// rotation is the sides' order in round r (from 0): every side once,
// starting one side later each round, so a drift of the machine lands on
// every side alike.
func rotation(r, sides int) []int {
	order := make([]int, sides)
	for k := range order {
		order[k] = (r + k) % sides
	}
	return order
}

// Lane is one side of Interleaved rounds: its name in the order file, in
// messages, its output file and what that file starts with.
type Lane struct{ Name, Who, File, Header string }

// Interleaved runs n rounds in rotation order, announced as "WHATround
// R of N (ORDER)". Each lane's output goes to its file, made afresh;
// each round's order, by names, to orderFile as a line "ROUND NAME...".
// A side that fails stops the rounds with run's error.
func (b *Builder) Interleaved(ctx context.Context, what string, n int, lanes []Lane, orderFile string, run func(ctx context.Context, i int, out io.Writer) error) error {
	outs := make([]*os.File, len(lanes))
	for i, l := range lanes {
		f, err := os.Create(l.File)
		if err != nil {
			return err
		}
		defer f.Close()
		if _, err := io.WriteString(f, l.Header); err != nil {
			return err
		}
		outs[i] = f
	}
	of, err := os.Create(orderFile)
	if err != nil {
		return err
	}
	defer of.Close()
	for r := range n {
		order := rotation(r, len(lanes))
		var ns []string
		for _, i := range order {
			ns = append(ns, lanes[i].Name)
		}
		b.Logf("%sround %d of %d (%s)", what, r+1, n, strings.Join(ns, " "))
		fmt.Fprintf(of, "%d %s\n", r+1, strings.Join(ns, " "))
		for _, i := range order {
			if err := run(ctx, i, outs[i]); err != nil {
				return fmt.Errorf("%s fails in %sround %d (%v); its output is in %s", lanes[i].Who, what, r+1, err, lanes[i].File)
			}
		}
	}
	for _, f := range append(outs, of) {
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}

// BenchstatTable writes benchstat's comparison of cols (NAME=FILE, the
// first the baseline) to w, a table per unit (-table=: the settings lines
// differ between engines), -dir's free space ignored. x/perf offers the
// current benchstat only as its command (results.Benchstat).
func BenchstatTable(ctx context.Context, repo string, alpha float64, cols []string, w io.Writer) error {
	args := append([]string{"run", results.Benchstat, "-table=", "-ignore", "dir-fs,timestamp-ns", "-alpha", fmt.Sprint(alpha)}, cols...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), GoEnv...)
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, &errb
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("benchstat: %s", cmp.Or(strings.TrimSpace(errb.String()), err.Error()))
	}
	return nil
}

// forward is a flag kvb hands to the test binaries as -name=value, in
// the order given (the binary keeps the last value).
type forward struct {
	as     string // the name the test binary knows it by
	isBool bool
	to     *[]string
}

func (f forward) String() string   { return "" }
func (f forward) IsBoolFlag() bool { return f.isBool }
func (f forward) Set(v string) error {
	*f.to = append(*f.to, "-"+f.as+"="+v)
	return nil
}

// goTestFlags are go test's flags a command passes on, by their usual
// names (go test -cpu is the binary's -test.cpu), true for a bool flag;
// -bench, -count and -benchtime are the commands' own.
var goTestFlags = map[string]bool{"cpu": false, "timeout": false, "benchmem": true, "short": true, "v": true}

// defineSuiteFlags adds every flag of the suite's test binary, from its
// registry (core.Flags), to fs as a flag forwarded into to. A suite flag
// with the name of one of fs's own is a bug, caught by the tests.
func defineSuiteFlags(fs *flag.FlagSet, to *[]string) {
	define := func(name string, v forward, usage string) {
		if fs.Lookup(name) != nil {
			panic("kvb: flag -" + name + " is both the suite's and " + fs.Name() + "'s own")
		}
		fs.Var(v, name, usage)
	}
	for _, o := range core.Flags() {
		define(o.FlagName(), forward{as: o.FlagName(), isBool: flagreg.IsBool(o), to: to}, o.FlagUsage())
	}
	for name, isBool := range goTestFlags {
		define(name, forward{as: "test." + name, isBool: isBool, to: to}, "go test's -"+name+", to both binaries")
	}
}

// SuiteCommand is kvb compare or kvb versions: its own flags, then every
// flag of the suite, forwarded to the binaries after its defaults. -h
// prints the usage and its own flags alone (the suite's are many); a bad
// command line its error alone, exit 2.
type SuiteCommand[A any] struct {
	Name, Summary, Usage string
	Where                string                                 // where a bad flag's error says the flags are listed
	Defaults             []string                               // the suite's flags before the user's, which override them
	Flags                func(fs *flag.FlagSet, a *A) *[]string // declares its own flags; returns where the suite's go
	Check                func(a *A, fs *flag.FlagSet, pos []string) error
	Run                  func(a *A, stdout, stderr io.Writer) int
}

// Parse reads a command line: the command's flags, the suite's, and its
// positional arguments, checked.
func (c SuiteCommand[A]) Parse(args []string) (*A, error) {
	a := new(A)
	fs := cli.NewFlagSet(c.Name)
	suite := c.Flags(fs, a)
	*suite = slices.Clone(c.Defaults)
	defineSuiteFlags(fs, suite)
	pos, err := flagargs.Parse(fs, args)
	if err == nil {
		err = c.Check(a, fs, pos)
	} else if !errors.Is(err, flag.ErrHelp) {
		err = fmt.Errorf("%v (%s)", err, c.Where)
	}
	return a, err
}

func (c SuiteCommand[A]) help(w io.Writer) {
	fmt.Fprint(w, c.Usage)
	own := cli.NewFlagSet(c.Name)
	c.Flags(own, new(A))
	own.SetOutput(w)
	own.PrintDefaults()
}

// Command is the command the lab's or the product's kvb lists.
func (c SuiteCommand[A]) Command() cli.Command {
	return cli.Command{Name: c.Name, Summary: c.Summary, Help: c.help, Run: func(args []string, stdout, stderr io.Writer) int {
		a, err := c.Parse(args)
		switch {
		case errors.Is(err, flag.ErrHelp):
			c.help(stdout)
			return 0
		case err != nil:
			fmt.Fprintf(stderr, "kvb %s: %v\n", c.Name, err)
			return 2
		}
		return c.Run(a, stdout, stderr)
	}}
}

// IsSet reports whether the command line set the flag name.
func IsSet(fs *flag.FlagSet, name string) (found bool) {
	fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}

// DefaultTags are the Makefile's: RocksDB when its headers are there,
// unless $TAGS says otherwise.
func DefaultTags() string {
	if t, ok := os.LookupEnv("TAGS"); ok {
		return t
	}
	if HaveRocksDBHeader() {
		return "rocksdb"
	}
	return ""
}

// rocksdbHeader is what the Makefile tests for before it builds RocksDB in.
const rocksdbHeader = "/usr/include/rocksdb/c.h"

// HaveRocksDBHeader reports whether RocksDB's C header is installed.
func HaveRocksDBHeader() bool {
	_, err := os.Stat(rocksdbHeader)
	return err == nil
}

// WithoutRocksDB says why tags leave RocksDB out ("" when they do not).
func WithoutRocksDB(tags string) string {
	switch {
	case HasTag(tags, "rocksdb"):
		return ""
	case HaveRocksDBHeader():
		return "-tags leaves it out"
	}
	return rocksdbHeader + " is missing (sudo apt-get install librocksdb-dev)"
}

// HasTag reports whether tags (a -tags list) holds tag.
func HasTag(tags, tag string) bool {
	return slices.Contains(strings.FieldsFunc(tags, func(r rune) bool { return r == ',' || r == ' ' }), tag)
}

// Output runs name with args in dir and returns its standard output, and
// its standard error, where the go command says what it resolved on its
// own; a failure, the program's standard error after its name and
// subcommand.
func Output(ctx context.Context, dir string, env []string, name string, args ...string) (stdout, stderr string, err error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		return "", e.String(), fmt.Errorf("%s %s: %s", name, args[0], cmp.Or(strings.TrimSpace(e.String()), err.Error()))
	}
	return strings.TrimSpace(o.String()), e.String(), nil
}

// Git runs git with args in dir: its standard output, trimmed.
func Git(ctx context.Context, dir string, args ...string) (string, error) {
	out, _, err := Output(ctx, dir, nil, "git", args...)
	return out, err
}

// ShortCommit is a commit's first 7 hex digits.
func ShortCommit(c string) string { return c[:min(7, len(c))] }

// CommitOf resolves ref to a commit of the repository at dir; "" when it
// names none.
func CommitOf(ctx context.Context, dir, ref string) string {
	sha, _ := Git(ctx, dir, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	return sha
}

// ModuleTitles are the titles of the engines built on module, as a
// pattern's alternatives (Badger|Pebble); none is an error.
func ModuleTitles(module, verb string) (string, error) {
	titles, modules := engine.ModuleEngines(module)
	if len(titles) == 0 {
		return "", fmt.Errorf("-module %s: no engine of this suite is built on it (the engines' modules: %s); give -bench to %s other benchmarks", module, strings.Join(modules, ", "), verb)
	}
	return strings.Join(titles, "|"), nil
}
