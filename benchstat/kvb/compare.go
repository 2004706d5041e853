package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/kvbench/kvbench/benchstat/internal/cli"
)

func init() {
	register(cli.Command{
		Name:    "compare",
		Summary: "gate HEAD against BASE: two builds, paired rounds, the regression gate",
		Help:    printCompareHelp,
		Run:     runCompare,
	})
}

// comparison is one compare run's state.
type comparison struct {
	builder     // the sides' builds, its messages
	args        *compareArgs
	stdout      io.Writer
	base, head  *side
	started     string // when the comparison started (gate.json's date)
	suiteCommit string // -module: the commit this tree is at
}

func (c *comparison) sides() []*side { return []*side{c.base, c.head} }

// runCompare is the compare command: exit 0 pass, 1 the gate failed, 2
// bad usage or a step that failed (with that step's own error).
func runCompare(args []string, stdout, stderr io.Writer) int {
	a, status, ok := parseOrHelp("compare", parseCompare, printCompareHelp, args, stdout, stderr)
	if !ok {
		return status
	}
	c := &comparison{
		builder: builder{prog: "kvb compare", stderr: stderr, module: a.module, tags: a.tags},
		args:    a, stdout: stdout, started: time.Now().UTC().Format(time.RFC3339),
	}
	var failed bool
	status = c.untilInterrupted(func(ctx context.Context) (err error) {
		failed, err = c.run(ctx)
		return err
	})
	if status == 0 && failed {
		return 1
	}
	return status
}

// run is every step in order; the first that fails stops the run with
// its own error.
func (c *comparison) run(ctx context.Context) (failed bool, err error) {
	if err := c.check(ctx); err != nil {
		return false, err
	}
	if err := c.buildSides(ctx); err != nil {
		return false, err
	}
	if err := c.warmUp(ctx); err != nil {
		return false, err
	}
	if err := os.MkdirAll(c.args.out, 0o755); err != nil {
		return false, err
	}
	for _, m := range c.args.modes() {
		if err := c.rounds(ctx, m, c.args.rounds(m), c.prefix(m)); err != nil {
			return false, err
		}
	}
	if err := c.benchstatTables(ctx); err != nil {
		return false, err
	}
	verdicts, err := c.gateReport()
	if err != nil {
		return false, err
	}
	for _, v := range verdicts {
		failed = failed || v.Failed
	}
	c.logf("results, benchstat.txt, gate.md and gate.json in %s", c.args.out)
	return failed, nil
}

// check does everything that needs no build: the repository, the
// benchmarks, the module, valgrind, and what BASE and HEAD name, so a bad
// ref or version stops the run before minutes of building.
func (c *comparison) check(ctx context.Context) error {
	a := c.args
	err := c.locate(ctx, &a.out)
	if err != nil {
		return err
	}
	if a.bench == "" {
		if a.bench, err = defaultBenchFor(a.module); err != nil {
			return err
		}
	}
	if a.module != "" {
		if _, err := output(ctx, c.repo, goEnv, "go", "list", "-m", a.module); err != nil {
			return fmt.Errorf("-module %s: not a module this suite builds on: %w", a.module, err)
		}
		c.suiteCommit = commitOf(ctx, c.repo, "HEAD")
		if c.dirty(ctx) {
			c.logf("both sides build this tree's suite, uncommitted changes included")
		}
	}
	if a.mode != "time" {
		if _, err := exec.LookPath("valgrind"); err != nil {
			return fmt.Errorf("-mode %s needs valgrind (make valgrind-deps installs it)", a.mode)
		}
	}
	if why := withoutRocksDB(a.tags); why != "" {
		c.logf("comparing without RocksDB: %s; its benchmarks skip on both sides", why)
	}
	if c.base, err = c.resolveSide(ctx, "base", a.base); err != nil {
		return err
	}
	if c.head, err = c.resolveSide(ctx, "head", a.head); err != nil {
		return err
	}
	if head := commitOf(ctx, c.repo, "HEAD"); a.module == "" && (c.base.commit == head || c.head.commit == head) && c.dirty(ctx) {
		c.logf("only committed code is compared: this tree's uncommitted changes are not")
	}
	return nil
}

// buildSides builds both test binaries (one for an A/A comparison).
func (c *comparison) buildSides(ctx context.Context) error {
	if err := c.scratch(); err != nil {
		return err
	}
	if err := c.build(ctx, c.base); err != nil {
		return err
	}
	if c.head.same(c.base) {
		c.logf("base and head are one build (%s): an A/A comparison, one binary on both sides", c.base.name(c.args.module))
		c.head.binary = c.base.binary
	} else if err := c.build(ctx, c.head); err != nil {
		return err
	}
	return nil
}
