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
	"time"
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

// jobTime is how long a job ran, start to end.
type jobTime struct {
	name string
	d    time.Duration
}

// runPool runs jobs, at most workers at a time, each taken in the order
// given as a worker frees (so the longest, listed first, start first and
// no core idles while a short job waits behind a step's long one); a
// failed job does not stop the others, as make -k does not. Each job's
// output is printed whole when it ends, after a line naming it.
func runPool(ctx context.Context, order []testJob, workers int, stdout io.Writer) ([]jobTime, error) {
	var (
		mu    sync.Mutex
		errs  = make([]error, len(order))
		times = make([]jobTime, len(order))
		next  = make(chan int)
		wg    sync.WaitGroup
	)
	for range max(1, workers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				var all bytes.Buffer
				w := &lockedWriter{w: &all}
				start := time.Now()
				errs[i] = runJob(ctx, order[i], w, w)
				times[i] = jobTime{order[i].name, time.Since(start)}
				mu.Lock()
				fmt.Fprintf(stdout, "== %s (%.1f s) ==\n", order[i].name, times[i].d.Seconds())
				stdout.Write(all.Bytes())
				mu.Unlock()
			}
		}()
	}
	for i := range order {
		next <- i
	}
	close(next)
	wg.Wait()
	return times, errors.Join(errs...)
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
