// Package cli is what a subcommand's package gives kvb (benchstat/kvb),
// the suite's one program: its name, a line saying what it does, its help
// and its entry point, and the one way its flags are read and its usage
// errors reported; Program dispatches to such commands (kvb, and the
// lab's kvb in benchstat/lab).
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"

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
// Parse reports a bad flag with the command's help.
func NewFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// PrintHelp writes usage, then fs's flags with their defaults, to w.
func PrintHelp(w io.Writer, usage string, fs *flag.FlagSet) {
	fmt.Fprint(w, usage)
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// Parse reads args into fs, flags before, between or after the
// positional arguments, which it returns ("--" ends the flags). On -h it
// writes help to stdout; on a bad flag, the error and help to stderr. ok
// is false then, and status the exit status (0 for -h, 2 otherwise).
func Parse(fs *flag.FlagSet, args []string, help func(io.Writer), stdout, stderr io.Writer) (pos []string, status int, ok bool) {
	pos, err := flagargs.Parse(fs, args)
	return report(fs, pos, err, help, stdout, stderr)
}

// ParseLeading is Parse for a command whose flags all come first: the
// first positional argument and everything after it are returned as
// given, for a program the command runs.
func ParseLeading(fs *flag.FlagSet, args []string, help func(io.Writer), stdout, stderr io.Writer) (rest []string, status int, ok bool) {
	err := fs.Parse(args)
	return report(fs, fs.Args(), err, help, stdout, stderr)
}

func report(fs *flag.FlagSet, pos []string, err error, help func(io.Writer), stdout, stderr io.Writer) ([]string, int, bool) {
	if err == nil {
		return pos, 0, true
	}
	if errors.Is(err, flag.ErrHelp) {
		help(stdout)
		return nil, 0, false
	}
	return nil, Usage(stderr, fs.Name(), help, "%v", err), false
}

// Usage reports a usage error of the command name: the message, then its
// help, on w. It returns 2, the exit status of bad usage.
func Usage(w io.Writer, name string, help func(io.Writer), format string, args ...any) int {
	fmt.Fprintf(w, "kvb %s: %s\n\n", name, fmt.Sprintf(format, args...))
	help(w)
	return 2
}
