package cli

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

func help(w io.Writer) { io.WriteString(w, "usage: kvb x [-n N] FILE\n") }

// TestParse: flags around positional arguments, -h's help on stdout with
// exit 0, and a bad flag's error and help on stderr with exit 2.
func TestParse(t *testing.T) {
	for _, c := range []struct {
		args           []string
		leading        bool
		pos            string
		status         int
		ok             bool
		stdout, stderr string
	}{
		{args: []string{"a", "-n", "3", "b"}, pos: "a b", ok: true},
		{args: []string{"-n", "3", "a", "-n", "4"}, leading: true, pos: "a -n 4", ok: true},
		{args: []string{"-h"}, stdout: "usage: kvb x"},
		{args: []string{"a", "-bogus"}, status: 2, stderr: "kvb x: flag provided but not defined: -bogus\n\nusage: kvb x"},
	} {
		fs := NewFlagSet("x")
		fs.Int("n", 1, "a number")
		var stdout, stderr bytes.Buffer
		parse := Parse
		if c.leading {
			parse = ParseLeading
		}
		pos, status, ok := parse(fs, c.args, help, &stdout, &stderr)
		if strings.Join(pos, " ") != c.pos || status != c.status || ok != c.ok ||
			!strings.HasPrefix(stdout.String(), c.stdout) || !strings.HasPrefix(stderr.String(), c.stderr) {
			t.Errorf("%q: %q, %d, %v; stdout %q, stderr %q", c.args, pos, status, ok, stdout.String(), stderr.String())
		}
		if c.stdout == "" && stdout.Len() > 0 || c.stderr == "" && stderr.Len() > 0 {
			t.Errorf("%q wrote stdout %q, stderr %q", c.args, stdout.String(), stderr.String())
		}
	}
}

// TestPrintHelp: the usage, then every flag with its default.
func TestPrintHelp(t *testing.T) {
	fs := NewFlagSet("x")
	fs.Int("n", 7, "a number")
	var b bytes.Buffer
	PrintHelp(&b, "usage: kvb x\n\n", fs)
	if s := b.String(); !strings.HasPrefix(s, "usage: kvb x\n\n") || !strings.Contains(s, "-n int") || !strings.Contains(s, "(default 7)") {
		t.Errorf("help:\n%s", s)
	}
}
