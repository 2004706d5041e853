package cli

import (
	"fmt"
	"io"
	"maps"
	"slices"
)

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
