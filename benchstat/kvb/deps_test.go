package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// TestDepsNamesAndInstalled: an unknown name is refused before anything
// is installed; a package already there needs nothing and says nothing.
func TestDepsNamesAndInstalled(t *testing.T) {
	var errb bytes.Buffer
	if code := depsCommand.Run([]string{"rocksdb", "nosuch"}, io.Discard, &errb); code != 2 || !strings.Contains(errb.String(), `unknown dependency "nosuch"`) {
		t.Errorf("an unknown name: exit %d, %q", code, errb.String())
	}
	errb.Reset()
	there := dep{pkg: "x", installed: func() bool { return true }, missing: 1}
	if code := install(there, false, &errb); code != 0 || errb.Len() > 0 {
		t.Errorf("an installed package: exit %d, %q", code, errb.String())
	}
	for name, d := range deps {
		if want := map[string]int{"rocksdb": 0, "valgrind": 0, "chromium": 1}[name]; d.missing != want {
			t.Errorf("%s without root: exit %d, want %d (what its callers expect)", name, d.missing, want)
		}
	}
}
