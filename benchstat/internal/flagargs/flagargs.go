// Package flagargs parses a command line whose flags may come before,
// between and after its positional arguments (kvb compare BASE HEAD -mode
// sim, history add FILE -label k=v), which flag.Parse alone stops at.
package flagargs

import "flag"

// Parse parses args into fs and returns the positional arguments in
// order; "--" ends the flags.
func Parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
