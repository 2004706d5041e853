package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
)

var errNoChromium = errors.New("chromium is missing")

// runTestCmd runs one command of a job: a go command, printed first as
// make prints a recipe's line, or a check of this process.
func runTestCmd(ctx context.Context, c testCmd, stdout, stderr io.Writer) error {
	if c.do != nil {
		return c.do(ctx, stdout, stderr)
	}
	line := task{args: c.args, env: c.env}.commandLine()
	fmt.Fprintln(stdout, line)
	cmd := exec.CommandContext(ctx, c.args[0], c.args[1:]...)
	cmd.Env = append(os.Environ(), c.env...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		return &stepError{name: line, err: err, code: exitCode(err)}
	}
	return nil
}

// runJob runs a job's commands in order and stops at the first failure,
// which it reports on stderr.
func runJob(ctx context.Context, j testJob, stdout, stderr io.Writer) error {
	for _, c := range j.cmds {
		if err := runTestCmd(ctx, c, stdout, stderr); err != nil {
			fmt.Fprintf(stderr, "kvb test: %s: %v\n", j.name, err)
			return err
		}
	}
	return nil
}

// runStep runs a step's jobs side by side and waits for all of them (a
// failed job does not stop the other, as make -j2 does not); the step
// fails when one did.
func runStep(ctx context.Context, s testStep, jobs map[string]testJob, stdout, stderr io.Writer) error {
	if len(s.jobs) == 1 {
		return runJob(ctx, jobs[s.jobs[0]], stdout, stderr)
	}
	var mu sync.Mutex
	errs := make([]error, len(s.jobs))
	var wg sync.WaitGroup
	for i, name := range s.jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if s.byLine {
				o, e := &lineWriter{mu: &mu, to: stdout}, &lineWriter{mu: &mu, to: stderr}
				errs[i] = runJob(ctx, jobs[name], o, e)
				o.flush()
				e.flush()
				return
			}
			var all bytes.Buffer
			w := &lockedWriter{w: &all}
			errs[i] = runJob(ctx, jobs[name], w, w)
			mu.Lock()
			stdout.Write(all.Bytes())
			mu.Unlock()
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// lineWriter passes whole lines to a writer it shares with other jobs,
// so lines of two jobs interleave but never mix.
type lineWriter struct {
	mu      *sync.Mutex
	to      io.Writer
	pending []byte
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.pending = append(l.pending, p...)
	if i := bytes.LastIndexByte(l.pending, '\n'); i >= 0 {
		l.mu.Lock()
		l.to.Write(l.pending[:i+1])
		l.mu.Unlock()
		l.pending = append(l.pending[:0], l.pending[i+1:]...)
	}
	return len(p), nil
}

func (l *lineWriter) flush() {
	if len(l.pending) > 0 {
		l.Write([]byte("\n"))
	}
}

// lockedWriter is one job's output, written by the job's commands and
// by processes it runs side by side.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
