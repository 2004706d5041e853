// Package cli is what a subcommand's package gives kvb (benchstat/kvb):
// its name, summary, help and entry point, and the one way its flags are
// read and its usage errors reported; Program dispatches to such commands
// (kvb, and the lab's kvb in benchstat/lab).
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/kvbench/kvbench/benchstat/internal/flagargs"
)

// Command is one subcommand: Run gets the arguments after its name and
// returns the exit status (0 done, 1 the work failed, 2 bad usage unless
// its help says otherwise); only kvb's main exits.
type Command struct {
	Name    string
	Summary string
	Help    func(w io.Writer) // the usage and flags
	Run     func(args []string, stdout, stderr io.Writer) int
}

// NewFlagSet is a subcommand's own flag set. It prints nothing itself:
// the command reports a bad flag.
func NewFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// Usage reports a usage error of the command name: the message, then its
// help, on w. It returns 2, the exit status of bad usage.
func Usage(w io.Writer, name string, help func(io.Writer), format string, args ...any) int {
	fmt.Fprintf(w, "kvb %s: %s\n\n", name, fmt.Sprintf(format, args...))
	help(w)
	return 2
}

// Spec is a subcommand whose flags land in a value of type O (a struct
// of its own, or a pointer to its one flag). New makes its Command, so a
// subcommand writes only its flags and what it does with them.
type Spec[O any] struct {
	Name    string
	Summary string
	Usage   string                   // the help before the flags
	Help    func(w io.Writer)        // the whole help instead of Usage and the flags; nil: those
	Flags   func(fs *flag.FlagSet) O // declares the flags on fs and returns where they land; nil: no flags
	Leading bool                     // the flags all come first: from the first positional argument on, everything is passed through
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
	help := s.Help
	if help == nil {
		help = func(w io.Writer) {
			fs, _ := flags()
			fmt.Fprint(w, s.Usage)
			fs.SetOutput(w)
			fs.PrintDefaults()
		}
	}
	// Flags come before, between or after the positional arguments ("--"
	// ends them); with Leading, all before them.
	run := func(args []string, stdout, stderr io.Writer) int {
		fs, o := flags()
		var pos []string
		var err error
		if s.Leading {
			err = fs.Parse(args)
			pos = fs.Args()
		} else {
			pos, err = flagargs.Parse(fs, args)
		}
		switch {
		case errors.Is(err, flag.ErrHelp):
			help(stdout)
			return 0
		case err != nil:
			return Usage(stderr, s.Name, help, "%v", err)
		}
		return s.Run(Call{Stdout: stdout, Stderr: stderr, name: s.Name, help: help}, o, pos)
	}
	return Command{Name: s.Name, Summary: s.Summary, Help: help, Run: run}
}

// Program is a program of subcommands, kvb or the lab's kvb: it hands
// its arguments to the command the first one names.
type Program struct {
	Commands map[string]Command
	// Heading is the overview's line above its list of commands.
	Heading string
	// Elsewhere, if set, is asked about a name that is no command here:
	// it reports whether it wrote where that command is to stderr.
	Elsewhere func(name string, stderr io.Writer) bool
}

// Run runs the command args name, or help: exit 2 for a missing or
// unknown one.
func (p Program) Run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		p.overview(stderr)
		return 2
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		return p.help(args[1:], stdout, stderr)
	}
	c, ok := p.Commands[args[0]]
	if !ok {
		if p.Elsewhere != nil && p.Elsewhere(args[0], stderr) {
			return 2
		}
		fmt.Fprintf(stderr, "kvb: unknown command %q\n", args[0])
		p.overview(stderr)
		return 2
	}
	return c.Run(args[1:], stdout, stderr)
}

func (p Program) help(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		p.overview(stdout)
		return 0
	}
	c, ok := p.Commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "kvb help: unknown command %q\n", args[0])
		return 2
	}
	c.Help(stdout)
	return 0
}

func (p Program) overview(w io.Writer) {
	fmt.Fprintf(w, "usage: kvb COMMAND [arguments]\n\n%s\n", p.Heading)
	for _, n := range slices.Sorted(maps.Keys(p.Commands)) {
		fmt.Fprintf(w, "  %-10s %s\n", n, p.Commands[n].Summary)
	}
	fmt.Fprint(w, "\nkvb help COMMAND shows a command's flags.\n")
}
