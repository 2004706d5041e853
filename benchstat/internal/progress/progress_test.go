package progress

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// slowReader hands out its chunks one Read at a time, the way a benchmark
// binary prints a name, runs, then prints the figures.
type slowReader struct{ chunks []string }

func (s *slowReader) Read(b []byte) (int, error) {
	if len(s.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(b, s.chunks[0])
	s.chunks = s.chunks[1:]
	return n, nil
}

var chunks = []string{
	"goos: linux\nBenchmarkReadRandomBolt/threads=1-2   \t",
	"  1000\t  2000 ns/op\n",
	"BenchmarkReadRandomBolt/threads=1-2   \t",
	"  1000\t  2100 ns/op\nPASS\n",
}

// TestResultsPassWholeAndTheLiveLineGoesOnlyToTheTerminal: the copy is
// the command's output byte for byte; the live line, which names the
// running benchmark and its round, goes to the terminal alone, and is
// cleared before every write of output.
func TestResultsPassWholeAndTheLiveLineGoesOnlyToTheTerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &progress{start: time.Now(), count: 2, total: 1, rounds: map[string]int{}, quit: make(chan struct{}), tty: w}
	var out bytes.Buffer
	copyLines(&slowReader{append([]string(nil), chunks...)}, &out, p)
	w.Close()
	tty, _ := io.ReadAll(r)
	if want := strings.Join(chunks, ""); out.String() != want {
		t.Errorf("copied %q, want %q", out.String(), want)
	}
	for _, want := range []string{"BenchmarkReadRandomBolt/threads=1-2 round 1/2", "round 2/2", "\r\033[K"} {
		if !strings.Contains(string(tty), want) {
			t.Errorf("terminal got %q, without %q", tty, want)
		}
	}
	if bytes.Contains(out.Bytes(), []byte("\033")) {
		t.Errorf("the live line leaked into the results: %q", out.String())
	}
}

// TestNoTerminalNothingExtra: without a terminal the copy is all there is.
func TestNoTerminalNothingExtra(t *testing.T) {
	p := &progress{start: time.Now(), count: 1, rounds: map[string]int{}, quit: make(chan struct{})}
	var out bytes.Buffer
	copyLines(&slowReader{append([]string(nil), chunks...)}, &out, p)
	if out.String() != strings.Join(chunks, "") {
		t.Errorf("copied %q", out.String())
	}
}

// TestRunCopiesTheOutputAndKeepsTheStatus: Run copies what the command
// prints and returns its failure with its exit status.
func TestRunCopiesTheOutputAndKeepsTheStatus(t *testing.T) {
	var out bytes.Buffer
	if err := Run(context.Background(), []string{"sh", "-c", "echo BenchmarkX 1 2 ns/op"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if out.String() != "BenchmarkX 1 2 ns/op\n" {
		t.Errorf("copied %q", out.String())
	}
	err := Run(context.Background(), []string{"sh", "-c", "exit 3"}, &out, io.Discard)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Errorf("a command that exits 3: %v", err)
	}
}
