package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/kvbench/kvbench/benchstat/internal/gate"
)

// gateFiles runs the gate on one mode's results and writes its report to
// w, naming the sides baseName and headName. Too few rounds for the test
// to fail anything is an error, not a pass.
func gateFiles(o gate.Options, mode, baseFile, headFile, baseName, headName string, w io.Writer) (gate.ModeVerdict, error) {
	v := gate.ModeVerdict{Mode: mode}
	base, err := gate.ReadFiles(baseFile)
	if err != nil {
		return v, fmt.Errorf("gate: base: %w", err)
	}
	head, err := gate.ReadFiles(headFile)
	if err != nil {
		return v, fmt.Errorf("gate: head: %w", err)
	}
	for _, f := range []struct {
		set  *gate.Set
		file string
	}{{base, baseFile}, {head, headFile}} {
		if len(f.set.Values) == 0 {
			return v, fmt.Errorf("gate: no benchmark results in %s", f.file)
		}
	}
	rows := gate.Compare(base, head, o)
	if need, short := gate.TooFewRounds(rows, o); len(short) > 0 {
		holm := ""
		if o.Holm {
			holm = fmt.Sprintf(" after Holm over %d series", gate.Corrected(rows))
		}
		return v, fmt.Errorf("gate: %s has %d paired rounds; the signed-rank test needs at least %d to reject anything at alpha %g%s, so this gate could not fail: run more rounds (-count %d)",
			short[0].Key, short[0].N, need, o.Alpha, holm, need)
	}
	gate.Markdown(w, rows, o, baseName, headName)
	v.Failed, v.Failures = gate.Failed(rows), gate.Failures(rows)
	return v, nil
}

// gateReport gates every mode run, writes DIR/gate.md (the report, a
// section per mode with -mode both) and DIR/gate.json (the verdicts), and
// prints the report.
func (c *comparison) gateReport() ([]gate.ModeVerdict, error) {
	baseName, headName := c.base.name(c.args.module), c.head.name(c.args.module)
	var md bytes.Buffer
	var all []gate.ModeVerdict
	for _, m := range c.args.modes() {
		p := c.prefix(m)
		if c.args.mode == "both" {
			fmt.Fprintf(&md, "#### %s mode\n\n", m)
		}
		v, err := gateFiles(c.args.gate, m, filepath.Join(c.args.out, p+"base.txt"), filepath.Join(c.args.out, p+"head.txt"), baseName, headName, &md)
		if err != nil {
			return nil, err
		}
		all = append(all, v)
	}
	if err := os.WriteFile(filepath.Join(c.args.out, "gate.md"), md.Bytes(), 0o644); err != nil {
		return nil, err
	}
	sides := map[string]map[string]string{}
	for _, s := range c.sides() {
		sides[s.role] = c.labels(s)
	}
	j, err := json.MarshalIndent(gate.Report{Base: baseName, Head: headName, Module: c.args.module, Modes: all, Sides: sides}, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(c.args.out, "gate.json"), append(j, '\n'), 0o644); err != nil {
		return nil, err
	}
	c.stdout.Write(md.Bytes())
	return all, nil
}

// labels say what a side is, as the history store labels its runs: ref,
// commit (the commit a ref names, else the spec itself: a module version,
// a binary), the commit's date only when there is a commit, date (when
// the comparison started), and with -module the module and the suite's
// commit.
func (c *comparison) labels(s *side) map[string]string {
	l := map[string]string{"ref": s.spec, "commit": cmp.Or(s.commit, s.spec), "date": c.started}
	if s.commit != "" {
		if d, err := git(context.Background(), c.repo, "show", "-s", "--format=%cI", s.commit); err == nil {
			l["commit-date"] = d
		}
	}
	if c.args.module != "" {
		l["module"] = c.args.module
		if c.suiteCommit != "" {
			l["kvbench-commit"] = c.suiteCommit
		}
	}
	return l
}

// benchstatTables prints benchstat's comparison of each mode's rounds, a
// table per unit, and keeps it in DIR/benchstat.txt. Its columns are
// named by the sides' specs when they differ.
func (c *comparison) benchstatTables(ctx context.Context) error {
	var all bytes.Buffer
	w := io.MultiWriter(c.stdout, &all)
	for _, m := range c.args.modes() {
		how := fmt.Sprintf("-bench '%s' %s", c.args.bench, strings.Join(c.args.suite, " "))
		if m == "sim" {
			how += ", counted under callgrind at -benchtime " + c.args.simBench
		} else {
			how += " -benchtime " + c.args.timeBench
		}
		fmt.Fprintf(w, "kvb compare: base %s, head %s, %d %s rounds alternating, %s\n",
			c.base.name(c.args.module), c.head.name(c.args.module), c.args.rounds(m), m, how)
		bl, hl := "base", "head"
		if c.base.spec != c.head.spec && !strings.ContainsAny(c.base.spec+c.head.spec, "=") {
			bl, hl = c.base.spec, c.head.spec
		}
		p := c.prefix(m)
		cols := []string{bl + "=" + filepath.Join(c.args.out, p+"base.txt"), hl + "=" + filepath.Join(c.args.out, p+"head.txt")}
		if err := benchstatTable(ctx, c.repo, c.args.gate.Alpha, cols, w); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	return os.WriteFile(filepath.Join(c.args.out, "benchstat.txt"), all.Bytes(), 0o644)
}

// benchstatTable writes benchstat's comparison of cols (NAME=FILE, the
// first the baseline) to w, a table per unit: the settings lines differ
// between engines and would split every table, and the free space on
// -dir changes every run. x/perf offers the current benchstat's tables
// only as its command (its library is the deprecated older one), so it
// runs as go tool benchstat, the version go.mod pins.
func benchstatTable(ctx context.Context, repo string, alpha float64, cols []string, w io.Writer) error {
	args := append([]string{"tool", "benchstat", "-table=", "-ignore", "dir-fs,timestamp-ns", "-alpha", fmt.Sprint(alpha)}, cols...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), goEnv...)
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, &errb
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("benchstat: %s", firstNonEmpty(strings.TrimSpace(errb.String()), err.Error()))
	}
	return nil
}

// prefix is the results files' prefix of mode: with -mode both the sim
// rounds go to sim-base.txt and sim-head.txt.
func (c *comparison) prefix(mode string) string {
	if c.args.mode == "both" && mode == "sim" {
		return "sim-"
	}
	return ""
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
