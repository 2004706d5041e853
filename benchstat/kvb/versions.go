package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/kvbench/kvbench/benchstat/internal/cli"
)

func init() {
	register(cli.Command{
		Name:    "versions",
		Summary: "the release matrix: this tree's suite against several versions of one engine module",
		Help:    printVersionsHelp,
		Run:     runVersions,
	})
}

// matrix is one versions run's state.
type matrix struct {
	builder
	args        *versionsArgs
	stdout      io.Writer
	versions    []*side // in the order given; the first is benchstat's baseline
	steps       []step
	what        string // the workload, in words
	suiteCommit string // the commit this tree is at, read once
	commitDate  string
	dirtyTree   bool // the suite built has uncommitted changes
}

// runVersions is the versions command: exit 0 done, 2 bad usage, a
// version that does not build, or a run that fails (with that step's own
// error).
func runVersions(args []string, stdout, stderr io.Writer) int {
	a, status, ok := parseOrHelp("versions", parseVersions, printVersionsHelp, args, stdout, stderr)
	if !ok {
		return status
	}
	m := &matrix{builder: builder{prog: "kvb versions", stderr: stderr, module: a.module, tags: a.tags}, args: a, stdout: stdout}
	return m.untilInterrupted(m.run)
}

// run is every step in order; the first that fails stops the run with
// its own error.
func (m *matrix) run(ctx context.Context) error {
	if err := m.check(ctx); err != nil {
		return err
	}
	if err := m.buildAll(ctx); err != nil {
		return err
	}
	if m.args.buildOnly {
		return nil
	}
	if err := m.warmUp(ctx); err != nil {
		return err
	}
	if err := os.MkdirAll(m.args.out, 0o755); err != nil {
		return err
	}
	if err := m.rounds(ctx); err != nil {
		return err
	}
	return m.table(ctx)
}

// check does everything that needs no build: the repository, the module,
// the workload, and what each version names, so a bad version stops the
// run before minutes of building.
func (m *matrix) check(ctx context.Context) error {
	a := m.args
	err := m.locate(ctx, &a.out)
	if err != nil {
		return err
	}
	if _, err := output(ctx, m.repo, goEnv, "go", "list", "-m", a.module); err != nil {
		return fmt.Errorf("-module %s: not a module this suite builds on (see go.mod): %w", a.module, err)
	}
	if m.steps, m.what, err = workload(a); err != nil {
		return err
	}
	// The suite's commit, read once: a commit made while the rounds run
	// must not relabel them.
	m.suiteCommit = commitOf(ctx, m.repo, "HEAD")
	m.commitDate, _ = git(ctx, m.repo, "show", "-s", "--format=%cI", m.suiteCommit)
	if m.dirtyTree = m.dirty(ctx); m.dirtyTree {
		m.logf("each version is built with this tree's suite, uncommitted changes included (its files say dirty: true)")
	}
	if why := withoutRocksDB(a.tags); why != "" {
		m.logf("running without RocksDB: %s; its benchmarks skip", why)
	}
	return m.resolve(ctx)
}

// resolve checks every version before anything is built: each exists
// (a directory holds the module) and no two name the same version.
func (m *matrix) resolve(ctx context.Context) error {
	seen := map[string]string{}
	for i, spec := range m.args.specs {
		s, err := m.resolveSide(ctx, fmt.Sprintf("version %d", i+1), spec)
		if err != nil {
			return err
		}
		if s.kind == versionSide && s.label != spec {
			m.logf("%s %s is %s", m.module, spec, s.label)
		}
		if first, dup := seen[s.label]; dup {
			return fmt.Errorf("%s: %s %s is listed twice (first as %s)", spec, m.module, s.label, first)
		}
		seen[s.label] = spec
		m.versions = append(m.versions, s)
	}
	return nil
}

// labels are the versions as results and fixtures name them.
func (m *matrix) labels() []string {
	var l []string
	for _, v := range m.versions {
		l = append(l, v.label)
	}
	return l
}

// file is a version's results file: DIR/<version>.txt, the label with
// any character a file name should not hold replaced.
func (m *matrix) file(v *side) string {
	name := strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("._+-", r) {
			return r
		}
		return '_'
	}, v.label)
	return filepath.Join(m.args.out, name+".txt")
}
