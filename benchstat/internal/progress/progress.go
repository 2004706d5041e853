// Package progress runs a benchmark binary, copies its standard output
// to a results file and the terminal (as tee does), and on a terminal
// keeps one live line on /dev/tty: the benchmark that runs, its round,
// the elapsed time and an estimate of what is left. Result lines are
// passed on whole, so the live line never splits one, and it never goes
// into the results file or a pipe. kvb bench runs its rows through it.
package progress

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Run runs args (a benchmark binary and its flags) with stderr as its
// standard error and copies its standard output, line by line, to out.
// The error is the command's: an *exec.ExitError carries its status.
func Run(ctx context.Context, args []string, out, stderr io.Writer) error {
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Stdin, cmd.Stderr = os.Stdin, stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	count, _ := strconv.Atoi(flagValue(args, "test.count"))
	p := &progress{start: time.Now(), count: max(count, 1), rounds: map[string]int{}, quit: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		return err
	}
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil { // else no controlling terminal: no live line
		p.tty, p.total = tty, countTargets(args)
		defer tty.Close()
		go p.redraw()
	}
	copyLines(pipe, out, p)
	err = cmd.Wait()
	close(p.quit)
	p.clear()
	return err
}

// copyLines passes r's lines on to w whole, and tells p about each and
// about a line not finished yet (a benchmark's name, before it runs).
func copyLines(r io.Reader, w io.Writer, p *progress) {
	buf := make([]byte, 64<<10)
	var pending []byte
	for {
		n, err := r.Read(buf)
		pending = append(pending, buf[:n]...)
		if i := bytes.LastIndexByte(pending, '\n'); i >= 0 {
			lines := pending[:i+1]
			p.clear()
			w.Write(lines)
			for _, l := range strings.SplitAfter(string(lines), "\n") {
				p.see(l, true)
			}
			pending = append(pending[:0], pending[i+1:]...)
		}
		if len(pending) > 0 {
			p.see(string(pending), false)
		}
		if err != nil {
			if len(pending) > 0 {
				p.clear()
				w.Write(pending)
			}
			return
		}
	}
}

// progress is the live line: nil tty means no terminal, nothing drawn.
type progress struct {
	mu      sync.Mutex
	tty     *os.File
	start   time.Time
	count   int            // rounds of each benchmark (-test.count)
	total   int            // top-level benchmarks selected, 0 if unknown
	current string         // benchmark now running
	rounds  map[string]int // results seen per benchmark name
	tops    []string       // top-level benchmarks seen, in order
	topEnd  time.Time      // when the last top-level benchmark began
	shown   bool
	quit    chan struct{}
}

// redraw draws the live line every second until quit is closed.
func (p *progress) redraw() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			p.mu.Lock()
			p.draw()
			p.mu.Unlock()
		case <-p.quit:
			return
		}
	}
}

// countTargets asks the benchmark binary how many top-level benchmarks
// its -test.bench pattern selects (-test.list).
func countTargets(args []string) int {
	pattern := flagValue(args, "test.bench")
	if pattern == "" {
		return 0
	}
	top, _, _ := strings.Cut(pattern, "/")
	out, err := exec.Command(args[0], "-test.list", top).Output()
	if err != nil {
		return 0
	}
	return strings.Count("\n"+string(out), "\nBenchmark")
}

// flagValue is the last value args give the flag name, as -name=v or
// -name v; "" if none.
func flagValue(args []string, name string) string {
	v := ""
	for i, a := range args {
		if x, ok := strings.CutPrefix(a, "-"+name+"="); ok {
			v = x
		} else if a == "-"+name && i+1 < len(args) {
			v = args[i+1]
		}
	}
	return v
}

// see tells p about a line of output, whole or not finished yet.
func (p *progress) see(line string, whole bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f, n := strings.Fields(line), ""
	if len(f) > 0 && strings.HasPrefix(f[0], "Benchmark") {
		n = f[0]
	}
	switch {
	case whole && n != "" && len(f) > 2:
		p.rounds[n]++
		p.current = ""
	case whole:
	case n == "" || n == p.current:
		return
	default:
		p.current = n
		if top, _, _ := strings.Cut(n, "/"); len(p.tops) == 0 || p.tops[len(p.tops)-1] != top {
			p.tops = append(p.tops, top)
			p.topEnd = time.Now()
		}
	}
	p.draw()
}

// draw writes the live line; the caller holds mu.
func (p *progress) draw() {
	if p.tty == nil || p.current == "" {
		return
	}
	elapsed := time.Since(p.start)
	round := min(p.rounds[p.current]+1, p.count)
	line := fmt.Sprintf("kvbench: %s round %d/%d, %s elapsed", p.current, round, p.count, elapsed.Round(time.Second))
	if done := len(p.tops) - 1; p.total > 0 && done > 0 {
		per := p.topEnd.Sub(p.start) / time.Duration(done)
		left := per*time.Duration(p.total-done) - time.Since(p.topEnd)
		line += fmt.Sprintf(", about %s left (%d of %d benchmarks)", max(left, per/2).Round(time.Second), len(p.tops), p.total)
	} else if p.total > 0 {
		line += fmt.Sprintf(" (%d of %d benchmarks)", len(p.tops), p.total)
	}
	if ws, err := unix.IoctlGetWinsize(int(p.tty.Fd()), unix.TIOCGWINSZ); err == nil && ws.Col > 10 && len(line) >= int(ws.Col) {
		line = line[:ws.Col-1]
	}
	fmt.Fprintf(p.tty, "\r\033[K%s", line)
	p.shown = true
}

// clear removes the live line before output goes to the terminal.
func (p *progress) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.tty, "\r\033[K")
		p.shown = false
	}
}
