package cli

import (
	"flag"
	"io"
)

// Spec is a subcommand whose flags land in a value of type O (a struct
// of its own, or a pointer to its one flag). New makes its Command: the
// flag set, the help, the reading of the flags and the usage errors are
// the same for every subcommand, so a subcommand writes only its flags
// and what it does with them.
type Spec[O any] struct {
	Name    string
	Summary string
	Usage   string                   // the help before the flags
	Flags   func(fs *flag.FlagSet) O // declares the flags on fs and returns where they land; nil: no flags
	Leading bool                     // the flags all come first: from the first positional argument on, everything is passed through (ParseLeading)
	Run     func(c Call, o O, pos []string) int
}

// Call is one run of a subcommand: where it writes, and how it reports
// bad usage.
type Call struct {
	Stdout, Stderr io.Writer
	name           string
	help           func(io.Writer)
}

// Usage reports a usage error (Usage, with the command's help) and
// returns 2.
func (c Call) Usage(format string, args ...any) int {
	return Usage(c.Stderr, c.name, c.help, format, args...)
}

// New is the Command of s. Every help and every run declares the flags
// afresh, so a default read from the environment is read when it is used.
func New[O any](s Spec[O]) Command {
	flags := func() (*flag.FlagSet, O) {
		fs := NewFlagSet(s.Name)
		var o O
		if s.Flags != nil {
			o = s.Flags(fs)
		}
		return fs, o
	}
	help := func(w io.Writer) {
		fs, _ := flags()
		PrintHelp(w, s.Usage, fs)
	}
	parse := Parse
	if s.Leading {
		parse = ParseLeading
	}
	run := func(args []string, stdout, stderr io.Writer) int {
		fs, o := flags()
		pos, status, ok := parse(fs, args, help, stdout, stderr)
		if !ok {
			return status
		}
		return s.Run(Call{Stdout: stdout, Stderr: stderr, name: s.Name, help: help}, o, pos)
	}
	return Command{Name: s.Name, Summary: s.Summary, Help: help, Run: run}
}
