package kvbench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// runSelf runs this test binary again with args and returns its combined
// output and exit code. Flag handling happens in TestMain, so a child
// process is the only honest way to see what a user would.
func runSelf(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^$"}, args...)...)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

// treeState lists every path under dir with its size and mtime.
func treeState(t *testing.T, dir string) map[string]string {
	t.Helper()
	st := map[string]string{}
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil {
			st[p] = fmt.Sprintf("%d %v %v", fi.Size(), fi.ModTime().UnixNano(), fi.Mode())
		}
		return nil
	})
	return st
}
