package flagargs

import (
	"flag"
	"io"
	"slices"
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		args, pos []string
		mode      string
	}{
		{[]string{"-mode", "sim", "a", "b"}, []string{"a", "b"}, "sim"},
		{[]string{"a", "-mode", "sim", "b"}, []string{"a", "b"}, "sim"},
		{[]string{"a", "b", "-mode", "sim"}, []string{"a", "b"}, "sim"},
		{[]string{"a", "--", "-mode", "sim"}, []string{"a", "-mode", "sim"}, ""},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		mode := fs.String("mode", "", "")
		pos, err := Parse(fs, c.args)
		if err != nil || !slices.Equal(pos, c.pos) || *mode != c.mode {
			t.Errorf("Parse(%q) = %q, -mode %q, %v; want %q, %q", c.args, pos, *mode, err, c.pos, c.mode)
		}
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if _, err := Parse(fs, []string{"a", "-nope"}); err == nil {
		t.Error("an unknown flag after a positional argument was accepted")
	}
}
