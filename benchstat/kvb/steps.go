package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/kvbench/kvbench/benchstat/internal/progress"
)

// task is one step of a run: a command, or work done in this process
// (do), which -n shows as show says.
type task struct {
	args   []string // the command: a program and its arguments
	env    []string // added to the environment
	out    string   // the results file its standard output is copied to
	append bool     // add to out instead of replacing it
	live   bool     // a run of the test binary: the live progress line on a terminal
	note   string   // a line said on standard error, nothing run
	name   string   // its name in timeTable when its commands say too much

	do   func(ctx context.Context, r *runner) error
	show []string
}

// runner runs steps in order, each command printed first; dry prints
// them and runs nothing (kvb bench -n). A kvb test job's runner (job)
// gives its commands no standard input and names a failed one by its
// whole command line.
type runner struct {
	stdout, stderr io.Writer
	dry, job       bool
	took           []stepTime // each step's wall time, in order
}

// stepTime is one step's wall time and its name as timeTable shows it.
type stepTime struct {
	name string
	d    time.Duration
}

// run runs every step; the first that fails stops the run with its error.
func (r *runner) run(ctx context.Context, steps []task) error {
	for _, s := range steps {
		start := time.Now()
		err := r.one(ctx, s)
		if s.note == "" {
			r.took = append(r.took, stepTime{s.label(), time.Since(start)})
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// timeTable is where a run's time went: each step's seconds, in order.
func (r *runner) timeTable(title string) string {
	var all time.Duration
	var b strings.Builder
	for _, t := range r.took {
		all += t.d
		fmt.Fprintf(&b, "%7.1f s  %s\n", t.d.Seconds(), t.name)
	}
	return fmt.Sprintf("== %s: where the time went (%.1f s in all) ==\n", title, all.Seconds()) + b.String()
}

// label names a step in timeTable: its name, a test binary's -test.bench
// and the flags after it, else the command's first words.
func (s task) label() string {
	if s.name != "" {
		return s.name
	}
	if s.do != nil {
		return strings.Join(s.show, "; ")
	}
	if i := slices.Index(s.args, "-test.bench"); i >= 0 && i+1 < len(s.args) {
		return shellJoin(s.args[i+1:])
	}
	return shellJoin(s.args[:min(len(s.args), 3)])
}

func (r *runner) one(ctx context.Context, s task) error {
	switch {
	case r.dry && s.note != "":
		fmt.Fprintf(r.stdout, "echo %s >&2\n", shellQuote(s.note))
	case r.dry && s.do != nil:
		for _, l := range s.show {
			fmt.Fprintln(r.stdout, l)
		}
	case r.dry:
		fmt.Fprintln(r.stdout, s.commandLine())
	case s.note != "":
		fmt.Fprintln(r.stderr, s.note)
	case s.do != nil:
		return s.do(ctx, r)
	default:
		return r.command(ctx, s)
	}
	return nil
}

// command runs s's command, printed first.
func (r *runner) command(ctx context.Context, s task) error {
	line := s.commandLine()
	fmt.Fprintln(r.stderr, line)
	out := io.Writer(r.stdout)
	if s.out != "" {
		f, err := openResults(s.out, s.append)
		if err != nil {
			return err
		}
		defer f.Close()
		out = io.MultiWriter(f, r.stdout)
	}
	var err error
	if s.live {
		err = progress.Run(ctx, s.args, out, r.stderr)
	} else {
		cmd := exec.CommandContext(ctx, s.args[0], s.args[1:]...)
		cmd.Env = append(os.Environ(), s.env...)
		cmd.Stdout, cmd.Stderr = out, r.stderr
		if !r.job {
			cmd.Stdin = os.Stdin
		}
		err = cmd.Run()
	}
	if err != nil {
		name := s.args[0]
		if r.job {
			name = line
		}
		return &stepError{name: name, err: err, code: exitCode(err)}
	}
	return nil
}

// commandLine is the step as a shell would run it, as -n and the run
// print it.
func (s task) commandLine() string {
	var b strings.Builder
	for _, e := range s.env {
		b.WriteString(shellQuote(e) + " ")
	}
	b.WriteString(shellJoin(s.args))
	if s.out != "" {
		b.WriteString(map[bool]string{false: " | tee ", true: " | tee -a "}[s.append] + shellQuote(s.out))
	}
	return b.String()
}

// openResults opens a results file for writing, replacing it or adding
// to it.
func openResults(name string, add bool) (*os.File, error) {
	if add {
		return os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	}
	return os.Create(name)
}

// goTool is the go command the steps run: $GO (make's), else go.
func goTool() string { return cmp.Or(os.Getenv("GO"), "go") }

// stepError is a command that failed: the run exits with its status.
type stepError struct {
	name string
	err  error
	code int
}

func (e *stepError) Error() string { return e.name + ": " + e.err.Error() }
func (e *stepError) Unwrap() error { return e.err }

// statusOf is the exit status of a failed run: a command's own, else 1.
func statusOf(err error) int {
	if se, ok := errors.AsType[*stepError](err); ok && se.code > 0 {
		return se.code
	}
	return 1
}

// exitCode is a finished command's status as a shell gives it: 128+N
// for a process signal N killed, 1 when it did not run.
func exitCode(err error) int {
	ee, ok := errors.AsType[*exec.ExitError](err)
	switch {
	case err == nil:
		return 0
	case !ok:
		return 1
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ee.ExitCode()
}

var plainWord = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// shellQuote quotes s for a POSIX shell where it needs it.
func shellQuote(s string) string {
	if plainWord.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

// inProcess runs the kvb command name with args in this process, its
// standard output into out when out is not "".
func inProcess(name string, args []string, out string) task {
	show := shellJoin(append([]string{"kvb", name}, args...))
	if out != "" {
		show += " > " + shellQuote(out)
	}
	return task{
		show: []string{show},
		do: func(ctx context.Context, r *runner) error {
			fmt.Fprintln(r.stderr, show)
			stdout := r.stdout
			if out != "" {
				f, err := openResults(out, false)
				if err != nil {
					return err
				}
				defer f.Close()
				stdout = f
			}
			if code := commands[name].Run(args, stdout, r.stderr); code != 0 {
				return &stepError{name: "kvb " + name, err: fmt.Errorf("exit status %d", code), code: code}
			}
			return nil
		},
	}
}
