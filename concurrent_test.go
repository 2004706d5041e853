package kvbench

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// twoRunArgs run random reads on Pebble, which locks its directory even
// to read it, once on a tiny fixture.
func twoRunArgs(dir string, extra ...string) []string {
	return append([]string{"-test.run=^$", "-test.bench=BenchmarkReadRandomPebble", "-test.benchtime=1x",
		"-keys_mil", "0.002", "-valsz", "64", "-threads", "1", "-hit_rate", "1", "-cache", "warm", "-dir", dir}, extra...)
}

// checkRun fails t unless a run's output shows it measured and met
// neither failure two runs at once used to cause.
func checkRun(t *testing.T, what string, out []byte, err error) {
	t.Helper()
	s := string(out)
	if err != nil || !strings.Contains(s, "BenchmarkReadRandomPebble/") {
		t.Errorf("%s: %v\n%s", what, err, s)
	}
	for _, bad := range []string{"not created by kvbench", "resource temporarily unavailable", "--- FAIL"} {
		if strings.Contains(s, bad) {
			t.Errorf("%s says %q:\n%s", what, bad, s)
		}
	}
}

// TestTwoRunsAtOnce starts two runs together on one fixture, on a fresh
// -dir (both race to create <dir>/kvbench and to build the fixture) and
// then on the built one (both read it), a few times: both finish with
// results. Then a run started while another holds the fixture waits for
// it, naming the process that holds it.
func TestTwoRunsAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary")
	}
	for try := range 4 {
		dir := t.TempDir()
		for _, state := range []string{"fresh", "built"} {
			var cmds [2]*exec.Cmd
			var outs [2]strings.Builder
			for i := range cmds {
				cmds[i] = exec.Command(os.Args[0], twoRunArgs(dir)...)
				cmds[i].Stdout, cmds[i].Stderr = &outs[i], &outs[i]
			}
			for _, c := range cmds {
				if err := c.Start(); err != nil {
					t.Fatal(err)
				}
			}
			for i, c := range cmds {
				err := c.Wait()
				checkRun(t, fmt.Sprintf("try %d, %s -dir, run %d", try, state, i), []byte(outs[i].String()), err)
			}
		}
	}

	dir := t.TempDir()
	if out, err := exec.Command(os.Args[0], twoRunArgs(dir)...).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// a second of reads after its fixture's line: the time this test has
	// to stop it there, which is to read one line
	first := exec.Command(os.Args[0], twoRunArgs(dir, "-test.benchtime=1s")...)
	var firstOut, firstErr strings.Builder
	first.Stdout = &firstOut
	stderr, err := first.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer first.Process.Kill()
	// Once the first run has printed its fixture's line it holds the
	// fixture until it exits. It is stopped there, at once, and goes on
	// only when the second run has said that it waits, or has ended: the
	// second run's start, however slow on a loaded machine, cannot come
	// after the first run let the fixture go. (A second run that waits
	// without saying so would wait for ever: after a minute with neither,
	// the first goes on, and the check below fails.)
	held := make(chan bool, 1)
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			firstErr.WriteString(sc.Text() + "\n")
			if strings.HasPrefix(sc.Text(), "[kvbench] fixture pebble-") {
				first.Process.Signal(syscall.SIGSTOP)
				held <- true
			}
		}
		held <- false
	}()
	if !<-held {
		<-read
		t.Fatalf("the first run printed no fixture line:\n%s", firstErr.String())
	}
	second := exec.Command(os.Args[0], twoRunArgs(dir)...)
	pipe, err := second.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	second.Stderr = second.Stdout
	if err := second.Start(); err != nil {
		first.Process.Signal(syscall.SIGCONT)
		t.Fatal(err)
	}
	var out strings.Builder
	waits, ended := make(chan struct{}, 1), make(chan struct{})
	go func() {
		defer close(ended)
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			out.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "waiting for fixture pebble-") {
				select {
				case waits <- struct{}{}:
				default:
				}
			}
		}
	}()
	select {
	case <-waits:
	case <-ended:
	case <-time.After(time.Minute):
	}
	first.Process.Signal(syscall.SIGCONT)
	<-ended
	err = second.Wait()
	checkRun(t, "the second run", []byte(out.String()), err)
	want, holder := "waiting for fixture pebble-", fmt.Sprintf("process %d (", first.Process.Pid)
	if !strings.Contains(out.String(), want) || !strings.Contains(out.String(), holder) {
		t.Errorf("the second run did not say it waits for %s held by %s:\n%s", want, holder, out.String())
	}
	<-read
	err = first.Wait()
	checkRun(t, "the first run", []byte(firstErr.String()+firstOut.String()), err)
}
