package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestCommands: help lists every command and shows each one's usage;
// an unknown command is refused.
func TestCommands(t *testing.T) {
	var out, errb bytes.Buffer
	if code := program.Run([]string{"help"}, &out, &errb); code != 0 {
		t.Fatalf("help: exit %d, %q", code, errb.String())
	}
	for _, name := range []string{"audit", "history", "memfloor", "power", "record", "screenshot", "spectrum", "versions"} {
		if !strings.Contains(out.String(), "\n  "+name+" ") {
			t.Errorf("help does not list %s:\n%s", name, out.String())
		}
		var h bytes.Buffer
		if code := program.Run([]string{"help", name}, &h, &errb); code != 0 || !strings.HasPrefix(h.String(), "usage: kvb "+name) {
			t.Errorf("help %s: exit %d, %q", name, code, h.String())
		}
	}
	errb.Reset()
	if code := program.Run([]string{"nosuch"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), `unknown command "nosuch"`) {
		t.Errorf("unknown command: exit %d, %q", code, errb.String())
	}
}
