package history

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestHelperProcess is the child of the tests below, not a test: it adds
// the testdata file to $HISTORY_TEST_DB, $HISTORY_TEST_N times, labelled
// proc=$HISTORY_TEST_PROC, after $HISTORY_TEST_GO exists. With
// HISTORY_TEST_HANG set, it stops inside its first add's transaction,
// says "inserted" and waits to be killed.
func TestHelperProcess(t *testing.T) {
	db := os.Getenv("HISTORY_TEST_DB")
	if db == "" {
		t.Skip("a child process of the tests in process_test.go")
	}
	ctx := context.Background()
	s, err := Open(ctx, db)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	if os.Getenv("HISTORY_TEST_HANG") != "" {
		testHookBeforeCommit = func() {
			fmt.Println("inserted")
			time.Sleep(time.Minute)
			os.Exit(4) // never: the parent kills it first
		}
	}
	for start := os.Getenv("HISTORY_TEST_GO"); start != ""; time.Sleep(time.Millisecond) {
		if _, err := os.Stat(start); err == nil {
			break
		}
	}
	n, _ := strconv.Atoi(os.Getenv("HISTORY_TEST_N"))
	f := suiteFile(t)
	for range n {
		if _, err := s.Add(ctx, []*File{f}, []Label{{"proc", os.Getenv("HISTORY_TEST_PROC")}}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(5)
		}
	}
	s.Close()
	os.Exit(0)
}

func helper(env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	return cmd
}

// Two processes adding to one new database at once both land, every add.
func TestConcurrentAddsFromTwoProcesses(t *testing.T) {
	dir := t.TempDir()
	db, start := filepath.Join(dir, "history.db"), filepath.Join(dir, "go")
	const n = 15
	var cmds []*exec.Cmd
	for _, proc := range []string{"a", "b"} {
		cmd := helper("HISTORY_TEST_DB="+db, "HISTORY_TEST_GO="+start, "HISTORY_TEST_PROC="+proc, "HISTORY_TEST_N="+strconv.Itoa(n))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	if err := os.WriteFile(start, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(cmds))
	for i, cmd := range cmds {
		wg.Go(func() { errs[i] = cmd.Wait() })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("process %d: %v", i, err)
		}
	}
	s, err := Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, proc := range []string{"a", "b"} {
		runs, err := s.List(context.Background(), []Label{{"proc", proc}})
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != n {
			t.Errorf("process %s: %d runs in the store, want %d", proc, len(runs), n)
		}
	}
	if want := 2 * n * len(suiteFile(t).Results); count(t, s, "results") != want {
		t.Errorf("%d results, want %d", count(t, s, "results"), want)
	}
}

// A process killed inside its add, every row inserted but not committed,
// leaves nothing of it, and the runs before it intact.
func TestKilledAddLeavesNothing(t *testing.T) {
	ctx := context.Background()
	s, db := openTemp(t)
	if _, err := s.Add(ctx, []*File{suiteFile(t)}, []Label{{"proc", "before"}}); err != nil {
		t.Fatal(err)
	}
	before := [3]int{count(t, s, "runs"), count(t, s, "labels"), count(t, s, "results")}
	s.Close()

	cmd := helper("HISTORY_TEST_DB="+db, "HISTORY_TEST_HANG=1", "HISTORY_TEST_PROC=killed", "HISTORY_TEST_N=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() && !strings.Contains(sc.Text(), "inserted") {
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("child: %v, want killed", err)
	}

	s, err = Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	after := [3]int{count(t, s, "runs"), count(t, s, "labels"), count(t, s, "results")}
	if after != before {
		t.Errorf("runs, labels, results = %v after the killed add, want %v", after, before)
	}
	var ok string
	if err := s.db.QueryRow(`PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
		t.Errorf("integrity_check: %q, %v", ok, err)
	}
	// The store still takes adds.
	if _, err := s.Add(ctx, []*File{suiteFile(t)}, nil); err != nil {
		t.Error(err)
	}
}
