package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestDispatch(t *testing.T) {
	var out, errb bytes.Buffer
	if code := program.Run(nil, &out, &errb); code != 2 || !strings.Contains(errb.String(), "compare") {
		t.Errorf("no command: exit %d, %q", code, errb.String())
	}
	errb.Reset()
	if code := program.Run([]string{"nosuch"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), `unknown command "nosuch"`) {
		t.Errorf("unknown command: exit %d, %q", code, errb.String())
	}
	out.Reset()
	if code := program.Run([]string{"help", "compare"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "-module") {
		t.Errorf("help compare: exit %d, %q", code, out.String())
	}
	errb.Reset()
	if code := program.Run([]string{"power", "-aa", "1"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "make lab-kvb") {
		t.Errorf("a command of the lab: exit %d, %q", code, errb.String())
	}
	errb.Reset()
	if code := program.Run([]string{"compare", "main", "-bogus"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "-bogus") {
		t.Errorf("compare with an unknown flag: exit %d, %q", code, errb.String())
	}
}

// TestPackagedCommands: help lists every subcommand package and shows
// each one's usage.
func TestPackagedCommands(t *testing.T) {
	var out, errb bytes.Buffer
	if code := program.Run([]string{"help"}, &out, &errb); code != 0 {
		t.Fatalf("help: exit %d, %q", code, errb.String())
	}
	for _, c := range packaged {
		if !strings.Contains(out.String(), "\n  "+c.Name+" ") {
			t.Errorf("help does not list %s:\n%s", c.Name, out.String())
		}
		var h bytes.Buffer
		if code := program.Run([]string{"help", c.Name}, &h, &errb); code != 0 || !strings.HasPrefix(h.String(), "usage: kvb "+c.Name) {
			t.Errorf("help %s: exit %d, %q", c.Name, code, h.String())
		}
	}
}
