package cli

import (
	"bytes"
	"flag"
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
		var pos []string
		ok := false
		cmd := New(Spec[*int]{
			Name:    "x",
			Help:    help,
			Flags:   func(fs *flag.FlagSet) *int { return fs.Int("n", 1, "a number") },
			Leading: c.leading,
			Run: func(_ Call, _ *int, p []string) int {
				pos, ok = p, true
				return 0
			},
		})
		var stdout, stderr bytes.Buffer
		status := cmd.Run(c.args, &stdout, &stderr)
		if strings.Join(pos, " ") != c.pos || status != c.status || ok != c.ok ||
			!strings.HasPrefix(stdout.String(), c.stdout) || !strings.HasPrefix(stderr.String(), c.stderr) {
			t.Errorf("%q: %q, %d, %v; stdout %q, stderr %q", c.args, pos, status, ok, stdout.String(), stderr.String())
		}
		if c.stdout == "" && stdout.Len() > 0 || c.stderr == "" && stderr.Len() > 0 {
			t.Errorf("%q wrote stdout %q, stderr %q", c.args, stdout.String(), stderr.String())
		}
	}
}

// TestNew: the Command of a Spec prints its usage and every flag with
// its default as help, hands run the flags and the positional arguments
// (with Leading, all from the first positional on), and its usage errors
// name it and end with its help.
func TestNew(t *testing.T) {
	for _, leading := range []bool{false, true} {
		var gotN int
		var gotPos []string
		c := New(Spec[*int]{
			Name:    "x",
			Summary: "a command",
			Usage:   "usage: kvb x [-n N] FILE\n\n",
			Flags:   func(fs *flag.FlagSet) *int { return fs.Int("n", 1, "a number") },
			Leading: leading,
			Run: func(c Call, n *int, pos []string) int {
				gotN, gotPos = *n, pos
				if len(pos) == 0 {
					return c.Usage("no FILE")
				}
				return 0
			},
		})
		var help bytes.Buffer
		c.Help(&help)
		if s := help.String(); c.Name != "x" || c.Summary != "a command" || !strings.HasPrefix(s, "usage: kvb x [-n N] FILE\n\n") || !strings.Contains(s, "-n int") || !strings.Contains(s, "(default 1)") {
			t.Errorf("help:\n%s", s)
		}
		wantN, wantPos := 4, "a"
		if leading {
			wantN, wantPos = 3, "a -n 4"
		}
		if code := c.Run([]string{"-n", "3", "a", "-n", "4"}, io.Discard, io.Discard); code != 0 || gotN != wantN || strings.Join(gotPos, " ") != wantPos {
			t.Errorf("leading %v: exit %d, -n %d, positionals %q", leading, code, gotN, gotPos)
		}
		var stderr bytes.Buffer
		if code := c.Run(nil, io.Discard, &stderr); code != 2 || !strings.HasPrefix(stderr.String(), "kvb x: no FILE\n\nusage: kvb x") {
			t.Errorf("usage error: exit %d, %q", code, stderr.String())
		}
	}
}
