package memfloor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/kvbench/kvbench/benchstat/internal/results"
	"github.com/kvbench/kvbench/internal/memlimit"
)

// suite runs the test binary, one process per run, with the flags every
// run shares.
type suite struct {
	bin   string
	dir   string   // -dir, passed through when set
	extra []string // the user's flags after --
}

// childRun is one finished child: how it ended, what it printed.
type childRun struct {
	exit
	args    []string
	wall    time.Duration
	results []results.Result
	units   benchfmt.UnitMetadataMap
	stdout  []byte
	notes   []string // stderr lines that explain a kill inside the budget (killNote)
}

// run starts the binary with args and the shape's flags and waits for it,
// killing it at timeout. An error means it could not be run at all.
func (s suite) run(timeout time.Duration, sh shape, args ...string) (*childRun, error) {
	args = append(args, "-keys_mil", sh.keysMil, "-valsz", fmt.Sprint(sh.valsz))
	if s.dir != "" {
		args = append(args, "-dir", s.dir)
	}
	args = append(args, s.extra...)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	c := &childRun{args: args, wall: time.Since(start), stdout: stdout.Bytes()}
	c.stderr = stderr.String()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		c.code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			c.signal = ws.Signal()
		}
		c.timedOut = ctx.Err() == context.DeadlineExceeded
	case err != nil:
		return nil, fmt.Errorf("%s: %v", s.bin, err)
	}
	for line := range strings.Lines(c.stderr) {
		if killNote(line) {
			c.notes = append(c.notes, strings.TrimSpace(line))
		}
	}
	f, err := results.Read(bytes.NewReader(c.stdout), "child")
	if err != nil {
		return nil, fmt.Errorf("%s: its output: %v", s.bin, err)
	}
	c.results, c.units = f.Results, f.Units
	return c, nil
}

// killNote reports whether a stderr line explains how a run ended inside
// its budget: the suite's report of the kill ("[kvbench] … inside its
// -mem_limit … budget"), or a runner's "kvbench:" line.
func killNote(line string) bool {
	return strings.HasPrefix(line, "kvbench:") ||
		strings.HasPrefix(line, "[kvbench] ") && strings.Contains(line, "inside its "+memlimit.Flag)
}

// result is the child's first result whose name starts with prefix.
func (c *childRun) result(prefix string) *results.Result {
	for i := range c.results {
		if r := &c.results[i]; strings.HasPrefix(r.Name, prefix) {
			return r
		}
	}
	return nil
}

// value is unit's value in the child's first result named prefix…, 0
// without one.
func (c *childRun) value(prefix, unit string) float64 {
	r := c.result(prefix)
	if r == nil {
		return 0
	}
	v, _ := r.Value(unit)
	return v
}

// line is r's line as the child printed it.
func (c *childRun) line(r *results.Result) string {
	n := r.Line
	lines := strings.Split(string(c.stdout), "\n")
	if n < 1 || n > len(lines) {
		return ""
	}
	return strings.TrimRight(lines[n-1], "\r")
}

// describe is the child's command line and output, for a run that
// failed; its configuration and unit lines are left out.
func (c *childRun) describe(bin string) string {
	how := fmt.Sprintf("exit %d", c.code)
	if c.signal != 0 {
		how = fmt.Sprintf("ended by %v", c.signal)
	}
	if c.timedOut {
		how = fmt.Sprintf("killed at its deadline after %s", c.wall.Round(time.Millisecond))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n%s\n", bin, strings.Join(c.args, " "), how)
	for line := range strings.Lines(string(c.stdout)) {
		if !configLine.MatchString(line) && !strings.HasPrefix(line, "Unit ") {
			b.WriteString(line)
		}
	}
	b.WriteString(c.stderr)
	return b.String()
}

// configLine is a benchmark-format configuration line.
var configLine = regexp.MustCompile(`^[a-z][^\s:]*:(\s|$)`)

// firstError is the child's first "[kvbench] error:" line, or its last
// stderr line.
func (c *childRun) firstError() string {
	last := ""
	for line := range strings.Lines(c.stderr) {
		if strings.HasPrefix(line, "[kvbench] error:") {
			return strings.TrimSpace(line)
		}
		if t := strings.TrimSpace(line); t != "" {
			last = t
		}
	}
	return last
}
